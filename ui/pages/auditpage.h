#pragma once

#include "domain/money/auditquery.h"
#include "page.h"

#include <atomic>
#include <functional>
#include <memory>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace payops {

class AuditModel;

// The audit log: filtered by who, action and time, newest first, each entry's before and
// after; the same chain check as `payops audit verify`, and a CSV export of what the filter
// shows. The check and the export run on a worker of their own, with progress and a stop,
// where the page reads (a replica with --read-db): they write nothing.
class AuditPage final : public Page
{
    Q_OBJECT

public:
    AuditPage(const console::Target &target, QWidget *parent = nullptr);
    ~AuditPage() override;
    Q_DISABLE_COPY_MOVE(AuditPage)

    void refresh() override;
    AuditFilter filter() const;
    void verify();
    void exportCsv(const QString &path);
    void cancelJob();
    bool isBusy() const { return m_cancel != nullptr; }
    AuditModel *model() const { return m_model; }

private:
    void chooseExportFile();
    void startJob(const QString &what);
    void endJob(const QString &result);
    // The progress callback of a check or an export: "<what> … N entries so far".
    std::function<void(qint64)> rowsReporter(const QString &what);
    void showDetail();

    std::unique_ptr<console::Worker> m_jobWorker;
    std::shared_ptr<std::atomic<bool>> m_cancel; // set while a check or an export runs
    bool m_rangeRefused = false;
    QLineEdit *m_actor = nullptr;
    QComboBox *m_action = nullptr;
    QCheckBox *m_fromOn = nullptr;
    QDateTimeEdit *m_from = nullptr;
    QCheckBox *m_toOn = nullptr;
    QDateTimeEdit *m_to = nullptr;
    QPushButton *m_verify = nullptr;
    QPushButton *m_export = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_stop = nullptr;
    QLabel *m_result = nullptr;
    QTableView *m_table = nullptr;
    AuditModel *m_model = nullptr;
    QPlainTextEdit *m_before = nullptr;
    QPlainTextEdit *m_after = nullptr;
};

} // namespace payops
