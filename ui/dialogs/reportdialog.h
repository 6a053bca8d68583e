#pragma once

#include "db/dsn.h"

#include <QDateTime>
#include <QDialog>

#include <atomic>
#include <memory>

class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace payops {

namespace console {
class Worker;
}

// File → Incident report…: a window and a file, then the same PDF as `payops report`. The
// facts are read and the PDF is printed on a worker of the dialog's own, with a busy bar and
// a Cancel; the dialog says where the file went.
class ReportDialog final : public QDialog
{
    Q_OBJECT

public:
    ReportDialog(const Dsn &dsn, QWidget *parent = nullptr);
    ~ReportDialog() override;
    Q_DISABLE_COPY_MOVE(ReportDialog)

    void setWindow(const QDateTime &from, const QDateTime &to);
    void setPath(const QString &path);
    void write();
    void cancel();
    bool isBusy() const { return m_cancel != nullptr; }

Q_SIGNALS:
    // The file's path when it was written, empty otherwise; `message` is what the dialog shows.
    void finished(const QString &path, const QString &message);

private:
    void choosePath();
    void end(const QString &path, const QString &message);

    std::unique_ptr<console::Worker> m_worker;
    std::shared_ptr<std::atomic<bool>> m_cancel; // set while a report is made
    QDateTimeEdit *m_from = nullptr;
    QDateTimeEdit *m_to = nullptr;
    QLineEdit *m_path = nullptr;
    QPushButton *m_write = nullptr;
    QPushButton *m_stop = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_result = nullptr;
};

} // namespace payops
