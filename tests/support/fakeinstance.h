#pragma once

#include <QObject>
#include <QTcpServer>

namespace payops::test {

// A stand-in for payops-callbackd's /healthz and /metrics on a free local port. Its callback
// counter grows by 50 per scrape of /metrics, so that two scrapes give a rate.
class FakeInstance final : public QObject
{
    Q_OBJECT

public:
    explicit FakeInstance(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(FakeInstance)

    // host:port, as callback_instance.listen holds it.
    QString listen() const;

private:
    QTcpServer m_server;
    qint64 m_total = 1000;
};

} // namespace payops::test
