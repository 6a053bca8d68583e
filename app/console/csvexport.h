#pragma once

#include "console/duplicatescan.h"
#include "console/mappedduplicates.h"
#include "domain/mapping/mapping.h"
#include "domain/money/auditquery.h"
#include "domain/statement/reconciliation.h"
#include "job.h"

#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace payops::console {

// One row of a table, as the table shows it.
using RowSink = std::function<void(const QStringList &cells)>;
// Reads every row of a table again, in the table's order, and hands each to the sink on the
// worker's thread; returns early once `cancel` is set. Throws db::Error.
using CsvRows = std::function<void(const QSqlDatabase &db, const RowSink &sink,
                                   const std::atomic<bool> &cancel)>;

// The rows of each streamed table, read by the same queries as its pages; `cells` is what
// the table's model shows of a row.
CsvRows auditCsvRows(AuditFilter filter, std::function<QStringList(const AuditEntry &)> cells);
CsvRows duplicateCsvRows(DuplicateFilter filter, int pageSize,
                         std::function<QStringList(const DuplicateGroup &)> cells);
// Every open group a mapped duplicates filter shows (console/mappedduplicates.h), page by page.
CsvRows mappedGroupCsvRows(mapping::Mapping mapping, MappedDuplicateFilter filter,
                           std::function<QStringList(const MappedGroup &)> cells);
// With `mapping`, the findings' statuses are read from the team's tables.
CsvRows findingCsvRows(qint64 runId,
                       std::function<QStringList(const ReconciliationFinding &)> cells,
                       std::optional<mapping::Mapping> mapping = std::nullopt);

// Writes `titles`, then every row `rows` reads, to `path`, nothing held in memory; `progress`
// is called with the count every thousand rows. Returns the count, or -1 once `cancel` is
// set, and then no file is left. The job holds `cancel`.
Job<qint64> csvExportJob(CsvRows rows, QStringList titles, QString path,
                         std::shared_ptr<std::atomic<bool>> cancel,
                         std::function<void(qint64 rows)> progress);

} // namespace payops::console
