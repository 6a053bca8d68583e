#pragma once

#include "console/orderevidence.h"

#include <QGraphicsScene>
#include <QList>
#include <QPair>

namespace payops {

// One order's evidence as swimlanes, one per service instance, on one time axis, like the
// sequence diagram of the incident: each callback's lock and transaction as bars, every
// other event as a marker, millisecond gaps labelled. Quiet stretches longer than a moment
// (a refund hours later) are folded into a marked break so that milliseconds stay readable.
// A lock released before its transaction committed is drawn red and named in words. A
// gateway's delivery has a third bar, its forward to the upstream, with the upstream's answer.
class SwimlaneScene final : public QGraphicsScene
{
    Q_OBJECT

public:
    enum DataKey { KindKey = 0, TextKey };

    explicit SwimlaneScene(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(SwimlaneScene)

    void setEvidence(const console::OrderEvidence &evidence);

private:
    void buildAxis(const console::OrderEvidence &evidence);
    qreal x(qint64 micros) const;
    // A bar from `from` to `to` (a lock held, a transaction open), named, with its length.
    void drawSpan(qint64 from, qint64 to, qreal y, const QColor &colour, const QString &name,
                  const QString &tip, qreal gapLabelY);
    void drawTrace(const console::CallbackTrace &trace, qreal top);
    // A gateway's forward of the callback to the upstream, and the upstream's answer.
    void drawForward(const console::CallbackTrace &trace, qreal y);
    // Returns the number of label rows each lane needs.
    QList<int> placeEvents(const console::OrderEvidence &evidence);
    QString label(const console::EvidenceEvent &event) const;
    void drawEvents(const console::OrderEvidence &evidence);
    void drawGapLabel(qint64 from, qint64 to, qreal y);

    QList<QPair<qint64, qreal>> m_axis; // each moment drawn and its x
    qint64 m_origin = 0;
    QStringList m_lanes;
    QList<qreal> m_laneTops;  // one more than lanes: the last is the bottom
    QList<qreal> m_laneBases; // where each lane's event rows begin, below its bars
    QList<int> m_eventRows;   // label row of each event, by index
};

} // namespace payops
