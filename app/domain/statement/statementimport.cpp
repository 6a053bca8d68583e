#include "statementimport.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/localinfile.h"
#include "domain/statement/statementarchive.h"
#include "domain/statement/statementreader.h"
#include "domain/statement/statementtext.h"

#include <QCryptographicHash>
#include <QIODevice>

#include <cstring>
#include <functional>

namespace payops {
namespace {

constexpr int kPayNoMaxBytes = 256; // platform_statement_line.pay_no
constexpr int kStatusMaxChars = 32; // platform_statement_line.status
constexpr int kMessageMaxChars = 500;

QVariant sqlTime(const QDateTime &time)
{
    if (!time.isValid())
        return {};
    return time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

// What a line needs to be stored and compared; the reader checks the format's own rules, this
// checks the table's.
QString lineProblem(const StatementLine &line)
{
    if (line.payNo.isEmpty())
        return StatementText::tr("the line has no transaction number (pay_no)");
    if (line.payNo.size() > kPayNoMaxBytes)
        return StatementText::tr("the transaction number is longer than %1 bytes")
            .arg(kPayNoMaxBytes);
    if (line.status.size() > kStatusMaxChars)
        return StatementText::tr("the status is longer than %1 characters").arg(kStatusMaxChars);
    return {};
}

// A field of a LOAD DATA row with the statement's defaults (tab between fields, newline
// between rows, backslash escapes): the bytes that would end it are escaped.
void appendLoadField(QByteArray &row, const QByteArray &bytes)
{
    for (const char c : bytes) {
        switch (c) {
        case '\\':
            row += "\\\\";
            break;
        case '\t':
            row += "\\t";
            break;
        case '\n':
            row += "\\n";
            break;
        case '\0':
            row += "\\0";
            break;
        default:
            row += c;
            break;
        }
    }
}

// Lines go to the database in large writes, so that a million-line file costs a handful of
// statements, not a million round trips. Where the server allows LOAD DATA LOCAL INFILE, the
// lines stream to it as the rows of one LOAD DATA, read from the file as the server asks for
// more: the server parses plain fields instead of SQL literals, and reads while the file is
// read (bench/reconcile: about twice as fast as multi-row INSERTs). Where it does not
// (local_infile=OFF), they go as multi-row INSERTs. Unreadable lines, few, always go as
// INSERTs, between loads.
class LineWriter
{
public:
    // Reads one line of the file into the writer (addLine or addError); false at its end.
    using ReadOne = std::function<bool()>;
    // Called after each batch of lines; false to stop (a cancel).
    using BatchDone = std::function<bool()>;

    LineWriter(const QSqlDatabase &db, qint64 statementId)
        : m_db(db)
        , m_statementId(statementId)
        , m_loadSql(
              QStringLiteral(
                  "LOAD DATA LOCAL INFILE 'statement' INTO TABLE platform_statement_line "
                  "CHARACTER SET utf8mb4 (line_no, pay_no, order_id, amount_fen, status, paid_at, "
                  "out_trade_no) "
                  "SET statement_id = %1")
                  .arg(statementId))
    {
        // A load of nothing asks the server whether it takes LOAD DATA LOCAL at all.
        m_streaming = db::loadDataLocal(db, m_loadSql, [](char *, qsizetype) {
                          return qsizetype(0);
                      }) == db::LocalLoad::Loaded;
    }

    // Writes every line `readOne` reads, `batchDone` after every `batchLines` of them (0: 50,000
    // per load, 1,000 per INSERT); false when `batchDone` stopped it.
    bool write(const ReadOne &readOne, const BatchDone &batchDone, int batchLines)
    {
        if (m_streaming)
            return stream(readOne, batchDone, batchLines > 0 ? batchLines : 50000);
        return insert(readOne, batchDone, batchLines > 0 ? batchLines : 1000);
    }

    void addLine(const StatementLine &line)
    {
        if (m_streaming)
            appendLoadRow(line);
        else
            m_lines.append(
                QVariantList{m_statementId, line.lineNo, line.payNo, qMax<qint64>(0, line.orderId),
                             line.amountFen, line.status, sqlTime(line.paidAt),
                             line.orderNo.isEmpty() ? QVariant() : QVariant(line.orderNo)});
        ++m_lineCount;
        if (line.paidAt.isValid()) {
            if (!m_first.isValid() || line.paidAt < m_first)
                m_first = line.paidAt;
            if (!m_last.isValid() || line.paidAt > m_last)
                m_last = line.paidAt;
        }
    }

    void addError(qint64 lineNo, const QString &message)
    {
        m_errors.append(QVariantList{m_statementId, lineNo, message.left(kMessageMaxChars)});
        ++m_errorCount;
    }

    qint64 lineCount() const { return m_lineCount; }
    qint64 errorCount() const { return m_errorCount; }
    const QDateTime &firstPaidAt() const { return m_first; }
    const QDateTime &lastPaidAt() const { return m_last; }

private:
    static constexpr qsizetype kErrorBatch = 1000;

    bool stream(const ReadOne &readOne, const BatchDone &batchDone, int batchLines)
    {
        bool more = true;
        bool go = true;
        int inBatch = 0;
        while (more && go) {
            qsizetype sent = 0;
            // The server asks for the next piece; lines are read until there is one. A load ends
            // with the file, a cancel, or when the unreadable lines held for it reach a batch:
            // they are written between loads, keeping memory flat.
            const auto source = [&](char *buffer, qsizetype capacity) {
                while (m_rows.size() - sent < capacity && more && go &&
                       m_errors.size() < kErrorBatch) {
                    more = readOne();
                    if (++inBatch >= batchLines || !more) {
                        inBatch = 0;
                        go = batchDone();
                    }
                }
                const qsizetype count = qMin(capacity, m_rows.size() - sent);
                std::memcpy(buffer, m_rows.constData() + sent, size_t(count));
                sent += count;
                if (sent == m_rows.size() || sent > capacity * 16) {
                    m_rows.remove(0, sent);
                    sent = 0;
                }
                return count;
            };
            if (db::loadDataLocal(m_db, m_loadSql, source) != db::LocalLoad::Loaded)
                throw db::Error(StatementText::tr(
                    "the server stopped taking LOAD DATA LOCAL during the import"));
            m_rows.clear();
            flushErrors();
        }
        return go;
    }

    bool insert(const ReadOne &readOne, const BatchDone &batchDone, int batchLines)
    {
        bool more = true;
        int inBatch = 0;
        while (more) {
            more = readOne();
            if (m_errors.size() >= kErrorBatch)
                flushErrors();
            if (++inBatch >= batchLines || !more) {
                inBatch = 0;
                if (!m_lines.isEmpty()) {
                    db::exec(m_db, QStringLiteral("INSERT INTO platform_statement_line "
                                                  "(statement_id, line_no, pay_no, order_id, "
                                                  "amount_fen, status, paid_at, out_trade_no) "
                                                  "VALUES ") +
                                       db::valueRows(m_db, m_lines));
                    m_lines.clear();
                }
                flushErrors();
                if (!batchDone())
                    return false;
            }
        }
        return true;
    }

    // A row of LOAD DATA with the statement's defaults: tab between fields, newline between rows.
    void appendLoadRow(const StatementLine &line)
    {
        m_rows += QByteArray::number(line.lineNo);
        m_rows += '\t';
        appendLoadField(m_rows, line.payNo);
        m_rows += '\t';
        m_rows += QByteArray::number(qMax<qint64>(0, line.orderId));
        m_rows += '\t';
        m_rows += QByteArray::number(line.amountFen);
        m_rows += '\t';
        appendLoadField(m_rows, line.status.toUtf8());
        m_rows += '\t';
        m_rows += line.paidAt.isValid() ? sqlTime(line.paidAt).toString().toLatin1()
                                        : QByteArrayLiteral("\\N");
        m_rows += '\t';
        if (line.orderNo.isEmpty())
            m_rows += QByteArrayLiteral("\\N");
        else
            appendLoadField(m_rows, line.orderNo);
        m_rows += '\n';
    }

    void flushErrors()
    {
        if (m_errors.isEmpty())
            return;
        db::exec(
            m_db,
            QStringLiteral(
                "INSERT INTO platform_statement_error (statement_id, line_no, message) VALUES ") +
                db::valueRows(m_db, m_errors));
        m_errors.clear();
    }

    QSqlDatabase m_db;
    qint64 m_statementId;
    QString m_loadSql;
    bool m_streaming = false;
    QByteArray m_rows;           // streaming: rows read but not yet sent
    QList<QVariantList> m_lines; // otherwise: the batch as INSERT values
    QList<QVariantList> m_errors;
    qint64 m_lineCount = 0;
    qint64 m_errorCount = 0;
    QDateTime m_first;
    QDateTime m_last;
};

qint64 statementIdBySha256(const QSqlDatabase &db, const QString &sha256)
{
    return db::scalar(db, QStringLiteral("SELECT id FROM platform_statement WHERE file_sha256 = ?"),
                      {sha256})
        .toLongLong();
}

StatementImport earlierImport(const QSqlDatabase &db, qint64 statementId)
{
    StatementImport result;
    result.alreadyImported = true;
    result.statement = readStoredStatement(db, statementId);
    return result;
}

bool cancelled(const StatementImportOptions &options)
{
    return options.cancel && options.cancel->load();
}

} // namespace

QString StatementImport::describeEarlierImport() const
{
    return StatementText::tr("already imported as statement %1 on %2 UTC by %3")
        .arg(QString::number(statement.id),
             statement.importedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm")),
             statement.importedBy);
}

QString statementFileSha256(QIODevice &device)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&device))
        refuseStatement(
            StatementText::tr("the file could not be read: %1").arg(device.errorString()));
    return QString::fromLatin1(hash.result().toHex());
}

