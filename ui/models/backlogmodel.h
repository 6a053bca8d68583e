#pragma once

#include "console/backlog.h"

#include "pagedtablemodel.h"

namespace payops {

// The backlog's lists, each what one drain takes: the payments recorded in RECORD_ONLY mode,
// the callbacks that arrived before their order, and a gateway's rows still to forward to
// the upstream (RECORDED or FORWARDING).
enum class BacklogList { Recorded, Unmatched, Gateway };

// The callbacks of one list, oldest first, paged in by id as the view scrolls. The unmatched
// and gateway lists have one more column: the order as it is now, or the forwards so far.
class BacklogModel final : public PagedRowModel<console::RecordedCallback>
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        ReceivedColumn,
        PayNoColumn,
        OrderColumn,
        AmountColumn,
        TradeStatusColumn,
        InstanceColumn,
        OrderNowColumn,
        NUM_COLUMNS,
        ForwardsColumn = OrderNowColumn // the gateway list's last column
    };
    enum Roles {
        RawBodyRole = Qt::UserRole + 1,
        OrderIdRole,
        OrderNoRole, // the merchant's order number as sent (a gateway's team numbers its own)
        WireFormatRole,
        RawHeadersRole
    };

    BacklogModel(console::Worker *worker, BacklogList list, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(BacklogModel)

    void reload();

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

private:
    QString forwards(const console::RecordedCallback &row) const;

    BacklogList m_list;
};

} // namespace payops
