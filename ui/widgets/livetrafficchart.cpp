#include "livetrafficchart.h"

#include "console/livetraffic.h"
#include "palette.h"

#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QPen>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace payops {
namespace {

// QDateTimeAxis labels its values in local time; the console speaks UTC everywhere, so the
// values are moved by the local offset and the labels read UTC.
qint64 shownMs(qint64 utcMs)
{
    return utcMs + qint64(QDateTime::fromMSecsSinceEpoch(utcMs).offsetFromUtc()) * 1000;
}

QValueAxis *countAxis(const QString &title, const QColor &colour)
{
    auto *axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setLabelFormat(QStringLiteral("%d"));
    axis->setTitleBrush(colour);
    // A size smaller than the theme's: Qt Charts gives the upright title only the axis's width,
    // and in Chinese the theme's size was cut to "..." on a laptop screen.
    QFont font = axis->titleFont();
    font.setPointSizeF(font.pointSizeF() * 0.9);
    axis->setTitleFont(font);
    axis->setLabelsColor(colour);
    axis->setRange(0, 4);
    return axis;
}

void setPeak(QValueAxis *axis, double peak)
{
    axis->setRange(0, std::max(4.0, peak * 1.15));
    axis->applyNiceNumbers();
}

} // namespace

LiveTrafficChart::LiveTrafficChart(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("liveTrafficChart"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *chart = new QChart;
    chart->setTheme(palette::isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(tr("The last 15 minutes"));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));

    m_time = new QDateTimeAxis;
    m_time->setFormat(QStringLiteral("HH:mm:ss"));
    m_time->setTickCount(6);
    m_time->setTitleText(tr("UTC"));
    const QColor rateColour = palette::colour(palette::Role::Neutral);
    const QColor duplicateColour = palette::danger();
    m_rateAxis = countAxis(tr("callbacks / s"), rateColour);
    m_duplicateAxis = countAxis(tr("duplicates / min"), duplicateColour);
    chart->addAxis(m_time, Qt::AlignBottom);
    chart->addAxis(m_rateAxis, Qt::AlignLeft);
    chart->addAxis(m_duplicateAxis, Qt::AlignRight);

    m_rate = new QLineSeries;
    m_rate->setName(tr("callbacks per second"));
    m_rate->setPen(QPen(rateColour, 1.5));
    m_duplicates = new QLineSeries;
    m_duplicates->setName(tr("duplicate side effects per minute"));
    m_duplicates->setPen(QPen(duplicateColour, 2.5));
    for (QLineSeries *series : {m_rate, m_duplicates}) {
        chart->addSeries(series);
        series->attachAxis(m_time);
    }
    m_rate->attachAxis(m_rateAxis);
    m_duplicates->attachAxis(m_duplicateAxis);

    m_view = new QChartView(chart, this);
    m_view->setObjectName(QStringLiteral("liveTrafficView"));
    m_view->setRenderHint(QPainter::Antialiasing);
    // Still readable below the tiles on a 768 px laptop screen.
    m_view->setMinimumHeight(200);
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("liveTrafficCaption"));
    m_caption->setWordWrap(true);
    palette::setTextRole(m_caption, palette::Role::Muted);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_caption);
}

QChart *LiveTrafficChart::chart() const
{
    return m_view->chart();
}

QLineSeries *LiveTrafficChart::flipLine(const QString &mode)
{
    const bool recordOnly = mode == QLatin1String("RECORD_ONLY");
    auto *line = new QLineSeries;
    line->setName(recordOnly ? tr("switch → RECORD_ONLY") : tr("switch → NORMAL"));
    QPen pen(recordOnly ? palette::warning() : palette::ok(), 2, Qt::DashLine);
    line->setPen(pen);
    line->setProperty("mode", mode);
    chart()->addSeries(line);
    line->attachAxis(m_time);
    line->attachAxis(m_rateAxis);
    // One legend entry per kind of flip, however many there are.
    const bool firstOfItsKind =
        std::none_of(m_flips.begin(), m_flips.end(), [&mode](const QLineSeries *other) {
            return other->property("mode").toString() == mode;
        });
    for (QLegendMarker *marker : chart()->legend()->markers(line))
        marker->setVisible(firstOfItsKind);
    m_flips << line;
    return line;
}

