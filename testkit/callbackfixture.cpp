#include "callbackfixture.h"

#include "db/connection.h"
#include "db/migrator.h"
#include "domain/callback/signature.h"
#include "domain/money/duplicates/duplicatecount.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>

#include <httplib.h>

#include <csignal>
#include <stdexcept>

namespace payops::test {

QByteArray testSecret()
{
    return QByteArrayLiteral("test-secret-8f1c2a9d4e7b");
}

QString callbackdPath()
{
    return QStringLiteral(PAYOPS_CALLBACKD_PATH);
}

QString secretFilePath()
{
    const QString path =
        QDir::tempPath() +
        QStringLiteral("/payops-test-secret-%1").arg(QCoreApplication::applicationPid());
    if (!QFile::exists(path)) {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
            file.write(testSecret() + '\n') < 0)
            throw std::runtime_error("cannot write the test secret file");
    }
    // The endpoint refuses a secret others may read; one left by an earlier run may be 0644.
    if (!QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner))
        throw std::runtime_error("cannot make the test secret file private");
    return path;
}

QByteArray callbackBody(const QByteArray &payNo, qint64 orderId, qint64 amountFen,
                        const QString &currency, const QString &tradeStatus)
{
    const QJsonObject body{{QStringLiteral("pay_no"), QString::fromUtf8(payNo)},
                           {QStringLiteral("order_id"), orderId},
                           {QStringLiteral("amount_fen"), amountFen},
                           {QStringLiteral("currency"), currency},
                           {QStringLiteral("channel"), QStringLiteral("wechat")},
                           {QStringLiteral("trade_status"), tradeStatus},
                           {QStringLiteral("paid_at"), QStringLiteral("2026-12-02T09:00:00.123Z")}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

HttpResult postRaw(int port, const QByteArray &body,
                   const QList<QPair<QByteArray, QByteArray>> &headers)
{
    return postTo(port, "/callbacks/pay", body, headers);
}

HttpResult postTo(int port, const char *path, const QByteArray &body,
                  const QList<QPair<QByteArray, QByteArray>> &headers, const char *contentType)
{
    httplib::Client client("127.0.0.1", port);
    client.set_tcp_nodelay(true);
    client.set_connection_timeout(5, 0);
    client.set_read_timeout(30, 0);
    httplib::Headers httpHeaders;
    for (const auto &[name, value] : headers)
        httpHeaders.emplace(name.toStdString(), value.toStdString());
    const auto result = client.Post(path, httpHeaders, body.toStdString(), contentType);
    if (!result)
        return {};
    return {result->status, QByteArray::fromStdString(result->body),
            QByteArray::fromStdString(result->get_header_value("Content-Type"))};
}

qint64 metric(int port, const QByteArray &name)
{
    for (const QByteArray &line : get(port, QStringLiteral("/metrics")).body.split('\n')) {
        if (line.startsWith(name + ' '))
            return line.mid(name.size() + 1).toLongLong();
    }
    return -1;
}

HttpResult postCallback(int port, const QByteArray &body, qint64 timestamp,
                        const QByteArray &secret)
{
    if (timestamp == 0)
        timestamp = QDateTime::currentSecsSinceEpoch();
    return postRaw(port, body,
                   {{"X-Payops-Timestamp", QByteArray::number(timestamp)},
                    {"X-Payops-Signature", signatureHeader(secret, timestamp, body)}});
}

HttpResult get(int port, const QString &path)
{
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(5, 0);
    const auto result = client.Get(path.toStdString());
    if (!result)
        return {};
    return {result->status, QByteArray::fromStdString(result->body)};
}

void recordCallbacks(const Dsn &dsn, qint64 firstOrderId, int count)
{
    db::Connection connection(dsn, QStringLiteral("record"));
    for (int i = 0; i < count; ++i) {
        const qint64 order = firstOrderId + i;
        const QByteArray payNo = "REC-" + QByteArray::number(order);
        db::exec(connection.database(),
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                "amount_fen, currency, channel, trade_status, "
                                "status, instance) VALUES (?, ?, ?, 9900, 'CNY', 'wechat', "
                                "'SUCCESS', 'RECORDED', 'inst-rec')"),
                 {payNo, order, callbackBody(payNo, order, 9900)});
    }
}

void addPendingOrders(const QSqlDatabase &db, int count, qint64 firstOrderId)
{
    db::exec(db,
             QStringLiteral(
                 "INSERT INTO orders (id, user_id, amount_fen, currency, status) "
                 "SELECT ? + n, 1 + MOD(n, 50), 9900, 'CNY', 'PENDING' FROM ("
                 " SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS n FROM"
                 " (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL "
                 "SELECT 4 UNION ALL SELECT 5"
                 "  UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a,"
                 " (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL "
                 "SELECT 4 UNION ALL SELECT 5"
                 "  UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b,"
                 " (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL "
                 "SELECT 4 UNION ALL SELECT 5"
                 "  UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c,"
                 " (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL "
                 "SELECT 4 UNION ALL SELECT 5"
                 "  UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) "
                 "e) seq WHERE n < ?"),
             {firstOrderId, count});
}

void prepareCallbackDatabase(const Dsn &dsn, const QString &level, int orderCount,
                             qint64 firstOrderId)
{
    db::Connection connection(dsn, QStringLiteral("prepare"));
    const QSqlDatabase db = connection.database();
    db::Migrator(connection, checkMigrationRequirement)
        .migrate(db::parseSchemaLevel(level).value(), true);
    db::execDirect(
        db, QStringLiteral(
                "INSERT INTO coupon_template (id, name, face_value_fen, active) VALUES "
                "(1, 'ten off', 1000, 1), (2, 'five off', 500, 1), (3, 'retired', 2000, 0)"));
    db::execDirect(
        db,
        QStringLiteral(
            "INSERT INTO point_rule (point_type, points, active) VALUES ('PAY_REWARD', 100, 1)"));
    db::execDirect(
        db,
        QStringLiteral(
            "INSERT INTO users (id, nickname) SELECT id, CONCAT('u', id) FROM ("
            "SELECT 1 + a.d + 10 * b.d AS id FROM (SELECT 0 d UNION ALL SELECT 1 UNION ALL "
            "SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL "
            "SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a, (SELECT 0 d "
            "UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) b) u"));
    if (orderCount > 0)
        addPendingOrders(db, orderCount, firstOrderId);
}

QString businessFingerprint(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("fingerprint"));
    return db::scalar(connection.database(),
                      QStringLiteral(
                          "SELECT CONCAT_WS('|',"
                          " (SELECT COUNT(*) FROM orders), (SELECT COALESCE(SUM(CRC32(CONCAT(id, "
                          "status, COALESCE(HEX(pay_no), ''),"
                          "   COALESCE(paid_at, '')))), 0) FROM orders),"
                          " (SELECT COUNT(*) FROM user_coupon), (SELECT COUNT(*) FROM point_log),"
                          " (SELECT COALESCE(SUM(points_balance), 0) FROM users), (SELECT COUNT(*) "
                          "FROM pay_callback_log),"
                          " (SELECT COUNT(*) FROM order_state_log))"))
        .toString();
}

