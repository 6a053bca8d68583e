#pragma once

#include "console/backlog.h"
#include "domain/callback/backlogdrainer.h"

#include "pagedtablemodel.h"

namespace payops {

// The callbacks one drain takes, RECORDED or UNMATCHED, oldest first, paged in by id as the
// view scrolls. The unmatched list has one more column: the order as it is now.
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
        NUM_COLUMNS
    };
    enum Roles { RawBodyRole = Qt::UserRole + 1, OrderIdRole, WireFormatRole, RawHeadersRole };

    BacklogModel(console::Worker *worker, DrainSource source, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(BacklogModel)

    void reload();

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

private:
    DrainSource m_source;
};

} // namespace payops