void LiveTrafficChart::setTraffic(const console::LiveTraffic &traffic)
{
    // Every second of the window, zeros included: a quiet second is a fact, not a gap.
    QHash<qint64, qint64> perSecond;
    for (const auto &bucket : traffic.callbacksPerSecond)
        perSecond.insert(bucket.startMs, bucket.count);
    QList<QPointF> rate;
    qint64 peakRate = 0;
    const qint64 first = traffic.windowStartMs - traffic.windowStartMs % 1000;
    for (qint64 second = first; second <= traffic.nowMs; second += 1000) {
        const qint64 count = perSecond.value(second);
        peakRate = std::max(peakRate, count);
        rate << QPointF(shownMs(second), count);
    }
    m_rate->replace(rate);

    // A step per bucket, as a rate per minute, flat at zero where none were made.
    constexpr qint64 bucketMs = console::LiveTraffic::kDuplicateBucketMs;
    QList<QPointF> steps;
    double peakDuplicates = 0;
    qint64 totalDuplicates = 0;
    qint64 previousEnd = traffic.windowStartMs;
    steps << QPointF(shownMs(previousEnd), 0);
    for (const auto &bucket : traffic.duplicates) {
        const qint64 from = std::max(bucket.startMs, traffic.windowStartMs);
        const qint64 to = std::min(bucket.startMs + bucketMs, traffic.nowMs);
        const double perMinute = double(bucket.count) * 60'000 / double(bucketMs);
        if (from != previousEnd) // a quiet stretch before this bucket
            steps << QPointF(shownMs(previousEnd), 0) << QPointF(shownMs(from), 0);
        steps << QPointF(shownMs(from), perMinute) << QPointF(shownMs(to), perMinute);
        previousEnd = to;
        peakDuplicates = std::max(peakDuplicates, perMinute);
        totalDuplicates += bucket.count;
    }
    steps << QPointF(shownMs(previousEnd), 0);
    steps << QPointF(shownMs(traffic.nowMs), 0);
    m_duplicates->replace(steps);

    m_time->setRange(QDateTime::fromMSecsSinceEpoch(shownMs(traffic.windowStartMs)),
                     QDateTime::fromMSecsSinceEpoch(shownMs(traffic.nowMs)));
    setPeak(m_rateAxis, double(peakRate));
    setPeak(m_duplicateAxis, peakDuplicates);

    for (QLineSeries *line : std::as_const(m_flips)) {
        chart()->removeSeries(line);
        delete line;
    }
    m_flips.clear();
    for (const auto &flip : traffic.flips)
        flipLine(flip.mode)->replace(
            {QPointF(shownMs(flip.atMs), 0), QPointF(shownMs(flip.atMs), m_rateAxis->max())});

    const QLocale locale;
    qint64 lastMinute = 0;
    for (const auto &bucket : traffic.callbacksPerSecond)
        if (bucket.startMs > traffic.nowMs - 60'000)
            lastMinute += bucket.count;
    QString text = tr("%1 deliveries in the last minute, copies included · %2 duplicate side "
                      "effects made in the window")
                       .arg(locale.toString(lastMinute), locale.toString(totalDuplicates));
    if (!traffic.flips.isEmpty()) {
        const auto &last = traffic.flips.constLast();
        text += tr(" · switch set to %1 at %2 UTC by %3")
                    .arg(last.mode,
                         QDateTime::fromMSecsSinceEpoch(last.atMs, Qt::UTC)
                             .toString(QStringLiteral("HH:mm:ss")),
                         last.actor);
    }
    m_caption->setText(text);
}

void LiveTrafficChart::setError(const QString &message)
{
    m_caption->setText(tr("Live chart not updated: %1").arg(message));
}

} // namespace payops
