#pragma once

#include "domain/money/money.h" // yuanToFen and fenToYuan come with the reader
#include "domain/statement/statement.h"

#include <QList>

#include <memory>

class QIODevice;

namespace payops {

class StatementLineSource;
class StatementTable;

// Reads a platform statement (a generic CSV, a WeChat Pay trade bill, an Alipay business
// detail) one line at a time: a statement of a million lines is never held in memory, and a
// malformed line costs its own line only. The formats are described in docs/operations.md,
// "Platform statements".
class StatementReader
{
public:
    // Reads the file's first lines to detect (format Auto) or check the format. Throws
    // StatementError (one clear message) for an empty, binary, wrongly encoded or unrecognised
    // file.
    StatementReader(QIODevice &device, StatementFormat format);
    ~StatementReader();
    StatementReader(const StatementReader &) = delete;
    StatementReader &operator=(const StatementReader &) = delete;

    const StatementHeader &header() const;
    // The next transaction line; false at the end of the table. A malformed line is appended
    // to `errors` (line number + message) and skipped; the rest still reads. Throws
    // StatementError when the file turns out truncated (a WeChat bill without its totals, an
    // Alipay file without its end marker) or binary further in.
    bool next(StatementLine &line, QList<StatementLineError> &errors);
    qint64 linesRead() const; // physical lines consumed so far

private:
    std::unique_ptr<StatementLineSource> m_source;
    std::unique_ptr<StatementTable> m_table;
    StatementHeader m_header;
};

} // namespace payops
