#pragma once

#include "db/dbworker.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace payops {

// What the lazily paged tables share: a worker to read pages on, whether a page is on its
// way, whether the end was reached. fetchMore() stays with each model; it knows its cursor.
class PagedTableModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    explicit PagedTableModel(db::DbWorker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(PagedTableModel)

    bool isLoading() const { return m_loading; }
    bool atEnd() const { return m_atEnd; }
    bool canFetchMore(const QModelIndex &parent = {}) const override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    void failed(const QString &message);

protected:
    db::DbWorker *worker() const { return m_worker; }
    void setLoading(bool loading);
    void setAtEnd(bool atEnd) { m_atEnd = atEnd; }
    void fail(const QString &message);

private:
    QPointer<db::DbWorker> m_worker;
    bool m_atEnd = true;
    bool m_loading = false;
};

} // namespace payops
