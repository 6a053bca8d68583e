#include "mappedgroupmodel.h"

#include "console/displayformat.h"

#include <QLocale>

namespace payops {

MappedGroupModel::MappedGroupModel(console::Worker *worker, mapping::Mapping mapping,
                                   QObject *parent)
    : QStandardItemModel(0, NUM_COLUMNS, parent)
    , m_worker(worker)
    , m_mapping(std::move(mapping))
{
    setHorizontalHeaderLabels({tr("Order"), tr("User"), tr("Side effect"), tr("Key"),
                               tr("Live copies"), tr("One copy"), tr("At risk"), tr("First issued"),
                               tr("Last issued")});
}

QStringList MappedGroupModel::cells(const console::MappedGroup &group, qint64 pointsPerYuan)
{
    // Points at their cash value, copy by copy, as the mapped watch's figures count them.
    const qint64 copyFen =
        group.points ? (pointsPerYuan > 0 ? group.unit * 100 / pointsPerYuan : 0) : group.unit;
    return {QString::number(group.orderId),
            QString::number(group.userId),
            group.sideEffect,
            group.key.join(QStringLiteral(" / ")),
            QString::number(group.live),
            group.points ? tr("%1 points").arg(QLocale().toString(group.unit))
                         : console::formatMoney(group.unit),
            console::formatMoney(group.extra() * copyFen),
            console::displayTime(group.firstMicros),
            console::displayTime(group.lastMicros)};
}

void MappedGroupModel::setGroups(const QList<console::MappedGroup> &groups,
                                 const console::MappedDuplicateFilter &filter, qint64 pointsPerYuan)
{
    m_groups = groups;
    m_filter = filter;
    m_pointsPerYuan = pointsPerYuan;
    removeRows(0, rowCount());
    for (const console::MappedGroup &group : groups) {
        QList<QStandardItem *> items;
        const QStringList texts = cells(group, pointsPerYuan);
        for (int column = 0; column < texts.size(); ++column) {
            auto *item = new QStandardItem(texts.at(column));
            const bool number = column == OrderColumn || column == UserColumn ||
                                column == LiveColumn || column == UnitColumn ||
                                column == AtRiskColumn;
            item->setTextAlignment((number ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
            item->setEditable(false);
            items << item;
        }
        appendRow(items);
    }
}

StreamedCsvSource::Job MappedGroupModel::csvJob() const
{
    return console::mappedGroupCsvRows(
        m_mapping, m_filter, [pointsPerYuan = m_pointsPerYuan](const console::MappedGroup &group) {
            return cells(group, pointsPerYuan);
        });
}

} // namespace payops
