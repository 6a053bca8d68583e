#pragma once

#include <QTableView>

class QAbstractItemModel;

namespace payops {

// The console's tables: whole rows selected, no row numbers, each column as wide as its
// contents and the last one taking the rest. The columns are fitted again whenever rows
// arrive: a paged model inserts rows after the view was laid out, and a header in
// ResizeToContents mode only refits on its own when the view's geometry changes.
class DataTable final : public QTableView
{
    Q_OBJECT

public:
    DataTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DataTable)
};

} // namespace payops
