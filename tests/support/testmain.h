#pragma once

#include "log/application.h"
#include "log/logging.h"

#include <QStandardPaths>
#include <QtTest>

// QTEST_GUILESS_MAIN / QTEST_MAIN with payops's identity, quiet logging and test paths.
#define PAYOPS_TEST_SETUP()                                                                         \
    payops::setApplicationIdentity();                                                               \
    QStandardPaths::setTestModeEnabled(true);                                                       \
    payops::setupLogging(QStringLiteral("tests"), payops::chooseLogLevel(QString()).level)

#define PAYOPS_TEST_MAIN_CORE(TestClass)                                                            \
    int main(int argc, char *argv[])                                                                \
    {                                                                                               \
        QCoreApplication app(argc, argv);                                                           \
        PAYOPS_TEST_SETUP();                                                                        \
        TestClass test;                                                                             \
        return QTest::qExec(&test, argc, argv);                                                     \
    }
