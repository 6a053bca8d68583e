#include "console/prometheustext.h"
#include "testmain.h"

#include <cmath>

using namespace payops::console;

class TestPrometheusText final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesWhatTheServiceExposes()
    {
        const QString text = QStringLiteral(
            "# HELP payops_callbacks_total Callbacks by outcome.\n"
            "# TYPE payops_callbacks_total counter\n"
            "payops_callbacks_total{outcome=\"processed\"} 120\n"
            "payops_callbacks_total{outcome=\"replayed\"} 7\n"
            "payops_callbacks_total{outcome=\"rejected\",instance=\"a\"} 3 1700000000000\n"
            "payops_duplicates_suppressed_total{defence=\"lock\"} 2\n"
            "payops_duplicates_suppressed_total{defence=\"cas\"} 5\n"
            "payops_callback_duration_seconds_bucket{le=\"0.05\"} 100\n"
            "payops_callback_duration_seconds_bucket{le=\"+Inf\"} 130\n"
            "payops_callback_duration_seconds_sum 3.25\n"
            "payops_backlog_recorded 0\n"
            "payops_switch_version 3\n"
            "payops_mode{mode=\"NORMAL\"} 1\n");
        const auto samples = parsePrometheusText(text);
        QCOMPARE(samples.size(), 11);
        QCOMPARE(samples.at(0).name, QStringLiteral("payops_callbacks_total"));
        QCOMPARE(samples.at(0).labels.value(QStringLiteral("outcome")),
                 QStringLiteral("processed"));
        QCOMPARE(samples.at(0).value, 120.0);
        QCOMPARE(samples.at(2).labels.size(), 2);
        QCOMPARE(samples.at(2).value, 3.0); // the timestamp is not the value
        QCOMPARE(sumSamples(samples, QStringLiteral("payops_callbacks_total")), 130.0);
        QCOMPARE(sumSamples(samples, QStringLiteral("payops_duplicates_suppressed_total"),
                            {{QStringLiteral("defence"), QStringLiteral("cas")}}),
                 5.0);
        QCOMPARE(sumSamples(samples, QStringLiteral("payops_switch_version")), 3.0);
        QCOMPARE(sumSamples(samples, QStringLiteral("payops_mode"),
                            {{QStringLiteral("mode"), QStringLiteral("NORMAL")}}),
                 1.0);
        QCOMPARE(samples.at(6).labels.value(QStringLiteral("le")), QStringLiteral("+Inf"));
        QCOMPARE(samples.at(7).value, 3.25);
    }

    void escapesAndSpecialValues()
    {
        const auto samples =
            parsePrometheusText(QStringLiteral("m{path=\"a\\\"b\\\\c\",x=\"1,2}\"} +Inf\n"
                                               "n NaN\n"
                                               "o -Inf\n"));
        QCOMPARE(samples.size(), 3);
        QCOMPARE(samples.at(0).labels.value(QStringLiteral("path")), QStringLiteral("a\"b\\c"));
        QCOMPARE(samples.at(0).labels.value(QStringLiteral("x")), QStringLiteral("1,2}"));
        QVERIFY(std::isinf(samples.at(0).value) && samples.at(0).value > 0);
        QVERIFY(std::isnan(samples.at(1).value));
        QVERIFY(std::isinf(samples.at(2).value) && samples.at(2).value < 0);
    }

    void skipsWhatDoesNotParse()
    {
        const auto samples = parsePrometheusText(QStringLiteral(
            "\n   \ngarbage line here\nbroken{label=\"open 5\nno_value\ngood 1\r\n{x=\"y\"} 3\n"));
        QCOMPARE(samples.size(), 1);
        QCOMPARE(samples.at(0).name, QStringLiteral("good"));
        QCOMPARE(samples.at(0).value, 1.0);
    }
};

PAYOPS_TEST_MAIN_CORE(TestPrometheusText)
#include "tst_prometheustext.moc"
