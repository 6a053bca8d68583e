#include "console/instanceprober.h"
#include "fakeinstance.h"
#include "testmain.h"

#include <QSignalSpy>
#include <QTcpServer>

using namespace payops::console;

class TestInstanceProber final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsHealthAndComputesTheRate()
    {
        payops::test::FakeInstance instance;
        InstanceProber prober;
        QSignalSpy spy(&prober, &InstanceProber::healthChanged);
        prober.probe(QStringLiteral("a"), instance.listen());
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 5000);
        const auto first = spy.at(0).at(0).value<InstanceHealth>();
        QVERIFY2(first.reachable, qPrintable(first.error));
        QCOMPARE(first.status, QStringLiteral("ok"));
        QCOMPARE(first.mode, QStringLiteral("RECORD_ONLY"));
        QCOMPARE(first.switchVersion, qint64(3));
        QCOMPARE(first.callbacksTotal, 1050.0);
        QCOMPARE(first.backlog, 4.0);
        QCOMPARE(first.callbacksPerSecond, -1.0); // one scrape says nothing about a rate

        QTest::qWait(50); // the rate needs time to pass between two scrapes
        prober.probe(QStringLiteral("a"), instance.listen());
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 2, 5000);
        const auto second = spy.at(1).at(0).value<InstanceHealth>();
        QCOMPARE(second.callbacksTotal, 1100.0);
        QVERIFY2(second.callbacksPerSecond > 0,
                 qPrintable(QString::number(second.callbacksPerSecond)));
    }

    void anUnreachableInstanceIsAnErrorNotAHang()
    {
        quint16 port = 0;
        {
            QTcpServer closed;
            QVERIFY(closed.listen(QHostAddress::LocalHost));
            port = closed.serverPort();
        }
        InstanceProber prober;
        QSignalSpy spy(&prober, &InstanceProber::healthChanged);
        prober.probe(QStringLiteral("gone"), QStringLiteral("127.0.0.1:%1").arg(port));
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 5000);
        const auto health = spy.at(0).at(0).value<InstanceHealth>();
        QVERIFY(!health.reachable);
        QVERIFY(!health.error.isEmpty());

        prober.probe(QStringLiteral("nowhere"), QString());
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 2, 5000);
        QCOMPARE(spy.at(1).at(0).value<InstanceHealth>().error,
                 QStringLiteral("no listen address"));
    }
};

PAYOPS_TEST_MAIN_CORE(TestInstanceProber)
#include "tst_instanceprober.moc"