StoredStatement readStoredStatement(const QSqlDatabase &db, qint64 statementId)
{
    StoredStatement stored;
    QSqlQuery query =
        db::exec(db,
                 QStringLiteral("SELECT id, format, channel, period_start, period_end, "
                                "period_declared, source_file, line_count, error_count, "
                                "imported_by, imported_at FROM platform_statement WHERE id = ?"),
                 {statementId});
    if (!query.next())
        return stored;
    stored.id = query.value(0).toLongLong();
    stored.header.format =
        statementFormatFromName(query.value(1).toString()).value_or(StatementFormat::Generic);
    stored.header.channel = query.value(2).toString();
    stored.header.periodStart = db::utcDateTime(query.value(3));
    stored.header.periodEnd = db::utcDateTime(query.value(4));
    stored.periodDeclared = query.value(5).toBool();
    stored.sourceFile = query.value(6).toString();
    stored.lines = query.value(7).toLongLong();
    stored.errors = query.value(8).toLongLong();
    stored.importedBy = query.value(9).toString();
    stored.importedAt = db::utcDateTime(query.value(10));
    return stored;
}

void readStatementErrors(const QSqlDatabase &db, qint64 statementId,
                         const std::function<bool(const StatementLineError &error)> &sink)
{
    // Pages resumed after the last (line_no, id) on the (statement_id, line_no) index: the
    // driver holds a query's whole result.
    constexpr int kPageRows = 5000;
    const QString sql =
        QStringLiteral(
            "SELECT line_no, message, id FROM platform_statement_error WHERE statement_id = ?"
            " AND (line_no > ? OR (line_no = ? AND id > ?)) ORDER BY line_no, id LIMIT %1")
            .arg(kPageRows);
    qint64 afterLine = -1;
    qint64 afterId = 0;
    for (int rows = kPageRows; rows == kPageRows;) {
        rows = 0;
        QSqlQuery query = db::exec(db, sql, {statementId, afterLine, afterLine, afterId});
        while (query.next()) {
            ++rows;
            afterLine = query.value(0).toLongLong();
            afterId = query.value(2).toLongLong();
            if (!sink({afterLine, query.value(1).toString()}))
                return;
        }
    }
}

