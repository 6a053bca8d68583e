#pragma once

#include <QString>
#include <QStringList>

#include <functional>

namespace payops::db {
class Connection;
}

namespace payops {

struct SideEffectKeysResult
{
    bool applied = false; // this call added the keys
    bool refused = false; // live duplicates (or a database that cannot take them): nothing changed
    QString message;      // one sentence for the person who asked
    QStringList migrations; // the migrations applied, in order
};

// The fix step: moves a legacy database to level current, which adds uk_order_tpl and
// uk_order_type (sql/migrations/0100_side_effect_keys.sql), through the same Migrator and
// requirement check as `payops migrate --level current`. Refused, with the count of live
// duplicate groups and "compensate them first", while live duplicates remain: a unique key
// cannot be built over them, and building it must not hide them. A database already at level
// current is left as it is (applied is false, not refused). `progress` receives one line per
// migration. There is no cancel: the key is one ALTER TABLE, which the server finishes or
// rolls back on its own. Throws db::Error for a database payops never migrated and for
// failures of the database itself.
SideEffectKeysResult applySideEffectKeys(db::Connection &connection,
                                         const std::function<void(const QString &)> &progress = {});

} // namespace payops
