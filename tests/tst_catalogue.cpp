#include "log/translation.h"
#include "testmain.h"
#include "untranslated.h"

#include <QFile>
#include <QLocale>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>

using namespace payops;

namespace {

// What a catalogue holds that a complete one must not: entries not yet translated, and
// entries whose source text is gone from the code.
struct CatalogueFaults
{
    QStringList unfinished;
    QStringList vanished;
    int messages = 0;
};

CatalogueFaults readCatalogue(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    CatalogueFaults faults;
    QXmlStreamReader xml(&file);
    QString context;
    QString source;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement)
            continue;
        if (xml.name() == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (xml.name() == QLatin1String("source")) {
            source = xml.readElementText();
        } else if (xml.name() == QLatin1String("translation")) {
            const QString type = xml.attributes().value(QLatin1String("type")).toString();
            const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            const QString where = context + QStringLiteral(": ") + source;
            ++faults.messages;
            if (type == QLatin1String("obsolete") || type == QLatin1String("vanished"))
                faults.vanished << where;
            else if (type == QLatin1String("unfinished") || text.trimmed().isEmpty())
                faults.unfinished << where;
        }
    }
    if (xml.hasError())
        qFatal("%s: %s", qPrintable(path), qPrintable(xml.errorString()));
    return faults;
}

QString firstOf(const QStringList &list)
{
    return list.mid(0, 30).join(QLatin1Char('\n')) +
           (list.size() > 30 ? QStringLiteral("\n…") : QString());
}

QProcessEnvironment chineseEnvironment(const QString &language = {})
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("LC_ALL"));
    environment.remove(QStringLiteral("LC_MESSAGES"));
    environment.insert(QStringLiteral("LANG"), QStringLiteral("zh_CN.UTF-8"));
    if (language.isEmpty())
        environment.remove(QStringLiteral("LANGUAGE"));
    else
        environment.insert(QStringLiteral("LANGUAGE"), language);
    return environment;
}

QString helpOf(const QString &program, const QProcessEnvironment &environment)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, {QStringLiteral("--help")});
    if (!process.waitForFinished(30000) || process.exitCode() != 0)
        return QStringLiteral("(%1 --help failed: %2)")
            .arg(program, QString::fromUtf8(process.readAllStandardError()));
    return QString::fromUtf8(process.readAllStandardOutput());
}

} // namespace

