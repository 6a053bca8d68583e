#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/mapping/mappedorders.h"
#include "domain/money/money.h"
#include "domain/statement/reconciliation.h"
#include "domain/statement/statementimport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <csignal>

namespace payops::cli {
namespace {

// Ctrl-C during an import: the import rolls back and nothing of the statement is kept.
std::atomic<bool> g_interrupted{false};

void interrupt(int)
{
    g_interrupted.store(true);
}

// How finance reads each kind, for the text output.
QString kindTitle(FindingKind kind)
{
    switch (kind) {
    case FindingKind::MissingOurs:
        return QCoreApplication::translate("payops::cli::ReconcileCommand",
                                           "paid on the platform, not with us (漏单)");
    case FindingKind::MissingPlatform:
        return QCoreApplication::translate("payops::cli::ReconcileCommand",
                                           "paid with us, not on the platform (多单)");
    case FindingKind::AmountMismatch:
        return QCoreApplication::translate("payops::cli::ReconcileCommand", "amount differs");
    case FindingKind::StatusMismatch:
        return QCoreApplication::translate("payops::cli::ReconcileCommand", "status differs");
    case FindingKind::DuplicatePlatform:
        return QCoreApplication::translate("payops::cli::ReconcileCommand",
                                           "listed twice by the platform");
    case FindingKind::DoublePayment:
        return QCoreApplication::translate("payops::cli::ReconcileCommand",
                                           "order paid twice by the customer (refund owed)");
    }
    return {};
}

QJsonValue jsonNumber(const std::optional<qint64> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QString yuanOrDash(const std::optional<qint64> &fen)
{
    return fen ? fenToYuan(*fen) : QStringLiteral("-");
}

QString utcText(const QDateTime &time)
{
    return time.isValid() ? time.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")) : QString();
}

// Imports a statement file (once: the same file again is found by its SHA-256) and reconciles
// it by pay_no. Exit 1 on any finding or unreadable line, so that a scheduled run alerts: a
// line that could not be read is a payment nobody compared.
class ReconcileCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::ReconcileCommand)

public:
    ReconcileCommand()
        : Command(QStringLiteral("reconcile"),
                  tr("Import a platform statement (generic CSV, WeChat Pay trade bill, Alipay "
                     "business detail) "
                     "and reconcile it by pay_no; exit 1 on findings or unreadable lines, 2 on an "
                     "error. The "
                     "same file imported again is reconciled again, not stored twice."),
                  QStringLiteral("--db DSN --statement FILE [--format auto|generic|wechat|alipay] "
                                 "[--mapping FILE] "
                                 "[--json]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(m_statement);
        parser.addOption(m_format);
        parser.addOption(m_json);
        parser.addOption(mappingOption());
    }

    int execute(const QCommandLineParser &parser) override
    {
        const auto format = statementFormatFromName(parser.value(m_format));
        if (!format)
            return fail(UsageOrConnection,
                        tr("--format takes auto, generic, wechat or alipay, not '%1'")
                            .arg(parser.value(m_format)));
        const QString path = parser.value(m_statement);
        if (path.isEmpty())
            return fail(UsageOrConnection,
                        tr("--statement FILE is required (the platform's statement)"));
        const QFileInfo info(path);
        if (!info.exists())
            return fail(UsageOrConnection, tr("statement file %1 does not exist").arg(path));
        if (!info.isFile())
            return fail(UsageOrConnection, tr("statement %1 is not a regular file").arg(path));
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return fail(UsageOrConnection,
                        tr("cannot read statement %1: %2").arg(path, file.errorString()));
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        std::optional<mapping::Mapping> mapping;
        if (!mappingFrom(parser, &mapping))
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("reconcile"));
            const QSqlDatabase db = connection.database();
            // The team's payments and orders when a mapping names them, else payops's own.
            m_side = mapping::paymentSide(db, mapping);
            const StatementImport imported = importFile(db, file, *format, info.fileName());
            if (imported.cancelled)
                return fail(UsageOrConnection,
                            tr("interrupted: nothing of the statement was stored"));
            const Reconciliation result = reconcileStatement(db, imported.statement.id, m_side);
            if (parser.isSet(m_json))
                printJson(db, imported, result);
            else
                printText(db, imported, result);
            return result.clean() && imported.statement.errors == 0 ? Success : Refused;
        } catch (const StatementError &error) {
            return fail(UsageOrConnection,
                        QStringLiteral("%1: %2").arg(path, QString::fromStdString(error.what())));
        } catch (const db::Error &error) {
            // 1 means findings here, so every failure is a 2.
            return fail(UsageOrConnection, db::userMessage(error));
        }
    }

private:
    StatementImport importFile(const QSqlDatabase &db, QFile &file, StatementFormat format,
                               const QString &name) const
    {
        g_interrupted.store(false);
        const auto previous = std::signal(SIGINT, interrupt);
        QElapsedTimer lastReport;
        lastReport.start();
        StatementImportOptions options;
        options.format = format;
        options.sourceName = name;
        options.cancel = &g_interrupted;
        options.progress =
            [&lastReport](const StatementImportProgress &progress) {
                if (lastReport.elapsed() < 1000 || progress.totalBytes <= 0)
                    return;
                lastReport.restart();
                QTextStream(stderr)
                    << tr("payops reconcile: %1 % of the statement read, %2 lines stored")
                           .arg(QString::number(progress.bytesRead * 100 / progress.totalBytes),
                                QString::number(progress.lines))
                    << Qt::endl;
            };
        try {
            StatementImport imported = importStatement(db, file, options);
            std::signal(SIGINT, previous);
            return imported;
        } catch (...) {
            std::signal(SIGINT, previous);
            throw;
        }
    }

