#include "statementimport.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/statementreader.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QIODevice>

namespace payops {
namespace {

// The translation context of what is wrong with a statement file or line, shared by its readers.
struct StatementText
{
    Q_DECLARE_TR_FUNCTIONS(payops::StatementText)
};

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
        return StatementText::tr("the transaction number is longer than %1 bytes").arg(kPayNoMaxBytes);
    if (line.status.size() > kStatusMaxChars)
        return StatementText::tr("the status is longer than %1 characters").arg(kStatusMaxChars);
    return {};
}

// Lines and unreadable lines go to the database in multi-row INSERTs, so that a million-line
// file costs a thousand statements, not a million round trips.
class LineWriter
{
public:
    LineWriter(const QSqlDatabase &db, qint64 statementId, int batchRows)
        : m_db(db)
        , m_statementId(statementId)
        , m_batchRows(qMax(1, batchRows))
    {
    }

    void addLine(const StatementLine &line)
    {
        m_lines.append(QVariantList{m_statementId, line.lineNo, line.payNo, qMax<qint64>(0, line.orderId),
                                    line.amountFen, line.status, sqlTime(line.paidAt)});
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
        if (m_errors.size() >= m_batchRows)
            flushErrors();
    }

    bool batchFull() const { return m_lines.size() >= m_batchRows; }

    void flush()
    {
        if (!m_lines.isEmpty()) {
            db::exec(m_db, QStringLiteral("INSERT INTO platform_statement_line "
                                          "(statement_id, line_no, pay_no, order_id, amount_fen, status, paid_at) VALUES ")
                               + db::valueRows(m_db, m_lines));
            m_lines.clear();
        }
        flushErrors();
    }

    qint64 lineCount() const { return m_lineCount; }
    qint64 errorCount() const { return m_errorCount; }
    const QDateTime &firstPaidAt() const { return m_first; }
    const QDateTime &lastPaidAt() const { return m_last; }

private:
    void flushErrors()
    {
        if (m_errors.isEmpty())
            return;
        db::exec(m_db, QStringLiteral("INSERT INTO platform_statement_error (statement_id, line_no, message) VALUES ")
                           + db::valueRows(m_db, m_errors));
        m_errors.clear();
    }

    QSqlDatabase m_db;
    qint64 m_statementId;
    int m_batchRows;
    QList<QVariantList> m_lines;
    QList<QVariantList> m_errors;
    qint64 m_lineCount = 0;
    qint64 m_errorCount = 0;
    QDateTime m_first;
    QDateTime m_last;
};

qint64 statementIdBySha256(const QSqlDatabase &db, const QString &sha256)
{
    return db::scalar(db, QStringLiteral("SELECT id FROM platform_statement WHERE file_sha256 = ?"), {sha256}).toLongLong();
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
        .arg(statement.id)
        .arg(statement.importedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm")), statement.importedBy);
}

QString statementFileSha256(QIODevice &device)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&device))
        throw StatementError(StatementText::tr("the file could not be read: %1")
            .arg(device.errorString()).toStdString());
    return QString::fromLatin1(hash.result().toHex());
}

StoredStatement readStoredStatement(const QSqlDatabase &db, qint64 statementId)
{
    StoredStatement stored;
    QSqlQuery query = db::exec(db, QStringLiteral(
        "SELECT id, format, channel, period_start, period_end, period_declared, source_file, line_count, error_count, "
        "imported_by, imported_at FROM platform_statement WHERE id = ?"), {statementId});
    if (!query.next())
        return stored;
    stored.id = query.value(0).toLongLong();
    stored.header.format = statementFormatFromName(query.value(1).toString()).value_or(StatementFormat::Generic);
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

QList<StatementLineError> readStatementErrors(const QSqlDatabase &db, qint64 statementId)
{
    QList<StatementLineError> errors;
    QSqlQuery query = db::exec(db, QStringLiteral(
        "SELECT line_no, message FROM platform_statement_error WHERE statement_id = ? ORDER BY line_no, id"), {statementId});
    while (query.next())
        errors.append({query.value(0).toLongLong(), query.value(1).toString()});
    return errors;
}

StatementImport importStatement(const QSqlDatabase &db, QIODevice &device, const StatementImportOptions &options)
{
    // Pass 1: the same file twice is the same statement, whatever its name.
    const QString sha256 = statementFileSha256(device);
    if (const qint64 earlier = statementIdBySha256(db, sha256))
        return earlierImport(db, earlier);
    if (!device.seek(0))
        throw StatementError(StatementText::tr("the file could not be read twice (is it a pipe?); save it to a file "
                                               "first")
                                 .toStdString());

    // Pass 2: the reader checks the format before anything is written.
    StatementReader reader(device, options.format);
    const StatementHeader &header = reader.header();
    const bool declared = header.periodStart.isValid() && header.periodEnd.isValid();

    db::Transaction transaction(db);
    qint64 statementId = 0;
    try {
        const QSqlQuery insert = db::exec(db, QStringLiteral(
            "INSERT INTO platform_statement (file_sha256, format, channel, period_start, period_end, period_declared, "
            "source_file, imported_by) VALUES (?, ?, ?, ?, ?, ?, ?, CURRENT_USER())"),
            {sha256, statementFormatName(header.format), header.channel, sqlTime(header.periodStart),
             sqlTime(header.periodEnd), declared ? 1 : 0, options.sourceName.right(255)});
        statementId = insert.lastInsertId().toLongLong();
    } catch (const db::Error &error) {
        // Another import of the same file committed between pass 1 and here.
        if (!error.isDuplicateKey())
            throw;
        transaction.rollback();
        return earlierImport(db, statementIdBySha256(db, sha256));
    }

    LineWriter writer(db, statementId, options.batchRows);
    StatementImportProgress progress;
    progress.totalBytes = device.size();
    StatementLine line;
    QList<StatementLineError> errors;
    const auto takeErrors = [&writer, &errors] {
        for (const StatementLineError &error : std::as_const(errors))
            writer.addError(error.lineNo, error.message);
        errors.clear();
    };
    bool more = true;
    while (more) {
        more = reader.next(line, errors);
        takeErrors();
        if (more) {
            if (const QString problem = lineProblem(line); !problem.isEmpty())
                writer.addError(line.lineNo, problem);
            else
                writer.addLine(line);
        }
        if (writer.batchFull() || !more) {
            if (cancelled(options)) {
                StatementImport stopped;
                stopped.cancelled = true;
                return stopped; // the transaction rolls back
            }
            writer.flush();
            progress.bytesRead = device.pos();
            progress.lines = writer.lineCount();
            if (options.progress)
                options.progress(progress);
        }
    }

    // Without a declared period the statement covers its first to its last payment; the end is
    // kept half open like a declared one, a millisecond past the last.
    const QDateTime periodStart = declared ? header.periodStart : writer.firstPaidAt();
    const QDateTime periodEnd = declared ? header.periodEnd
                                         : (writer.lastPaidAt().isValid() ? writer.lastPaidAt().addMSecs(1) : QDateTime());
    db::exec(db, QStringLiteral("UPDATE platform_statement SET line_count = ?, error_count = ?, period_start = ?, "
                                "period_end = ? WHERE id = ?"),
             {writer.lineCount(), writer.errorCount(), sqlTime(periodStart), sqlTime(periodEnd), statementId});
    transaction.commit();

    StatementImport result;
    result.statement = readStoredStatement(db, statementId);
    result.statement.header.detected = header.detected;
    return result;
}

} // namespace payops