SideEffects sideEffectsOf(const QSqlDatabase &db, qint64 orderId)
{
    SideEffects effects;
    effects.coupons =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE order_id = ?"),
                   {orderId})
            .toInt();
    effects.couponTemplatesTwice =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM (SELECT coupon_template_id FROM "
                                  "user_coupon WHERE order_id = ? "
                                  "GROUP BY coupon_template_id HAVING COUNT(*) > 1) t"),
                   {orderId})
            .toInt();
    effects.points =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM point_log WHERE order_id = ?"),
                   {orderId})
            .toInt();
    return effects;
}

void insertDuplicateIncident(const QSqlDatabase &db, int orders)
{
    for (int i = 0; i < orders; ++i) {
        const qint64 order = 1001 + i;
        for (int copy = 0; copy < 2; ++copy) {
            db::exec(db,
                     QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                    "coupon_template_id, status, face_value_fen) "
                                    "VALUES (?, ?, 1, ?, 1000), (?, ?, 2, 'ISSUED', 500)"),
                     {1 + i % 50, order,
                      copy == 1 && i % 3 == 0 ? QStringLiteral("USED") : QStringLiteral("ISSUED"),
                      1 + i % 50, order});
            db::exec(db,
                     QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points) "
                                    "VALUES (?, ?, 'PAY_REWARD', 100)"),
                     {1 + i % 50, order});
        }
        db::exec(
            db,
            QStringLiteral("UPDATE users SET points_balance = points_balance + 200 WHERE id = ?"),
            {1 + i % 50});
    }
}

CallbackdProcess::CallbackdProcess(const Dsn &dsn, const QString &handler, const QString &instance,
                                   const QStringList &extraArguments)
    : m_process(std::make_unique<QProcess>())
    , m_standardError(std::make_unique<QTemporaryFile>(
          QDir::tempPath() + QStringLiteral("/payops-callbackd-XXXXXX.log")))
{
    if (!m_standardError->open())
        throw std::runtime_error("cannot make a file for payops-callbackd's log");
    QStringList arguments{QStringLiteral("--db"),          dsn.toString(true),
                          QStringLiteral("--listen"),      QStringLiteral("127.0.0.1:0"),
                          QStringLiteral("--secret-file"), secretFilePath(),
                          QStringLiteral("--log-level"),   QStringLiteral("warn")};
    if (!handler.isEmpty())
        arguments << QStringLiteral("--handler") << handler;
    if (!instance.isEmpty())
        arguments << QStringLiteral("--instance") << instance;
    arguments << extraArguments;
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    m_process->setStandardErrorFile(m_standardError->fileName());
    m_process->start(callbackdPath(), arguments);
    static const QRegularExpression ready(
        QStringLiteral("^payops-callbackd (\\S+) listening on [^:]+:(\\d+)"));
    QDeadlineTimer deadline(30000);
    while (!deadline.hasExpired()) {
        if (m_process->canReadLine() || m_process->waitForReadyRead(200)) {
            const QString line = QString::fromUtf8(m_process->readLine());
            m_output += line;
            const auto match = ready.match(line);
            if (match.hasMatch()) {
                m_instance = match.captured(1);
                m_port = match.captured(2).toInt();
                return;
            }
        }
        if (m_process->state() == QProcess::NotRunning)
            break;
    }
    m_output += standardError();
    throw std::runtime_error("payops-callbackd did not start: " + m_output.toStdString());
}

CallbackdProcess::~CallbackdProcess()
{
    if (m_process->state() != QProcess::NotRunning && terminate(10000) != 0)
        m_process->kill();
    m_process->waitForFinished(5000);
}

QString CallbackdProcess::standardError() const
{
    QFile file(m_standardError->fileName());
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

int CallbackdProcess::terminate(int timeoutMs)
{
    if (m_process->state() == QProcess::NotRunning)
        return m_process->exitStatus() == QProcess::NormalExit ? m_process->exitCode() : -1;
    ::kill(static_cast<pid_t>(m_process->processId()), SIGTERM);
    if (!m_process->waitForFinished(timeoutMs))
        return -1;
    m_output += standardError();
    return m_process->exitStatus() == QProcess::NormalExit ? m_process->exitCode() : -1;
}

} // namespace payops::test
