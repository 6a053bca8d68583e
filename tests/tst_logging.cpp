#include "log/logging.h"
#include "testmain.h"

#include <QDateTime>
#include <QDir>
#include <QFile>

#include <spdlog/spdlog.h>

#include <sys/stat.h>

namespace {

int modeOf(const QString &path)
{
    struct stat status = {};
    return ::stat(QFile::encodeName(path).constData(), &status) == 0 ? int(status.st_mode & 07777)
                                                                     : -1;
}

QByteArray contentOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class TestLogging final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { qunsetenv("PAYOPS_LOG_LEVEL"); }

    void parsesLevels()
    {
        QCOMPARE(payops::parseLogLevel(QStringLiteral("debug")),
                 std::optional<int>(spdlog::level::debug));
        QCOMPARE(payops::parseLogLevel(QStringLiteral("WARN")),
                 std::optional<int>(spdlog::level::warn));
        QCOMPARE(payops::parseLogLevel(QStringLiteral("off")),
                 std::optional<int>(spdlog::level::off));
        QVERIFY(!payops::parseLogLevel(QStringLiteral("loud")));
    }

    void flagBeatsEnvironment()
    {
        qputenv("PAYOPS_LOG_LEVEL", "error");
        QCOMPARE(payops::chooseLogLevel(QString()).level, int(spdlog::level::err));
        QCOMPARE(payops::chooseLogLevel(QStringLiteral("trace")).level, int(spdlog::level::trace));
        qputenv("PAYOPS_LOG_LEVEL", "nonsense");
        const auto bad = payops::chooseLogLevel(QString());
        QVERIFY(bad.error.contains(QStringLiteral("PAYOPS_LOG_LEVEL")));
    }

    void qtMessagesReachTheLogFile()
    {
        payops::setupLogging(QStringLiteral("tst_logging"), spdlog::level::info);
        const QString path = payops::logFilePath();
        QVERIFY(!path.isEmpty());
        qWarning("routed-through-spdlog-%d", 42);
        spdlog::default_logger()->flush();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("routed-through-spdlog-42"));
    }

    void filesAreTheOwnersOnly()
    {
        // What an earlier version left behind: a folder and a file anyone could read.
        const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                               QStringLiteral("/logs");
        const QString old = folder + QStringLiteral("/tst_logging_old.log");
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(QFile(old).open(QIODevice::Append));
        QVERIFY(QFile::setPermissions(
            folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup |
                        QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther));
        QVERIFY(QFile::setPermissions(old, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup |
                                               QFile::ReadOther));
        payops::setupLogging(QStringLiteral("tst_logging_old"), spdlog::level::info);
        QCOMPARE(modeOf(folder), 0700);
        QCOMPARE(modeOf(old), 0600);

        // A new file, even under a permissive umask.
        const QString fresh = folder + QStringLiteral("/tst_logging_new.log");
        QFile::remove(fresh);
        const mode_t previous = ::umask(022);
        payops::setupLogging(QStringLiteral("tst_logging_new"), spdlog::level::info);
        ::umask(previous);
        QCOMPARE(payops::logFilePath(), fresh);
        QCOMPARE(modeOf(fresh), 0600);
    }

    void infoLinesReachTheFileWithinASecond()
    {
        payops::setupLogging(QStringLiteral("tst_logging_flush"), spdlog::level::info);
        const QByteArray marker =
            "info-line-" + QByteArray::number(QDateTime::currentMSecsSinceEpoch());
        spdlog::info("{}", marker.toStdString());
        QTRY_VERIFY_WITH_TIMEOUT(contentOf(payops::logFilePath()).contains(marker), 1500);
    }
};

PAYOPS_TEST_MAIN_CORE(TestLogging)
#include "tst_logging.moc"
