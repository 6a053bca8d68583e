#pragma once

#include "domain/statement/statement.h"

#include <QCoreApplication>
#include <QString>

namespace payops {

// The translation context of what is wrong with a statement file or line, shared by its
// readers, its archives and its import.
struct StatementText
{
    Q_DECLARE_TR_FUNCTIONS(payops::StatementText)
};

// Refuses the whole file, with `message` saying why.
[[noreturn]] inline void refuseStatement(const QString &message)
{
    throw StatementError(message.toStdString());
}

} // namespace payops
