#include "compensationrequestmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "palette.h"

#include <QBrush>

namespace payops {

CompensationRequestModel::CompensationRequestModel(QObject *parent)
    : RowTableModel(NUM_COLUMNS, parent)
{
}

int CompensationRequestModel::rowOf(qint64 id) const
{
    for (int row = 0; row < rows().size(); ++row)
        if (rowAt(row).id == id)
            return row;
    return -1;
}

QVariant CompensationRequestModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CompensationRequest &r = rowAt(index.row());
    switch (role) {
    case RequestIdRole:
        return r.id;
    case StatusRole:
        return r.status;
    case Qt::ForegroundRole:
        // A pending request waits for someone: the one thing on this page that asks for action.
        if (index.column() == StatusColumn && r.status == QLatin1String("PENDING"))
            return QBrush(palette::warning());
        return {};
    case Qt::ToolTipRole:
        if (index.column() == ReasonColumn)
            return r.reason;
        // A request on a team's own tables: its counts are rows of their tables, not coupons.
        if (r.mapped)
            return tr("On the team's own tables, through the mapping file with SHA-256 %1…: %2. "
                      "%3 row(s) to freeze, %4 to reverse.")
                .arg(r.mapped->sha256.left(12), r.mapped->sideEffects.join(QStringLiteral("; ")),
                     QString::number(r.coupons), QString::number(r.pointsRows));
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case IdColumn:
        return r.id;
    case StatusColumn:
        return r.status;
    case RequestedByColumn:
        return r.requestedBy;
    case RequestedAtColumn:
        return r.requestedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case AmountColumn:
        return console::formatMoney(r.amountFen);
    case CouponsColumn:
        return r.coupons;
    case WriteOffsColumn:
        return r.writeOffs;
    case PointsRowsColumn:
        return r.pointsRows;
    case TicketColumn:
        return r.ticket;
    case DecidedByColumn:
        return r.decidedBy;
    case ReasonColumn:
        return r.reason;
    default:
        return {};
    }
}

QVariant CompensationRequestModel::headerData(int section, Qt::Orientation orientation,
                                              int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Request");
    case StatusColumn:
        return tr("Status");
    case RequestedByColumn:
        return tr("Requested by");
    case RequestedAtColumn:
        return tr("At (UTC)");
    case AmountColumn:
        return tr("Amount");
    case CouponsColumn:
        return tr("Coupons");
    case WriteOffsColumn:
        return tr("Used coupons");
    case PointsRowsColumn:
        return tr("Points rows");
    case TicketColumn:
        return tr("Ticket");
    case DecidedByColumn:
        return tr("Decided by");
    case ReasonColumn:
        return tr("Reason");
    default:
        return {};
    }
}

} // namespace payops
