#include "datatable.h"

#include "console/worker.h"
#include "domain/export/csvwriter.h"
#include "models/pagedtablemodel.h"
#include "models/streamedcsvsource.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLocale>
#include <QProgressDialog>

#include <stdexcept>

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

    m_exportAction = new QAction(tr("Export CSV…"), this);
    m_exportAction->setObjectName(QStringLiteral("exportCsvAction"));
    m_exportAction->setToolTip(
        tr("Every row of this table, as it shows them, to a CSV file Excel opens."));
    connect(m_exportAction, &QAction::triggered, this, &DataTable::chooseExportFile);
    addAction(m_exportAction);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

DataTable::~DataTable()
{
    cancelExport();
}

void DataTable::chooseExportFile()
{
    const QString name = objectName().remove(QStringLiteral("Table")) + QStringLiteral(".csv");
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export CSV"), QDir::home().filePath(QStringLiteral("payops-") + name),
        tr("CSV files (*.csv)"));
    if (!path.isEmpty())
        exportCsv(path);
}

QStringList DataTable::headers() const
{
    QStringList titles;
    for (int column = 0; column < model()->columnCount(); ++column)
        titles << model()->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
    return titles;
}

QStringList DataTable::rowCells(int row) const
{
    QStringList cells;
    for (int column = 0; column < model()->columnCount(); ++column)
        cells << model()->index(row, column).data(Qt::DisplayRole).toString();
    return cells;
}

void DataTable::exportCsv(const QString &path)
{
    if (isExporting())
        return;
    if (dynamic_cast<StreamedCsvSource *>(model()))
        exportStreamed(path);
    else if (auto *paged = qobject_cast<PagedTableModel *>(model()); paged && !paged->atEnd())
        loadRemainingThenWrite(path);
    else
        writeLoadedRows(path);
}

void DataTable::beginExport()
{
    m_exportCancel = std::make_shared<std::atomic<bool>>(false);
    m_exportAction->setEnabled(false);
    m_progress = new QProgressDialog(tr("Exporting…"), tr("Cancel"), 0, 0, this);
    m_progress->setObjectName(QStringLiteral("exportProgress"));
    m_progress->setAttribute(Qt::WA_DeleteOnClose);
    m_progress->setMinimumDuration(500);
    m_progress->setAutoClose(false);
    m_progress->setAutoReset(false);
    connect(m_progress, &QProgressDialog::canceled, this, &DataTable::cancelExport);
}

void DataTable::cancelExport()
{
    if (m_exportCancel)
        m_exportCancel->store(true);
}

void DataTable::finishExport()
{
    disconnect(m_loading);
    m_exportCancel.reset();
    m_exportAction->setEnabled(true);
    if (m_progress)
        m_progress->close();
}

void DataTable::endExport(qint64 rows, const QString &path, const QString &failure)
{
    finishExport();
    QString message;
    if (!failure.isEmpty())
        message = tr("Not exported: %1").arg(failure);
    else if (rows < 0)
        message = tr("The export was cancelled; no file was written.");
    else
        message = tr("Exported %1 rows to %2.")
                      .arg(QLocale().toString(rows), QDir::toNativeSeparators(path));
    setToolTip(message);
    Q_EMIT exportFinished(failure.isEmpty() ? rows : -1, message);
}

// What is in memory is all there is: short tables (a page's instances, requests, batches).
void DataTable::writeLoadedRows(const QString &path)
{
    try {
        CsvWriter csv(path);
        csv.writeRow(headers());
        for (int row = 0; row < model()->rowCount(); ++row)
            csv.writeRow(rowCells(row));
        csv.commit();
        Q_EMIT exportFinished(model()->rowCount(), tr("Exported %1 rows to %2.")
                                                       .arg(QLocale().toString(model()->rowCount()),
                                                            QDir::toNativeSeparators(path)));
    } catch (const std::runtime_error &error) {
        Q_EMIT exportFinished(-1, tr("Not exported: %1").arg(QString::fromUtf8(error.what())));
    }
}

// The model's own query reads every row again on its worker, page by page, and each row goes
// to the file as it comes: nothing is held, however long the table.
void DataTable::exportStreamed(const QString &path)
{
    auto *source = dynamic_cast<StreamedCsvSource *>(model());
    console::Worker *worker = source->csvWorker();
    if (!worker) {
        Q_EMIT exportFinished(-1, tr("Not exported: the table is not connected."));
        return;
    }
    beginExport();
    const auto cancel = m_exportCancel;
    const QStringList titles = headers();
    const StreamedCsvSource::Job job = source->csvJob();
    const QPointer<DataTable> guard(this);
    const auto progress = [guard](qint64 rows) {
        console::Worker::postTo(guard, [rows](DataTable *table) {
            if (table->m_progress)
                table->m_progress->setLabelText(
                    tr("Exporting… %1 rows").arg(QLocale().toString(rows)));
        });
    };
    worker->submit<qint64>(
        QStringLiteral("csv-export"), console::csvExportJob(job, titles, path, cancel, progress),
        this, [this, path](const qint64 &rows) { endExport(rows, path); },
        [this, path](const db::Error &error) { endExport(-1, path, db::userMessage(error)); });
}

// A paged model without a streaming query of its own: its remaining pages are read by its
// own fetchMore (on its worker), then what it holds is written.
void DataTable::loadRemainingThenWrite(const QString &path)
{
    auto *paged = qobject_cast<PagedTableModel *>(model());
    beginExport();
    const auto step = [this, paged, path] {
        if (!m_exportCancel || paged->isLoading())
            return;
        if (m_exportCancel->load()) {
            endExport(-1, path);
        } else if (paged->canFetchMore()) {
            if (m_progress)
                m_progress->setLabelText(
                    tr("Reading the table… %1 rows").arg(QLocale().toString(paged->rowCount())));
            paged->fetchMore(QModelIndex());
        } else {
            finishExport();
            writeLoadedRows(path);
        }
    };
    m_loading = connect(paged, &PagedTableModel::loadingChanged, this, step, Qt::QueuedConnection);
    connect(
        paged, &PagedTableModel::failed, this,
        [this, path](const QString &message) {
            if (m_exportCancel)
                endExport(-1, path, message);
        },
        Qt::SingleShotConnection);
    step();
}

} // namespace payops
