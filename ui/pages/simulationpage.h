#pragma once

#include "page.h"

#include <QPointer>

#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace payops {

struct StormCounts;
namespace console {
class LocalInstances;
class StormRunner;
} // namespace console

// Runs the incident on the sandbox: local payops-callbackd instances (the incident's handler
// or the safe one) as children of the console, a storm of signed callbacks at them, and their
// logs. The instances and the storm belong to the window and outlive a reconnect; this page
// only drives them. On a database that is not a sandbox everything here stays disabled.
class SimulationPage final : public Page
{
    Q_OBJECT

public:
    SimulationPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(SimulationPage)

    void attach(console::LocalInstances *instances, console::StormRunner *storm);
    void refresh() override;
    // Unknown until the page's worker has asked the database.
    std::optional<bool> isSandbox() const { return m_sandbox; }

Q_SIGNALS:
    void sandboxKnown(bool sandbox);

private:
    QWidget *makeInstancesBox();
    QWidget *makeStormBox();
    void updateControls();
    void showInstances();
    void showCounts(const StormCounts &counts, bool running);
    void startStorm();
    void showMessage(const QString &text, bool error);
    void appendLog(const QString &instance, const QString &line);

    QPointer<console::LocalInstances> m_instances;
    QPointer<console::StormRunner> m_storm;
    std::optional<bool> m_sandbox;

    QLabel *m_note = nullptr;
    QLabel *m_message = nullptr;
    QTabWidget *m_tabs = nullptr;
    QWidget *m_controls = nullptr;
    QSpinBox *m_count = nullptr;
    QPushButton *m_startSafe = nullptr;
    QPushButton *m_startUnsafe = nullptr;
    QPushButton *m_stopInstances = nullptr;
    QPushButton *m_restartSafe = nullptr;
    QTableWidget *m_table = nullptr;
    QSpinBox *m_orders = nullptr;
    QSpinBox *m_copies = nullptr;
    QSpinBox *m_gap = nullptr;
    QComboBox *m_pattern = nullptr;
    QCheckBox *m_createOrders = nullptr;
    QDoubleSpinBox *m_rate = nullptr;
    QCheckBox *m_retry = nullptr;
    QPushButton *m_stormStart = nullptr;
    QPushButton *m_stormStop = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_counts = nullptr;
    QPlainTextEdit *m_log = nullptr;
};

} // namespace payops
