#pragma once

#include "page.h"

class QGraphicsView;
class QLabel;
class QLineEdit;
class QTableView;

namespace payops {

class BusyIndicator;
class EventModel;
class SwimlaneScene;

// One order's evidence: what each instance did and when, to the millisecond, and what
// that proves, in words.
class EvidencePage final : public Page
{
    Q_OBJECT

public:
    EvidencePage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(EvidencePage)

    void showOrder(qint64 orderId);
    void refresh() override;
    SwimlaneScene *scene() const { return m_scene; }
    EventModel *events() const { return m_events; }
    qint64 orderId() const { return m_orderId; }

private:
    qint64 m_orderId = 0;
    QLineEdit *m_orderEdit = nullptr;
    QLabel *m_header = nullptr;
    QLabel *m_findings = nullptr;
    SwimlaneScene *m_scene = nullptr;
    QGraphicsView *m_view = nullptr;
    QTableView *m_table = nullptr;
    EventModel *m_events = nullptr;
    BusyIndicator *m_busy = nullptr;
};

} // namespace payops
