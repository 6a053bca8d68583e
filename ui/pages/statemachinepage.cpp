#include "statemachinepage.h"

#include "console/statemachine.h"
#include "console/worker.h"
#include "models/ordermodel.h"
#include "palette.h"
#include "widgets/busyindicator.h"
#include "widgets/datatable.h"
#include "widgets/statemachinescene.h"
#include "windowcombo.h"

#include <QGraphicsView>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace payops {

StateMachinePage::StateMachinePage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("stateMachinePage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    auto *bar = new QHBoxLayout;
    auto *title = new QLabel(
        tr("<b>Order state machine</b> — states with the orders that entered them in the "
           "window; edges with their transitions in the window; %1")
            .arg(palette::coloured(palette::Role::Danger, tr("rejected attempts in red"))),
        this);
    if (mapping())
        title->setText(tr("<b>Order state machine</b> — payops's states; each counts the orders "
                          "of the team's own tables created in the window that are in it now"));
    title->setWordWrap(true); // a long line here would hold the whole window wider than the screen
    // No "all time": counting every transition of a production database is not for a page
    // that reads again whenever it is refreshed. The window is read once, then what is new.
    m_window = new WindowCombo(this, 1, WindowCombo::Bounded);
    m_window->setToolTip(
        tr("States count the orders that entered them in this window (PENDING: the orders created "
           "in it); edges count the transition attempts made in it. Counted by the minute."));
    if (mapping())
        m_window->setToolTip(
            tr("States count the orders created in this window, by the state they are in now.") +
            QLatin1Char(' ') +
            (mapping()->orders.updatedAt.isEmpty()
                 ? tr("The mapping names no updated_at: each refresh counts the whole window "
                      "again.")
                 : tr("The window is read once; each refresh reads the orders changed since "
                      "(updated_at).")));
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    m_busy = new BusyIndicator(this);
    bar->addWidget(title, 1);
    bar->addWidget(m_busy);
    bar->addWidget(new QLabel(tr("Counted over"), this));
    bar->addWidget(m_window);
    bar->addWidget(refreshButton);
    layout->addLayout(bar);

    m_scene = new StateMachineScene(this);
    m_view = new QGraphicsView(m_scene, this);
    m_view->setObjectName(QStringLiteral("stateMachineView"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(320);

    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    m_selection = new QLabel(
        tr("Click a state or an edge to list its orders; double-click an order for its evidence."),
        lower);
    m_selection->setObjectName(QStringLiteral("selectionLabel"));
    m_orders = new OrderModel(worker(), this);
    m_table = new DataTable(QStringLiteral("ordersTable"), m_orders, lower);
    m_table->setAlternatingRowColors(true);
    lowerLayout->addWidget(m_selection);
    lowerLayout->addWidget(m_table);
    if (mapping()) {
        // The team's tables keep an order's state, not how it got there: nothing to count on
        // an edge, and no list of the orders that took one. Said, rather than shown as 0.
        m_selection->setText(
            tr("The team's own tables keep no log of transitions: how many orders took each "
               "edge, and the attempts payops would have rejected, cannot be known here. Look up "
               "an order on the Order evidence page."));
        m_selection->setWordWrap(true);
    }

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    splitter->addWidget(lower);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);
    if (mapping()) { // no order list: the diagram takes the page, the note sits above it
        lower->hide();
        layout->insertWidget(1, m_selection);
    }

    connect(refreshButton, &QPushButton::clicked, this, &StateMachinePage::refresh);
    connect(m_window, &QComboBox::currentIndexChanged, this, &StateMachinePage::refresh);
    connect(m_busy, &BusyIndicator::cancelRequested, this, [this] {
        worker()->cancel(QStringLiteral("state-machine"));
        m_pending = false;
        m_busy->stop();
    });
    if (!mapping()) { // the order list reads payops's own orders
        connect(m_scene, &StateMachineScene::stateActivated, this,
                [this](const QString &state) { select(state, {}, {}, false); });
        connect(m_scene, &StateMachineScene::edgeActivated, this,
                [this](const QString &from, const QString &to, bool rejected) {
                    select({}, from, to, rejected);
                });
    }
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT openOrder(index.data(OrderModel::OrderIdRole).toLongLong());
    });
    connect(m_orders, &OrderModel::failed, this,
            [this](const QString &message) { m_selection->setText(message); });
    refresh();
}

void StateMachinePage::refresh()
{
    if (m_pending)
        return;
    m_pending = true;
    m_busy->start(tr("Counting"));
    const qint64 seconds = m_window->window().seconds;
    if (mapping() && !m_mappedTally)
        m_mappedTally = std::make_shared<mapping::MappedStateTally>(seconds);
    else if (!mapping() && !m_tally)
        m_tally = std::make_shared<console::ActivityTally>(seconds);
    worker()->submit<console::StateMachineSnapshot>(
        QStringLiteral("state-machine"),
        mapping() ? console::mappedStateMachineJob(m_mappedTally, *mapping(), seconds)
                  : console::stateMachineJob(m_tally, seconds),
        this,
        [this](const console::StateMachineSnapshot &snapshot) {
            m_pending = false;
            m_busy->stop();
            m_scene->setSnapshot(snapshot);
            fitDiagram();
            // Until the user picks something, list the orders of the most frequent rejected
            // attempt: at 3 a.m. that is the question this page is opened for.
            if (!mapping() && m_orders->selection().kind == console::OrderSelection::Kind::None)
                m_scene->selectWorstRejectedEdge();
        },
        [this](const db::Error &error) {
            m_pending = false;
            m_busy->stop();
            m_selection->setText(db::userMessage(error));
        });
}

void StateMachinePage::fitDiagram()
{
    if (m_scene->items().isEmpty())
        return;
    m_view->fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    if (m_view->transform().m11() > 1.4) // larger than this helps nobody read it
        m_view->setTransform(QTransform::fromScale(1.4, 1.4));
}

void StateMachinePage::resizeEvent(QResizeEvent *event)
{
    Page::resizeEvent(event);
    fitDiagram();
}

void StateMachinePage::showEvent(QShowEvent *event)
{
    Page::showEvent(event);
    fitDiagram();
}

void StateMachinePage::select(const QString &state, const QString &from, const QString &to,
                              bool rejected)
{
    console::OrderSelection selection;
    if (!state.isEmpty()) {
        selection.kind = console::OrderSelection::Kind::State;
        selection.state = state;
    } else {
        selection.kind = console::OrderSelection::Kind::Edge;
        selection.from = from;
        selection.to = to;
        selection.rejected = rejected;
        selection.window = m_window->window();
    }
    m_selection->setText(
        tr("%1 — double-click an order for its evidence").arg(selection.describe()));
    m_orders->reload(selection);
}

} // namespace payops
