#include "prometheustext.h"

#include <QStringView>

#include <cmath>

namespace payops::console {
namespace {

bool isNameChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char(':');
}

// Parses `label="value",...}` starting after '{'; returns the index after '}' or -1.
qsizetype parseLabels(QStringView line, qsizetype pos, QMap<QString, QString> &labels)
{
    while (pos < line.size()) {
        while (pos < line.size() &&
               (line[pos] == QLatin1Char(' ') || line[pos] == QLatin1Char(',')))
            ++pos;
        if (pos < line.size() && line[pos] == QLatin1Char('}'))
            return pos + 1;
        const qsizetype nameStart = pos;
        while (pos < line.size() && isNameChar(line[pos]))
            ++pos;
        const QString name = line.mid(nameStart, pos - nameStart).toString();
        if (name.isEmpty() || pos + 1 >= line.size() || line[pos] != QLatin1Char('=') ||
            line[pos + 1] != QLatin1Char('"'))
            return -1;
        pos += 2;
        QString value;
        while (pos < line.size() && line[pos] != QLatin1Char('"')) {
            if (line[pos] == QLatin1Char('\\') && pos + 1 < line.size()) {
                ++pos;
                value += line[pos] == QLatin1Char('n') ? QLatin1Char('\n') : line[pos];
            } else {
                value += line[pos];
            }
            ++pos;
        }
        if (pos >= line.size())
            return -1;
        ++pos; // closing quote
        labels.insert(name, value);
    }
    return -1;
}

double parseValue(QStringView text, bool *ok)
{
    if (text == QLatin1String("+Inf"))
        return *ok = true, INFINITY;
    if (text == QLatin1String("-Inf"))
        return *ok = true, -INFINITY;
    if (text == QLatin1String("NaN"))
        return *ok = true, NAN;
    return text.toDouble(ok);
}

} // namespace

QList<PrometheusSample> parsePrometheusText(const QString &text)
{
    QList<PrometheusSample> samples;
    const auto lines = QStringView(text).split(QLatin1Char('\n'));
    for (QStringView raw : lines) {
        const QStringView line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        PrometheusSample sample;
        qsizetype pos = 0;
        while (pos < line.size() && isNameChar(line[pos]))
            ++pos;
        sample.name = line.left(pos).toString();
        if (sample.name.isEmpty())
            continue;
        if (pos < line.size() && line[pos] == QLatin1Char('{')) {
            pos = parseLabels(line, pos + 1, sample.labels);
            if (pos < 0)
                continue;
        }
        // The value, then an optional timestamp we have no use for.
        const QStringView rest = line.mid(pos).trimmed();
        const QStringView valueText = rest.left(
            rest.indexOf(QLatin1Char(' ')) < 0 ? rest.size() : rest.indexOf(QLatin1Char(' ')));
        bool ok = false;
        sample.value = parseValue(valueText, &ok);
        if (ok)
            samples << sample;
    }
    return samples;
}

double sumSamples(const QList<PrometheusSample> &samples, const QString &name,
                  const QMap<QString, QString> &match)
{
    double total = 0;
    for (const PrometheusSample &sample : samples) {
        if (sample.name != name)
            continue;
        bool matches = true;
        for (auto it = match.cbegin(); it != match.cend() && matches; ++it)
            matches = sample.labels.value(it.key()) == it.value();
        if (matches)
            total += sample.value;
    }
    return total;
}

} // namespace payops::console
