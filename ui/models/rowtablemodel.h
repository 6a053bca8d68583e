#pragma once

#include <QAbstractTableModel>
#include <QList>

namespace payops {

// A short table of plain rows that each read replaces as a whole (a bulk load resets the
// model): the rows, their count and the reset. A subclass says what a row shows.
template <typename Row> class RowTableModel : public QAbstractTableModel
{
public:
    RowTableModel(int columns, QObject *parent)
        : QAbstractTableModel(parent)
        , m_columns(columns)
    {
    }

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_rows.size());
    }
    int columnCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : m_columns;
    }
    const Row &rowAt(int row) const { return m_rows.at(row); }

protected:
    const QList<Row> &rows() const { return m_rows; }
    void setRows(const QList<Row> &rows)
    {
        beginResetModel();
        m_rows = rows;
        endResetModel();
    }

private:
    int m_columns;
    QList<Row> m_rows;
};

} // namespace payops
