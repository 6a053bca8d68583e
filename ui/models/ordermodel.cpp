#include "ordermodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"

namespace payops {

OrderModel::OrderModel(console::Worker *worker, QObject *parent)
    : PagedRowModel(worker, NUM_COLUMNS, parent)
{
}

void OrderModel::reload(const console::OrderSelection &selection)
{
    m_selection = selection;
    restart(selection.kind == console::OrderSelection::Kind::None);
}

QVariant OrderModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const console::OrderRow &row = rowAt(index.row());
    if (role == OrderIdRole)
        return row.id;
    if (role == Qt::TextAlignmentRole && index.column() == AmountColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case IdColumn:
        return row.id;
    case UserColumn:
        return row.userId;
    case StatusColumn:
        return row.status;
    case AmountColumn:
        return console::formatYuan(row.amountFen);
    case PayNoColumn:
        return QString::fromUtf8(row.payNo);
    case CreatedColumn:
        return console::displayTime(row.createdMicros);
    case PaidColumn:
        return console::displayTime(row.paidMicros);
    default:
        return {};
    }
}

QVariant OrderModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Order");
    case UserColumn:
        return tr("User");
    case StatusColumn:
        return tr("Status");
    case AmountColumn:
        return tr("Amount (¥)");
    case PayNoColumn:
        return tr("Pay no");
    case CreatedColumn:
        return tr("Created (UTC)");
    case PaidColumn:
        return tr("Paid (UTC)");
    default:
        return {};
    }
}

void OrderModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    const console::OrderSelection selection = m_selection;
    const qint64 after = rows().isEmpty() ? 0 : rows().last().id;
    const int limit = pageSize();
    fetchPage(QStringLiteral("orders-page"), limit,
              console::jobOf(console::loadOrderPage, selection, after, limit));
}

} // namespace payops