    // The findings and unreadable lines are printed as they are read back, a page at a time:
    // none is held, whatever their number.
    void printText(const QSqlDatabase &db, const StatementImport &imported,
                   const Reconciliation &result) const
    {
        const StoredStatement &statement = imported.statement;
        const QString formatName = statementFormatName(statement.header.format);
        if (imported.alreadyImported)
            say(tr("format: %1 (%2; reconciled again, nothing stored twice)")
                    .arg(formatName, imported.describeEarlierImport()));
        else
            say((statement.header.detected ? tr("format: %1 (detected) (stored as statement %2)")
                                           : tr("format: %1 (stored as statement %2)"))
                    .arg(formatName, QString::number(statement.id)));
        const QString period =
            result.periodKnown
                ? (statement.periodDeclared ? tr("%1 to %2 UTC (declared)")
                                            : tr("%1 to %2 UTC (first to last payment)"))
                      .arg(utcText(statement.header.periodStart),
                           utcText(statement.header.periodEnd))
                : tr("unknown (no line has a time): paid-with-us-only not checked");
        say(tr("lines: %1 reconciled, %2 unreadable; channel %3; period %4")
                .arg(QString::number(statement.lines), QString::number(statement.errors),
                     statement.header.channel.isEmpty() ? tr("all") : statement.header.channel,
                     period));
        for (int kind = 0; kind < kFindingKinds; ++kind) {
            const auto findingKind = static_cast<FindingKind>(kind);
            say(QStringLiteral("%1: %2  %3")
                    .arg(findingKindName(findingKind).leftJustified(18),
                         QStringLiteral("%1").arg(result.counts[kind], 6), kindTitle(findingKind)));
        }
        readStoredFindings(db, m_side, result.runId, [this](const ReconciliationFinding &finding) {
            QString text =
                tr("%1 pay_no %2 order %3 platform %4 ours %5 line %6")
                    .arg(findingKindName(finding.kind).leftJustified(18),
                         QString::fromUtf8(finding.payNo),
                         finding.orderNo.isEmpty() ? QStringLiteral("-")
                                                   : QString::fromLatin1(finding.orderNo),
                         yuanOrDash(finding.platformAmountFen), yuanOrDash(finding.ourAmountFen),
                         finding.lineNo ? QString::number(*finding.lineNo) : QStringLiteral("-"));
            if (finding.listed)
                text += QLatin1Char(' ') + tr("listed %1 times").arg(*finding.listed);
            say(text);
            return true;
        });
        readStatementErrors(db, statement.id, [this](const StatementLineError &error) {
            say(tr("unreadable line %1: %2").arg(QString::number(error.lineNo), error.message));
            return true;
        });
    }