StatementImport importStatement(const QSqlDatabase &db, QIODevice &file,
                                const StatementImportOptions &options)
{
    // Pass 1: the same statement twice is the same statement, whatever its file's name and
    // whether it came packed (a ZIP, gzip) or not: what is hashed is its text.
    StatementContent content = openStatementContent(file);
    const QString sha256 = statementFileSha256(content.unpacked ? *content.unpacked : file);
    if (const qint64 earlier = statementIdBySha256(db, sha256))
        return earlierImport(db, earlier);
    if (!file.seek(0))
        refuseStatement(
            StatementText::tr("the file could not be read twice (is it a pipe?); save it to a file "
                              "first"));

    // Pass 2: the reader checks the format before anything is written.
    content = openStatementContent(file);
    QIODevice &device = content.unpacked ? *content.unpacked : file;
    // "bill.zip:bill_业务明细.csv": the entry without its folders, which a file name cannot hold.
    const QString sourceName =
        content.entryName.isEmpty()
            ? options.sourceName
            : options.sourceName + u':' + content.entryName.section(u'/', -1);
    StatementReader reader(device, options.format);
    const StatementHeader &header = reader.header();
    const bool declared = header.periodStart.isValid() && header.periodEnd.isValid();

    db::Transaction transaction(db);
    qint64 statementId = 0;
    try {
        const QSqlQuery insert =
            db::exec(db,
                     QStringLiteral(
                         "INSERT INTO platform_statement (file_sha256, format, channel, "
                         "period_start, period_end, period_declared, "
                         "source_file, imported_by) VALUES (?, ?, ?, ?, ?, ?, ?, CURRENT_USER())"),
                     {sha256, statementFormatName(header.format), header.channel,
                      sqlTime(header.periodStart), sqlTime(header.periodEnd), declared ? 1 : 0,
                      sourceName.right(255)});
        statementId = insert.lastInsertId().toLongLong();
    } catch (const db::Error &error) {
        // Another import of the same file committed between pass 1 and here.
        if (!error.isDuplicateKey())
            throw;
        transaction.rollback();
        return earlierImport(db, statementIdBySha256(db, sha256));
    }

    LineWriter writer(db, statementId);
    StatementImportProgress progress;
    progress.totalBytes = file.size(); // of the file as it is, packed or not
    StatementLine line;
    QList<StatementLineError> errors;
    const auto readOne = [&] {
        const bool more = reader.next(line, errors);
        for (const StatementLineError &error : std::as_const(errors))
            writer.addError(error.lineNo, error.message);
        errors.clear();
        if (more) {
            if (const QString problem = lineProblem(line); !problem.isEmpty())
                writer.addError(line.lineNo, problem);
            else
                writer.addLine(line);
        }
        return more;
    };
    const auto batchDone = [&] {
        progress.bytesRead = file.pos();
        progress.lines = writer.lineCount();
        if (options.progress)
            options.progress(progress);
        return !cancelled(options);
    };
    if (!writer.write(readOne, batchDone, options.batchLines)) {
        StatementImport stopped;
        stopped.cancelled = true;
        return stopped; // the transaction rolls back
    }

    // Without a declared period the statement covers its first to its last payment; the end is
    // kept half open like a declared one, a millisecond past the last.
    const QDateTime periodStart = declared ? header.periodStart : writer.firstPaidAt();
    const QDateTime periodEnd =
        declared ? header.periodEnd
                 : (writer.lastPaidAt().isValid() ? writer.lastPaidAt().addMSecs(1) : QDateTime());
    db::exec(db,
             QStringLiteral(
                 "UPDATE platform_statement SET line_count = ?, error_count = ?, period_start = ?, "
                 "period_end = ? WHERE id = ?"),
             {writer.lineCount(), writer.errorCount(), sqlTime(periodStart), sqlTime(periodEnd),
              statementId});
    transaction.commit();

    StatementImport result;
    result.statement = readStoredStatement(db, statementId);
    result.statement.header.detected = header.detected;
    return result;
}

} // namespace payops
