#include "statemachinescene.h"

#include "palette.h"

#include <QBrush>
#include <QCursor>
#include <QFont>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLocale>
#include <QPainterPath>
#include <QPen>
#include <QtMath>

namespace payops {
namespace {

constexpr qreal nodeWidth = 170;
constexpr qreal nodeHeight = 78;
constexpr qreal layerGap = 360;
constexpr qreal rowGap = 200;

QRectF nodeRect(const console::StateNode &node)
{
    return QRectF(node.layer * layerGap, node.row * rowGap, nodeWidth, nodeHeight);
}

// Where the line from the centre of `rect` towards `towards` leaves the rectangle.
QPointF exitPoint(const QRectF &rect, const QPointF &towards)
{
    const QLineF ray(rect.center(), towards);
    const QLineF sides[] = {
        QLineF(rect.topLeft(), rect.topRight()), QLineF(rect.topRight(), rect.bottomRight()),
        QLineF(rect.bottomRight(), rect.bottomLeft()), QLineF(rect.bottomLeft(), rect.topLeft())};
    for (const QLineF &side : sides) {
        QPointF hit;
        if (ray.intersects(side, &hit) == QLineF::BoundedIntersection)
            return hit;
    }
    return rect.center();
}

QPainterPath arrowHead(const QPointF &tip, qreal angleDegrees)
{
    const qreal a = qDegreesToRadians(angleDegrees);
    const QPointF back(tip.x() - 12 * qCos(a), tip.y() + 12 * qSin(a));
    const QPointF normal(5 * qSin(a), 5 * qCos(a));
    QPainterPath head;
    head.moveTo(tip);
    head.lineTo(back + normal);
    head.lineTo(back - normal);
    head.closeSubpath();
    return head;
}

void tag(QGraphicsItem *item, const console::StateEdge &edge)
{
    item->setData(StateMachineScene::KindKey, QStringLiteral("edge"));
    item->setData(StateMachineScene::FromKey, edge.from);
    item->setData(StateMachineScene::ToKey, edge.to);
    item->setData(StateMachineScene::RejectedKey, edge.rejected);
    item->setData(StateMachineScene::CountKey, edge.count);
    item->setFlag(QGraphicsItem::ItemIsSelectable);
    item->setCursor(QCursor(Qt::PointingHandCursor));
}

} // namespace

StateMachineScene::StateMachineScene(QObject *parent)
    : QGraphicsScene(parent)
{
    connect(this, &QGraphicsScene::selectionChanged, this, &StateMachineScene::onSelectionChanged);
}

StateMachineScene::~StateMachineScene()
{
    // QGraphicsScene's destructor deselects the items, and a selectionChanged() reaching this
    // half-destroyed object would crash; clear while this class still exists.
    const QSignalBlocker blocker(this);
    clear();
}

void StateMachineScene::setSnapshot(const console::StateMachineSnapshot &snapshot)
{
    // Keep what the user selected across a refresh.
    QString selectedKey;
    if (const auto items = selectedItems(); !items.isEmpty())
        selectedKey =
            items.first()->data(NameKey).toString() + items.first()->data(FromKey).toString() +
            items.first()->data(ToKey).toString() + items.first()->data(RejectedKey).toString();
    const QSignalBlocker blocker(this);
    clear();
    m_snapshot = snapshot;
    for (const console::StateNode &node : snapshot.states)
        addState(node);
    QHash<QString, int> parallel;
    for (const console::StateEdge &edge : snapshot.edges) {
        const QString pair = edge.from < edge.to ? edge.from + edge.to : edge.to + edge.from;
        addEdge(edge, parallel[pair]++);
    }
    if (!selectedKey.isEmpty()) {
        for (QGraphicsItem *item : items())
            if (item->flags() & QGraphicsItem::ItemIsSelectable &&
                item->data(NameKey).toString() + item->data(FromKey).toString() +
                        item->data(ToKey).toString() + item->data(RejectedKey).toString() ==
                    selectedKey) {
                item->setSelected(true);
                break;
            }
    }
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
}

void StateMachineScene::selectWorstRejectedEdge()
{
    QGraphicsItem *worst = nullptr;
    for (QGraphicsItem *item : items())
        if (item->data(KindKey).toString() == QLatin1String("edgeLabel") &&
            item->data(RejectedKey).toBool() &&
            (!worst || item->data(CountKey).toLongLong() > worst->data(CountKey).toLongLong()))
            worst = item;
    if (worst) {
        clearSelection();
        worst->setSelected(true);
    }
}

void StateMachineScene::addState(const console::StateNode &node)
{
    const QRectF rect = nodeRect(node);
    // A value no state names is drawn in the colour of trouble: the mapping misses a state.
    const palette::Role role = node.named ? palette::Role::Lock : palette::Role::Danger;
    auto *box = addRect(
        rect,
        QPen(palette::colour(node.named ? palette::Role::Neutral : role), node.terminal ? 3 : 1.5),
        QBrush(palette::tint(role, 0.12)));
    box->setData(KindKey, QStringLiteral("state"));
    box->setData(NameKey, node.name);
    box->setData(CountKey, node.orders);
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    box->setCursor(QCursor(Qt::PointingHandCursor));
    if (!node.named)
        box->setToolTip(tr("%1: %2 orders created in the window hold this value, which no state "
                           "of the mapping names.")
                            .arg(node.name, QLocale().toString(node.orders)));
    else if (!m_snapshot.transitionsKnown)
        box->setToolTip(tr("%1: %2 orders created in the window are in this state now.")
                            .arg(node.name, QLocale().toString(node.orders)));
    else
        box->setToolTip(tr("%1: %2 orders entered it in the window. Click to list them.")
                            .arg(node.name, QLocale().toString(node.orders)));
    auto *name = new QGraphicsSimpleTextItem(
        node.named ? node.name : tr("value %1, unnamed").arg(node.name), box);
    name->setBrush(palette::text());
    QFont bold = name->font();
    bold.setBold(true);
    name->setFont(bold);
    name->setPos(rect.center().x() - name->boundingRect().width() / 2, rect.top() + 8);
    auto *count = new QGraphicsSimpleTextItem(QLocale().toString(node.orders), box);
    count->setBrush(palette::text());
    count->setData(KindKey, QStringLiteral("stateCount"));
    count->setData(NameKey, node.name);
    QFont big = count->font();
    big.setPointSizeF(big.pointSizeF() * 1.8);
    big.setBold(true);
    count->setFont(big);
    count->setPos(rect.center().x() - count->boundingRect().width() / 2, rect.top() + 32);
}

void StateMachineScene::addEdge(const console::StateEdge &edge, int parallelIndex)
{
    const console::StateNode *from = m_snapshot.state(edge.from);
    const console::StateNode *to = m_snapshot.state(edge.to);
    if (!from || !to)
        return;
    const QColor colour = palette::colour(edge.rejected || !edge.legal ? palette::Role::Danger
                                                                       : palette::Role::Neutral);
    QPen pen(colour, edge.rejected ? 2 : 1.8);
    if (edge.rejected)
        pen.setStyle(Qt::DashLine);
    QPainterPath path;
    QPainterPath head;
    QPointF labelAt;
    bool centreLabel = false;
    const QRectF a = nodeRect(*from);
    if (from == to) {
        // A self loop above the box: PAID -> PAID, a second payment for a paid order.
        const QPointF start(a.center().x() - 30, a.top());
        const QPointF end(a.center().x() + 30, a.top());
        path.moveTo(start);
        path.cubicTo(start + QPointF(-40, -90), end + QPointF(40, -90), end);
        head = arrowHead(end, -70);
        labelAt = QPointF(a.center().x() - 60, a.top() - 120);
    } else {
        const QRectF b = nodeRect(*to);
        const QLineF centres(a.center(), b.center());
        // Parallel edges between the same states are pushed apart sideways; the first edge's
        // label sits on one side, the others' on the other, so that they never overlap.
        const QLineF unitNormal = centres.normalVector().unitVector();
        const QPointF normal = unitNormal.p2() - unitNormal.p1();
        const QPointF shift = normal * (parallelIndex * 26.0);
        const QPointF p1 = exitPoint(a, b.center()) + shift;
        const QPointF p2 = exitPoint(b, a.center()) + shift;
        path.moveTo(p1);
        path.lineTo(p2);
        head = arrowHead(p2, QLineF(p1, p2).angle());
        labelAt = (p1 + p2) / 2 + normal * (parallelIndex ? 24.0 : -24.0);
        centreLabel = true;
    }
    auto *line = addPath(path, pen);
    tag(line, edge);
    auto *arrow = addPath(head, QPen(colour), QBrush(colour));
    tag(arrow, edge);

    const QString count = QLocale().toString(edge.count);
    QString text;
    if (edge.rejected)
        text = tr("✗ %1 rejected\n%2").arg(count, edge.reasons);
    else if (!edge.legal)
        text = tr("%1 — not in order_transition!").arg(count);
    else if (!m_snapshot.transitionsKnown)
        text = edge.event; // no count: the team's tables keep no log of transitions
    else
        text = tr("%1\n%2 in window").arg(edge.event, count);
    auto *label = addSimpleText(text);
    label->setBrush(colour);
    if (edge.rejected) {
        QFont bold = label->font();
        bold.setBold(true);
        label->setFont(bold);
    }
    if (centreLabel)
        labelAt -= label->boundingRect().center();
    label->setPos(labelAt);
    tag(label, edge);
    label->setData(KindKey, QStringLiteral("edgeLabel"));
    const QString tip = edge.rejected
                            ? tr("%1 → %2: %3 rejected attempts. Click to list the orders.")
                                  .arg(edge.from, edge.to, count)
                            : tr("%1 → %2: %3 transitions. Click to list the orders.")
                                  .arg(edge.from, edge.to, count);
    const QString unknown =
        tr("%1 → %2: how many orders took this edge cannot be known: the team's tables keep no "
           "log of transitions.")
            .arg(edge.from, edge.to);
    line->setToolTip(m_snapshot.transitionsKnown ? tip : unknown);
    label->setToolTip(m_snapshot.transitionsKnown ? tip : unknown);
}

void StateMachineScene::onSelectionChanged()
{
    const auto items = selectedItems();
    if (items.isEmpty())
        return;
    const QGraphicsItem *item = items.first();
    if (item->data(KindKey).toString() == QLatin1String("state"))
        Q_EMIT stateActivated(item->data(NameKey).toString());
    else
        Q_EMIT edgeActivated(item->data(FromKey).toString(), item->data(ToKey).toString(),
                             item->data(RejectedKey).toBool());
}

} // namespace payops
