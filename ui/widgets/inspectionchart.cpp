#include "inspectionchart.h"

#include "palette.h"

#include <QChart>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

namespace payops {
namespace {

QLineSeries *addSeries(QChart *chart, const QString &name, const QColor &colour)
{
    auto *series = new QLineSeries(chart);
    series->setName(name);
    series->setColor(colour);
    series->setPointsVisible(true);
    chart->addSeries(series);
    return series;
}

} // namespace

InspectionChart::InspectionChart(QWidget *parent)
    // The chart is handed to the view's constructor: QChartView(parent) makes a default chart of
    // its own, and a later setChart() releases that one without deleting it.
    : QChartView(new QChart, parent)
{
    setObjectName(QStringLiteral("inspectionChart"));
    QChart *chart = this->chart();
    // The chart paints its own background: on a dark desktop a light chart would glare.
    chart->setTheme(palette::isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(tr("Findings per inspection"));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    m_duplicates = addSeries(chart, tr("Open duplicate groups"), palette::danger());
    m_unmatched = addSeries(chart, tr("Unmatched callbacks"), palette::warning());
    m_refunds = addSeries(chart, tr("Orders paid twice (refunds owed)"),
                          palette::colour(palette::Role::Coupon));
    auto *time = new QDateTimeAxis(chart);
    time->setFormat(QStringLiteral("MM-dd HH:mm"));
    time->setTitleText(tr("UTC"));
    auto *counts = new QValueAxis(chart);
    counts->setLabelFormat(QStringLiteral("%d"));
    chart->addAxis(time, Qt::AlignBottom);
    chart->addAxis(counts, Qt::AlignLeft);
    for (QLineSeries *series : {m_duplicates, m_unmatched, m_refunds}) {
        series->attachAxis(time);
        series->attachAxis(counts);
    }
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(220);
    setRuns({});
}

void InspectionChart::setRuns(QList<InspectionRun> runs)
{
    std::sort(runs.begin(), runs.end(), [](const InspectionRun &a, const InspectionRun &b) {
        return a.startedAt < b.startedAt;
    });
    QList<QPointF> duplicates;
    QList<QPointF> unmatched;
    QList<QPointF> refunds;
    qint64 peak = 0;
    for (const InspectionRun &run : std::as_const(runs)) {
        const auto x = double(run.startedAt.toMSecsSinceEpoch());
        duplicates << QPointF(x, double(run.duplicateGroups));
        unmatched << QPointF(x, double(run.unmatched));
        refunds << QPointF(x, double(run.doublePaymentOrders));
        peak = std::max({peak, run.duplicateGroups, run.unmatched, run.doublePaymentOrders});
    }
    m_duplicates->replace(duplicates);
    m_unmatched->replace(unmatched);
    m_refunds->replace(refunds);

    const QDateTime now = QDateTime::currentDateTimeUtc();
    QDateTime from = runs.isEmpty() ? now.addSecs(-3600) : runs.first().startedAt;
    QDateTime to = runs.isEmpty() ? now : runs.last().startedAt;
    if (from.secsTo(to) < 600) { // one run, or a few close together: a window the axis can label
        from = from.addSecs(-300);
        to = to.addSecs(300);
    }
    const auto axes = chart()->axes();
    for (QAbstractAxis *axis : axes) {
        if (auto *time = qobject_cast<QDateTimeAxis *>(axis))
            time->setRange(from, to);
        else if (auto *counts = qobject_cast<QValueAxis *>(axis)) {
            // At least 0..4, so that an empty chart does not label its quarter steps "0 0 0 0 1".
            counts->setRange(0, double(std::max<qint64>(4, peak)));
            counts->applyNiceNumbers();
        }
    }
}

} // namespace payops
