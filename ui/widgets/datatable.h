#pragma once

#include <QPointer>
#include <QTableView>
#include <QTimer>

#include <atomic>
#include <memory>

class QAbstractItemModel;
class QAction;
class QProgressDialog;

namespace payops {

// The console's tables: whole rows selected, no row numbers, each column as wide as its
// contents and the last one taking the rest. The columns are fitted again when rows arrive
// (a paged model inserts rows after the view was laid out), once per burst, and the user may
// still drag a column wider.
//
// Every table exports to CSV (its context menu, or exportAction() on a page's toolbar):
// the column titles, then every row as the table shows it, through the one CsvWriter. A
// model that pages in as the view scrolls is exported whole, not just what was scrolled to:
// by its own streaming query on its worker (StreamedCsvSource), or else by loading its
// remaining pages; either with a progress dialog that can cancel, never blocking the UI thread.
class DataTable final : public QTableView
{
    Q_OBJECT

public:
    DataTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent = nullptr);
    ~DataTable() override;
    Q_DISABLE_COPY_MOVE(DataTable)

    QAction *exportAction() const { return m_exportAction; }
    // Asks for a file, then exportCsv().
    void chooseExportFile();
    // Writes the table to `path`; exportFinished() tells how it ended.
    void exportCsv(const QString &path);
    bool isExporting() const { return m_exportCancel != nullptr; }
    void cancelExport();

Q_SIGNALS:
    // `rows` written, or -1 when cancelled or failed; `message` says so in a sentence.
    void exportFinished(qint64 rows, const QString &message);

private:
    QStringList headers() const;
    QStringList rowCells(int row) const;
    void writeLoadedRows(const QString &path);
    void exportStreamed(const QString &path);
    void loadRemainingThenWrite(const QString &path);
    void beginExport();
    void finishExport();
    void endExport(qint64 rows, const QString &path, const QString &failure = {});

    QTimer m_refit;
    QAction *m_exportAction = nullptr;
    std::shared_ptr<std::atomic<bool>> m_exportCancel; // set while an export runs
    QPointer<QProgressDialog> m_progress;
    QMetaObject::Connection m_loading;
};

} // namespace payops
