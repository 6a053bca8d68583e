#pragma once

#include "domain/statement/statement.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>

class QIODevice;

namespace payops {

struct StatementImportProgress
{
    qint64 bytesRead = 0; // of the file (packed, if it is), as far as the reader has consumed it
    qint64 totalBytes = 0;
    qint64 lines = 0; // transaction lines stored so far
};

struct StatementImportOptions
{
    StatementFormat format = StatementFormat::Auto;
    QString sourceName; // the file's name as the user gave it, kept with the statement
    // Lines per write; 0 for the writer's own: 50,000 per LOAD DATA LOCAL, 1,000 per multi-row
    // INSERT where the server does not allow the former. Each write reports progress and may
    // cancel.
    int batchLines = 0;
    // Called after each batch; on the calling thread.
    std::function<void(const StatementImportProgress &)> progress;
    // Set from another thread to stop: the import rolls back and stores nothing.
    const std::atomic<bool> *cancel = nullptr;
};

// A statement as stored in platform_statement, whether this import stored it or an earlier one.
struct StoredStatement
{
    qint64 id = 0;
    StatementHeader header; // format (detected or not), channel, the period as stored
    bool periodDeclared = false;
    QString sourceFile;
    qint64 lines = 0;  // transaction lines stored
    qint64 errors = 0; // lines that could not be read
    QString importedBy;
    QDateTime importedAt; // UTC
};

struct StatementImport
{
    StoredStatement statement;
    // The same file (by SHA-256) was imported before: nothing was written, and `statement` is
    // that earlier import.
    bool alreadyImported = false;
    bool cancelled = false; // stopped by options.cancel: nothing was written

    // "already imported as statement 7 on 2026-12-03 10:12 UTC by finance@%"
    QString describeEarlierImport() const;
};

// The file's SHA-256 as lowercase hex, read in pieces from where the device is; the device is
// left at its end.
QString statementFileSha256(QIODevice &device);

// Imports a statement file, plain or packed as the platforms' download APIs give it (a ZIP, a
// gzip: statementarchive.h): pass 1 hashes its text; a statement already stored (same SHA-256)
// is reported and nothing is written; pass 2 reads it with StatementReader and stores its lines
// (streamed through LOAD DATA LOCAL INFILE, or in multi-row INSERTs where the server does not allow
// that) and its unreadable lines, all in one transaction, so that a file found truncated half-way
// (or a cancel) keeps nothing. The file is never held in memory. The device must be seekable (a
// file). Throws StatementError for a file that cannot be read and db::Error for the database.
StatementImport importStatement(const QSqlDatabase &db, QIODevice &file,
                                const StatementImportOptions &options);

// platform_statement's row, or nullopt-like id 0 when there is none.
StoredStatement readStoredStatement(const QSqlDatabase &db, qint64 statementId);

// Calls `sink` with each unreadable line of a stored statement, by line number, reading them a
// page at a time: a file of a million unreadable lines is never held. false from `sink` stops.
// Throws db::Error.
void readStatementErrors(const QSqlDatabase &db, qint64 statementId,
                         const std::function<bool(const StatementLineError &error)> &sink);

} // namespace payops
