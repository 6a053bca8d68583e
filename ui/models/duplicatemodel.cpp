#include "duplicatemodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "palette.h"

#include <QBrush>

namespace payops {

namespace {
const QString &jobKey()
{
    static const QString key = QStringLiteral("duplicates-page");
    return key;
}
} // namespace

DuplicateModel::DuplicateModel(console::Worker *worker, QObject *parent)
    : PagedTableModel(worker, parent)
{
}

void DuplicateModel::reload(const console::DuplicateFilter &filter)
{
    beginResetModel();
    m_filter = filter;
    m_groups.clear();
    m_orderBand.clear();
    m_nextOrderId = 0;
    setAtEnd(false);
    setLoading(false);
    endResetModel();
    fetchMore();
}

int DuplicateModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_groups.size());
}

int DuplicateModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant DuplicateModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const console::DuplicateGroup &g = m_groups.at(index.row());
    switch (role) {
    case OrderIdRole:
        return g.orderId;
    case AtRiskFenRole:
        return g.atRiskFen();
    case Qt::TextAlignmentRole:
        return index.column() >= CopiesColumn && index.column() <= AtRiskColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    case Qt::BackgroundRole:
        return m_orderBand.at(index.row()) ? QBrush(palette::alternateBase()) : QVariant();
    case Qt::ForegroundRole:
        if (index.column() == AtRiskColumn && g.atRiskFen() > 0)
            return QBrush(palette::danger());
        return {};
    case Qt::DisplayRole:
        return displayText(g, index.column());
    default:
        return {};
    }
}

QVariant DuplicateModel::displayText(const console::DuplicateGroup &g, int column)
{
    switch (column) {
    case OrderColumn:
        return g.orderId;
    case UserColumn:
        return g.userId;
    case KindColumn:
        return g.kind == console::DuplicateKind::Coupon ? tr("coupon") : tr("points");
    case KeyColumn:
        return g.kind == console::DuplicateKind::Coupon
                   ? QStringLiteral("#%1 %2").arg(g.key, g.keyLabel)
                   : g.key;
    case CopiesColumn:
        return g.copies;
    case LiveColumn:
        return g.live;
    case CompensatedColumn:
        return g.compensated;
    case UnitColumn:
        return console::formatYuan(g.unitFen);
    case AtRiskColumn:
        return console::formatYuan(g.atRiskFen());
    case FirstColumn:
        return console::displayTime(g.firstMicros);
    case LastColumn:
        return console::displayTime(g.lastMicros);
    default:
        return {};
    }
}

QVariant DuplicateModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case OrderColumn:
        return tr("Order");
    case UserColumn:
        return tr("User");
    case KindColumn:
        return tr("Kind");
    case KeyColumn:
        return tr("Template / type");
    case CopiesColumn:
        return tr("Copies");
    case LiveColumn:
        return tr("Live");
    case CompensatedColumn:
        return tr("Compensated");
    case UnitColumn:
        return tr("Each (¥)");
    case AtRiskColumn:
        return tr("At risk (¥)");
    case FirstColumn:
        return tr("First issued (UTC)");
    case LastColumn:
        return tr("Last issued (UTC)");
    default:
        return {};
    }
}

void DuplicateModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    setLoading(true);
    const console::DuplicateFilter filter = m_filter;
    const qint64 from = m_nextOrderId;
    const int limit = m_pageSize;
    worker()->submit<console::DuplicatePage>(
        jobKey(), console::jobOf(console::loadDuplicatePage, filter, from, limit), this,
        [this](const console::DuplicatePage &page) { append(page); },
        [this](const db::Error &error) { fail(db::userMessage(error)); });
}

StreamedCsvSource::Job DuplicateModel::csvJob() const
{
    return console::duplicateCsvRows(m_filter, m_pageSize, [](const console::DuplicateGroup &g) {
        QStringList cells;
        for (int column = 0; column < NUM_COLUMNS; ++column)
            cells << displayText(g, column).toString();
        return cells;
    });
}

void DuplicateModel::append(const console::DuplicatePage &page)
{
    if (!page.groups.isEmpty()) {
        const int first = int(m_groups.size());
        beginInsertRows({}, first, first + int(page.groups.size()) - 1);
        for (const console::DuplicateGroup &g : page.groups) {
            int band = m_orderBand.isEmpty() ? 0 : m_orderBand.last();
            if (!m_groups.isEmpty() && m_groups.last().orderId != g.orderId)
                band = 1 - band;
            m_groups << g;
            m_orderBand << band;
        }
        endInsertRows();
    }
    m_nextOrderId = page.nextOrderId;
    setAtEnd(page.atEnd);
    setLoading(false);
    // A page that the filters emptied says nothing to the view, which would then never ask
    // again: keep walking until something shows or the end is reached.
    if (page.groups.isEmpty() && !atEnd())
        fetchMore();
}

} // namespace payops
