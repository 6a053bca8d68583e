#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QPushButton;

namespace payops {

// "Working … 3 s [Cancel]". Appears only when a query takes longer than a moment, so quick
// refreshes do not flicker; Cancel asks the page to interrupt the query on the server.
class BusyIndicator final : public QWidget
{
    Q_OBJECT

public:
    explicit BusyIndicator(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(BusyIndicator)

    void start(const QString &what);
    void stop();
    bool isBusy() const { return m_clock.isValid(); }

Q_SIGNALS:
    void cancelRequested();

private:
    void tick();

    QLabel *m_label = nullptr;
    QPushButton *m_cancel = nullptr;
    QTimer m_timer;
    QElapsedTimer m_clock;
    QString m_what;
};

} // namespace payops
