#include "datatable.h"

#include <QHeaderView>

namespace payops {

DataTable::DataTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent)
    : QTableView(parent)
{
    setObjectName(objectName);
    setModel(model);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    verticalHeader()->hide();
    horizontalHeader()->setStretchLastSection(true);
    // Fitting measures cells: a bounded sample of rows, once per burst of arrivals. Fitting on
    // every insertion of a large page held the UI thread for well over 100 ms.
    horizontalHeader()->setResizeContentsPrecision(200);
    m_refit.setSingleShot(true);
    m_refit.setInterval(0);
    connect(&m_refit, &QTimer::timeout, this, [this] {
        resizeColumnsToContents();
        // Fitting sized the last column to its contents too; give it the rest again.
        horizontalHeader()->setStretchLastSection(false);
        horizontalHeader()->setStretchLastSection(true);
    });
    const auto refitSoon = [this] { m_refit.start(); };
    connect(model, &QAbstractItemModel::rowsInserted, this, refitSoon);
    connect(model, &QAbstractItemModel::modelReset, this, refitSoon);
}

} // namespace payops
