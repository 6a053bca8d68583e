#include "swimlanescene.h"

#include "palette.h"

#include <QBrush>
#include <QFont>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QPen>

#include <algorithm>

namespace payops {
namespace {

constexpr qreal laneLeft = 170;
constexpr qreal laneBase = 112;     // room for a trace's bars
constexpr qreal plainLaneBase = 36; // a lane with events only
constexpr qreal forwardRow = 40;    // a gateway's lane: the forwards below the bars
constexpr qreal eventRow = 17;
constexpr qreal breakWidth = 90;
constexpr qint64 foldAboveMicros = 500'000; // quiet stretches longer than this are folded

QList<qint64> stepsOf(const console::CallbackTrace &t)
{
    QList<qint64> steps;
    for (qint64 at : {t.received, t.lockAcquired, t.txBegin, t.committed, t.lockReleased,
                      t.forwarded, t.upstreamAnswered, t.responded})
        if (at)
            steps << at;
    return steps;
}

} // namespace

SwimlaneScene::SwimlaneScene(QObject *parent)
    : QGraphicsScene(parent)
{
}

void SwimlaneScene::buildAxis(const console::OrderEvidence &evidence)
{
    QList<qint64> moments;
    for (const console::CallbackTrace &t : evidence.traces)
        moments << stepsOf(t);
    for (const console::EvidenceEvent &e : evidence.events)
        moments << e.micros;
    std::sort(moments.begin(), moments.end());
    moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
    m_axis.clear();
    if (moments.isEmpty())
        return;
    // Scale so that the bursts of activity together fill about 640 px, the width of the view:
    // a platform's retry seconds later (folded) stays in view beside the first delivery.
    qint64 burstMicros = 0;
    for (int i = 1; i < moments.size(); ++i)
        if (const qint64 gap = moments.at(i) - moments.at(i - 1); gap <= foldAboveMicros)
            burstMicros += gap;
    const qreal burstMs = qMax<qreal>(1.0, qreal(burstMicros) / 1000.0);
    const qreal pxPerMs = qBound<qreal>(0.5, 640.0 / burstMs, 40.0);
    qreal at = laneLeft + 20;
    for (int i = 0; i < moments.size(); ++i) {
        if (i > 0) {
            const qint64 gap = moments.at(i) - moments.at(i - 1);
            at += gap > foldAboveMicros ? breakWidth : qreal(gap) / 1000.0 * pxPerMs;
        }
        m_axis << qMakePair(moments.at(i), at);
    }
}

qreal SwimlaneScene::x(qint64 micros) const
{
    const auto it = std::lower_bound(
        m_axis.cbegin(), m_axis.cend(), micros,
        [](const QPair<qint64, qreal> &p, qint64 value) { return p.first < value; });
    return it == m_axis.cend() ? (m_axis.isEmpty() ? laneLeft : m_axis.last().second) : it->second;
}

void SwimlaneScene::setEvidence(const console::OrderEvidence &evidence)
{
    clear();
    m_origin = evidence.originMicros;
    m_lanes = evidence.lanes;
    buildAxis(evidence);
    if (m_axis.isEmpty()) {
        addSimpleText(tr("Nothing was recorded for this order."))->setBrush(palette::text());
        return;
    }
    const qreal right = m_axis.last().second + 320;
    const QList<int> rows = placeEvents(evidence);
    m_laneTops.clear();
    m_laneBases.clear();
    qreal top = 0;
    for (int i = 0; i < m_lanes.size(); ++i) {
        const bool hasTrace = std::any_of(
            evidence.traces.cbegin(), evidence.traces.cend(),
            [&](const console::CallbackTrace &t) { return t.instance == m_lanes.at(i); });
        const bool hasForward = std::any_of(evidence.traces.cbegin(), evidence.traces.cend(),
                                            [&](const console::CallbackTrace &t) {
                                                return t.instance == m_lanes.at(i) && t.forwarded;
                                            });
        m_laneTops << top;
        m_laneBases << (hasForward ? laneBase + forwardRow : hasTrace ? laneBase : plainLaneBase);
        top += m_laneBases.last() + rows.value(i) * eventRow + 16;
    }
    m_laneTops << top;
    for (int i = 0; i < m_lanes.size(); ++i) {
        const qreal laneTop = m_laneTops.at(i);
        const qreal height = m_laneTops.at(i + 1) - laneTop - 8;
        addRect(
            QRectF(0, laneTop, right, height), QPen(Qt::NoPen),
            QBrush(i % 2 ? palette::alternateBase() : palette::tint(palette::Role::Neutral, 0.08)));
        auto *name = addSimpleText(m_lanes.at(i));
        name->setBrush(palette::text());
        QFont bold = name->font();
        bold.setBold(true);
        name->setFont(bold);
        name->setPos(10, laneTop + 10);
    }
    // Folded breaks, marked on every lane; their labels alternate between two rows so that
    // breaks next to each other stay readable.
    int breaks = 0;
    for (int i = 1; i < m_axis.size(); ++i) {
        const qint64 gap = m_axis.at(i).first - m_axis.at(i - 1).first;
        if (gap <= foldAboveMicros)
            continue;
        const qreal mid = (m_axis.at(i).second + m_axis.at(i - 1).second) / 2;
        addLine(mid, 0, mid, top, QPen(palette::muted(), 1, Qt::DotLine));
        auto *text = addSimpleText(tr("⋯ %1 later").arg(console::formatGap(gap)));
        text->setBrush(palette::muted());
        text->setPos(mid - text->boundingRect().width() / 2, top + 4 + (breaks++ % 2) * 16);
    }
    for (const console::CallbackTrace &t : evidence.traces)
        drawTrace(t, m_laneTops.at(qMax(0, int(m_lanes.indexOf(t.instance)))));
    drawEvents(evidence);
    setSceneRect(itemsBoundingRect().adjusted(-10, -10, 10, 10));
}

void SwimlaneScene::drawGapLabel(qint64 from, qint64 to, qreal y)
{
    const qreal x1 = x(from);
    const qreal x2 = x(to);
    if (x2 - x1 < 48 || to - from > foldAboveMicros)
        return; // too narrow to read, or folded
    auto *text = addSimpleText(console::formatGap(to - from));
    QFont small = text->font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    text->setFont(small);
    text->setBrush(palette::muted());
    text->setPos((x1 + x2) / 2 - text->boundingRect().width() / 2, y);
}

void SwimlaneScene::drawSpan(qint64 from, qint64 to, qreal y, const QColor &colour,
                             const QString &name, const QString &tip, qreal gapLabelY)
{
    if (!from || !to)
        return;
    auto *span = addRect(QRectF(x(from), y, qMax<qreal>(2, x(to) - x(from)), 14), QPen(colour),
                         QBrush(palette::tint(colour, 0.35)));
    span->setToolTip(tip.arg(console::formatGap(to - from)));
    auto *label = addSimpleText(name);
    label->setBrush(palette::text());
    label->setPos(x(from) - label->boundingRect().width() - 6, y - 2);
    drawGapLabel(from, to, gapLabelY);
}

void SwimlaneScene::drawTrace(const console::CallbackTrace &t, qreal top)
{
    const qreal bar = 14;
    const qreal callY = top + 40;
    const qreal lockY = top + 62;
    const qreal txY = top + 84;
    // The whole callback, from receipt to answer.
    if (t.received && t.responded)
        addRect(QRectF(x(t.received), callY, x(t.responded) - x(t.received), 4), QPen(Qt::NoPen),
                QBrush(palette::muted()));
    const QString subject = QString::fromUtf8(t.subject());
    auto *who = addSimpleText(t.handler == QLatin1String("gateway")
                                  ? tr("%1 · gateway").arg(subject)
                                  : tr("%1 · %2 handler").arg(subject, t.handler));
    who->setBrush(palette::text());
    who->setPos(x(t.received), top + 22);
    drawSpan(t.lockAcquired, t.lockReleased, lockY, palette::colour(palette::Role::Lock),
             tr("lock"), tr("lock held %1"), lockY - 16);
    drawSpan(t.txBegin, t.committed, txY, palette::colour(palette::Role::Transaction), tr("tx"),
             tr("transaction open %1"), txY + bar + 2);
    if (t.releasedBeforeCommit()) {
        // The phantom: between these two moments the lock is free and the order still reads
        // as PENDING to everyone else.
        const QColor red = palette::danger();
        auto *danger =
            addRect(QRectF(x(t.lockReleased), lockY, x(t.committed) - x(t.lockReleased), bar),
                    QPen(red, 2), QBrush(red, Qt::BDiagPattern));
        danger->setData(KindKey, QStringLiteral("unsafeRelease"));
        const QString words = tr("⚠ lock released %1 before commit")
                                  .arg(console::formatGap(t.committed - t.lockReleased));
        danger->setData(TextKey, words);
        danger->setToolTip(words);
        auto *text = addSimpleText(words);
        text->setData(KindKey, QStringLiteral("unsafeReleaseText"));
        QFont bold = text->font();
        bold.setBold(true);
        text->setFont(bold);
        text->setBrush(red);
        text->setPos(x(t.committed) + 8, lockY - 2);
    }
    if (t.forwarded)
        drawForward(t, top + 106);
    const auto steps = stepsOf(t);
    QColor guide = palette::muted();
    guide.setAlphaF(0.4f);
    const qreal guideEnd = (t.forwarded ? top + 106 : txY) + bar;
    for (qint64 at : steps)
        addLine(x(at), callY - 4, x(at), guideEnd, QPen(guide, 1, Qt::DotLine));
}

void SwimlaneScene::drawForward(const console::CallbackTrace &t, qreal y)
{
    // From the forward to the upstream's answer; without one, until the gateway gave up and
    // answered the platform itself.
    const qint64 end = t.upstreamAnswered ? t.upstreamAnswered : t.responded;
    const bool accepted = t.upstreamStatus >= 200 && t.upstreamStatus < 300;
    const QColor colour = !t.upstreamAnswered ? palette::danger()
                          : accepted          ? palette::ok()
                                              : palette::warning();
    drawSpan(t.forwarded, end, y, colour, tr("upstream"),
             t.upstreamAnswered ? tr("forwarded; the upstream answered after %1")
                                : tr("forwarded; no answer from the upstream in %1"),
             y + 16);
    const QString words = t.upstreamAnswered
                              ? tr("→ upstream answered HTTP %1").arg(t.upstreamStatus)
                              : tr("→ upstream: no answer");
    auto *text = addSimpleText(words);
    text->setData(KindKey, QStringLiteral("forward"));
    text->setData(TextKey, words);
    text->setBrush(colour);
    text->setPos(x(end ? end : t.forwarded) + 8, y - 2);
}

QList<int> SwimlaneScene::placeEvents(const console::OrderEvidence &evidence)
{
    // Labels of events a few milliseconds apart would overprint each other: each goes on the
    // first row of its lane where the previous label has ended.
    m_eventRows.clear();
    QHash<QString, QList<qreal>> rowEnds;
    QList<int> rowsPerLane(m_lanes.size(), 0);
    QFont small;
    small.setPointSizeF(small.pointSizeF() * 0.85);
    const QFontMetricsF metrics(small);
    for (const console::EvidenceEvent &e : evidence.events) {
        const qreal start = x(e.micros) - 4;
        const qreal end = x(e.micros) + 10 + metrics.horizontalAdvance(label(e));
        QList<qreal> &ends = rowEnds[e.lane];
        int row = 0;
        while (row < ends.size() && ends.at(row) > start)
            ++row;
        if (row == ends.size())
            ends << end;
        else
            ends[row] = end;
        m_eventRows << row;
        const int lane = qMax(0, int(m_lanes.indexOf(e.lane)));
        rowsPerLane[lane] = qMax(rowsPerLane.at(lane), row + 1);
    }
    return rowsPerLane;
}

QString SwimlaneScene::label(const console::EvidenceEvent &e) const
{
    return QStringLiteral("%1 %2").arg(console::formatOffset(e.micros, m_origin), e.text);
}

void SwimlaneScene::drawEvents(const console::OrderEvidence &evidence)
{
    for (int i = 0; i < evidence.events.size(); ++i) {
        const console::EvidenceEvent &e = evidence.events.at(i);
        const int lane = qMax(0, int(m_lanes.indexOf(e.lane)));
        const qreal y =
            m_laneTops.at(lane) + m_laneBases.at(lane) + m_eventRows.value(i) * eventRow;
        const QColor colour = e.bad ? palette::danger() : palette::text();
        addEllipse(QRectF(x(e.micros) - 4, y + 3, 8, 8), QPen(colour), QBrush(colour));
        auto *text = addSimpleText(label(e));
        QFont small = text->font();
        small.setPointSizeF(small.pointSizeF() * 0.85);
        text->setFont(small);
        text->setBrush(colour);
        text->setPos(x(e.micros) + 6, y - 1);
        text->setData(KindKey, e.bad ? QStringLiteral("badEvent") : QStringLiteral("event"));
    }
}

} // namespace payops
