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
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    const auto refit = [this] {
        resizeColumnsToContents();
        // Fitting sized the last column to its contents too; give it the rest again.
        horizontalHeader()->setStretchLastSection(false);
        horizontalHeader()->setStretchLastSection(true);
    };
    connect(model, &QAbstractItemModel::rowsInserted, this, refit);
    connect(model, &QAbstractItemModel::modelReset, this, refit);
}

} // namespace payops
