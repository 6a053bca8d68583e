#pragma once

#include "console/worker.h"

#include <QAbstractTableModel>
#include <QList>
#include <QPointer>

#include <functional>

namespace payops {

// What the lazily paged tables share: a worker to read pages on, whether a page is on its
// way, whether the end was reached. fetchMore() stays with each model; it knows its cursor.
class PagedTableModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    explicit PagedTableModel(console::Worker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(PagedTableModel)

    bool isLoading() const { return m_loading; }
    bool atEnd() const { return m_atEnd; }
    bool canFetchMore(const QModelIndex &parent = {}) const override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    void failed(const QString &message);

protected:
    console::Worker *worker() const { return m_worker; }
    void setLoading(bool loading);
    void setAtEnd(bool atEnd) { m_atEnd = atEnd; }
    void fail(const QString &message);

private:
    QPointer<console::Worker> m_worker;
    bool m_atEnd = true;
    bool m_loading = false;
};

// A paged table of plain rows read by keyset: the rows, their count, the reset and the
// append of each page. A subclass says what a row shows and how to read the page after the
// last row it has.
template <typename Row> class PagedRowModel : public PagedTableModel
{
public:
    PagedRowModel(console::Worker *worker, int columns, QObject *parent)
        : PagedTableModel(worker, parent)
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
    // Rows read per page; from the next page on.
    void setPageSize(int rows) { m_pageSize = rows; }
    int pageSize() const { return m_pageSize; }

protected:
    const QList<Row> &rows() const { return m_rows; }
    // Empties the table and reads its first page (none when `empty`: nothing is selected).
    void restart(bool empty = false)
    {
        beginResetModel();
        m_rows.clear();
        setAtEnd(empty);
        setLoading(false);
        endResetModel();
        this->fetchMore(QModelIndex());
    }
    // Reads the next page on the worker; fewer than `pageSize` rows mean the end. A restart
    // meanwhile drops the page (the job key's newer generation).
    void fetchPage(const QString &key, int pageSize, console::Job<QList<Row>> load)
    {
        setLoading(true);
        worker()->template submit<QList<Row>>(
            key, std::move(load), this,
            [this, pageSize](const QList<Row> &page) {
                if (!page.isEmpty()) {
                    beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + page.size()) - 1);
                    m_rows << page;
                    endInsertRows();
                }
                setAtEnd(page.size() < pageSize);
                setLoading(false);
            },
            [this](const db::Error &error) { fail(db::userMessage(error)); });
    }

private:
    int m_columns;
    int m_pageSize = 200;
    QList<Row> m_rows;
};

} // namespace payops
