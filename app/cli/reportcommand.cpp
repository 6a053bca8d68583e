#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/inspection/incidentfacts.h"
#include "report/incidentreport.h"

#include <stdexcept>

namespace payops::cli {
namespace {

// RFC 3339 or ISO 8601: 2026-12-02T09:00:00Z, 2026-12-02T17:00:00+08:00, 2026-12-02T09:00 or
// 2026-12-02 09:00 (without an offset, UTC: every time payops shows is UTC), 2026-12-02.
std::optional<QDateTime> parseTime(QString text)
{
    text = text.trimmed();
    if (text.size() > 10 && text.at(10) == QLatin1Char(' '))
        text[10] = QLatin1Char('T');
    QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!time.isValid())
        return std::nullopt;
    if (time.timeSpec() == Qt::LocalTime)
        time.setTimeSpec(Qt::UTC);
    return time.toUTC();
}

class ReportCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::ReportCommand)

public:
    ReportCommand()
        : Command(
              QStringLiteral("report"),
              tr("Write the incident report of a time window as a PDF: when the duplicates began, "
                 "the "
                 "switch's flips, compensations, totals in yuan, reconciliation, charts, audit "
                 "head."),
              QStringLiteral("--db DSN | --read-db DSN --from TIME --to TIME --out FILE.pdf "
                             "[--points-per-yuan N]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(readDbOption());
        parser.addOption(m_from);
        parser.addOption(m_to);
        parser.addOption(m_out);
        parser.addOption(m_pointsPerYuan);
    }

    int execute(const QCommandLineParser &parser) override
    {
        // Every flag is checked before anything connects.
        std::optional<QDateTime> from;
        std::optional<QDateTime> to;
        for (const auto &[option, time] : {std::pair{&m_from, &from}, std::pair{&m_to, &to}}) {
            const QString name = option->names().constFirst();
            if (!parser.isSet(*option))
                return fail(UsageOrConnection,
                            tr("--%1 is required (e.g. 2026-12-02T09:00:00Z)").arg(name));
            *time = parseTime(parser.value(*option));
            if (!*time)
                return fail(UsageOrConnection,
                            tr("--%1 '%2' is not a time: write it as RFC 3339, e.g. "
                               "2026-12-02T09:00:00Z or 2026-12-02T17:00:00+08:00")
                                .arg(name, parser.value(*option)));
        }
        if (*from >= *to)
            return fail(UsageOrConnection, tr("the window is empty: --from must be before --to"));
        const QString out = parser.value(m_out);
        if (out.isEmpty())
            return fail(UsageOrConnection, tr("--out FILE.pdf is required"));
        bool ok = false;
        const qint64 pointsPerYuan = parser.value(m_pointsPerYuan).toLongLong(&ok);
        if (!ok || pointsPerYuan < 1 || pointsPerYuan > 1000000)
            return fail(UsageOrConnection,
                        tr("--points-per-yuan must be a whole number from 1 to 1000000"));
        const auto dsn = readingDsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;

        IncidentFacts facts;
        try {
            db::Connection connection(*dsn, QStringLiteral("report"));
            facts = readIncidentFacts(connection.database(), *from, *to, pointsPerYuan);
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
        try {
            IncidentReport(facts).writePdf(out);
        } catch (const std::runtime_error &error) {
            return fail(Refused, QString::fromUtf8(error.what()));
        }
        say(tr("wrote %1: %2 extra copies on %3 orders, ¥ %4 at risk, ¥ %5 compensated, %6 switch "
               "flip(s)")
                .arg(out, QString::number(facts.copies()), QString::number(facts.duplicateOrders),
                     IncidentReport::yuan(facts.atRiskFen),
                     IncidentReport::yuan(facts.compensatedFen),
                     QString::number(facts.flips.size())));
        return Success;
    }

private:
    const QCommandLineOption m_from{QStringLiteral("from"),
                                    tr("Start of the window, included (RFC 3339)."),
                                    QStringLiteral("TIME")};
    const QCommandLineOption m_to{QStringLiteral("to"),
                                  tr("End of the window, excluded (RFC 3339)."),
                                  QStringLiteral("TIME")};
    const QCommandLineOption m_out{QStringLiteral("out"), tr("The PDF to write."),
                                   QStringLiteral("FILE")};
    const QCommandLineOption m_pointsPerYuan{QStringLiteral("points-per-yuan"),
                                             tr("The cash value of points (default 100 = 1 yuan)."),
                                             QStringLiteral("N"), QStringLiteral("100")};
};

} // namespace

std::unique_ptr<Command> makeReportCommand()
{
    return std::make_unique<ReportCommand>();
}

} // namespace payops::cli
