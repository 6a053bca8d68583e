#include "sideeffectkeys.h"

#include "domain/money/duplicates/duplicatecount.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"

#include <QCoreApplication>

namespace payops {

namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct SideEffectKeys
{
    Q_DECLARE_TR_FUNCTIONS(payops::SideEffectKeys)
};

} // namespace

SideEffectKeysResult applySideEffectKeys(db::Connection &connection,
                                         const std::function<void(const QString &)> &progress)
{
    SideEffectKeysResult result;
    // The requirement is checked by the Migrator under its migration lock, so duplicates that
    // appear between a preview and this call are still caught; the check records its verdict
    // here to tell a refusal from a failure of the database.
    QString unmet;
    const auto check = [&unmet](const QSqlDatabase &db, const QString &requirement) {
        unmet = checkMigrationRequirement(db, requirement);
        return unmet;
    };
    db::Migrator migrator(connection, check);
    const std::optional<db::SchemaLevel> level = migrator.currentLevel();
    if (!level)
        throw db::Error(SideEffectKeys::tr(
                            "database '%1' was never migrated by payops; run payops migrate first")
                            .arg(connection.dsn().database));
    if (*level == db::SchemaLevel::Current) {
        result.message = SideEffectKeys::tr(
                             "the side-effect keys are already in place (database '%1' is at level "
                             "current)")
                             .arg(connection.dsn().database);
        return result;
    }
    try {
        const db::MigrationOutcome outcome =
            migrator.migrate(db::SchemaLevel::Current, false, progress);
        result.applied = true;
        result.migrations = outcome.applied;
        result.message =
            SideEffectKeys::tr("added uk_order_tpl on user_coupon and uk_order_type on point_log; "
                               "database '%1' is at level current")
                .arg(connection.dsn().database);
    } catch (const db::Error &error) {
        if (unmet.isEmpty())
            throw;
        result.refused = true;
        result.message = unmet;
    }
    return result;
}

} // namespace payops
