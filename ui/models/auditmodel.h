#pragma once

#include "domain/money/auditquery.h"

#include "pagedtablemodel.h"
#include "streamedcsvsource.h"

namespace payops {

// The audit log, newest first, paged in by id as the view scrolls.
class AuditModel final : public PagedRowModel<AuditEntry>, public StreamedCsvSource
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        AtColumn,
        ActorColumn,
        ActionColumn,
        TargetColumn,
        ReasonColumn,
        TicketColumn,
        NUM_COLUMNS
    };
    enum Roles { BeforeJsonRole = Qt::UserRole + 1, AfterJsonRole };

    explicit AuditModel(console::Worker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(AuditModel)

    void reload(const AuditFilter &filter);
    const AuditFilter &filter() const { return m_filter; }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

    console::Worker *csvWorker() const override { return worker(); }
    // Every entry of the filter, newest first as the table shows them, by the view's pages.
    Job csvJob() const override;

private:
    // What a cell shows: the view's text and the export's.
    static QVariant displayText(const AuditEntry &row, int column);

    AuditFilter m_filter;
};

} // namespace payops
