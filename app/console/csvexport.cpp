#include "csvexport.h"

#include "domain/export/csvwriter.h"
#include "domain/mapping/mappedorders.h"

namespace payops::console {

namespace {

constexpr int kExportPage = 1000;

} // namespace

CsvRows auditCsvRows(AuditFilter filter, std::function<QStringList(const AuditEntry &)> cells)
{
    return [filter = std::move(filter), cells = std::move(cells)](
               const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel) {
        qint64 before = 0;
        while (!cancel.load()) {
            const QList<AuditEntry> page = loadAuditPage(db, filter, before, kExportPage);
            for (const AuditEntry &entry : page)
                sink(cells(entry));
            if (page.size() < kExportPage)
                return;
            before = page.last().id;
        }
    };
}

CsvRows duplicateCsvRows(DuplicateFilter filter, int pageSize,
                         std::function<QStringList(const DuplicateGroup &)> cells)
{
    return [filter = std::move(filter), pageSize, cells = std::move(cells)](
               const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel) {
        qint64 from = 0;
        while (!cancel.load()) {
            const DuplicatePage page = loadDuplicatePage(db, filter, from, pageSize);
            for (const DuplicateGroup &group : page.groups)
                sink(cells(group));
            if (page.atEnd)
                return;
            from = page.nextOrderId;
        }
    };
}

CsvRows mappedGroupCsvRows(mapping::Mapping mapping, MappedDuplicateFilter filter,
                           std::function<QStringList(const MappedGroup &)> cells)
{
    return [mapping = std::move(mapping), filter = std::move(filter), cells = std::move(cells)](
               const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel) {
        qint64 from = 0;
        while (!cancel.load()) {
            const MappedGroupPage page =
                loadMappedGroupPage(db, mapping, filter, from, kExportPage);
            for (const MappedGroup &group : page.groups)
                sink(cells(group));
            if (page.atEnd)
                return;
            from = page.nextOrderId;
        }
    };
}

CsvRows findingCsvRows(qint64 runId,
                       std::function<QStringList(const ReconciliationFinding &)> cells,
                       std::optional<mapping::Mapping> mapping)
{
    return [runId, cells = std::move(cells), mapping = std::move(mapping)](
               const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel) {
        readStoredFindings(db, mapping::paymentSide(db, mapping), runId,
                           [&](const ReconciliationFinding &finding) {
                               sink(cells(finding));
                               return !cancel.load();
                           });
    };
}

Job<qint64> csvExportJob(CsvRows rows, QStringList titles, QString path,
                         std::shared_ptr<std::atomic<bool>> cancel,
                         std::function<void(qint64 rows)> progress)
{
    return [=](const QSqlDatabase &db) -> qint64 {
        CsvWriter csv(path);
        csv.writeRow(titles);
        qint64 written = 0;
        rows(
            db,
            [&](const QStringList &cells) {
                csv.writeRow(cells);
                if (++written % 1000 == 0)
                    progress(written);
            },
            *cancel);
        if (cancel->load())
            return -1; // the writer goes without commit: no file
        csv.commit();
        return written;
    };
}

} // namespace payops::console
