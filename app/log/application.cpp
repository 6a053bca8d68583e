#include "application.h"

#include <QCoreApplication>

namespace payops {

void setApplicationIdentity()
{
    QCoreApplication::setApplicationName(QStringLiteral("payops"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PAYOPS_VERSION));
}

} // namespace payops
