#include "duplicatecharts.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "palette.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

namespace payops {
namespace {

QChartView *makeView(const QString &objectName, const QString &title, QWidget *parent)
{
    auto *chart = new QChart;
    // The chart paints its own background: on a dark desktop a light chart would glare.
    chart->setTheme(palette::isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    auto *view = new QChartView(chart, parent);
    view->setObjectName(objectName);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    return view;
}

void clear(QChart *chart)
{
    chart->removeAllSeries();
    for (QAbstractAxis *axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
}

// A count axis with whole-number ticks: at least 0..4, so that an empty chart does not label
// its quarter steps "0 0 0 0 1".
QValueAxis *countAxis(double peak)
{
    auto *axis = new QValueAxis;
    axis->setLabelFormat(QStringLiteral("%d"));
    axis->setRange(0, qMax(4.0, peak));
    axis->applyNiceNumbers();
    return axis;
}

} // namespace

DuplicateCharts::DuplicateCharts(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_timeline =
        makeView(QStringLiteral("timelineChart"), tr("Extra copies issued over time"), this);
    m_byKind = makeView(QStringLiteral("kindChart"), tr("Open duplicates by kind"), this);
    layout->addWidget(m_timeline, 3);
    layout->addWidget(m_byKind, 2);
}

QChart *DuplicateCharts::timelineChart() const
{
    return m_timeline->chart();
}

QChart *DuplicateCharts::kindChart() const
{
    return m_byKind->chart();
}

void DuplicateCharts::setTimeline(const console::DuplicateTimeline &timeline)
{
    QChart *chart = m_timeline->chart();
    clear(chart);
    chart->setTitle(timeline.perHour ? tr("Extra copies issued per hour (UTC)")
                                     : tr("Extra copies issued per minute (UTC)"));
    auto *coupons = new QBarSet(tr("coupons"));
    auto *points = new QBarSet(tr("points"));
    coupons->setColor(palette::colour(palette::Role::Coupon));
    points->setColor(palette::colour(palette::Role::Points));
    qint64 peak = 0;
    QStringList labels;
    // Long axes get sparse labels: a label on every bucket would be unreadable.
    const qsizetype every = qMax<qsizetype>(1, timeline.buckets.size() / 12);
    for (qsizetype i = 0; i < timeline.buckets.size(); ++i) {
        *coupons << double(timeline.coupons.at(i));
        *points << double(timeline.points.at(i));
        peak = qMax(peak, timeline.coupons.at(i) + timeline.points.at(i));
        // MM-DD over HH:mm: on one line it is wider than a bucket once the page shares a
        // laptop's screen with the playbook, and Qt Charts cuts it to "12-03 2...".
        const QString label = timeline.buckets.at(i).mid(5, 5) + QStringLiteral("<br>") +
                              timeline.buckets.at(i).mid(11, 5);
        labels << (i % every == 0 ? label : QString(i, QLatin1Char(' ')));
    }
    auto *series = new QStackedBarSeries;
    series->append(coupons);
    series->append(points);
    chart->addSeries(series);
    auto *axisX = new QBarCategoryAxis;
    axisX->append(labels);
    axisX->setLabelsAngle(labels.size() > 6 ? -45 : 0);
    auto *axisY = countAxis(double(peak));
    chart->addAxis(axisX, Qt::AlignBottom);
    chart->addAxis(axisY, Qt::AlignLeft);
    series->attachAxis(axisX);
    series->attachAxis(axisY);
    if (timeline.buckets.isEmpty())
        chart->setTitle(tr("No open duplicates in this window"));
}

void DuplicateCharts::setTotals(const console::DuplicateTotals &totals)
{
    QChart *chart = m_byKind->chart();
    clear(chart);
    auto *extra = new QBarSet(tr("extra copies"));
    extra->setColor(palette::colour(palette::Role::Neutral));
    *extra << double(totals.couponExtra) << double(totals.pointExtra);
    auto *series = new QHorizontalBarSeries;
    series->append(extra);
    series->setLabelsVisible(true);
    chart->addSeries(series);
    auto *axisY = new QBarCategoryAxis;
    axisY->append({tr("coupons ¥%1").arg(console::formatYuan(totals.couponFen)),
                   tr("points ¥%1").arg(console::formatYuan(totals.pointFen))});
    auto *axisX = countAxis(double(qMax(totals.couponExtra, totals.pointExtra)) * 1.15);
    chart->addAxis(axisY, Qt::AlignLeft);
    chart->addAxis(axisX, Qt::AlignBottom);
    series->attachAxis(axisY);
    series->attachAxis(axisX);
    chart->legend()->setVisible(false);
}

} // namespace payops
