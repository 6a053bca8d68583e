#include "playbookdock.h"

#include "console/consolesettings.h"
#include "console/localinstances.h"
#include "console/stormrunner.h"
#include "console/worker.h"
#include "palette.h"
#include "stepcard.h"

#include <QCoreApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <array>
#include <utility>

namespace payops {

using console::PlaybookStep;
using console::StepState;

namespace {

// One row per step: its title, what it does and why (the incident's reasoning), and the page where
// it happens. The step's own check is console/playbook.cpp's; its buttons beyond the page are
// made in buildCards().
struct StepText
{
    PlaybookStep step;
    const char *title;
    const char *why;
    Page::Id page;          // NUM_PAGES: none
    const char *pageButton; // untranslated, as the rest
};

constexpr std::array kSteps{
    StepText{
        PlaybookStep::Simulate, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Simulate"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "Start two instances with the incident's handler and fire each payment's callback at "
            "both, 40 ms apart. The handler releases its lock before its transaction commits, so "
            "the second copy still reads the order as PENDING."),
        Page::SimulationId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Simulation")},
    StepText{
        PlaybookStep::Detect, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Detect"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "Watch coupons and points issued twice appear on the overview. The lock, the unique "
            "pay_no and the state machine all worked: only the side effects show the damage."),
        Page::OverviewId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Overview")},
    StepText{
        PlaybookStep::StopBleeding, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Stop the bleeding"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "Switch to RECORD_ONLY before looking for the cause: callbacks are only written down "
            "and answered 200, so nothing more is paid twice. Done once every live instance "
            "confirms the new version."),
        Page::InstancesId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Instances and switch")},
    StepText{
        PlaybookStep::Scope, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Scope"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "Group the side effects by (order, coupon template) and (order, point type): how many "
            "orders, how many extra copies, how much money is at risk."),
        Page::DuplicatesId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Duplicates")},
    StepText{
        PlaybookStep::ProveRootCause,
        QT_TRANSLATE_NOOP("payops::PlaybookDock", "Prove the root cause"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "One affected order's evidence: the lock released before the commit, and the second "
            "callback taking it in between. Not a lock that failed, a lock released too early."),
        Page::EvidenceId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Order evidence")},
    StepText{PlaybookStep::Compensate, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Compensate"),
             QT_TRANSLATE_NOOP("payops::PlaybookDock",
                               "Freeze the extra coupons and reverse the extra points, never "
                               "delete, each act audited. "
                               "First: the keys of step 7 cannot be built over live duplicates."),
             Page::CompensationId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Compensation")},
    StepText{PlaybookStep::Fix, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Fix"), nullptr,
             Page::PostureId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Defences")},
    StepText{PlaybookStep::Drain, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Drain the backlog"),
             QT_TRANSLATE_NOOP(
                 "payops::PlaybookDock",
                 "Resume processing and drain the callbacks recorded meanwhile, each exactly once "
                 "through the fixed pipeline. Before the fix they would pay twice again."),
             Page::BacklogId, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Backlog")},
    StepText{
        PlaybookStep::InspectGreen, QT_TRANSLATE_NOOP("payops::PlaybookDock", "Inspect green"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "The check of payops inspect: no live duplicate, no payment waiting to be applied. Run "
            "it from cron, so the next incident is found by a machine and not by finance."),
        Page::NUM_PAGES, nullptr},
    StepText{
        PlaybookStep::ExportReport,
        QT_TRANSLATE_NOOP("payops::PlaybookDock", "Export the incident report"),
        QT_TRANSLATE_NOOP(
            "payops::PlaybookDock",
            "A PDF for finance of the incident's window: when the duplicates began, who flipped "
            "the switch, what was compensated and by whom, the totals in yuan, the reconciliation "
            "and the audit chain's head hash. payops report writes the same file from cron."),
        Page::NUM_PAGES, nullptr},
};
static_assert(kSteps.size() == console::kPlaybookSteps, "one row per step of console/playbook.h");

QString text(const char *source)
{
    return QCoreApplication::translate("payops::PlaybookDock", source);
}

// The storm of step 1: a few orders a second, so that the overview fills while one watches.
StormPlan incidentPlan(const QStringList &targets, const QByteArray &secret)
{
    StormPlan plan;
    plan.targets = targets;
    plan.secret = secret;
    plan.orders = 40;
    plan.copies = 2;
    plan.gapMs = 40;
    plan.pattern = StormPattern::Gap;
    plan.ratePerSecond = 8;
    return plan;
}

constexpr int kIncidentInstances = 2;

} // namespace

PlaybookDock::PlaybookDock(QWidget *parent)
    : QDockWidget(tr("Playbook"), parent)
{
    setObjectName(QStringLiteral("playbookDock"));
    setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *body = new QWidget(scroll);
    auto *layout = new QVBoxLayout(body);
    layout->setContentsMargins(6, 4, 6, 6);
    layout->setSpacing(6);
    m_summary = new QLabel(tr("Not connected."), body);
    m_summary->setObjectName(QStringLiteral("playbookSummary"));
    m_summary->setWordWrap(true);
    m_message = new QLabel(body);
    m_message->setObjectName(QStringLiteral("playbookMessage"));
    m_message->setWordWrap(true);
    m_message->hide();
    layout->addWidget(m_summary);
    layout->addWidget(m_message);
    for (const StepText &row : kSteps) {
        auto *card =
            new StepCard(int(row.step), text(row.title), row.why ? text(row.why) : QString(), body);
        m_cards << card;
        layout->addWidget(card);
    }
    layout->addStretch(1);
    scroll->setWidget(body);
    setWidget(scroll);
    setMinimumWidth(340);
    buildCards();

    // Opened or closed by the person: from then on the sandbox check no longer decides.
    connect(toggleViewAction(), &QAction::triggered, this,
            [this] { m_userChoseVisibility = true; });
    // Hidden, it costs the database nothing: it checks again when it is shown.
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    connect(this, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible && m_checkedOnce)
            refresh();
    });
    connect(&console::ConsoleSettings::instance(), &console::ConsoleSettings::changed, this,
            [this] {
                m_timer.setInterval(console::ConsoleSettings::instance().refreshSeconds() * 1000);
            });
    m_timer.setInterval(console::ConsoleSettings::instance().refreshSeconds() * 1000);
}

PlaybookDock::~PlaybookDock() = default;

void PlaybookDock::buildCards()
{
    for (const StepText &row : kSteps) {
        StepCard *c = card(row.step);
        if (row.page == Page::NUM_PAGES || row.step == PlaybookStep::ProveRootCause)
            continue;
        QPushButton *open = c->addButton(QStringLiteral("Open"), text(row.pageButton));
        connect(open, &QPushButton::clicked, this,
                [this, page = row.page] { Q_EMIT navigate(page); });
    }
    m_runIncident =
        card(PlaybookStep::Simulate)->addButton(QStringLiteral("Run"), tr("Run the incident…"));
    connect(m_runIncident, &QPushButton::clicked, this, &PlaybookDock::runIncident);
    m_openEvidence =
        card(PlaybookStep::ProveRootCause)->addButton(QStringLiteral("Open"), tr("Order evidence"));
    connect(m_openEvidence, &QPushButton::clicked, this, [this] {
        if (m_facts.evidenceOrder > 0)
            Q_EMIT openOrder(m_facts.evidenceOrder);
        else
            Q_EMIT navigate(Page::EvidenceId);
    });
    m_applyKeys =
        card(PlaybookStep::Fix)->addButton(QStringLiteral("ApplyKeys"), tr("Apply the keys…"));
    connect(m_applyKeys, &QPushButton::clicked, this, &PlaybookDock::applyKeys);
    m_restartSafe =
        card(PlaybookStep::Fix)->addButton(QStringLiteral("RestartSafe"), tr("Restart safe…"));
    connect(m_restartSafe, &QPushButton::clicked, this, &PlaybookDock::restartSafe);
    QPushButton *report = card(PlaybookStep::ExportReport)
                              ->addButton(QStringLiteral("Report"), tr("Incident report…"));
    connect(report, &QPushButton::clicked, this, &PlaybookDock::reportRequested);
    QPushButton *checkNow =
        card(PlaybookStep::InspectGreen)->addButton(QStringLiteral("Check"), tr("Check now"));
    connect(checkNow, &QPushButton::clicked, this, &PlaybookDock::refresh);
    draw();
}

StepCard *PlaybookDock::card(PlaybookStep step) const
{
    return m_cards.value(int(step) - 1);
}

void PlaybookDock::setSimulation(console::LocalInstances *instances, console::StormRunner *storm)
{
    if (m_instances)
        disconnect(m_instances, nullptr, this, nullptr);
    if (m_storm)
        disconnect(m_storm, nullptr, this, nullptr);
    m_instances = instances;
    m_storm = storm;
    if (instances) {
        connect(instances, &console::LocalInstances::changed, this, [this] {
            if (m_stormPending && m_instances &&
                m_instances->targets().size() >= kIncidentInstances)
                startStorm();
            refresh();
        });
        connect(instances, &console::LocalInstances::failed, this, [this](const QString &message) {
            m_stormPending = false;
            showError(tr("The local instances: %1").arg(message));
        });
    }
    if (storm) {
        connect(storm, &console::StormRunner::finished, this, &PlaybookDock::refresh);
        connect(storm, &console::StormRunner::failed, this,
                [this](const QString &message) { showError(tr("The storm: %1").arg(message)); });
    }
    draw();
}

void PlaybookDock::setReportWritten()
{
    m_reportWritten = true;
    if (m_checkedOnce)
        draw();
}

void PlaybookDock::setDatabase(const console::Target &target)
{
    const Dsn &dsn = target.dsn;
    m_dsn = dsn;
    m_mapping = target.mapping;
    m_compensated = std::make_shared<console::MappedCompensatedTally>();
    // Its figures are the overview's: read where the pages read (a replica, with --read-db),
    // while its actions (the side-effect keys, the simulation) run on the primary.
    m_worker = std::make_unique<console::Worker>(target.readingDsn());
    m_checking = false;
    m_checkedOnce = false;
    m_facts = {};
    m_reportWritten = false;
    m_steps.clear();
    m_summary->setText(tr("Checking %1 …").arg(dsn.toDisplayString()));
    m_message->hide();
    m_timer.start();
    refresh();
}

void PlaybookDock::refresh()
{
    if (!m_worker)
        return;
    // One check at a time: a slow server gets one query in flight from here, not a queue.
    if (m_checking) {
        m_checkAgain = true;
        return;
    }
    m_checking = true;
    const qint64 pointsPerYuan = console::ConsoleSettings::instance().pointsPerYuan();
    const console::Job<console::PlaybookFacts> job =
        [pointsPerYuan, mapping = m_mapping, tally = m_compensated](const QSqlDatabase &db) {
            return console::readPlaybookFacts(db, pointsPerYuan, mapping ? &*mapping : nullptr,
                                              tally.get());
        };
    m_worker->submit<console::PlaybookFacts>(
        QStringLiteral("playbook"), job, this,
        [this](const console::PlaybookFacts &facts) {
            m_checking = false;
            m_facts = facts;
            if (!m_checkedOnce && !m_userChoseVisibility)
                setVisible(facts.sandbox);
            m_checkedOnce = true;
            draw();
            Q_EMIT checked();
            if (std::exchange(m_checkAgain, false))
                refresh();
        },
        [this](const db::Error &error) {
            m_checking = false;
            m_summary->setText(tr("Could not check: %1").arg(db::userMessage(error)));
            if (std::exchange(m_checkAgain, false))
                refresh();
        });
}

void PlaybookDock::draw()
{
    const bool stormRunning = m_storm && m_storm->isRunning();
    if (m_checkedOnce) {
        m_steps = console::evaluatePlaybook(
            m_facts, console::PlaybookContext{stormRunning || m_stormPending, m_reportWritten});
        for (const console::StepStatus &status : std::as_const(m_steps))
            card(status.step)->setStatus(status);
        const int done = console::doneSteps(m_steps);
        const int counted = console::countedSteps(m_steps);
        m_summary->setText(
            palette::strong(
                done == counted ? palette::Role::Ok : palette::Role::Neutral,
                tr("%1 of %2 steps done").arg(QString::number(done), QString::number(counted))) +
            QStringLiteral("<br>") +
            palette::coloured(palette::Role::Muted,
                              (m_mapping && m_facts.gatewaysAlive > 0
                                   ? tr("The team's tables, through the mapping, behind %1 "
                                        "live payops gateway(s).")
                                         .arg(m_facts.gatewaysAlive)
                               : m_mapping ? tr("The team's tables, through the mapping: the "
                                                "steps of payops's own callback handling are "
                                                "not available.")
                               : m_facts.sandbox
                                   ? tr("On a sandbox: the incident can be simulated.")
                                   : tr("Not a sandbox: a runbook, without step 1."))
                                  .toHtmlEscaped()));
    }
    const bool sandbox = m_facts.sandbox && !m_mapping;
    // The steps' reasoning in the words of a team's tables: side effects as the mapping names
    // them, its keys their DBA's to add.
    card(PlaybookStep::Detect)
        ->setWhy(m_mapping ? tr("Watch the mapping's side effects issued twice appear on the "
                                "overview: the mapped duplicate watch reads only what is new in "
                                "your tables.")
                           : text(kSteps.at(int(PlaybookStep::Detect) - 1).why));
    card(PlaybookStep::Scope)
        ->setWhy(m_mapping ? tr("Group each side effect by (order, key), as the mapping names "
                                "them: how many orders, how many extra copies, how much money is "
                                "at risk.")
                           : text(kSteps.at(int(PlaybookStep::Scope) - 1).why));
    if (m_mapping)
        card(PlaybookStep::Fix)
            ->setWhy(tr("Give each side effect's table a unique key on (order, key), as the "
                        "mapping names them: your DBA adds it once the duplicates are "
                        "compensated, since payops never changes your schema. Or deploy a "
                        "handler that holds its lock across the commit."));
    else
        card(PlaybookStep::Fix)
            ->setWhy(sandbox
                         ? tr("Give each side effect its own key (uk_order_tpl, uk_order_type), "
                              "refused while live duplicates "
                              "remain, then restart the instances with the safe handler, which "
                              "holds its lock across the "
                              "commit.")
                         : tr("Give each side effect its own key (uk_order_tpl, uk_order_type), "
                              "refused while live duplicates "
                              "remain, and deploy the safe handler: the lock held until after the "
                              "commit, checked from the "
                              "last hour's traces."));
    m_runIncident->setVisible(sandbox);
    m_runIncident->setEnabled(m_instances && m_storm && !stormRunning && !m_stormPending);
    m_restartSafe->setVisible(sandbox);
    m_restartSafe->setEnabled(m_instances && !m_instances->instances().isEmpty() &&
                              m_facts.unsafeAlive > 0);
    // The keys it applies are payops's own tables'; a team's schema is never altered.
    m_applyKeys->setVisible(!m_mapping);
    // Nor do the pages of payops's own callback handling act on a team's tables, unless its
    // gateways stand in front of their handler.
    for (const PlaybookStep step :
         {PlaybookStep::Simulate, PlaybookStep::StopBleeding, PlaybookStep::Drain}) {
        const bool notAvailable =
            !m_checkedOnce || m_steps.value(int(step) - 1).state == StepState::NotAvailable;
        card(step)
            ->findChild<QPushButton *>(QStringLiteral("step%1Open").arg(int(step)))
            ->setVisible(!(m_mapping && notAvailable));
    }
    m_applyKeys->setEnabled(m_dsn && !m_applyingKeys && !m_facts.keysPresent());
    m_applyKeys->setText(m_applyingKeys ? tr("Applying the keys …") : tr("Apply the keys…"));
    m_openEvidence->setText(m_facts.evidenceOrder > 0
                                ? tr("Evidence of order %1").arg(m_facts.evidenceOrder)
                                : tr("Order evidence"));
}

void PlaybookDock::askFirst(const QString &name, const QString &question, const QString &yes,
                            std::function<void()> onYes)
{
    // Opened, not exec()'d: the console keeps running while the question waits.
    auto *box =
        new QMessageBox(QMessageBox::Question, tr("Playbook"), question, QMessageBox::Cancel, this);
    box->setObjectName(name);
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton *go = box->addButton(yes, QMessageBox::AcceptRole);
    box->setDefaultButton(QMessageBox::Cancel);
    connect(box, &QMessageBox::buttonClicked, this,
            [box, go, onYes = std::move(onYes)](QAbstractButton *clicked) {
                if (clicked == go)
                    onYes();
                box->close();
            });
    box->open();
}

void PlaybookDock::runIncident()
{
    if (!m_dsn || !m_instances || !m_storm)
        return;
    const StormPlan plan = incidentPlan({}, {});
    askFirst(QStringLiteral("runIncidentConfirm"),
             tr("Start %1 payops-callbackd instances with the unsafe-demo handler on this sandbox, "
                "create %2 new "
                "PENDING orders and deliver each payment's callback %3 times, %4 ms apart?")
                 .arg(QString::number(kIncidentInstances), QString::number(plan.orders),
                      QString::number(plan.copies), QString::number(plan.gapMs)),
             tr("Run the incident"), [this] {
                 m_message->hide();
                 m_stormPending = true;
                 m_instances->start(*m_dsn, QStringLiteral("unsafe-demo"), kIncidentInstances);
                 draw();
             });
}

void PlaybookDock::startStorm()
{
    m_stormPending = false;
    if (!m_dsn || !m_storm || !m_instances)
        return;
    m_storm->start(*m_dsn, incidentPlan(m_instances->targets(), m_instances->secret()), true);
    draw();
}

void PlaybookDock::restartSafe()
{
    if (!m_instances)
        return;
    askFirst(QStringLiteral("restartSafeConfirm"),
             tr("Restart the %1 local instance(s) with the safe handler? Callbacks in flight are "
                "finished first.")
                 .arg(m_instances->instances().size()),
             tr("Restart safe"), [this] {
                 if (m_storm && m_storm->isRunning())
                     m_storm->stop();
                 m_instances->restartAll(QStringLiteral("safe"));
             });
}

void PlaybookDock::applyKeys()
{
    if (!m_dsn)
        return;
    askFirst(QStringLiteral("applyKeysConfirm"),
             tr("Add the side-effect keys uk_order_tpl and uk_order_type to %1? The database "
                "refuses while live "
                "duplicates remain: compensate them first. One ALTER TABLE per table; it cannot be "
                "stopped "
                "half-way.")
                 .arg(m_dsn->toDisplayString()),
             tr("Apply the keys"), [this] {
                 m_applyingKeys = true;
                 m_message->hide();
                 draw();
                 // The migration needs a connection of its own (db::Migrator): a standalone job,
                 // on a worker of its own so that the checks go on meanwhile.
                 delete m_keysWorker;
                 m_keysWorker = new console::Worker(*m_dsn, this);
                 const auto done = [this](const QString &message, bool refused) {
                     m_applyingKeys = false;
                     if (!refused) {
                         m_message->setText(
                             palette::coloured(palette::Role::Ok, message.toHtmlEscaped()));
                         m_message->show();
                     } else {
                         showError(message);
                     }
                     refresh();
                 };
                 m_keysWorker->submitStandalone<SideEffectKeysResult>(
                     QStringLiteral("keys"), console::applyPlaybookKeys, this,
                     [done](const SideEffectKeysResult &result) {
                         done(result.message, result.refused);
                     },
                     [done](const db::Error &error) { done(db::userMessage(error), true); });
             });
}

void PlaybookDock::showError(const QString &text)
{
    m_message->setText(palette::coloured(palette::Role::Danger, text.toHtmlEscaped()));
    m_message->show();
    draw();
}

} // namespace payops
