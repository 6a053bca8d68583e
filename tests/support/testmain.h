#pragma once

#include "log/application.h"
#include "log/logging.h"

#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

namespace payops::test {

// A limit in milliseconds on how long the UI thread may be busy, for checks that tell a
// blocking wait (seconds: a hanging query, a bounded wait) from ordinary work. Sanitizer builds
// run that work several times slower, so their environment sets PAYOPS_TEST_TIME_SCALE and
// the limit grows with it, still far below any blocking wait.
inline qint64 busyLimitMs(qint64 limitMs)
{
    return limitMs * std::max(1, qEnvironmentVariableIntValue("PAYOPS_TEST_TIME_SCALE"));
}

// Each test process keeps its settings (the console's, its connection profiles) in a folder of
// its own, removed when it ends: tests run side by side, and a profile or a setting one of them
// saves must not appear in another's window. Before anything opens QSettings.
inline void useOwnSettingsFolder()
{
    static QTemporaryDir folder;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, folder.path());
}

} // namespace payops::test

// QTEST_GUILESS_MAIN / QTEST_MAIN with payops's identity, quiet logging and test paths.
#define PAYOPS_TEST_SETUP()                                                                        \
    payops::setApplicationIdentity();                                                              \
    QStandardPaths::setTestModeEnabled(true);                                                      \
    payops::test::useOwnSettingsFolder();                                                          \
    payops::setupLogging(QStringLiteral("tests"), payops::chooseLogLevel(QString()).level)

#define PAYOPS_TEST_MAIN_CORE(TestClass)                                                           \
    int main(int argc, char *argv[])                                                               \
    {                                                                                              \
        QCoreApplication app(argc, argv);                                                          \
        PAYOPS_TEST_SETUP();                                                                       \
        TestClass test;                                                                            \
        return QTest::qExec(&test, argc, argv);                                                    \
    }
