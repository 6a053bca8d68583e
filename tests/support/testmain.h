#pragma once

#include "log/application.h"
#include "log/logging.h"

#include <QStandardPaths>
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

} // namespace payops::test

// QTEST_GUILESS_MAIN / QTEST_MAIN with payops's identity, quiet logging and test paths.
#define PAYOPS_TEST_SETUP()                                                                        \
    payops::setApplicationIdentity();                                                              \
    QStandardPaths::setTestModeEnabled(true);                                                      \
    payops::setupLogging(QStringLiteral("tests"), payops::chooseLogLevel(QString()).level)

#define PAYOPS_TEST_MAIN_CORE(TestClass)                                                           \
    int main(int argc, char *argv[])                                                               \
    {                                                                                              \
        QCoreApplication app(argc, argv);                                                          \
        PAYOPS_TEST_SETUP();                                                                       \
        TestClass test;                                                                            \
        return QTest::qExec(&test, argc, argv);                                                    \
    }
