#include "compensationbatchmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"

namespace payops {

CompensationBatchModel::CompensationBatchModel(QObject *parent)
    : RowTableModel(NUM_COLUMNS, parent)
{
}

QVariant CompensationBatchModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CompensationBatch &b = rowAt(index.row());
    if (role == Qt::ToolTipRole && index.column() == ReasonColumn)
        return b.reason;
    if (role == Qt::TextAlignmentRole &&
        (index.column() == ActionsColumn || index.column() == AmountColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case AtColumn:
        return b.at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case ByColumn:
        return b.by;
    case ActionsColumn:
        return b.actions;
    case AmountColumn:
        return console::formatMoney(b.amountFen);
    case TicketColumn:
        return b.ticket;
    case ReasonColumn:
        return b.reason;
    case BatchColumn:
        return b.batchId;
    default:
        return {};
    }
}

QVariant CompensationBatchModel::headerData(int section, Qt::Orientation orientation,
                                            int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case AtColumn:
        return tr("At (UTC)");
    case ByColumn:
        return tr("By");
    case ActionsColumn:
        return tr("Actions");
    case AmountColumn:
        return tr("Amount");
    case TicketColumn:
        return tr("Ticket");
    case ReasonColumn:
        return tr("Reason");
    case BatchColumn:
        return tr("Batch");
    default:
        return {};
    }
}

} // namespace payops
