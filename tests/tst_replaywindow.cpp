#include "service/replaywindow.h"
#include "testmain.h"

#include <QCryptographicHash>

using namespace payops;
using namespace std::chrono_literals;

namespace {

QByteArray digestOf(const QByteArray &content)
{
    return QCryptographicHash::hash(content, QCryptographicHash::Sha256);
}

} // namespace

// Which signed requests may keep a connection: a signed content counts within its window from
// when it was first seen, and never again while it is remembered.
class TestReplayWindow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aContentCountsOnlyWithinItsWindow()
    {
        ReplayWindow window(5s, 100, 1h);
        const auto start = ReplayWindow::Clock::now();
        const QByteArray captured = digestOf("notify_id=1&trade_no=2");
        QVERIFY(window.isFresh(captured, start));
        QVERIFY(window.isFresh(captured, start + 10ms)); // the platform's second copy
        QVERIFY(window.isFresh(captured, start + 5s));
        QVERIFY(!window.isFresh(captured, start + 5s + 1ms)); // a replay
        QVERIFY(!window.isFresh(captured, start + 50min));
        // Its first sighting stands: replaying it did not open a new window.
        QVERIFY(!window.isFresh(captured, start + 59min));
        QVERIFY(window.isFresh(digestOf("notify_id=2"), start + 59min));
        QCOMPARE(window.remembered(), std::size_t(2));
    }

    // Within the window, only a platform's few copies count: a thousand connections sending
    // one captured notification at once keep no more than those.
    void onlyTheFirstCopiesCount()
    {
        ReplayWindow window(5s, 100, 1h);
        const auto start = ReplayWindow::Clock::now();
        const QByteArray captured = digestOf("captured");
        int fresh = 0;
        for (int copy = 0; copy < 1000; ++copy)
            fresh += window.isFresh(captured, start + copy * 1ms) ? 1 : 0;
        QCOMPARE(fresh, ReplayWindow::kCopies);
    }

    // Forgotten after its memory, a content has one more window: a replay once an hour.
    void aContentIsForgottenAfterItsMemory()
    {
        ReplayWindow window(5s, 100, 1h);
        const auto start = ReplayWindow::Clock::now();
        const QByteArray captured = digestOf("captured");
        QVERIFY(window.isFresh(captured, start));
        QVERIFY(!window.isFresh(captured, start + 1h));
        QVERIFY(window.isFresh(captured, start + 1h + 1s));
        QVERIFY(!window.isFresh(captured, start + 1h + 7s));
    }

    // Memory is bounded: past its capacity the oldest sighting goes first.
    void memoryIsBoundedOldestFirst()
    {
        ReplayWindow window(5s, 3, 1h);
        const auto start = ReplayWindow::Clock::now();
        for (int i = 0; i < 3; ++i)
            QVERIFY(window.isFresh(digestOf(QByteArray::number(i)), start + i * 1s));
        QVERIFY(!window.isFresh(digestOf("0"), start + 10s)); // still remembered
        QVERIFY(window.isFresh(digestOf("3"), start + 11s));  // "0" is forgotten for it
        QCOMPARE(window.remembered(), std::size_t(3));
        QVERIFY(window.isFresh(digestOf("0"), start + 12s));
        QVERIFY(!window.isFresh(digestOf("2"), start + 12s));
        for (int i = 0; i < 1000; ++i)
            window.isFresh(digestOf("flood" + QByteArray::number(i)), start + 13s);
        QCOMPARE(window.remembered(), std::size_t(3));
    }
};

PAYOPS_TEST_MAIN_CORE(TestReplayWindow)
#include "tst_replaywindow.moc"
