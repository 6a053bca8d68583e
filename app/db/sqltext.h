#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QVariant>

#include <optional>

namespace payops::db {

// `sql` with each `?` placeholder (outside quotes, quoted identifiers and comments) replaced by
// its bind as an SQL literal, bound as a prepared statement would bind it: one round trip to
// the server where a prepared statement takes two (the prepare, then the execute). Nothing
// when a bind has no literal form here or the placeholders and binds do not pair up: the
// caller prepares the statement instead.
std::optional<QString> withBindsInline(const QSqlDatabase &db, const QString &sql,
                                       const QVariantList &binds);

} // namespace payops::db
