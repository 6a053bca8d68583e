#include "draftmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"

namespace payops {

DraftModel::DraftModel(QObject *parent)
    : RowTableModel(NUM_COLUMNS, parent)
{
}

QVariant DraftModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const MissingPaymentDraft &d = rowAt(index.row());
    switch (role) {
    case DraftIdRole:
        return d.id;
    case OrderIdRole:
        return d.orderId;
    case StatusRole:
        return d.status;
    case Qt::TextAlignmentRole:
        return index.column() == AmountColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                              : QVariant();
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    const auto who = [](const QString &account, const QDateTime &at) {
        return account.isEmpty()
                   ? QString()
                   : tr("%1, %2 UTC").arg(account, at.toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    };
    switch (index.column()) {
    case IdColumn:
        return QString::number(d.id);
    case StatusColumn:
        return d.status == QLatin1String("DRAFT")       ? tr("Waiting for a second account")
               : d.status == QLatin1String("CONFIRMED") ? tr("Confirmed: in the backlog")
                                                        : tr("Discarded");
    case OrderColumn:
        return QString::number(d.orderId);
    case PayNoColumn:
        return QString::fromUtf8(d.payNo);
    case AmountColumn:
        return console::formatYuan(d.amountFen);
    case LineColumn:
        return QString::number(d.lineNo);
    case DraftedByColumn:
        return who(d.draftedBy, d.draftedAt);
    case DecidedByColumn:
        return who(d.decidedBy, d.decidedAt);
    case CallbackColumn:
        return d.callbackId > 0 ? QString::number(d.callbackId) : QString();
    case ReasonColumn:
        return d.reason;
    }
    return {};
}

QVariant DraftModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Draft");
    case StatusColumn:
        return tr("State");
    case OrderColumn:
        return tr("Order");
    case PayNoColumn:
        return tr("pay_no");
    case AmountColumn:
        return tr("Amount");
    case LineColumn:
        return tr("Line");
    case DraftedByColumn:
        return tr("Drafted by");
    case DecidedByColumn:
        return tr("Decided by");
    case CallbackColumn:
        return tr("Callback");
    case ReasonColumn:
        return tr("Reason");
    }
    return {};
}

} // namespace payops
