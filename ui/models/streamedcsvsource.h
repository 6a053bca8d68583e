#pragma once

#include <QSqlDatabase>
#include <QStringList>

#include <atomic>
#include <functional>

namespace payops {

namespace console {
class Worker;
}

// A table model whose rows are read page by page as the view scrolls, and which can read
// them all again for an export without holding them: DataTable's "Export CSV…" then runs
// the job on the model's worker and writes each row as it comes. A paged model without it
// is exported by loading its remaining pages first (see DataTable::exportCsv).
class StreamedCsvSource
{
public:
    virtual ~StreamedCsvSource() = default;

    // Called on the worker's thread for each row, in the table's order, as the table shows it.
    using RowSink = std::function<void(const QStringList &cells)>;
    // Runs on the worker's thread; returns early once `cancel` is set. Throws db::Error.
    using Job = std::function<void(const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel)>;

    virtual console::Worker *csvWorker() const = 0;
    // Every row of the model's current filter, not only those loaded.
    virtual Job csvJob() const = 0;
};

} // namespace payops
