#include "evidencepage.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/orderevidence.h"
#include "console/worker.h"
#include "domain/callback/notification.h"
#include "models/eventmodel.h"
#include "palette.h"
#include "widgets/busyindicator.h"
#include "widgets/datatable.h"
#include "widgets/receivedcallbackview.h"
#include "widgets/swimlanescene.h"

#include <QComboBox>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace payops {

EvidencePage::EvidencePage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("evidencePage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    auto *bar = new QHBoxLayout;
    m_orderEdit = new QLineEdit(this);
    m_orderEdit->setObjectName(QStringLiteral("orderEdit"));
    m_orderEdit->setPlaceholderText(tr("order id or number"));
    // A gateway's orders are numbered by the team: up to 64 visible ASCII characters, as
    // Alipay's out_trade_no (callback-contract.md).
    m_orderEdit->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[!-~]{1,64}")), m_orderEdit));
    m_orderEdit->setMaximumWidth(160);
    auto *show = new QPushButton(tr("Show evidence"), this);
    m_header = new QLabel(
        tr("Pick an order on the state machine or duplicates page, or type its id or, for a "
           "gateway's order, its number."),
        this);
    m_header->setObjectName(QStringLiteral("evidenceHeader"));
    // An order's line (or a database error) is longer than a laptop leaves beside the
    // playbook: it wraps instead of widening the window.
    m_header->setWordWrap(true);
    m_busy = new BusyIndicator(this);
    bar->addWidget(new QLabel(tr("Order"), this));
    bar->addWidget(m_orderEdit);
    bar->addWidget(show);
    bar->addWidget(m_header, 1);
    bar->addWidget(m_busy);
    layout->addLayout(bar);

    m_findings = new QLabel(this);
    m_findings->setObjectName(QStringLiteral("findingsLabel"));
    m_findings->setWordWrap(true);
    m_findings->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_findings);

    m_scene = new SwimlaneScene(this);
    m_view = new QGraphicsView(m_scene, this);
    m_view->setObjectName(QStringLiteral("swimlaneView"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_events = new EventModel(this);
    m_table = new DataTable(QStringLiteral("eventsTable"), m_events, this);
    auto *receivedPane = new QWidget(this);
    auto *receivedLayout = new QVBoxLayout(receivedPane);
    m_callbackList = new QComboBox(receivedPane);
    m_callbackList->setObjectName(QStringLiteral("evidenceCallbacks"));
    m_callbackList->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_received = new ReceivedCallbackView(receivedPane);
    receivedLayout->addWidget(m_callbackList);
    receivedLayout->addWidget(m_received, 1);
    connect(m_callbackList, &QComboBox::currentIndexChanged, this, &EvidencePage::showReceived);
    m_details = new QTabWidget(this);
    m_details->setObjectName(QStringLiteral("evidenceDetails"));
    m_details->addTab(m_table, tr("Events"));
    m_details->addTab(receivedPane, tr("Callbacks as received"));
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({500, 260});
    m_view->setMinimumHeight(300);
    layout->addWidget(splitter, 1);

    const auto go = [this] {
        if (!m_orderEdit->text().isEmpty())
            showOrderNumber(m_orderEdit->text().toLatin1());
    };
    connect(show, &QPushButton::clicked, this, go);
    connect(m_orderEdit, &QLineEdit::returnPressed, this, go);
    connect(m_busy, &BusyIndicator::cancelRequested, this, [this] {
        worker()->cancel(QStringLiteral("evidence"));
        m_busy->stop();
    });
}

void EvidencePage::showOrder(qint64 orderId)
{
    showOrderNumber(QByteArray::number(orderId));
}

void EvidencePage::showOrderNumber(const QByteArray &orderNo)
{
    m_orderNo = orderNo;
    m_orderId = orderIdFrom(orderNo).value_or(0);
    m_orderEdit->setText(QString::fromLatin1(orderNo));
    refresh();
}

void EvidencePage::refresh()
{
    // The team's own tables number their orders by integers (mapping.md).
    if (m_orderNo.isEmpty() || (mapping() && m_orderId <= 0))
        return;
    m_busy->start(tr("Reading the evidence"));
    worker()->submit<console::OrderEvidence>(
        QStringLiteral("evidence"),
        mapping() ? console::jobOf(console::loadMappedOrderEvidence, *mapping(), m_orderId)
                  : console::jobOf(console::loadEvidenceOf, m_orderNo),
        this,
        [this](const console::OrderEvidence &evidence) {
            m_busy->stop();
            if (!evidence.found) {
                m_header->setText(
                    tr("Order %1 does not exist.").arg(QString::fromLatin1(m_orderNo)));
                m_findings->clear();
                m_scene->setEvidence(evidence);
                m_events->setEvidence(evidence);
                showCallbacks(evidence.callbacks);
                return;
            }
            const console::OrderRow &o = evidence.order;
            m_header->setText(
                evidence.gateway
                    ? tr("<b>Order %1</b> · the team's own, taken by a gateway · %n callback(s), "
                         "the first pay_no %2",
                         nullptr, int(evidence.callbacks.size()))
                          .arg(QString::fromLatin1(evidence.orderNo).toHtmlEscaped(),
                               QString::fromUtf8(o.payNo).toHtmlEscaped())
                    : tr("<b>Order %1</b> · user %2 · %3 · ¥%4 · pay_no %5 · created %6 UTC")
                          .arg(QString::number(o.id), QString::number(o.userId), o.status,
                               console::formatYuan(o.amountFen),
                               QString::fromUtf8(o.payNo).toHtmlEscaped(),
                               console::displayTime(o.createdMicros)));
            const bool found = !evidence.findings.isEmpty();
            palette::setTextRole(m_findings, found ? palette::Role::Danger : palette::Role::Ok);
            QFont font = m_findings->font();
            font.setBold(found);
            m_findings->setFont(font);
            const QString nothing =
                evidence.gateway
                    ? tr("Nothing wrong found: no payment was handed to the team's handler with "
                         "success more than once.")
                : mapping() ? tr("Nothing wrong found: one payment, and no side effect with a "
                                 "second live copy.")
                            : tr("Nothing wrong found: every lock was released after its "
                                 "commit and no side "
                                 "effect was issued twice.");
            m_findings->setText(found ? evidence.findings.join(QLatin1Char('\n')) : nothing);
            m_scene->setEvidence(evidence);
            m_view->centerOn(m_scene->sceneRect().topLeft());
            m_events->setEvidence(evidence);
            showCallbacks(evidence.callbacks);
        },
        [this](const db::Error &error) {
            m_busy->stop();
            m_header->setText(db::userMessage(error));
        });
}

void EvidencePage::showCallbacks(const QList<console::EvidenceCallback> &callbacks)
{
    m_callbacks = callbacks;
    const QSignalBlocker quiet(m_callbackList);
    m_callbackList->clear();
    for (const console::EvidenceCallback &c : callbacks) {
        // A later event of the trade (a refund's outcome) is named beside its pay_no.
        const QString payNo = c.event.isEmpty() ? QString::fromUtf8(c.payNo)
                                                : QString::fromUtf8(c.payNo + " · " + c.event);
        m_callbackList->addItem(
            c.gateway
                ? tr("Callback %1 · pay_no %2 · %3 · %4, forwarded %n time(s)", nullptr, c.forwards)
                      .arg(QString::number(c.id), payNo, c.wireFormat, c.status)
                : tr("Callback %1 · pay_no %2 · %3 · %4")
                      .arg(QString::number(c.id), payNo, c.wireFormat, c.status));
    }
    // Most orders have one callback: then there is nothing to choose.
    m_callbackList->setVisible(callbacks.size() > 1);
    m_details->setTabText(1, tr("Callbacks as received (%1)").arg(callbacks.size()));
    showReceived(m_callbackList->currentIndex());
}

void EvidencePage::showReceived(int index)
{
    if (index < 0 || index >= m_callbacks.size()) {
        m_received->showNothing(
            mapping() ? tr("The team's own tables keep no callback as received; payops's "
                           "callbacks for this order, if any, are among the events.")
                      : tr("No callback was logged for this order."));
        return;
    }
    const console::EvidenceCallback &c = m_callbacks.at(index);
    m_received->showCallback(c.id, c.wireFormat, c.rawHeaders, c.rawBody);
}

} // namespace payops
