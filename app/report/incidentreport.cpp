#include "incidentreport.h"

#include <QFont>
#include <QLocale>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>
#include <QUrl>

#include <algorithm>
#include <stdexcept>

namespace payops {
namespace {

// The report's colours: it is printed, so it does not follow the console's theme.
const QColor kDuplicateBars(0xc6, 0x28, 0x28);
const QColor kDeliveryBars(0x1e, 0x63, 0xb4);
const QColor kToRecordOnly(0xef, 0x8a, 0x00);
const QColor kToNormal(0x2e, 0x7d, 0x32);
const QColor kInk(0x22, 0x22, 0x22);
const QColor kGrid(0xdd, 0xdd, 0xdd);

const QUrl kDuplicatesChart(QStringLiteral("chart:duplicates"));
const QUrl kDeliveriesChart(QStringLiteral("chart:deliveries"));

// Latin text in DejaVu, Chinese (a reason, an account, a file name) in the first CJK font
// found: without one, Chinese prints as empty boxes.
QFont reportFont(int pointSize)
{
    QFont font;
    font.setFamilies({QStringLiteral("DejaVu Sans"), QStringLiteral("WenQuanYi Micro Hei"),
                      QStringLiteral("Noto Sans CJK SC"), QStringLiteral("Noto Sans SC")});
    font.setPointSize(pointSize);
    return font;
}

QString when(const QDateTime &t)
{
    return t.isValid() ? t.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                       : QStringLiteral("—");
}

QString esc(const QString &text)
{
    return text.isEmpty() ? QStringLiteral("—") : text.toHtmlEscaped();
}

QString row(const QStringList &cells, bool header = false)
{
    const QString tag = header ? QStringLiteral("th") : QStringLiteral("td");
    QString html = QStringLiteral("<tr>");
    for (const QString &cell : cells)
        html += QStringLiteral("<%1>%2</%1>").arg(tag, cell);
    return html + QStringLiteral("</tr>");
}

// A header row whose columns take these percentages of the width: left to itself, the layout
// gives a long reason as much room as a count.
QString headerRow(const QList<std::pair<QString, int>> &columns)
{
    QString html = QStringLiteral("<tr>");
    for (const auto &[title, percent] : columns)
        html += QStringLiteral("<th width=\"%1%\">%2</th>").arg(QString::number(percent), title);
    return html + QStringLiteral("</tr>");
}

QString table(const QString &rows)
{
    return QStringLiteral(
               "<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\" width=\"100%\">%1</table>")
        .arg(rows);
}

} // namespace

IncidentReport::IncidentReport(IncidentFacts facts)
    : m_facts(std::move(facts))
{
}

QString IncidentReport::yuan(qint64 fen)
{
    const qint64 magnitude = fen < 0 ? -fen : fen;
    return QStringLiteral("%1%2.%3").arg(
        fen < 0 ? QStringLiteral("-") : QString(), QLocale::c().toString(magnitude / 100),
        QStringLiteral("%1").arg(magnitude % 100, 2, 10, QLatin1Char('0')));
}

QString IncidentReport::html() const
{
    const IncidentFacts &f = m_facts;
    QString html = QStringLiteral("<html><body>");
    html += QStringLiteral("<h1>%1</h1>").arg(tr("Incident report"));
    html += QStringLiteral("<p>%1<br/>%2</p>")
                .arg(tr("Database <b>%1</b>, window %2 to %3 UTC (the end excluded).")
                         .arg(esc(f.database), when(f.from), when(f.to)),
                     tr("Read at %1 UTC. Points are valued at %2 points to the yuan.")
                         .arg(when(f.readAt), QLocale::c().toString(f.pointsPerYuan)));

    html += QStringLiteral("<h2>%1</h2>").arg(tr("Totals"));
    html +=
        table(row({tr("Extra copies issued in the window"),
                   tr("%1 (%2 coupons, %3 points rows) on %4 orders")
                       .arg(QString::number(f.copies()), QString::number(f.couponCopies),
                            QString::number(f.pointCopies), QString::number(f.duplicateOrders))}) +
              row({tr("Value of the extra copies"), tr("¥ %1").arg(yuan(f.copiesFen))}) +
              row({tr("Money at risk now (extra copies still live)"),
                   tr("¥ %1").arg(yuan(f.atRiskFen))}) +
              row({tr("Compensated"),
                   tr("¥ %1 (%2 copies)")
                       .arg(yuan(f.compensatedFen), QString::number(f.compensatedCopies))}));

    html += QStringLiteral("<h2>%1</h2>").arg(tr("Timeline"));
    // One time line of everything the report names, oldest first.
    QList<std::pair<QDateTime, QString>> events;
    if (f.firstDuplicateAt.isValid()) {
        events.append({f.firstDuplicateAt,
                       tr("the first extra copy is issued (order %1)").arg(f.firstDuplicateOrder)});
        events.append({f.lastDuplicateAt, tr("the last extra copy in the window is issued")});
    }
    for (const SwitchFlipFact &flip : f.flips)
        events.append(
            {flip.at, tr("the switch flips from %1 to %2 (version %3) by <b>%4</b>: %5")
                          .arg(esc(flip.fromMode), esc(flip.toMode), QString::number(flip.version),
                               esc(flip.actor), esc(flip.reason))});
    for (const CompensationBatchFact &b : f.batches)
        events.append(
            {b.firstAt, tr("<b>%1</b> compensates %2 copies, ¥ %3")
                            .arg(esc(b.by), QString::number(b.actions), yuan(b.amountFen))});
    std::stable_sort(events.begin(), events.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    QString timeline;
    for (const auto &[at, text] : events)
        timeline += row({when(at), text});
    if (timeline.isEmpty())
        html += QStringLiteral("<p>%1</p>")
                    .arg(tr("No extra copy was issued and the switch did not flip in the window."));
    else
        html += table(row({tr("UTC"), tr("what happened")}, true) + timeline);
    if (f.flips.isEmpty())
        html += QStringLiteral("<p>%1</p>").arg(tr("The switch did not flip in the window."));
    html += QStringLiteral("<p>%1</p>").arg(tr("The switch is %1 now.").arg(esc(f.switchModeNow)));

    html += QStringLiteral("<h2>%1</h2>").arg(tr("Compensation"));
    if (f.batches.isEmpty()) {
        html += QStringLiteral("<p>%1</p>")
                    .arg(tr("None of the window's extra copies has been compensated."));
    } else {
        QString rows = headerRow({{tr("when (UTC)"), 22},
                                  {tr("by"), 17},
                                  {tr("actions"), 12},
                                  {tr("amount (¥)"), 14},
                                  {tr("ticket"), 13},
                                  {tr("reason"), 22}});
        for (const CompensationBatchFact &b : f.batches)
            rows +=
                row({b.firstAt == b.lastAt ? when(b.firstAt)
                                           : tr("%1 to %2").arg(when(b.firstAt), when(b.lastAt)),
                     esc(b.by), QString::number(b.actions), yuan(b.amountFen), esc(b.ticket),
                     esc(b.reason)});
        html += table(rows);
    }

    html += QStringLiteral("<h2>%1</h2>").arg(tr("Reconciliation"));
    const ReconciliationFact &r = f.reconciliation;
    if (!r.present) {
        html +=
            QStringLiteral("<p>%1</p>")
                .arg(tr("No reconciliation with a platform statement was started in the window."));
    } else {
        html += QStringLiteral("<p>%1</p>")
                    .arg(tr("Run %1, started %2 UTC by <b>%3</b>%4: the %5 statement <i>%6</i> of "
                            "channel %7, "
                            "period %8 to %9 UTC, %10 lines (%11 unreadable).")
                             // One call: a chained .arg() would read a %1 in the file's name or
                             // channel as the place of the next argument.
                             .arg(QString::number(r.runId), when(r.startedAt), esc(r.startedBy),
                                  r.finished ? QString() : tr(" (it did not finish)"),
                                  esc(r.format), esc(r.sourceFile), esc(r.channel),
                                  when(r.periodStart), when(r.periodEnd), QString::number(r.lines),
                                  QString::number(r.unreadableLines)));
        QString rows = row({tr("finding"), tr("count")}, true);
        for (const ReconciliationFindingCount &finding : r.findings)
            rows += row({finding.kind, QString::number(finding.count)});
        rows +=
            row({tr("<b>all findings</b>"), QStringLiteral("<b>%1</b>").arg(r.totalFindings())});
        html += table(rows);
    }

    html += QStringLiteral("<h2>%1</h2>").arg(tr("Audit chain"));
    html += QStringLiteral("<p>%1</p><p><tt>%2</tt></p><p>%3</p>")
                .arg(tr("Head at entry %1, hash:").arg(f.auditHeadId), esc(f.auditHeadHash),
                     f.auditHeadMatchesLog ? tr("The head names the log's newest entry and its "
                                                "hash. Keep this hash elsewhere: "
                                                "<tt>payops audit verify</tt> prints it again for "
                                                "the whole chain, and any entry "
                                                "edited or removed since would change it.")
                                           : tr("<b>The head does not match the log's newest "
                                                "entry: run <tt>payops audit verify</tt>.</b>"));
    html += QStringLiteral("<h2 style=\"page-break-before: always\">%1</h2>").arg(tr("Charts"));
    const QString bucket = f.series.bucketSeconds == 60
                               ? tr("minute")
                               : tr("%1 minutes").arg(f.series.bucketSeconds / 60);
    html += QStringLiteral(
                "<p><img src=\"%1\" width=\"520\"/></p><p><img src=\"%2\" width=\"520\"/></p>")
                .arg(kDuplicatesChart.toString(), kDeliveriesChart.toString());
    html += QStringLiteral("<p>%1</p>")
                .arg(tr("Bars per %1, UTC. Dashed lines: the switch flipping to RECORD_ONLY "
                        "(orange) and back to "
                        "NORMAL (green).")
                         .arg(bucket));

    return html + QStringLiteral("</body></html>");
}

QImage IncidentReport::chart(const QList<qint64> &series, const QString &title,
                             const QColor &bars) const
{
    const QSize size(1800, 520);
    const QRect plot(130, 80, size.width() - 270, size.height() - 170);
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    QFont font = reportFont(10);
    font.setPixelSize(34);
    font.setBold(true);
    p.setFont(font);
    p.setPen(kInk);
    p.drawText(QRect(plot.left(), 10, plot.width(), 50), Qt::AlignLeft | Qt::AlignVCenter, title);

    const qint64 highest = series.isEmpty() ? 0 : *std::max_element(series.begin(), series.end());
    // Gridlines at a round step (1, 2 or 5 times a power of ten), about four of them.
    qint64 step = 1;
    while (step * 4 < highest)
        step = QString::number(step).startsWith(QLatin1Char('2')) ? step / 2 * 5 : step * 2;
    const int lines = int(std::max<qint64>(1, (highest + step - 1) / step));
    const qint64 peak = step * lines;
    font.setPixelSize(30);
    p.setFont(font);
    for (int i = 0; i <= lines; ++i) {
        const int y = plot.bottom() - plot.height() * i / lines;
        p.setPen(kGrid);
        p.drawLine(plot.left(), y, plot.right(), y);
        p.setPen(kInk);
        p.drawText(QRect(0, y - 20, plot.left() - 12, 40), Qt::AlignRight | Qt::AlignVCenter,
                   QLocale::c().toString(step * i));
    }
    const int n = std::max<int>(1, int(series.size()));
    const double barWidth = double(plot.width()) / n;
    for (int i = 0; i < series.size(); ++i) {
        const double h = double(plot.height()) * double(series.at(i)) / double(peak);
        p.fillRect(QRectF(plot.left() + i * barWidth + barWidth * 0.1, plot.bottom() - h,
                          std::max(1.0, barWidth * 0.8), h),
                   bars);
    }
    // Time labels at about six even places.
    font.setBold(false);
    p.setFont(font);
    const qint64 span = m_facts.from.secsTo(m_facts.to);
    for (int i = 0; i <= 6; ++i) {
        const int x = plot.left() + plot.width() * i / 6;
        p.setPen(kInk);
        p.drawLine(x, plot.bottom(), x, plot.bottom() + 8);
        const QDateTime at = m_facts.from.addSecs(span * i / 6);
        p.drawText(
            QRect(x - 140, plot.bottom() + 10, 280, 40), Qt::AlignHCenter | Qt::AlignTop,
            at.toString(span > 86400 ? QStringLiteral("MM-dd HH:mm") : QStringLiteral("HH:mm")));
    }
    p.drawText(QRect(plot.left(), plot.bottom() + 50, plot.width(), 40),
               Qt::AlignHCenter | Qt::AlignTop, tr("UTC"));
    for (const SwitchFlipFact &flip : m_facts.flips) {
        const double x = plot.left() + double(plot.width()) *
                                           double(m_facts.from.msecsTo(flip.at)) /
                                           double(span * 1000);
        QPen pen(flip.toMode == QLatin1String("NORMAL") ? kToNormal : kToRecordOnly, 4,
                 Qt::DashLine);
        p.setPen(pen);
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
    p.setPen(kInk);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    return image;
}

void IncidentReport::writePdf(const QString &path) const
{
    const auto fail = [&path](const QString &why) {
        throw std::runtime_error(tr("cannot write %1: %2").arg(path, why).toStdString());
    };
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        fail(file.errorString());
    {
        QPdfWriter pdf(&file);
        pdf.setTitle(tr("Incident report"));
        pdf.setCreator(QStringLiteral("payops"));
        pdf.setResolution(300);
        pdf.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait,
                                      QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter));
        QTextDocument document;
        document.setDefaultFont(reportFont(10));
        document.setDefaultStyleSheet(
            QStringLiteral("h1 { font-size: 20pt; } h2 { font-size: 14pt; margin-top: 14px; } "
                           "th { background-color: #eeeeee; text-align: left; }"));
        document.addResource(
            QTextDocument::ImageResource, kDuplicatesChart,
            chart(m_facts.series.duplicates, tr("Extra copies issued"), kDuplicateBars));
        document.addResource(QTextDocument::ImageResource, kDeliveriesChart,
                             chart(m_facts.series.deliveries,
                                   tr("Callbacks received by the instances"), kDeliveryBars));
        document.setHtml(html());
        document.print(&pdf);
    }
    if (!file.commit())
        fail(file.errorString());
}

} // namespace payops
