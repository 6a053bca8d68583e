#include "fakeinstance.h"

#include <QTcpSocket>

namespace payops::test {

FakeInstance::FakeInstance(QObject *parent)
    : QObject(parent)
{
    m_server.listen(QHostAddress::LocalHost);
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                const QByteArray request = socket->readAll();
                QByteArray body;
                if (request.startsWith("GET /healthz")) {
                    body =
                        R"({"status":"ok","instance":"a","handler":"safe","mode":"RECORD_ONLY","switch_version":3,"db":"ok"})";
                } else {
                    m_total += 50;
                    body = "# TYPE payops_callbacks_total counter\n"
                           "payops_callbacks_total{outcome=\"processed\"} " +
                           QByteArray::number(m_total) +
                           "\n"
                           "payops_callbacks_total{outcome=\"recorded\"} 0\n"
                           "payops_backlog_recorded 4\n";
                }
                socket->write(
                    "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(body.size()) +
                    "\r\nConnection: close\r\n\r\n" + body);
                socket->disconnectFromHost();
            });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    });
}

QString FakeInstance::listen() const
{
    return QStringLiteral("127.0.0.1:%1").arg(m_server.serverPort());
}

} // namespace payops::test
