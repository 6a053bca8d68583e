#include "log/logging.h"
#include "testmain.h"

#include <QFile>

#include <spdlog/spdlog.h>

class TestLogging final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { qunsetenv("PAYOPS_LOG_LEVEL"); }

    void parsesLevels()
    {
        QCOMPARE(payops::parseLogLevel(QStringLiteral("debug")), std::optional<int>(spdlog::level::debug));
        QCOMPARE(payops::parseLogLevel(QStringLiteral("WARN")), std::optional<int>(spdlog::level::warn));
        QCOMPARE(payops::parseLogLevel(QStringLiteral("off")), std::optional<int>(spdlog::level::off));
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
};

PAYOPS_TEST_MAIN_CORE(TestLogging)
#include "tst_logging.moc"
