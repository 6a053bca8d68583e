#include "testmain.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>

using namespace payops;

namespace {

// Every way to start a thread of one's own, as the sources would spell it.
const QRegularExpression &threadStart()
{
    static const QRegularExpression pattern(QStringLiteral(
        R"(QThread::create|std::thread|std::jthread|std::async|QtConcurrent|QThreadPool|new\s+QThread\b|public\s+QThread\b)"));
    return pattern;
}

// "file:line: text" for each line under `folder` (relative to the source tree) that starts a
// thread.
QStringList threadStarts(const QString &folder)
{
    QStringList found;
    const QString root = QStringLiteral(PAYOPS_SOURCE_DIR "/");
    QDirIterator files(root + folder, {QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files,
                       QDirIterator::Subdirectories);
    while (files.hasNext()) {
        const QString path = files.next();
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
            found << path + QStringLiteral(": unreadable");
            continue;
        }
        int number = 0;
        while (!file.atEnd()) {
            const QString line = QString::fromUtf8(file.readLine()).trimmed();
            ++number;
            if (line.contains(threadStart()))
                found
                    << QStringLiteral("%1:%2: %3").arg(path.mid(root.size())).arg(number).arg(line);
        }
    }
    return found;
}

} // namespace

// The console has one way off its UI thread, db::DbWorker (through console::Worker): a job of
// its own kind for whatever needs a whole connection or a process. A thread started anywhere
// else in the console would not have its guarantees: a UI thread that never waits, results
// dropped once stale, and the process ending mid-job only through DbWorker::waitForAll().
class TestOffThread final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theConsoleStartsNoThreadOfItsOwn()
    {
        for (const auto *folder : {"app/console", "ui"}) {
            const QStringList found = threadStarts(QString::fromLatin1(folder));
            QVERIFY2(found.isEmpty(), qPrintable(found.join(QLatin1Char('\n'))));
        }
    }

    // The scan sees what it looks for: the worker's own threads, where they belong.
    void theScanFindsTheWorkersThreads()
    {
        const QStringList found = threadStarts(QStringLiteral("app/db"));
        QVERIFY2(found.size() >= 2, qPrintable(found.join(QLatin1Char('\n'))));
        for (const QString &line : found)
            QVERIFY2(line.startsWith(QStringLiteral("app/db/dbworkerback.")), qPrintable(line));
    }
};

PAYOPS_TEST_MAIN_CORE(TestOffThread)
#include "tst_offthread.moc"
