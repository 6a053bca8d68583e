// No chained QString::arg in the product code (app/, ui/): in QString("%1 %2").arg(a).arg(b)
// the second call replaces a "%2" that `a` brought in, so a name or a message from outside (a
// mapping column named ord%6, a server's text) is rewritten, and SQL built that way runs what
// the name held. One call, .arg(a, b), replaces each placeholder once. The scan blanks comments
// and string and character literals first, so that neither these lines nor a message that
// quotes ".arg(" count.

#include "testmain.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>

namespace {

bool isIdentifierChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

// The identifier or number that ends just before `at`.
QStringView wordBefore(const QString &text, qsizetype at)
{
    qsizetype from = at;
    while (from > 0 && isIdentifierChar(text.at(from - 1)))
        --from;
    return QStringView(text).mid(from, at - from);
}

// A quote inside a number (1'000, 0xFF'FF) rather than one opening a character literal.
bool isDigitSeparator(const QString &source, qsizetype at)
{
    const QStringView word = wordBefore(source, at);
    return !word.isEmpty() && word.front().isDigit();
}

// `source` with every comment and the inside of every string and character literal (raw
// strings included) turned into spaces; line breaks stay, so positions keep their line.
QString blanked(const QString &source)
{
    QString out = source;
    const auto blank = [&out](qsizetype from, qsizetype to) {
        for (qsizetype i = from; i < to && i < out.size(); ++i)
            if (out.at(i) != QLatin1Char('\n'))
                out[i] = QLatin1Char(' ');
    };
    const qsizetype n = source.size();
    qsizetype i = 0;
    while (i < n) {
        const QStringView rest = QStringView(source).mid(i);
        if (rest.startsWith(u"//")) {
            const qsizetype end = source.indexOf(QLatin1Char('\n'), i);
            const qsizetype to = end < 0 ? n : end;
            blank(i, to);
            i = to;
        } else if (rest.startsWith(u"/*")) {
            const qsizetype end = source.indexOf(QStringLiteral("*/"), i + 2);
            const qsizetype to = end < 0 ? n : end + 2;
            blank(i, to);
            i = to;
        } else if (rest.startsWith(u"R\"") &&
                   QStringList{QString(), QStringLiteral("u8"), QStringLiteral("u"),
                               QStringLiteral("U"), QStringLiteral("L")}
                       .contains(wordBefore(source, i).toString())) {
            const qsizetype open = source.indexOf(QLatin1Char('('), i + 2);
            if (open < 0)
                return out;
            const QString closing =
                QLatin1Char(')') + source.mid(i + 2, open - i - 2) + QLatin1Char('"');
            const qsizetype end = source.indexOf(closing, open);
            const qsizetype to = end < 0 ? n : end + closing.size();
            blank(i + 1, to);
            i = to;
        } else if (rest.front() == QLatin1Char('"') ||
                   (rest.front() == QLatin1Char('\'') && !isDigitSeparator(source, i))) {
            const QChar quote = rest.front();
            qsizetype j = i + 1;
            while (j < n && source.at(j) != quote && source.at(j) != QLatin1Char('\n'))
                j += source.at(j) == QLatin1Char('\\') ? 2 : 1;
            blank(i + 1, j);
            i = j + 1;
        } else {
            ++i;
        }
    }
    return out;
}

// Where the call whose parenthesis opens at `open` ends: its closing parenthesis.
qsizetype closing(const QString &code, qsizetype open)
{
    int depth = 0;
    for (qsizetype i = open; i < code.size(); ++i) {
        if (code.at(i) == QLatin1Char('('))
            ++depth;
        else if (code.at(i) == QLatin1Char(')') && --depth == 0)
            return i;
    }
    return code.size();
}

// The lines (from 1) where a chain of .arg() calls starts.
QList<int> chainedArgLines(const QString &source)
{
    static const QRegularExpression call(QStringLiteral("\\.\\s*arg\\s*\\("));
    const QString code = blanked(source);
    QList<int> lines;
    qsizetype chainEnd = -1; // where the last chain found ends
    for (auto match = call.globalMatch(code); match.hasNext();) {
        const QRegularExpressionMatch found = match.next();
        qsizetype after = closing(code, found.capturedEnd() - 1) + 1;
        while (after < code.size() && code.at(after).isSpace())
            ++after;
        if (!call.match(code, after, QRegularExpression::NormalMatch,
                        QRegularExpression::AnchorAtOffsetMatchOption)
                 .hasMatch())
            continue;
        if (found.capturedStart() > chainEnd)
            lines << int(code.left(found.capturedStart()).count(QLatin1Char('\n'))) + 1;
        chainEnd = after;
    }
    return lines;
}

QString readSource(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return QString::fromUtf8(file.readAll());
}

} // namespace