    // One JSON object, written as it is read: the scalars first, then each finding and each
    // unreadable line as an element of its array.
    void printJson(const QSqlDatabase &db, const StatementImport &imported,
                   const Reconciliation &result) const
    {
        const StoredStatement &statement = imported.statement;
        const auto timeOrNull = [](const QDateTime &time) {
            return time.isValid() ? QJsonValue(utcText(time)) : QJsonValue(QJsonValue::Null);
        };
        const QJsonObject head{
            {QStringLiteral("format"), statementFormatName(statement.header.format)},
            {QStringLiteral("detected"), statement.header.detected},
            {QStringLiteral("statement"), statement.id},
            {QStringLiteral("already_imported"), imported.alreadyImported},
            {QStringLiteral("run"), result.runId},
            {QStringLiteral("channel"), statement.header.channel},
            {QStringLiteral("period_start"), timeOrNull(statement.header.periodStart)},
            {QStringLiteral("period_end"), timeOrNull(statement.header.periodEnd)},
            {QStringLiteral("period_declared"), statement.periodDeclared},
            {QStringLiteral("lines"), statement.lines}};
        QTextStream out(stdout);
        QByteArray text = QJsonDocument(head).toJson(QJsonDocument::Compact);
        text.chop(1); // the closing brace: the arrays follow
        out << text << ",\"findings\":[";
        bool first = true;
        const auto element = [&out, &first](const QJsonObject &object) {
            out << (first ? "" : ",") << QJsonDocument(object).toJson(QJsonDocument::Compact);
            first = false;
            return true;
        };
        readStoredFindings(
            db, m_side, result.runId, [&element](const ReconciliationFinding &finding) {
                return element(QJsonObject{
                    {QStringLiteral("kind"), findingKindName(finding.kind)},
                    {QStringLiteral("pay_no"), QString::fromUtf8(finding.payNo)},
                    {QStringLiteral("order_id"), jsonNumber(finding.orderId)},
                    {QStringLiteral("order_no"), textOrNull(QString::fromLatin1(finding.orderNo))},
                    {QStringLiteral("platform_amount_fen"), jsonNumber(finding.platformAmountFen)},
                    {QStringLiteral("our_amount_fen"), jsonNumber(finding.ourAmountFen)},
                    {QStringLiteral("line"), jsonNumber(finding.lineNo)},
                    {QStringLiteral("count"), jsonNumber(finding.listed)},
                    {QStringLiteral("platform_status"), textOrNull(finding.platformStatus)},
                    {QStringLiteral("our_status"), textOrNull(finding.ourStatus)}});
            });
        out << "],\"errors\":[";
        first = true;
        readStatementErrors(db, statement.id, [&element](const StatementLineError &error) {
            return element(QJsonObject{{QStringLiteral("line"), error.lineNo},
                                       {QStringLiteral("message"), error.message}});
        });
        out << "]}" << Qt::endl;
    }

    const QCommandLineOption m_statement{
        QStringLiteral("statement"),
        tr("The platform's statement file: a CSV, or the ZIP or gzip its download gave (read "
           "twice: it must be a file)."),
        QStringLiteral("file")};
    const QCommandLineOption m_format{
        QStringLiteral("format"),
        tr("auto (default: detected from the file), generic, wechat or alipay."),
        QStringLiteral("format"), QStringLiteral("auto")};
    // Where our side of the statement is read: set once connected.
    PaymentSide m_side;
    const QCommandLineOption m_json{QStringLiteral("json"),
                                    tr("Print the result as one JSON object.")};
};

} // namespace

std::unique_ptr<Command> makeReconcileCommand()
{
    return std::make_unique<ReconcileCommand>();
}

} // namespace payops::cli
