#pragma once

#include "console/duplicatescan.h"

#include "pagedtablemodel.h"
#include "streamedcsvsource.h"

namespace payops {

// Duplicate groups, one row each, ordered by order id. Pages in from the database as the
// view scrolls (fetchMore with a keyset cursor), so a table of ten million orders never
// loads into memory.
class DuplicateModel final : public PagedTableModel, public StreamedCsvSource
{
    Q_OBJECT

public:
    enum Columns {
        OrderColumn,
        UserColumn,
        KindColumn,
        KeyColumn,
        CopiesColumn,
        LiveColumn,
        CompensatedColumn,
        UnitColumn,
        AtRiskColumn,
        FirstColumn,
        LastColumn,
        NUM_COLUMNS
    };
    enum Roles { OrderIdRole = Qt::UserRole + 1, AtRiskFenRole };

    explicit DuplicateModel(console::Worker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DuplicateModel)

    // Drops what is loaded and starts again from the first order with this filter.
    void reload(const console::DuplicateFilter &filter);
    // How many duplicate groups each kind proposes per page.
    void setPageSize(int candidates) { m_pageSize = candidates; }
    const console::DuplicateGroup &group(int row) const { return m_groups.at(row); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

    console::Worker *csvWorker() const override { return worker(); }
    // Every group of the filter, by the same pages as the view's, from the first order on.
    Job csvJob() const override;

private:
    // What a cell shows: the view's text and the export's.
    static QVariant displayText(const console::DuplicateGroup &g, int column);

    void append(const console::DuplicatePage &page);

    console::DuplicateFilter m_filter;
    QList<console::DuplicateGroup> m_groups;
    QList<int> m_orderBand; // 0/1 alternating per order, so that one order's groups read as one
    qint64 m_nextOrderId = 0;
    int m_pageSize = 500;
};

} // namespace payops
