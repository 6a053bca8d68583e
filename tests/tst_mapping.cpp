#include "domain/mapping/mapping.h"
#include "testmain.h"

#include <QFile>
#include <QTemporaryDir>

using namespace payops::mapping;

namespace {

QByteArray sourceFile(const QString &path)
{
    QFile file(QStringLiteral(PAYOPS_SOURCE_DIR "/") + path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

QByteArray teamMapping()
{
    return sourceFile(QStringLiteral("tests/data/teamshop/teamshop.toml"));
}

// The message parseMapping throws for `text`; empty when it accepts it.
QString refusalOf(const QByteArray &text)
{
    try {
        parseMapping(text, QStringLiteral("m.toml"));
    } catch (const MappingError &error) {
        return error.message();
    }
    return {};
}

} // namespace

class TestMapping final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsEveryKeyOfTheFormat()
    {
        const Mapping mapping = parseMapping(teamMapping(), QStringLiteral("teamshop.toml"));
        QCOMPARE(mapping.database, QStringLiteral("@BUSINESS@"));
        QCOMPARE(mapping.orders.table, QStringLiteral("t_order"));
        QCOMPARE(mapping.orders.id, QStringLiteral("order_no"));
        QCOMPARE(mapping.orders.amountUnit, Unit::Yuan);
        QCOMPARE(mapping.orders.paidAt, QStringLiteral("pay_time"));
        QCOMPARE(mapping.orders.updatedAt, QStringLiteral("gmt_modified"));
        QCOMPARE(mapping.orders.states.size(), 5);
        QCOMPARE(mapping.orders.valueOf(QStringLiteral("PAID")), QVariant(qlonglong(1)));
        QVERIFY(!mapping.orders.valueOf(QStringLiteral("NOPE")).isValid());
        QVERIFY(mapping.payments);
        QCOMPARE(mapping.payments->payNo, QStringLiteral("trade_no"));
        QCOMPARE(mapping.payments->amountUnit, Unit::Fen);
        QCOMPARE(mapping.payments->channelValues(QStringLiteral("wechat")),
                 QStringList{QStringLiteral("wechatpay")});
        // A channel [payments.channels] does not name is stored under payops's own name.
        QCOMPARE(mapping.payments->channelValues(QStringLiteral("alipay")),
                 QStringList{QStringLiteral("alipay")});
        QCOMPARE(mapping.sideEffects.size(), 3);
        const SideEffectMapping *card = mapping.sideEffect(QStringLiteral("gift_card"));
        QVERIFY(card);
        QCOMPARE(card->key, (QStringList{QStringLiteral("card_type"), QStringLiteral("batch")}));
        QCOMPARE(card->compensate, Compensate::Freeze);
        QCOMPARE(card->freeze, QStringLiteral("status = 9"));
        const SideEffectMapping *points = mapping.sideEffect(QStringLiteral("points"));
        QCOMPARE(points->compensate, Compensate::Reverse);
        QCOMPARE(points->valueUnit, Unit::Points);
        QCOMPARE(points->reverseSet.size(), 1);
        QCOMPARE(points->reverseSet.first().first, QStringLiteral("remark"));
        QCOMPARE(points->reverseSet.first().second, QStringLiteral("'payops reversal'"));
        QCOMPARE(mapping.sha256.size(), 64);
        QCOMPARE(mapping.table(QStringLiteral("t`x")), QStringLiteral("`@BUSINESS@`.`t``x`"));
    }

    void referenceMappingReads()
    {
        const Mapping mapping = parseMapping(sourceFile(QStringLiteral("docs/mapping/payops.toml")),
                                             QStringLiteral("payops.toml"));
        QVERIFY(mapping.database.isEmpty());
        QVERIFY(!mapping.payments);
        QCOMPARE(mapping.table(QStringLiteral("orders")), QStringLiteral("`orders`"));
        QCOMPARE(mapping.orders.valueOf(QStringLiteral("REFUNDED")),
                 QVariant(QStringLiteral("REFUNDED")));
        QCOMPARE(mapping.sideEffects.size(), 2);
        // docs/mapping.md shows the same file, from [orders] on.
        const QByteArray file = sourceFile(QStringLiteral("docs/mapping/payops.toml"));
        QVERIFY(sourceFile(QStringLiteral("docs/mapping.md"))
                    .contains(file.mid(file.indexOf("[orders]")).trimmed()));
    }

    void refusesWhatItCannotUse_data()
    {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not toml") << QByteArray("[orders]\n") << QByteArray("[orders\n")
                                  << QStringLiteral("m.toml:5: not TOML");
        QTest::newRow("missing key") << QByteArray("status = \"state\"\n") << QByteArray()
                                     << QStringLiteral("[orders] 'status' is missing");
        QTest::newRow("misspelt key")
            << QByteArray("paid_at = \"pay_time\"") << QByteArray("paidat = \"pay_time\"")
            << QStringLiteral("unknown key 'paidat'");
        QTest::newRow("misspelt section") << QByteArray("[payments]") << QByteArray("[payment]")
                                          << QStringLiteral("unknown key 'payment'");
        QTest::newRow("bad unit") << QByteArray("amount_unit = \"yuan\"")
                                  << QByteArray("amount_unit = \"cents\"")
                                  << QStringLiteral("must be \"yuan\" or \"fen\"");
        QTest::newRow("points for orders")
            << QByteArray("amount_unit = \"yuan\"") << QByteArray("amount_unit = \"points\"")
            << QStringLiteral("must be \"yuan\" or \"fen\"");
        QTest::newRow("number as name")
            << QByteArray("table = \"t_order\"") << QByteArray("table = 7")
            << QStringLiteral("'table' must be a non-empty string");
        QTest::newRow("unknown state") << QByteArray("REFUNDED = 4") << QByteArray("LOST = 4")
                                       << QStringLiteral("'LOST' is not a payops state");
        QTest::newRow("same state value")
            << QByteArray("REFUNDED = 4") << QByteArray("REFUNDED = 3")
            << QStringLiteral("have the same value 3");
        QTest::newRow("no PAID") << QByteArray("PAID = 1\n") << QByteArray()
                                 << QStringLiteral("PAID must be named");
        QTest::newRow("state as float") << QByteArray("CLOSED = 2") << QByteArray("CLOSED = 2.5")
                                        << QStringLiteral("must be a number or a string");
        QTest::newRow("bad compensate")
            << QByteArray("compensate = \"reverse\"") << QByteArray("compensate = \"delete\"")
            << QStringLiteral("'compensate' must be");
        QTest::newRow("freeze without clause")
            << QByteArray("freeze = \"status = 'VOID'\"\n") << QByteArray()
            << QStringLiteral("[side_effects #1] 'freeze' is missing");
        QTest::newRow("reverse_set on a freeze")
            << QByteArray("freeze = \"status = 9\"")
            << QByteArray("freeze = \"status = 9\"\nreverse_set = { a = \"1\" }")
            << QStringLiteral("'reverse_set' is for compensate = \"reverse\"");
        QTest::newRow("same name twice")
            << QByteArray("name = \"gift_card\"") << QByteArray("name = \"coupon\"")
            << QStringLiteral("two side effects are named \"coupon\"");
        QTest::newRow("name with space")
            << QByteArray("name = \"gift_card\"") << QByteArray("name = \"gift card\"")
            << QStringLiteral("must be lowercase letters");
        QTest::newRow("key not an array")
            << QByteArray("key = [\"biz_type\"]") << QByteArray("key = \"biz_type\"")
            << QStringLiteral("'key' must be an array");
        QTest::newRow("updated_at not a name")
            << QByteArray("updated_at = \"gmt_modified\"") << QByteArray("updated_at = true")
            << QStringLiteral("[orders] 'updated_at' must be a non-empty string");
        QTest::newRow("unknown channel")
            << QByteArray("wechat = \"wechatpay\"") << QByteArray("unionpay = \"UP\"")
            << QStringLiteral("[payments.channels] 'unionpay' is not a payops channel (wechat, "
                              "alipay)");
        QTest::newRow("channel value not a string")
            << QByteArray("wechat = \"wechatpay\"") << QByteArray("wechat = 3")
            << QStringLiteral("the value of wechat must be a non-empty string or a list");
        QTest::newRow("empty channel list")
            << QByteArray("wechat = \"wechatpay\"") << QByteArray("wechat = []")
            << QStringLiteral("the value of wechat must be a non-empty string or a list");
        QTest::newRow("one value for two channels")
            << QByteArray("wechat = \"wechatpay\"")
            << QByteArray("wechat = \"wechatpay\"\nalipay = [\"ali\", \"wechatpay\"]")
            << QStringLiteral("\"wechatpay\" is named twice");
        QTest::newRow("channels without channel")
            << QByteArray("channel = \"channel\"\n") << QByteArray()
            << QStringLiteral("[payments] [payments.channels] needs 'channel'");
        // Names are quoted before they meet SQL, so what is refused is what MariaDB refuses in
        // a quoted name, and control characters, which would forge lines in what shows them.
        QTest::newRow("name too long")
            << QByteArray("table = \"t_order\"")
            << QByteArray("table = \"") + QByteArray(65, 'x') + QByteArray("\"")
            << QStringLiteral("[orders] 'table' cannot be a MariaDB name: it is longer than 64 "
                              "characters");
        QTest::newRow("name ending in a space")
            << QByteArray("table = \"t_order\"") << QByteArray("table = \"t_order \"")
            << QStringLiteral("'table' cannot be a MariaDB name: it ends with a space");
        QTest::newRow("line break in a name")
            << QByteArray("status = \"state\"") << QByteArray("status = \"st\\nate\"")
            << QStringLiteral("'status' cannot be a MariaDB name: it holds a control character");
        QTest::newRow("NUL in a name")
            << QByteArray("status = \"state\"") << QByteArray("status = \"st\\u0000ate\"")
            << QStringLiteral("'status' cannot be a MariaDB name: it holds a control character");
        QTest::newRow("emoji in a name")
            << QByteArray("status = \"state\"") << QByteArray("status = \"st\\U0001F600\"")
            << QStringLiteral("'status' cannot be a MariaDB name: it holds a character outside "
                              "Unicode's Basic Multilingual Plane");
        QTest::newRow("database name too long")
            << QByteArray("database = \"@BUSINESS@\"")
            << QByteArray("database = \"") + QByteArray(65, 'd') + QByteArray("\"")
            << QStringLiteral("[business] 'database' cannot be a MariaDB name");
        QTest::newRow("key column too long")
            << QByteArray("key = [\"biz_type\"]")
            << QByteArray("key = [\"biz_type\", \"") + QByteArray(65, 'k') + QByteArray("\"]")
            << QStringLiteral("[side_effects #3] 'key' cannot be a MariaDB name: it is longer "
                              "than 64 characters");
        QTest::newRow("reverse_set column with a tab")
            << QByteArray("reverse_set = { remark") << QByteArray("reverse_set = { \"re\\tmark\"")
            << QStringLiteral("'reverse_set.re\tmark' cannot be a MariaDB name: it holds a "
                              "control character");
        QTest::newRow("empty reverse_set column")
            << QByteArray("reverse_set = { remark") << QByteArray("reverse_set = { \"\"")
            << QStringLiteral("'reverse_set.' cannot be a MariaDB name: it is empty");
    }

    // Any other name is kept as written: db::quoteIdentifier makes a backtick, a percent sign
    // or SQL part of the name (tst_mappedwatch runs such names).
    void keepsNamesMariaDbQuotes()
    {
        const QString order = QStringLiteral("ord%6");
        const QString key = QStringLiteral("tpl` UNION SELECT 7, SLEEP(3) #");
        const QString reversed = QStringLiteral("备注 \"x\"");
        QByteArray text = teamMapping();
        text.replace("order = \"order_no\"\nuser = \"uid\"\nkey = [\"tpl_code\"]",
                     "order = \"" + order.toUtf8() + "\"\nuser = \"uid\"\nkey = [\"" +
                         key.toUtf8() + "\"]");
        text.replace("reverse_set = { remark", "reverse_set = { \"备注 \\\"x\\\"\"");
        const Mapping mapping = parseMapping(text, QStringLiteral("m.toml"));
        const SideEffectMapping *coupon = mapping.sideEffect(QStringLiteral("coupon"));
        QCOMPARE(coupon->order, order);
        QCOMPARE(coupon->key, QStringList{key});
        QCOMPARE(mapping.sideEffect(QStringLiteral("points"))->reverseSet.first().first, reversed);
    }

    // Optional keys: without updated_at the state counts read their window again; a channel may
    // be stored under several values.
    void readsTheOptionalKeys()
    {
        QByteArray text = teamMapping();
        text.replace("updated_at = \"gmt_modified\"\n", "");
        text.replace("wechat = \"wechatpay\"",
                     "wechat = [\"wechatpay\", \"WXPAY\"]\nalipay = \"ALI\"");
        const Mapping mapping = parseMapping(text, QStringLiteral("m.toml"));
        QVERIFY(mapping.orders.updatedAt.isEmpty());
        QCOMPARE(mapping.payments->channelValues(QStringLiteral("wechat")),
                 (QStringList{QStringLiteral("wechatpay"), QStringLiteral("WXPAY")}));
        QCOMPARE(mapping.payments->channelValues(QStringLiteral("alipay")),
                 QStringList{QStringLiteral("ALI")});
    }

    void refusesWhatItCannotUse()
    {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, expected);
        QByteArray text = teamMapping();
        const qsizetype at = text.indexOf(from);
        QVERIFY2(at >= 0, from.constData());
        text.replace(at, from.size(), to);
        const QString message = refusalOf(text);
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.startsWith(QStringLiteral("m.toml")), qPrintable(message));
    }

