#pragma once

#include "console/orderevidence.h"
#include "page.h"

class QComboBox;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTableView;

namespace payops {

class BusyIndicator;
class EventModel;
class ReceivedCallbackView;
class SwimlaneScene;

// One order's evidence: what each instance did and when, to the millisecond, and what
// that proves, in words.
class EvidencePage final : public Page
{
    Q_OBJECT

public:
    EvidencePage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(EvidencePage)

    void showOrder(qint64 orderId);
    // A merchant's order number as a platform sends it (out_trade_no): payops's own order when
    // it is an order id that exists, else the callbacks a gateway took under it.
    void showOrderNumber(const QByteArray &orderNo);
    void refresh() override;
    SwimlaneScene *scene() const { return m_scene; }
    EventModel *events() const { return m_events; }
    qint64 orderId() const { return m_orderId; }

    QTabWidget *details() const { return m_details; }

private:
    void showCallbacks(const QList<console::EvidenceCallback> &callbacks);
    void showReceived(int index);

    qint64 m_orderId = 0; // m_orderNo as a payops order id, or 0
    QByteArray m_orderNo;
    QList<console::EvidenceCallback> m_callbacks;
    QLineEdit *m_orderEdit = nullptr;
    QLabel *m_header = nullptr;
    QLabel *m_findings = nullptr;
    SwimlaneScene *m_scene = nullptr;
    QGraphicsView *m_view = nullptr;
    QTableView *m_table = nullptr;
    EventModel *m_events = nullptr;
    QTabWidget *m_details = nullptr; // the events, and the callbacks as received
    QComboBox *m_callbackList = nullptr;
    ReceivedCallbackView *m_received = nullptr;
    BusyIndicator *m_busy = nullptr;
};

} // namespace payops
