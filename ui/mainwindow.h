#pragma once

#include "db/dsn.h"

#include <QMainWindow>

#include <memory>
#include <optional>

class QLabel;

namespace payops {

namespace db {
class DbWorker;
}
struct DatabaseSummary;

class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(std::optional<Dsn> dsn, QWidget *parent = nullptr);
    ~MainWindow() override;
    Q_DISABLE_COPY_MOVE(MainWindow)

    void refresh();

private:
    void showSummary(const DatabaseSummary &summary);
    void showError(const QString &message);

    std::optional<Dsn> m_dsn;
    std::unique_ptr<db::DbWorker> m_worker;
    QLabel *m_connectionLabel = nullptr;
    QLabel *m_headline = nullptr;
    QLabel *m_details = nullptr;
};

} // namespace payops