    void errorsNameTheLine()
    {
        QByteArray text = teamMapping();
        text.replace("amount_unit = \"fen\"\nchannel", "amount_unit = \"pounds\"\nchannel");
        const QString message = refusalOf(text);
        const int line = int(text.left(text.indexOf("pounds")).count('\n')) + 1;
        QVERIFY2(message.startsWith(QStringLiteral("m.toml:%1: [payments]").arg(line)),
                 qPrintable(message));

        // A channel payops does not know, at its own line.
        text = teamMapping();
        text.replace("wechat = \"wechatpay\"", "wechatpay = \"wechatpay\"");
        const int channelLine = int(text.left(text.indexOf("wechatpay =")).count('\n')) + 1;
        QVERIFY2(refusalOf(text).startsWith(
                     QStringLiteral("m.toml:%1: [payments.channels]").arg(channelLine)),
                 qPrintable(refusalOf(text)));
    }

    void refusesAFileOthersMayWrite()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.toml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(teamMapping());
        file.close();
        file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup |
                            QFile::ReadOther);
        const Mapping mapping = loadMapping(path);
        QCOMPARE(mapping.path, path);
        file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::WriteGroup);
        try {
            loadMapping(path);
            QFAIL("a group-writable mapping was read");
        } catch (const MappingError &error) {
            QVERIFY2(error.message().contains(QStringLiteral("may be changed by other users")),
                     error.what());
        }
        try {
            loadMapping(dir.filePath(QStringLiteral("absent.toml")));
            QFAIL("a missing mapping was read");
        } catch (const MappingError &error) {
            QVERIFY2(error.message().contains(QStringLiteral("cannot read the mapping file")),
                     error.what());
        }
    }
};

PAYOPS_TEST_MAIN_CORE(TestMapping)
#include "tst_mapping.moc"
