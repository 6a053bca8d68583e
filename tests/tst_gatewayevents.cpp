// Exactly once per event, not per pay_no: after a trade's payment, its later events (Alipay's
// TRADE_FINISHED, a refund's notice; WeChat Pay's REFUND.SUCCESS, REFUND.ABNORMAL) each reach
// the team's handler once, through a gateway connected as an account holding only
// payops_endpoint; a resend of one is answered from its own row, another event of the trade is
// forwarded. Notifications are made by openssl and Python (tests/support/platformnotify.py),
// over real HTTP to a real payops-callbackd and a real database. A handler, which pays orders
// and acts on no refund, keeps them unpaid: an Alipay refund's notice says TRADE_SUCCESS.
#include "callbackfixture.h"
#include "console/orderevidence.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "platformkit.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <thread>
#include <vector>

using namespace payops;
using test::alipayRefund;
using test::kAlipayPath;
using test::kForm;
using test::kWechatPath;
using test::PlatformKit;

class TestGatewayEvents final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_kit = std::make_unique<PlatformKit>();
        // Alipay takes only "success" as the handler's final answer; WeChat Pay any 2xx.
        test::CannedAnswer success;
        success.body = "success";
        success.contentType = "text/plain";
        m_upstream = std::make_unique<test::CountingUpstream>(0, success);
    }

    void eachAlipayEventReachesTheHandlerOnce_data() { test::addSchemaLevelRows(); }
    void eachAlipayEventReachesTheHandlerOnce()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("eventsalipay"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::CallbackdProcess gateway = startGateway(scratch);
        const QString trade = QStringLiteral("2026120422001") + level;
        const QString order = QStringLiteral("N202404181780861744366403007");
        const QByteArray payNo = trade.toUtf8();
        const int before = m_upstream->count();

        const QByteArray paid =
            m_kit->alipay(test::alipayTrade(trade, order, QStringLiteral("99.00")));
        QCOMPARE(postAlipay(gateway, paid), QByteArray("200 success"));
        QCOMPARE(postAlipay(gateway, paid), QByteArray("200 success"));
        QCOMPARE(forwardsOf(payNo, before), QStringList{QString()});

        // The refund period over: a new event of the trade, not a resend of its payment.
        const QByteArray finished = m_kit->alipay(test::alipayTrade(
            trade, order, QStringLiteral("99.00"), QStringLiteral("TRADE_FINISHED")));
        QCOMPARE(postAlipay(gateway, finished), QByteArray("200 success"));
        QCOMPARE(postAlipay(gateway, finished), QByteArray("200 success"));
        // Two refunds, the second in GBK with a Chinese reason, and the whole refund that
        // closes the trade.
        const QByteArray first =
            m_kit->alipay(alipayRefund(trade, order, QStringLiteral("TRADE_SUCCESS"),
                                       QStringLiteral("R-1"), QStringLiteral("10.00")));
        QStringList gbkForm = alipayRefund(trade, order, QStringLiteral("TRADE_SUCCESS"),
                                           QStringLiteral("R-2"), QStringLiteral("30.50"));
        gbkForm << QStringLiteral("refund_reason=商品已售完");
        const QByteArray second = m_kit->alipay(gbkForm, QStringLiteral("gbk"));
        const QByteArray closed =
            m_kit->alipay(alipayRefund(trade, order, QStringLiteral("TRADE_CLOSED"),
                                       QStringLiteral("R-3"), QStringLiteral("99.00")));
        for (const QByteArray &form : {first, second, closed, first, second, closed})
            QCOMPARE(postAlipay(gateway, form), QByteArray("200 success"));
        QCOMPARE(
            forwardsOf(payNo, before),
            (QStringList{QString(), QStringLiteral("TRADE_FINISHED"),
                         QStringLiteral("TRADE_SUCCESS/R-1"), QStringLiteral("TRADE_SUCCESS/R-2"),
                         QStringLiteral("TRADE_CLOSED/R-3")}));
        // Each forward is the platform's own bytes, keyed for the handler per event.
        const QList<test::CountingUpstream::Request> received = m_upstream->received();
        const test::CountingUpstream::Request &gbk = received.at(before + 3);
        QCOMPARE(gbk.body, second);
        QCOMPARE(gbk.header("Idempotency-Key"), payNo + "/TRADE_SUCCESS/R-2");
        QCOMPARE(received.at(before).header("Idempotency-Key"), payNo);
        QCOMPARE(received.at(before).header("X-Payops-Event"), QByteArray());

        // The same refund with other content is a conflict, not a new event.
        const QByteArray altered =
            m_kit->alipay(alipayRefund(trade, order, QStringLiteral("TRADE_SUCCESS"),
                                       QStringLiteral("R-1"), QStringLiteral("11.00")));
        QVERIFY(postAlipay(gateway, altered).startsWith("409 "));
        QCOMPARE(m_upstream->count(), before + 5);

        db::Connection root(scratch.dsn(), QStringLiteral("t"));
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(CONCAT_WS('|', event, status, "
                                           "forwards, amount_fen) ORDER BY id SEPARATOR ' ') "
                                           "FROM callback_event WHERE pay_no = ?"),
                            {payNo})
                     .toString(),
                 QStringLiteral("TRADE_FINISHED|FORWARDED|1|9900 TRADE_SUCCESS/R-1|FORWARDED|1|"
                                "1000 TRADE_SUCCESS/R-2|FORWARDED|1|3050 "
                                "TRADE_CLOSED/R-3|FORWARDED|1|9900"));
        // The trade's own row is its payment, as every report reads it.
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT CONCAT_WS('|', COUNT(*), MAX(trade_status), "
                                           "MAX(forwards)) FROM pay_callback_log WHERE pay_no = ?"),
                            {payNo})
                     .toString(),
                 QStringLiteral("1|TRADE_SUCCESS|1"));
        QCOMPARE(gateway.terminate(), 0);
    }

    // WeChat Pay seals each resend afresh: a refund's outcome is deduplicated by its content,
    // each outcome of each refund forwarded once, copies at once included; a refund whose
    // payment the gateway never saw still reaches the handler; another merchant's is refused.
    void eachWechatRefundOutcomeReachesTheHandlerOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("eventswechat"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CallbackdProcess gateway = startGateway(scratch);
        const QString transaction = QStringLiteral("4200000001202612040001");
        const QString order = QStringLiteral("1217752501201407033233368018");
        const QByteArray payNo = transaction.toUtf8();
        const int before = m_upstream->count();

        QCOMPARE(postWechat(gateway, test::wechatTransaction(transaction, order, 9900)), 200);
        QCOMPARE(postWechat(gateway,
                            test::wechatRefund(transaction, order, QStringLiteral("50300001"), 1000,
                                               9900, QStringLiteral("ABNORMAL")),
                            QStringLiteral("REFUND.ABNORMAL")),
                 200);
        // The refund tried again succeeds: another event of the same refund. Six copies at
        // once, each sealed afresh.
        std::vector<std::thread> copies;
        QList<int> statuses(6);
        QList<PlatformKit::Notification> sealed;
        for (int i = 0; i < 6; ++i)
            sealed << m_kit->wechat(
                test::wechatRefund(transaction, order, QStringLiteral("50300001"), 1000, 9900),
                {QStringLiteral("wechat"), QString::fromLatin1(PlatformKit::kSerial), 0, QString(),
                 QStringLiteral("REFUND.SUCCESS")});
        for (int i = 0; i < 6; ++i)
            copies.emplace_back([&, i] {
                statuses[i] = test::postTo(gateway.port(), kWechatPath, sealed.at(i).body,
                                           sealed.at(i).headers)
                                  .status;
            });
        for (std::thread &copy : copies)
            copy.join();
        QVERIFY2(statuses.contains(200), qPrintable(QString::number(statuses.first())));
        // Whatever was answered 503 while the first copy's forward was out, a resend now is
        // answered from the row.
        QCOMPARE(postWechat(
                     gateway,
                     test::wechatRefund(transaction, order, QStringLiteral("50300001"), 1000, 9900),
                     QStringLiteral("REFUND.SUCCESS")),
                 200);
        // A refund of a payment this gateway never saw is an event all the same.
        const QByteArray unseen = "4200000001202612040099";
        QCOMPARE(postWechat(gateway,
                            test::wechatRefund(QString::fromLatin1(unseen), order,
                                               QStringLiteral("50300099"), 500, 500),
                            QStringLiteral("REFUND.SUCCESS")),
                 200);
        QCOMPARE(forwardsOf(payNo, before),
                 (QStringList{QString(), QStringLiteral("REFUND.ABNORMAL/50300001"),
                              QStringLiteral("REFUND.SUCCESS/50300001")}));
        QCOMPARE(forwardsOf(unseen, before),
                 QStringList{QStringLiteral("REFUND.SUCCESS/50300099")});

        // Another merchant's refund: refused, nothing stored.
        QJsonObject stranger =
            test::wechatRefund(transaction, order, QStringLiteral("50300002"), 100, 9900);
        stranger.insert(QStringLiteral("mchid"), QStringLiteral("1900000999"));
        QCOMPARE(postWechat(gateway, stranger, QStringLiteral("REFUND.SUCCESS")), 400);
        db::Connection root(scratch.dsn(), QStringLiteral("t"));
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(CONCAT_WS('|', event, status, "
                                           "forwards, amount_fen, out_trade_no) ORDER BY id "
                                           "SEPARATOR ' ') FROM callback_event"))
                     .toString(),
                 QStringLiteral("REFUND.ABNORMAL/50300001|FORWARDED|1|1000|%1 "
                                "REFUND.SUCCESS/50300001|FORWARDED|1|1000|%1 "
                                "REFUND.SUCCESS/50300099|FORWARDED|1|500|%1")
                     .arg(order));

        // The evidence of the order, read as the operator: the payment and each event beside
        // it, and no finding that the handler was given anything twice.
        const test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()), QStringLiteral("op"));
        const console::OrderEvidence evidence =
            console::loadEvidenceOf(asOperator.database(), order.toUtf8());
        QVERIFY(evidence.found);
        QStringList rows;
        for (const console::EvidenceCallback &callback : evidence.callbacks)
            rows << QString::fromUtf8(callback.payNo + ' ' + callback.event);
        QCOMPARE(rows, (QStringList{QStringLiteral("4200000001202612040001 "),
                                    QStringLiteral("4200000001202612040001 "
                                                   "REFUND.ABNORMAL/50300001"),
                                    QStringLiteral("4200000001202612040001 "
                                                   "REFUND.SUCCESS/50300001"),
                                    QStringLiteral("4200000001202612040099 "
                                                   "REFUND.SUCCESS/50300099")}));
        QVERIFY2(evidence.findings.isEmpty(), qPrintable(evidence.findings.join(u'\n')));
        // Each delivery's trace names its event: one forward of the refund's success among
        // the six copies, one of the payment.
        QCOMPARE(db::scalar(asOperator.database(),
                            QStringLiteral("SELECT CONCAT_WS('|', SUM(event = '' AND forwarded_at "
                                           "IS NOT NULL), SUM(event = 'REFUND.SUCCESS/50300001' "
                                           "AND forwarded_at IS NOT NULL), SUM(event = "
                                           "'REFUND.SUCCESS/50300001')) FROM callback_trace "
                                           "WHERE pay_no = ?"),
                            {payNo})
                     .toString(),
                 QStringLiteral("1|1|7"));
        QCOMPARE(gateway.terminate(), 0);
    }

    // Held by record-only, an event is recorded, never forwarded, and the operator's drain
    // forwards it after the trade's payment, each once.
    void aHeldEventIsDrainedOnce_data() { test::addSchemaLevelRows(); }
    void aHeldEventIsDrainedOnce()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("eventsdrain"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::CallbackdProcess gateway = startGateway(scratch);
        const test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()), QStringLiteral("op"));
        const FlipResult flip =
            flipSwitch(asOperator.database(), CallbackMode::RecordOnly, QStringLiteral("test"));
        QVERIFY(waitForAcknowledgement(asOperator.database(), flip.after.version, 5000)
                    .first()
                    .acknowledged);
        const QString trade = QStringLiteral("2026120422301") + level;
        const QByteArray payNo = trade.toUtf8();
        const int before = m_upstream->count();
        QCOMPARE(
            postAlipay(gateway, m_kit->alipay(test::alipayTrade(trade, QStringLiteral("N-HELD"),
                                                                QStringLiteral("99.00")))),
            QByteArray("200 success"));
        QCOMPARE(postAlipay(gateway, m_kit->alipay(alipayRefund(trade, QStringLiteral("N-HELD"),
                                                                QStringLiteral("TRADE_SUCCESS"),
                                                                QStringLiteral("R-HELD"),
                                                                QStringLiteral("20.00")))),
                 QByteArray("200 success"));
        QCOMPARE(m_upstream->count(), before);
        QCOMPARE(db::scalar(asOperator.database(),
                            QStringLiteral("SELECT status FROM callback_event WHERE pay_no = ?"),
                            {payNo})
                     .toString(),
                 QStringLiteral("RECORDED"));
        flipSwitch(asOperator.database(), CallbackMode::Normal, QStringLiteral("test over"));

        // A second drain finds nothing left to forward.
        for (int run = 0; run < 2; ++run) {
            const test::CliRun drain =
                test::runCli({QStringLiteral("drain"), QStringLiteral("--db"),
                              operatorAccount.dsnFor(scratch.name()).toString(),
                              QStringLiteral("--upstream"), m_upstream->url()},
                             {{QStringLiteral("PAYOPS_DB_PASSWORD"), operatorAccount.password()}});
            QVERIFY2(drain.exitCode == 0, qPrintable(drain.err + drain.out));
        }
        QCOMPARE(forwardsOf(payNo, before),
                 (QStringList{QString(), QStringLiteral("TRADE_SUCCESS/R-HELD")}));
        QCOMPARE(m_upstream->count(), before + 2);
        QCOMPARE(gateway.terminate(), 0);
    }

    // A handler pays orders and acts on no refund. An Alipay refund's notice says
    // TRADE_SUCCESS, and one for an order not yet paid must not pay it: it is kept, once,
    // and answered as taken; so is a WeChat Pay refund's outcome. The payment then pays.
    void aHandlerKeepsEventsAndPaysNothingForThem_data() { test::addSchemaLevelRows(); }
    void aHandlerKeepsEventsAndPaysNothingForThem()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("eventshandler"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 2);
        test::CallbackdProcess handler(m_endpoint->dsnFor(scratch.name()), QStringLiteral("safe"),
                                       QStringLiteral("H-EVENTS"), m_kit->callbackdArguments());
        const QString before = test::businessFingerprint(scratch.dsn());
        const QByteArray refund = m_kit->alipay(alipayRefund(
            QStringLiteral("2026120422401"), QStringLiteral("1001"),
            QStringLiteral("TRADE_SUCCESS"), QStringLiteral("R-1"), QStringLiteral("9.00")));
        for (int copy = 0; copy < 2; ++copy) {
            const test::HttpResult kept =
                test::postTo(handler.port(), kAlipayPath, refund, {}, kForm);
            QCOMPARE(kept.status, 200);
            QCOMPARE(kept.body, QByteArray("success"));
        }
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before); // order 1001 still unpaid
        const auto refundOutcome = m_kit->wechat(
            test::wechatRefund(QStringLiteral("4200000001202612040401"), QStringLiteral("1002"),
                               QStringLiteral("50300401"), 900, 9900),
            {QStringLiteral("wechat"), QString::fromLatin1(PlatformKit::kSerial), 0, QString(),
             QStringLiteral("REFUND.SUCCESS")});
        QCOMPARE(
            test::postTo(handler.port(), kWechatPath, refundOutcome.body, refundOutcome.headers)
                .status,
            200);
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
        db::Connection root(scratch.dsn(), QStringLiteral("t"));
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(CONCAT_WS('|', event, status) "
                                           "ORDER BY id SEPARATOR ' ') FROM callback_event"))
                     .toString(),
                 QStringLiteral("TRADE_SUCCESS/R-1|IGNORED REFUND.SUCCESS/50300401|IGNORED"));
        QCOMPARE(
            db::scalar(root.database(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log"))
                .toInt(),
            0);

        const QByteArray paid = m_kit->alipay(test::alipayTrade(
            QStringLiteral("2026120422401"), QStringLiteral("1001"), QStringLiteral("99.00")));
        QCOMPARE(test::postTo(handler.port(), kAlipayPath, paid, {}, kForm).status, 200);
        QCOMPARE(
            db::scalar(root.database(), QStringLiteral("SELECT status FROM orders WHERE id = 1001"))
                .toString(),
            QStringLiteral("PAID"));
        QCOMPARE(handler.terminate(), 0);
    }

    // A handler that answers in GBK ("成功" as its two-byte characters) gets its answer to the
    // platform byte for byte, and a resend gets those bytes again from the row, not the text
    // column's U+FFFD.
    void anAnswerInGbkIsReplayedAsSent()
    {
        test::ScratchDatabase scratch(QStringLiteral("eventsgbk"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CannedAnswer gbk;
        gbk.body = "\xB3\xC9\xB9\xA6";
        gbk.contentType = "text/plain; charset=gbk";
        test::CountingUpstream upstream(0, gbk);
        test::CallbackdProcess gateway = startGateway(scratch, upstream.url());
        const QString transaction = QStringLiteral("4200000001202612040501");
        for (int delivery = 0; delivery < 2; ++delivery) {
            const auto notification = m_kit->wechat(
                test::wechatTransaction(transaction, QStringLiteral("N-GBK-1"), 9900));
            const test::HttpResult answer =
                test::postTo(gateway.port(), kWechatPath, notification.body, notification.headers);
            QCOMPARE(answer.status, 200);
            QCOMPARE(answer.body, gbk.body);
        }
        QCOMPARE(upstream.count(), 1);
        QCOMPARE(gateway.terminate(), 0);
    }

private:
    test::CallbackdProcess startGateway(const test::ScratchDatabase &scratch,
                                        const QString &upstream = QString()) const
    {
        return test::CallbackdProcess(
            m_endpoint->dsnFor(scratch.name()), QString(), QStringLiteral("G-EVENTS"),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--upstream"),
                            upstream.isEmpty() ? m_upstream->url() : upstream});
    }

    // "STATUS body" of the gateway's answer.
    static QByteArray postAlipay(const test::CallbackdProcess &gateway, const QByteArray &form)
    {
        const test::HttpResult answer = test::postTo(gateway.port(), kAlipayPath, form, {}, kForm);
        return QByteArray::number(answer.status) + ' ' + answer.body;
    }

    int postWechat(const test::CallbackdProcess &gateway, const QJsonObject &resource,
                   const QString &eventType = QStringLiteral("TRANSACTION.SUCCESS")) const
    {
        const auto notification = m_kit->wechat(
            resource, {QStringLiteral("wechat"), QString::fromLatin1(PlatformKit::kSerial), 0,
                       QString(), eventType});
        return test::postTo(gateway.port(), kWechatPath, notification.body, notification.headers)
            .status;
    }

    // X-Payops-Event of each forward of `payNo` since the `since`-th, in order (empty: the
    // trade's payment).
    QStringList forwardsOf(const QByteArray &payNo, int since) const
    {
        QStringList events;
        const QList<test::CountingUpstream::Request> received = m_upstream->received();
        for (qsizetype i = since; i < received.size(); ++i)
            if (received.at(i).payNo() == payNo)
                events << QString::fromUtf8(received.at(i).header("X-Payops-Event"));
        return events;
    }

    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<PlatformKit> m_kit;
    std::unique_ptr<test::CountingUpstream> m_upstream;
};

PAYOPS_TEST_MAIN_CORE(TestGatewayEvents)
#include "tst_gatewayevents.moc"
