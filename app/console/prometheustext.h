#pragma once

#include <QList>
#include <QMap>
#include <QString>

namespace payops::console {

// One sample of the Prometheus text exposition format: name{label="value",...} number.
struct PrometheusSample
{
    QString name;
    QMap<QString, QString> labels;
    double value = 0;
};

// Parses the text a /metrics endpoint returns. Comments (# HELP, # TYPE) and lines that do
// not parse are skipped: a console must show what it can of a half-broken endpoint.
QList<PrometheusSample> parsePrometheusText(const QString &text);

// Sum of every sample of this name whose labels include all of `match`.
double sumSamples(const QList<PrometheusSample> &samples, const QString &name,
                  const QMap<QString, QString> &match = {});

} // namespace payops::console
