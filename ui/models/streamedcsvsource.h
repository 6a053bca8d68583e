#pragma once

#include "console/csvexport.h"

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

    using RowSink = console::RowSink;
    using Job = console::CsvRows;

    virtual console::Worker *csvWorker() const = 0;
    // Every row of the model's current filter, not only those loaded.
    virtual Job csvJob() const = 0;
};

} // namespace payops
