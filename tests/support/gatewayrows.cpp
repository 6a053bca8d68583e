#include "gatewayrows.h"

#include "db/connection.h"
#include "domain/callback/channel.h"

#include <QSqlQuery>

#include <optional>

namespace payops::test {
namespace {

// The first delivery; every other moment counts from here.
constexpr auto kFirstDelivery = "2026-12-05 09:30:00.000000";

// A moment `millis` after the first delivery, as SQL.
QString at(double millis)
{
    return QStringLiteral("'%1' + INTERVAL %2 MICROSECOND")
        .arg(QLatin1String(kFirstDelivery))
        .arg(qint64(millis * 1000));
}

} // namespace

QString gatewayUpstream()
{
    return QStringLiteral("http://10.0.8.21:8080/pay/notify");
}

void insertGatewayInstances(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("gateway-rows"));
    db::exec(connection.database(),
             QStringLiteral(
                 "INSERT INTO callback_instance (id, host, pid, listen, build_version, handler, "
                 "last_seen_at, switch_version_applied, mode_applied, mode, upstream, "
                 "upstream_state, upstream_checked_at) VALUES "
                 "('gateway-a', 'gw1', 4101, '', 'test', 'safe', UTC_TIMESTAMP(3), 1, 'NORMAL', "
                 "'gateway', ?, 'ok', UTC_TIMESTAMP(3) - INTERVAL 2 SECOND), "
                 "('gateway-b', 'gw2', 4102, '', 'test', 'safe', UTC_TIMESTAMP(3), 1, 'NORMAL', "
                 "'gateway', ?, 'failing', UTC_TIMESTAMP(3) - INTERVAL 40 SECOND), "
                 "('handler-c', 'app3', 4103, '', 'test', 'safe', UTC_TIMESTAMP(3), 1, 'NORMAL', "
                 "'handler', '', '', NULL)"),
             {gatewayUpstream(), gatewayUpstream()});
}

void heartbeatGateways(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("gateway-rows"));
    db::execDirect(connection.database(),
                   QStringLiteral("UPDATE callback_instance SET last_seen_at = UTC_TIMESTAMP(3) "
                                  "WHERE id IN ('gateway-a', 'gateway-b', 'handler-c')"));
}

void deleteGatewayInstances(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("gateway-rows"));
    db::execDirect(connection.database(),
                   QStringLiteral("DELETE FROM callback_instance "
                                  "WHERE id IN ('gateway-a', 'gateway-b', 'handler-c')"));
}

ForwardedPayment insertForwardedPayment(const Dsn &dsn)
{
    ForwardedPayment payment;
    payment.payNo = QByteArrayLiteral("4200002718202612050930000001");
    payment.rawHeaders = joinHeaders({
        {"Content-Type", "application/json"},
        {"Wechatpay-Timestamp", "1764927000"},
        {"Wechatpay-Nonce", "5K8264ILTKCH16CQ2502SI8ZNMTM67VS"},
        {"Wechatpay-Signature", "CtcbzwtQjN8rnOXItEBJ5aQFSnIXESeV28Pr2YEmf9wsDQ8Nx25ytW6FXBCAFdrr0m"
                                "gqngX3AD9gNzjnNHzSGTPBSsaEkIfhPF4b8YRRTpny88tNLyprXA0GU5ID3DkZ"},
        {"Wechatpay-Serial", "5157F09EFDC096DE15EBE81A47057A7232F1B8E1"},
        {"Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048"},
        {"Request-ID", "08F78BB5AF0610D302A4CE0D7D8B2D9B"},
    });
    payment.rawBody = QByteArrayLiteral(
        R"({"id":"EV-2026120509300001","create_time":"2026-12-05T17:30:00+08:00",)"
        R"("resource_type":"encrypt-resource","event_type":"TRANSACTION.SUCCESS",)"
        R"("summary":"支付成功","resource":{"original_type":"transaction",)"
        R"("algorithm":"AEAD_AES_256_GCM","ciphertext":"sAdy7W4t0PcFpvBJB8p2N0PM1ZBm)"
        R"(JCbfE+eWVS02n/k3XQdK1m4pAlt2bR1kLg7yYOQgxRfRN0LwmAnx5qy0Xg6zbsWnKC8V3D)"
        R"(n0kYqkSqqAZzoNH89dzvXUn2cvcQcIuyvB4PxfYXL2nO5HcF8gIrDvX6Kf9","associated_data":)"
        R"("transaction","nonce":"fdasflkja484w"}})");
    db::Connection connection(dsn, QStringLiteral("gateway-rows"));
    const QSqlDatabase db = connection.database();
    payment.orderId =
        db::exec(db,
                 QStringLiteral("INSERT INTO orders (user_id, amount_fen, status, pay_no, "
                                "created_at, paid_at) VALUES (7, 8800, 'PAID', ?, %1, %2)")
                     .arg(at(-120'000), at(15'048)),
                 {payment.payNo})
            .lastInsertId()
            .toLongLong();
    payment.callbackId =
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, raw_headers, "
                     "wire_format, amount_fen, currency, channel, trade_status, status, "
                     "response_code, instance, gateway, upstream_status, forwards, forwarded_at, "
                     "processed_at, created_at) VALUES (?, ?, ?, ?, 'wechatpay', 8800, 'CNY', "
                     "'wechatpay', 'SUCCESS', 'FORWARDED', 200, 'gateway-a', 1, 200, 2, %1, %2, "
                     "%3)")
                     .arg(at(15'002), at(15'049), at(0.5)),
                 {payment.payNo, payment.orderId, payment.rawBody,
                  QString::fromUtf8(payment.rawHeaders)})
            .lastInsertId()
            .toLongLong();
    // Each delivery: received, lock, forward, the upstream's answer, the stored answer's
    // transaction, the lock's release, the platform's answer.
    const QString trace = QStringLiteral(
        "INSERT INTO callback_trace (pay_no, order_id, instance, handler, received_at, "
        "lock_acquired_at, forwarded_at, upstream_answered_at, upstream_status, tx_begin_at, "
        "committed_at, lock_released_at, responded_at, outcome, http_status) VALUES "
        "(?, ?, ?, 'gateway', %1, %2, %3, %4, ?, %5, %6, %7, %8, ?, ?)");
    const auto delivery = [&](const QString &instance, double received, double locked,
                              std::optional<double> forwarded, std::optional<double> answered,
                              QVariant upstreamStatus, std::optional<double> stored,
                              double released, const QString &outcome, int status) {
        const QString null = QStringLiteral("NULL");
        db::exec(db,
                 trace.arg(at(received), at(locked), forwarded ? at(*forwarded) : null,
                           answered ? at(*answered) : null, stored ? at(*stored) : null,
                           stored ? at(*stored + 2) : null, at(released), at(released + 0.5)),
                 {payment.payNo, payment.orderId, instance, upstreamStatus, outcome, status});
    };
    delivery(QStringLiteral("gateway-a"), 0, 0.8, 1.5, 40, 503, std::nullopt, 41,
             QStringLiteral("upstream_failed"), 500);
    delivery(QStringLiteral("gateway-b"), 15'000, 15'001, 15'002, 15'046, 200, 15'047, 15'050,
             QStringLiteral("forwarded"), 200);
    delivery(QStringLiteral("gateway-a"), 15'020, 15'050.5, std::nullopt, std::nullopt,
             QVariant(QMetaType(QMetaType::Int)), std::nullopt, 15'051, QStringLiteral("replayed"),
             200);
    return payment;
}

} // namespace payops::test
