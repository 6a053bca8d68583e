#include "pagedtablemodel.h"

namespace payops {

PagedTableModel::PagedTableModel(console::Worker *worker, QObject *parent)
    : QAbstractTableModel(parent)
    , m_worker(worker)
{
}

bool PagedTableModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && !m_atEnd && !m_loading && m_worker;
}

void PagedTableModel::setLoading(bool loading)
{
    if (m_loading == loading)
        return;
    m_loading = loading;
    Q_EMIT loadingChanged(loading);
}

void PagedTableModel::fail(const QString &message)
{
    setLoading(false);
    Q_EMIT failed(message);
}

} // namespace payops
