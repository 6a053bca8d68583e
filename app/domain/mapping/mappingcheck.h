#pragma once

#include "mapping.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>

namespace payops::mapping {

enum class Severity { Error, Warning };
QString severityName(Severity severity); // "error" | "warning"

// One thing wrong with a mapping on the live database.
struct MappingProblem
{
    Severity severity = Severity::Error;
    QString where;   // the mapping's key: "orders.status", "side_effects.coupon.live"
    QString message; // one line for the operator
};

struct MappingCheck
{
    QList<MappingProblem> problems;
    bool cancelled = false; // `cancel` was set: the problems found so far
    bool hasErrors() const;
};

// Reads the business database's information_schema and tries every condition with EXPLAIN, as
// the statements that use them will run, so that a mapping is found wrong before an incident
// reads or writes through it. Errors: the mapping cannot work as written (a missing table or
// column, a type that does not fit, a condition that does not parse). Warnings: it works, at a
// cost (a full scan on every refresh, a state shown as its raw value) or could not be checked
// by this account (a grant it lacks). Never writes. Throws db::Error when the database itself
// fails (not for a condition it refuses: that is a problem of the mapping).
MappingCheck checkMapping(const QSqlDatabase &db, const Mapping &mapping,
                          const std::atomic<bool> *cancel = nullptr);

// An index of a business table, its columns lower-cased in index order.
struct TableIndex
{
    QString name;
    bool unique = false;
    QStringList columns;
};

// The indexes of `table` in the mapping's business database (the connection's own when the
// mapping names none). Throws db::Error.
QList<TableIndex> tableIndexes(const QSqlDatabase &db, const Mapping &mapping,
                               const QString &table);

// The first index whose leading columns are `columns`, in any order (case-insensitive);
// `uniqueExactly`: a unique index on those columns and no other, the only kind that keeps
// them to one row. nullptr when there is none.
const TableIndex *indexLeadingWith(const QList<TableIndex> &indexes, const QStringList &columns,
                                   bool uniqueExactly = false);

} // namespace payops::mapping