class TestCatalogue final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The committed catalogue is complete: every entry translated, none left over from
    // strings the code no longer has.
    void committedCatalogueIsComplete()
    {
        const CatalogueFaults faults = readCatalogue(QStringLiteral(PAYOPS_TS_FILE));
        QVERIFY2(faults.messages > 100, "the catalogue is missing or nearly empty");
        QVERIFY2(faults.unfinished.isEmpty(),
                 qPrintable(
                     QStringLiteral(
                         "%1 entries not translated in resources/translations/payops_zh_CN.ts:\n%2")
                         .arg(faults.unfinished.size())
                         .arg(firstOf(faults.unfinished))));
        QVERIFY2(faults.vanished.isEmpty(),
                 qPrintable(
                     QStringLiteral("%1 obsolete entries (run the update_translations target):\n%2")
                         .arg(faults.vanished.size())
                         .arg(firstOf(faults.vanished))));
    }

    // lupdate over today's sources finds nothing the catalogue lacks and nothing it has that
    // the sources lost: a tr() string added without a translation fails here, and so does a
    // string removed from the code but left in the catalogue.
    void catalogueMatchesTheSources()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString copy = dir.filePath(QStringLiteral("payops_zh_CN.ts"));
        QVERIFY(QFile::copy(QStringLiteral(PAYOPS_TS_FILE), copy));
        QProcess lupdate;
        lupdate.setWorkingDirectory(QStringLiteral(PAYOPS_SOURCE_DIR));
        lupdate.start(QStringLiteral(PAYOPS_LUPDATE),
                      {QStringLiteral("-locations"), QStringLiteral("none"), QStringLiteral("app"),
                       QStringLiteral("ui"), QStringLiteral("-ts"), copy});
        QVERIFY(lupdate.waitForFinished(120000));
        QVERIFY2(lupdate.exitCode() == 0, lupdate.readAllStandardError().constData());
        const CatalogueFaults faults = readCatalogue(copy);
        QVERIFY2(
            faults.unfinished.isEmpty(),
            qPrintable(
                QStringLiteral(
                    "%1 strings of the sources have no translation (run the update_translations "
                    "target, translate, commit the .ts):\n%2")
                    .arg(faults.unfinished.size())
                    .arg(firstOf(faults.unfinished))));
        QVERIFY2(
            faults.vanished.isEmpty(),
            qPrintable(QStringLiteral("%1 catalogue entries are gone from the sources (run the "
                                      "update_translations target):\n%2")
                           .arg(faults.vanished.size())
                           .arg(firstOf(faults.vanished))));
    }

    // The checker the console test relies on: it catches English and lets through what is
    // never translated.
    void checkerTellsEnglishFromWhatStays()
    {
        QCOMPARE(test::untranslatedWords(QStringLiteral("&Refresh")),
                 QStringList{QStringLiteral("Refresh")});
        QCOMPARE(test::untranslatedWords(QStringLiteral("已切换到 record-only 模式")),
                 QStringList{QStringLiteral("record-only")});
        QCOMPARE(test::untranslatedWords(QStringLiteral("订单 %1 的 <b>pay_no</b> is")),
                 QStringList{QStringLiteral("is")});
        QVERIFY(test::untranslatedWords(QStringLiteral("刷新(&R)")).isEmpty());
        QVERIFY(test::untranslatedWords(
                    QStringLiteral("订单 1001 已支付（PAID），2026-12-03 09:00:00.123 UTC"))
                    .isEmpty());
        QVERIFY(test::untranslatedWords(
                    QStringLiteral("用 --db mysql://root@localhost/payops 连接 MariaDB，"
                                   "见 ~/.config/payops/console.conf"))
                    .isEmpty());
        QVERIFY(test::untranslatedWords(QStringLiteral("¥1,234.50 · 3 个实例 · payops-callbackd"))
                    .isEmpty());
    }

    // installTranslations: an explicit choice loads payops' words and Qt's own, and formatting
    // follows; English takes them out again.
    void anExplicitChoiceLoadsAndUnloads()
    {
        QCOMPARE(installTranslations(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        QCOMPARE(QCoreApplication::translate("payops::SettingsDialog", "Language"),
                 QStringLiteral("语言"));
        QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("取消"));
        QCOMPARE(QLocale().language(), QLocale::Chinese);
        QCOMPARE(installTranslations(QStringLiteral("en")), QStringLiteral("en"));
        QCOMPARE(QCoreApplication::translate("payops::SettingsDialog", "Language"),
                 QStringLiteral("Language"));
        QCOMPARE(QLocale().language(), QLocale::English);
        QCOMPARE(installTranslations(QStringLiteral("xx_YY")),
                 QStringLiteral("en")); // unknown: English
        QCOMPARE(QCoreApplication::translate("payops::SettingsDialog", "Language"),
                 QStringLiteral("Language"));
    }

    void helpFollowsTheSystemLanguage_data()
    {
        QTest::addColumn<QString>("program");
        QTest::newRow("payops") << QStringLiteral(PAYOPS_CLI_PATH);
        QTest::newRow("payops-callbackd") << QStringLiteral(PAYOPS_CALLBACKD_PATH);
#ifdef PAYOPS_CONSOLE_PATH
        QTest::newRow("payops-console") << QStringLiteral(PAYOPS_CONSOLE_PATH);
#endif
    }

    // Under LANG=zh_CN.UTF-8 the --help of the command line and of the endpoint reads in
    // Chinese, apart from what the glossary keeps (flags, names, codes); a preference for
    // English ahead of Chinese (LANGUAGE=en:zh_CN) keeps it English.
    void helpFollowsTheSystemLanguage()
    {
        QFETCH(QString, program);
        QProcessEnvironment english = QProcessEnvironment::systemEnvironment();
        english.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
        const QString englishHelp = helpOf(program, english);
        QCOMPARE(helpOf(program, chineseEnvironment(QStringLiteral("en:zh_CN"))), englishHelp);

        // Code in a help text: the command names (first in their line of the English help) and
        // the values an option takes.
        QSet<QString> code{QStringLiteral("on"),    QStringLiteral("off"),  QStringLiteral("trace"),
                           QStringLiteral("debug"), QStringLiteral("info"), QStringLiteral("warn"),
                           QStringLiteral("error")};
        static const QRegularExpression commandLine(QStringLiteral("^  ([a-z]+) +\\S"));
        for (const QString &line : englishHelp.split(QLatin1Char('\n')))
            if (const QRegularExpressionMatch m = commandLine.match(line); m.hasMatch())
                code << m.captured(1);
        // and the console's page names (--page)
        static const QRegularExpression pageList(QStringLiteral("Open this page: ([a-z, -]+)\\."));
        if (const QRegularExpressionMatch m = pageList.match(englishHelp.simplified());
            m.hasMatch())
            for (const QString &name : m.captured(1).split(QStringLiteral(", ")))
                code << name;

        const QString chineseHelp = helpOf(program, chineseEnvironment());
        QVERIFY(chineseHelp != englishHelp);
        QStringList englishLines;
        for (const QString &line : chineseHelp.split(QLatin1Char('\n'))) {
            const QStringList words = test::untranslatedWords(line, code);
            if (!words.isEmpty())
                englishLines << QStringLiteral("%1   [%2]")
                                    .arg(line.trimmed(), words.join(QLatin1Char(' ')));
        }
        QVERIFY2(englishLines.isEmpty(),
                 qPrintable(
                     QStringLiteral(
                         "%1 --help under LANG=zh_CN.UTF-8 still has English (its texts belong to "
                         "app/cli and app/service):\n%2")
                         .arg(program, firstOf(englishLines))));
    }
};

PAYOPS_TEST_MAIN_CORE(TestCatalogue)
#include "tst_catalogue.moc"
