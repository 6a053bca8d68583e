#include "simulationpage.h"

#include "console/localinstances.h"
#include "console/stormrunner.h"
#include "console/worker.h"
#include "palette.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace payops {
namespace {

// The log tab keeps this many lines over all instances; older ones scroll away.
constexpr int kLogLines = 5000;

enum Columns { NameColumn, HandlerColumn, PortColumn, StateColumn, LogColumn, NUM_COLUMNS };

QSpinBox *spinBox(const QString &objectName, int minimum, int maximum, int value, QWidget *parent)
{
    auto *box = new QSpinBox(parent);
    box->setObjectName(objectName);
    box->setRange(minimum, maximum);
    box->setValue(value);
    box->setGroupSeparatorShown(true);
    return box;
}

QPushButton *button(const QString &objectName, const QString &text, QWidget *parent)
{
    auto *b = new QPushButton(text, parent);
    b->setObjectName(objectName);
    return b;
}

} // namespace

SimulationPage::SimulationPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("simulationPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    auto *intro = new QLabel(
        tr("<b>Simulate the incident on the sandbox.</b> Start callback endpoints with the "
           "incident's handler (unsafe-demo: its lock is released before its commit), fire a "
           "storm of duplicate callbacks at them and watch the overview and the duplicates "
           "light up; then restart them with the safe handler and fire again."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_note = new QLabel(tr("Checking whether this database is a sandbox …"), this);
    m_note->setObjectName(QStringLiteral("sandboxOnlyNote"));
    m_note->setWordWrap(true);
    layout->addWidget(m_note);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("simulationTabs"));
    m_controls = new QWidget(m_tabs);
    m_controls->setObjectName(QStringLiteral("simulationControls"));
    auto *controlsLayout = new QHBoxLayout(m_controls);
    controlsLayout->addWidget(makeInstancesBox(), 3);
    controlsLayout->addWidget(makeStormBox(), 2);
    m_tabs->addTab(m_controls, tr("Instances and storm"));
    m_log = new QPlainTextEdit(m_tabs);
    m_log->setObjectName(QStringLiteral("instanceLog"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(kLogLines);
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_tabs->addTab(m_log, tr("Logs"));
    layout->addWidget(m_tabs, 1);

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("simulationMessage"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);

    updateControls();
    refresh();
}

QWidget *SimulationPage::makeInstancesBox()
{
    auto *box = new QGroupBox(tr("Local callback endpoints"), m_controls);
    auto *layout = new QVBoxLayout(box);
    auto *buttons = new QHBoxLayout;
    m_count = spinBox(QStringLiteral("instanceCount"), 1, 8, 2, box);
    m_count->setToolTip(
        tr("How many payops-callbackd processes to start, each on a free port of 127.0.0.1"));
    m_startUnsafe = button(QStringLiteral("startUnsafeButton"), tr("Start unsafe-demo"), box);
    m_startUnsafe->setToolTip(
        tr("The incident's handler: it pays out twice when two copies of a callback meet"));
    m_startSafe = button(QStringLiteral("startSafeButton"), tr("Start safe"), box);
    m_stopInstances = button(QStringLiteral("stopInstancesButton"), tr("Stop all"), box);
    m_restartSafe =
        button(QStringLiteral("restartSafeButton"), tr("Restart with the safe handler"), box);
    // Two rows: in one the page would hold the window wider than a laptop's screen.
    buttons->addWidget(new QLabel(tr("Instances:"), box));
    buttons->addWidget(m_count);
    buttons->addWidget(m_startUnsafe);
    buttons->addWidget(m_startSafe);
    buttons->addStretch(1);
    auto *stopButtons = new QHBoxLayout;
    stopButtons->addStretch(1);
    stopButtons->addWidget(m_stopInstances);
    stopButtons->addWidget(m_restartSafe);
    layout->addLayout(buttons);
    layout->addLayout(stopButtons);

    m_table = new QTableWidget(0, NUM_COLUMNS, box);
    m_table->setObjectName(QStringLiteral("localInstancesTable"));
    m_table->setHorizontalHeaderLabels(
        {tr("Name"), tr("Handler"), tr("Port"), tr("State"), tr("Log file")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);

    connect(m_startUnsafe, &QPushButton::clicked, this, [this] {
        if (m_instances)
            m_instances->start(primaryDsn(), QStringLiteral("unsafe-demo"), m_count->value());
    });
    connect(m_startSafe, &QPushButton::clicked, this, [this] {
        if (m_instances)
            m_instances->start(primaryDsn(), QStringLiteral("safe"), m_count->value());
    });
    connect(m_stopInstances, &QPushButton::clicked, this, [this] {
        if (m_instances)
            m_instances->stopAll();
    });
    connect(m_restartSafe, &QPushButton::clicked, this, [this] {
        if (m_instances)
            m_instances->restartAll(QStringLiteral("safe"));
    });
    return box;
}

QWidget *SimulationPage::makeStormBox()
{
    auto *box = new QGroupBox(tr("Storm: the platform's deliveries"), m_controls);
    auto *layout = new QVBoxLayout(box);
    auto *form = new QFormLayout;
    m_orders = spinBox(QStringLiteral("stormOrders"), 1, 100000, 200, box);
    m_copies = spinBox(QStringLiteral("stormCopies"), 1, 10, 2, box);
    m_copies->setToolTip(
        tr("Deliveries of each order's success callback; more than one is a duplicate"));
    m_gap = spinBox(QStringLiteral("stormGap"), 0, 60000, 40, box);
    m_gap->setSuffix(tr(" ms"));
    m_gap->setToolTip(
        tr("Time between the copies of one order (the gap pattern); the incident's was 40 ms"));
    m_pattern = new QComboBox(box);
    m_pattern->setObjectName(QStringLiteral("stormPattern"));
    for (StormPattern pattern :
         {StormPattern::Mixed, StormPattern::Concurrent, StormPattern::Gap, StormPattern::Replay})
        m_pattern->addItem(stormPatternName(pattern), int(pattern));
    m_pattern->setToolTip(
        tr("concurrent: copies at once · gap: copies the gap apart · replay: a second wave seconds "
           "later · mixed: some of each"));
    m_createOrders = new QCheckBox(tr("Create fresh PENDING orders first"), box);
    m_createOrders->setObjectName(QStringLiteral("stormCreateOrders"));
    m_createOrders->setChecked(true);
    m_rate = new QDoubleSpinBox(box);
    m_rate->setObjectName(QStringLiteral("stormRate"));
    m_rate->setRange(0, 10000);
    m_rate->setDecimals(0);
    m_rate->setValue(50);
    m_rate->setSuffix(tr(" orders/s"));
    m_rate->setSpecialValueText(tr("as fast as possible"));
    m_retry = new QCheckBox(tr("Retry any answer that is not 2xx, with back-off"), box);
    m_retry->setObjectName(QStringLiteral("stormRetry"));
    m_retry->setChecked(true);
    form->addRow(tr("Orders"), m_orders);
    form->addRow(tr("Copies"), m_copies);
    form->addRow(tr("Gap"), m_gap);
    form->addRow(tr("Pattern"), m_pattern);
    form->addRow(tr("Rate"), m_rate);
    form->addRow(QString(), m_createOrders);
    form->addRow(QString(), m_retry);
    layout->addLayout(form);

    auto *buttons = new QHBoxLayout;
    m_stormStart = button(QStringLiteral("stormStartButton"), tr("Start storm"), box);
    m_stormStop = button(QStringLiteral("stormStopButton"), tr("Stop"), box);
    buttons->addWidget(m_stormStart);
    buttons->addWidget(m_stormStop);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    m_progress = new QProgressBar(box);
    m_progress->setObjectName(QStringLiteral("stormProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    layout->addWidget(m_progress);
    m_counts = new QLabel(tr("No storm yet."), box);
    m_counts->setObjectName(QStringLiteral("stormCounts"));
    m_counts->setWordWrap(true);
    m_counts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_counts);
    layout->addStretch(1);

    connect(m_stormStart, &QPushButton::clicked, this, &SimulationPage::startStorm);
    connect(m_stormStop, &QPushButton::clicked, this, [this] {
        if (m_storm)
            m_storm->stop();
    });
    return box;
}

void SimulationPage::attach(console::LocalInstances *instances, console::StormRunner *storm)
{
    m_instances = instances;
    m_storm = storm;
    connect(instances, &console::LocalInstances::changed, this, [this] {
        showInstances();
        updateControls();
    });
    connect(instances, &console::LocalInstances::logLine, this, &SimulationPage::appendLog);
    connect(instances, &console::LocalInstances::failed, this,
            [this](const QString &text) { showMessage(text, true); });
    connect(storm, &console::StormRunner::progress, this,
            [this](const StormCounts &counts) { showCounts(counts, true); });
    connect(storm, &console::StormRunner::finished, this, [this](const StormCounts &counts) {
        showCounts(counts, false);
        showMessage(counts.stopped ? tr("Storm stopped.") : tr("Storm finished."), false);
        updateControls();
    });
    connect(storm, &console::StormRunner::failed, this, [this](const QString &text) {
        showMessage(tr("The storm failed: %1").arg(text), true);
        updateControls();
    });
    showInstances();
    updateControls();
}

void SimulationPage::refresh()
{
    worker()->submit<bool>(
        QStringLiteral("sandbox"), console::sandboxCheckJob(), this,
        [this](bool sandbox) {
            const bool changed = m_sandbox != sandbox;
            m_sandbox = sandbox;
            if (sandbox) {
                m_note->setText(tr(
                    "This database is a sandbox: the unsafe handler and the storm may run here."));
                palette::setTextRole(m_note, palette::Role::Muted);
            } else {
                m_note->setText(palette::strong(
                    palette::Role::Warning,
                    tr("Simulation is sandbox-only: %1 is not marked as a sandbox, so "
                       "nothing here may run on it. Start one with payops sandbox start.")
                        .arg(worker()->dsn().database.toHtmlEscaped())));
            }
            updateControls();
            if (changed)
                Q_EMIT sandboxKnown(sandbox);
        },
        [this](const db::Error &error) {
            m_note->setText(tr("Cannot tell whether this database is a sandbox: %1")
                                .arg(db::userMessage(error)));
        });
}

void SimulationPage::updateControls()
{
    const bool allowed = m_sandbox.value_or(false) && m_instances && m_storm;
    m_controls->setEnabled(allowed);
    if (!allowed)
        return;
    const bool busy = m_instances->isBusy();
    const QList<console::LocalInstances::Instance> list = m_instances->instances();
    const bool anyAlive = std::any_of(list.begin(), list.end(), [](const auto &instance) {
        using State = console::LocalInstances::Instance::State;
        return instance.state == State::Starting || instance.state == State::Running;
    });
    const bool storming = m_storm->isRunning();
    m_startUnsafe->setEnabled(!busy);
    m_startSafe->setEnabled(!busy);
    m_stopInstances->setEnabled(!busy && anyAlive);
    m_restartSafe->setEnabled(!busy && !list.isEmpty());
    m_stormStart->setEnabled(!storming && !m_instances->targets().isEmpty());
    m_stormStop->setEnabled(storming);
}

void SimulationPage::showInstances()
{
    if (!m_instances)
        return;
    using State = console::LocalInstances::Instance::State;
    const QList<console::LocalInstances::Instance> list = m_instances->instances();
    m_table->setRowCount(int(list.size()));
    for (int row = 0; row < list.size(); ++row) {
        const auto &instance = list.at(row);
        QString state;
        std::optional<palette::Role> role;
        switch (instance.state) {
        case State::Starting:
            state = tr("starting");
            role = palette::Role::Warning;
            break;
        case State::Running:
            state = tr("running");
            role = palette::Role::Ok;
            break;
        case State::Stopping:
            state = tr("stopping");
            role = palette::Role::Warning;
            break;
        case State::Stopped:
            state = tr("stopped");
            role = palette::Role::Muted;
            break;
        case State::Failed:
            state = tr("failed");
            role = palette::Role::Danger;
            break;
        }
        const QStringList texts{instance.name, instance.handler,
                                instance.port > 0 ? QString::number(instance.port)
                                                  : QStringLiteral("—"),
                                state, QFileInfo(instance.logPath).fileName()};
        for (int column = 0; column < NUM_COLUMNS; ++column) {
            auto *item = new QTableWidgetItem(texts.at(column));
            if (column == HandlerColumn && instance.handler == QLatin1String("unsafe-demo"))
                item->setForeground(palette::danger());
            if (column == StateColumn && role)
                item->setForeground(palette::colour(*role));
            if (column == LogColumn)
                item->setToolTip(instance.logPath);
            m_table->setItem(row, column, item);
        }
    }
}

void SimulationPage::startStorm()
{
    if (!m_instances || !m_storm)
        return;
    StormPlan plan;
    plan.targets = m_instances->targets();
    plan.secret = m_instances->secret();
    plan.orders = m_orders->value();
    plan.copies = m_copies->value();
    plan.gapMs = m_gap->value();
    plan.pattern = StormPattern(m_pattern->currentData().toInt());
    plan.ratePerSecond = m_rate->value();
    plan.retryNon2xx = m_retry->isChecked();
    showMessage(tr("Storm of %1 orders × %2 copies at %3 instance(s) …")
                    .arg(QLocale().toString(plan.orders), QString::number(plan.copies),
                         QString::number(plan.targets.size())),
                false);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_storm->start(primaryDsn(), plan, m_createOrders->isChecked());
    updateControls();
}

void SimulationPage::showCounts(const StormCounts &c, bool running)
{
    const QLocale locale;
    m_progress->setRange(0, int(qMax<qint64>(1, c.planned)));
    m_progress->setValue(int(qMin(c.sent, qMax<qint64>(1, c.planned))));
    QString text = tr("sent %1 of %2 · <b>2xx %3</b> · 4xx %4 · %5 · no answer %6 · retries %7")
                       .arg(locale.toString(c.sent), locale.toString(c.planned),
                            locale.toString(c.answered2xx), locale.toString(c.answered4xx),
                            c.answered5xx > 0 ? palette::strong(palette::Role::Warning,
                                                                tr("5xx %1").arg(c.answered5xx))
                                              : tr("5xx %1").arg(0),
                            locale.toString(c.noAnswer), locale.toString(c.retries));
    if (c.ordersCreated > 0)
        text += tr(" · %1 fresh orders").arg(locale.toString(c.ordersCreated));
    if (running)
        text += tr(" · running");
    m_counts->setText(text);
}

void SimulationPage::showMessage(const QString &text, bool error)
{
    m_message->setText(text);
    palette::setTextRole(m_message, error ? std::optional(palette::Role::Danger) : std::nullopt);
    Q_EMIT statusMessage(text);
}

void SimulationPage::appendLog(const QString &instance, const QString &line)
{
    m_log->appendPlainText(QStringLiteral("%1 | %2").arg(instance, line));
}

} // namespace payops
