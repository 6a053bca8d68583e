#pragma once

#include <QString>
#include <QStringList>

namespace payops::db {

// Splits a script into statements the way the mysql client does: at the delimiter (';'
// unless a DELIMITER line changes it), never inside quotes, backticks or comments.
// Comment-only statements are dropped.
QStringList splitSqlScript(const QString &script);

} // namespace payops::db
