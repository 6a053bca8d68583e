#include "untranslated.h"

#include <QRegularExpression>

namespace payops::test {
namespace {

// Never translated (glossary): product and technical names, and values that are data or code
// written in lower case (channels, handlers, schema levels, modes as the command line spells
// them).
const QSet<QString> &keptInEnglish()
{
    static const QSet<QString> words{
        QStringLiteral("payops"), QStringLiteral("payops-console"),
        QStringLiteral("payops-callbackd"), QStringLiteral("MariaDB"), QStringLiteral("MySQL"),
        QStringLiteral("mysql"), QStringLiteral("mariadb"), QStringLiteral("Prometheus"),
        QStringLiteral("systemd"), QStringLiteral("cron"), QStringLiteral("nginx"),
        QStringLiteral("Qt"), QStringLiteral("root"), QStringLiteral("localhost"),
        QStringLiteral("legacy"), QStringLiteral("safe"), QStringLiteral("unsafe-demo"),
        QStringLiteral("record_only"), QStringLiteral("normal"), QStringLiteral("wechat"),
        QStringLiteral("alipay"), QStringLiteral("generic"), QStringLiteral("WeChat"),
        QStringLiteral("Alipay"), QStringLiteral("stderr"), QStringLiteral("stdout"),
        QStringLiteral("stdin"), QStringLiteral("Ctrl"), QStringLiteral("Shift"),
        QStringLiteral("Alt"), QStringLiteral("Excel"), QStringLiteral("ms"), QStringLiteral("KiB"),
        QStringLiteral("MiB"), QStringLiteral("unsafe"), QStringLiteral("socket"),
        QStringLiteral("Socket"), QStringLiteral("unix"), QStringLiteral("Unix"),
        // the storm's patterns, as `payops storm --pattern` spells them
        QStringLiteral("concurrent"), QStringLiteral("gap"), QStringLiteral("replay"),
        QStringLiteral("mixed")};
    return words;
}

// Markup, links, paths and flags carry no words meant for a reader.
QString withoutCode(QString text)
{
    static const QRegularExpression tags(QStringLiteral("<[^>]*>"));
    static const QRegularExpression entities(QStringLiteral("&(#\\d+|[a-zA-Z]+);"));
    static const QRegularExpression accelerator(QStringLiteral("&(?=\\w)"));
    static const QRegularExpression urls(QStringLiteral("\\b[a-z][a-z0-9+.-]*://\\S*"));
    static const QRegularExpression paths(QStringLiteral("(^|[^\\w.~-])[~.]?/\\S*"));
    // A flag and the lower-case value it takes: --level current.
    static const QRegularExpression flags(
        QStringLiteral("(^|[^\\w-])--?[A-Za-z][\\w-]*( [a-z_]+\\b)?"));
    static const QRegularExpression placeholders(QStringLiteral("%(\\d+|n)"));
    static const QRegularExpression commands(
        QStringLiteral("\\bpayops (?!console)[a-z]+( verify| start| stop)?\\b"));
    for (const QRegularExpression *pattern :
         {&tags, &entities, &accelerator, &urls, &paths, &flags, &placeholders, &commands})
        text.replace(*pattern, QStringLiteral(" "));
    return text;
}

bool isCode(const QString &word)
{
    static const QRegularExpression digitOrUnderscore(QStringLiteral("[\\d_]"));
    static const QRegularExpression innerCapital(QStringLiteral("[a-z][A-Z]"));
    return word.size() < 2                     // a unit letter, an accelerator
           || word.contains(digitOrUnderscore) // pay_no, PN20261203, v1
           || word.contains(QLatin1Char('.'))  // console.conf, example.com
           || word == word.toUpper()           // PAID, CNY, GET_LOCK
           || word.contains(innerCapital);     // an identifier: orderId
}

} // namespace

QStringList untranslatedWords(const QString &text, const QSet<QString> &alsoKept)
{
    // A code as a whole: an audit action or its prefix (compensation.request, switch.).
    static const QRegularExpression dottedCode(QStringLiteral("^[a-z_]+\\.[a-z_.]*$"));
    if (dottedCode.match(text.trimmed()).hasMatch())
        return {};
    static const QRegularExpression token(
        QStringLiteral("[A-Za-z0-9_][A-Za-z0-9_.'’-]*[A-Za-z0-9_]|[A-Za-z]"));
    QStringList found;
    auto it = token.globalMatch(withoutCode(text));
    while (it.hasNext()) {
        const QString word = it.next().captured();
        const auto kept = [&alsoKept](const QString &w) {
            return keptInEnglish().contains(w) || alsoKept.contains(w);
        };
        if (kept(word) || isCode(word))
            continue;
        // record-only is English, unsafe-demo (above) a handler's name.
        for (const QString &part : word.split(QLatin1Char('-'), Qt::SkipEmptyParts)) {
            if (!kept(part) && !isCode(part)) {
                found << word;
                break;
            }
        }
    }
    return found;
}

} // namespace payops::test
