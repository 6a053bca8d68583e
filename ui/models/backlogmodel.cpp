#include "backlogmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"

namespace payops {

BacklogModel::BacklogModel(console::Worker *worker, BacklogList list, QObject *parent)
    : PagedRowModel(worker, list == BacklogList::Recorded ? OrderNowColumn : NUM_COLUMNS, parent)
    , m_list(list)
{
}

QString BacklogModel::forwards(const console::RecordedCallback &row) const
{
    // Short: the last column of a wide list. Why there was no answer is in the tooltip.
    if (row.forwards == 0)
        return tr("%1 · not forwarded yet").arg(row.status);
    return tr("%1 · %n forward(s) · %2", nullptr, row.forwards)
        .arg(row.status,
             row.upstreamStatus ? tr("HTTP %1").arg(row.upstreamStatus) : tr("no answer"));
}

void BacklogModel::reload()
{
    restart();
}

QVariant BacklogModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const console::RecordedCallback &row = rowAt(index.row());
    if (role == RawBodyRole)
        return row.rawBody;
    if (role == OrderIdRole)
        return row.orderId;
    if (role == OrderNoRole)
        return row.orderNo;
    if (role == WireFormatRole)
        return row.wireFormat;
    if (role == RawHeadersRole)
        return row.rawHeaders;
    if (role == Qt::TextAlignmentRole && index.column() == AmountColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && m_list == BacklogList::Gateway)
        return tr("Forwarded to the team's handler (the upstream) by a gateway, never paid by "
                  "payops: it waits for a final answer from the upstream.") +
               (row.upstreamError.isEmpty()
                    ? QString()
                    : QLatin1Char(' ') +
                          tr("The last forward got none: %1.").arg(row.upstreamError));
    if (role == Qt::ToolTipRole && index.column() == OrderNowColumn)
        return row.orderStatus.isEmpty()
                   ? tr("The order is not in the database yet; the callback waits for it.")
               : row.orderStatus == QLatin1String("PENDING")
                   ? tr("The order has arrived: applying the callback pays it.")
                   : tr("The order is %1: applying the callback rejects it, and finance sees a "
                        "second payment.")
                         .arg(row.orderStatus);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case IdColumn:
        return row.id;
    case ReceivedColumn:
        return console::displayTime(row.receivedMicros);
    case PayNoColumn:
        return QString::fromUtf8(row.payNo);
    case OrderColumn:
        // A gateway's team numbers its orders as it likes (N202404181780861744366403007).
        if (m_list == BacklogList::Gateway)
            return QString::fromLatin1(row.orderNo);
        return row.orderId;
    case AmountColumn:
        return QStringLiteral("%1 %2").arg(console::formatYuan(row.amountFen), row.currency);
    case TradeStatusColumn:
        return row.tradeStatus;
    case InstanceColumn:
        return row.instance;
    case OrderNowColumn:
        if (m_list == BacklogList::Gateway)
            return forwards(row);
        return row.orderStatus.isEmpty() ? tr("missing") : row.orderStatus;
    default:
        return {};
    }
}

QVariant BacklogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Callback");
    case ReceivedColumn:
        return tr("Received (UTC)");
    case PayNoColumn:
        return tr("Pay no");
    case OrderColumn:
        return tr("Order");
    case AmountColumn:
        return tr("Amount");
    case TradeStatusColumn:
        return tr("Trade status");
    case InstanceColumn:
        return m_list == BacklogList::Unmatched ? tr("Answered by") : tr("Recorded by");
    case OrderNowColumn:
        return m_list == BacklogList::Gateway ? tr("Forwards") : tr("Order now");
    default:
        return {};
    }
}

void BacklogModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    const qint64 after = rows().isEmpty() ? 0 : rows().last().id;
    const int limit = pageSize();
    switch (m_list) {
    case BacklogList::Recorded:
        fetchPage(QStringLiteral("backlog-page"), limit,
                  console::jobOf(console::loadRecordedPage, after, limit));
        break;
    case BacklogList::Unmatched:
        fetchPage(QStringLiteral("unmatched-page"), limit,
                  console::jobOf(console::loadUnmatchedPage, after, limit));
        break;
    case BacklogList::Gateway:
        fetchPage(QStringLiteral("gateway-page"), limit,
                  console::jobOf(console::loadGatewayPage, after, limit));
        break;
    }
}

} // namespace payops