class TestChainedArg final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsAChain_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QList<int>>("lines");
        QTest::newRow("on one line")
            << QStringLiteral("s = QString(\"%1 %2\").arg(a).arg(b);") << QList<int>{1};
        QTest::newRow("across lines") << QStringLiteral("x = 1;\ns = tr(\"%1 %2 %3\")\n"
                                                        "    .arg(a, b)\n    .arg(n);\n")
                                      << QList<int>{3};
        QTest::newRow("nested calls")
            << QStringLiteral("s = t.arg(f(g(1), 2)) . arg ( b );") << QList<int>{1};
        QTest::newRow("a chain counted once")
            << QStringLiteral("s = t.arg(a)\n.arg(b)\n.arg(c);\nu = t.arg(d).arg(e);")
            << QList<int>{1, 4};
        QTest::newRow("one call") << QStringLiteral("s = t.arg(a, b, QString::number(n));")
                                  << QList<int>{};
        QTest::newRow("a call inside an argument")
            << QStringLiteral("s = t.arg(QStringLiteral(\"%1\").arg(n, 8), b);") << QList<int>{};
        QTest::newRow("in a string")
            << QStringLiteral("s = t.arg(QStringLiteral(\").arg(1).arg(2) \\\" .arg(\"));")
            << QList<int>{};
        QTest::newRow("in a raw string")
            << QStringLiteral("s = R\"x(\n.arg(1).arg(2) )\" \n)x\".arg(a);") << QList<int>{};
        QTest::newRow("in comments")
            << QStringLiteral("// t.arg(a).arg(b)\ns = t.arg(a) /* .arg(b) */;\n/*\n.arg(1)\n*/")
            << QList<int>{};
        QTest::newRow("after a quote character")
            << QStringLiteral("c = u'\"'; n = 1'000; s = t.arg(a).arg(b); // \"") << QList<int>{1};
    }

    void findsAChain()
    {
        QFETCH(QString, source);
        QFETCH(QList<int>, lines);
        QCOMPARE(chainedArgLines(source), lines);
    }

    // Every file of app/ and ui/.
    void productCodeHasNoChain()
    {
        const QString root = QStringLiteral(PAYOPS_SOURCE_DIR "/");
        QStringList found;
        int files = 0;
        for (const QString &folder : {QStringLiteral("app"), QStringLiteral("ui")}) {
            QDirIterator it(root + folder, {QStringLiteral("*.cpp"), QStringLiteral("*.h")},
                            QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next().mid(root.size());
                ++files;
                for (int line : chainedArgLines(readSource(root + path)))
                    found << QStringLiteral("%1:%2").arg(path, QString::number(line));
            }
        }
        QVERIFY2(files > 100, qPrintable(root));
        QVERIFY2(found.isEmpty(),
                 qPrintable(QStringLiteral("chained .arg() calls; make each one call, "
                                           ".arg(a, b):\n") +
                            found.join(QLatin1Char('\n'))));
    }
};

PAYOPS_TEST_MAIN_CORE(TestChainedArg)
#include "tst_chainedarg.moc"
