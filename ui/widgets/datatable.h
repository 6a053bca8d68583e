#pragma once

#include <QTableView>
#include <QTimer>

class QAbstractItemModel;

namespace payops {

// The console's tables: whole rows selected, no row numbers, each column as wide as its
// contents and the last one taking the rest. The columns are fitted again when rows arrive
// (a paged model inserts rows after the view was laid out), once per burst, and the user may
// still drag a column wider.
class DataTable final : public QTableView
{
    Q_OBJECT

public:
    DataTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DataTable)

private:
    QTimer m_refit;
};

} // namespace payops
