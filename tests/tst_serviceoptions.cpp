#include "service/httplimits.h"
#include "service/serviceoptions.h"
#include "testmain.h"

#include <QTemporaryDir>

#include <sys/stat.h>

using namespace payops;

namespace {

constexpr const char kDsn[] = "mysql://ops@db.example:3307/payops";

} // namespace

class TestServiceOptions final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_secret = writeFile(QStringLiteral("secret"), "  0123456789abcdef-long-enough \n");
        m_short = writeFile(QStringLiteral("short"), "tooshort\n");
    }

    void aFullCommandLine()
    {
        const ServiceCommandLine command = parse(
            {QStringLiteral("--listen"), QStringLiteral("0.0.0.0:0"), QStringLiteral("--handler"),
             QStringLiteral("unsafe-demo"), QStringLiteral("--instance"), QStringLiteral("edge-1"),
             QStringLiteral("--threads"), QStringLiteral("3"), QStringLiteral("--max-body-bytes"),
             QStringLiteral("2048"), QStringLiteral("--take-over"), QStringLiteral("--log-level"),
             QStringLiteral("debug"), QStringLiteral("--record-batch-rows"), QStringLiteral("7"),
             QStringLiteral("--record-batch-ms"), QStringLiteral("0")});
        QVERIFY2(command.error.isEmpty(), qPrintable(command.error));
        QCOMPARE(command.action, ServiceCommandLine::Action::Run);
        const ServiceOptions &o = command.options;
        QCOMPARE(o.host, QStringLiteral("0.0.0.0"));
        QCOMPARE(o.port, 0);
        QCOMPARE(o.secret, QByteArray("0123456789abcdef-long-enough"));
        QCOMPARE(o.handler, QStringLiteral("unsafe-demo"));
        QCOMPARE(o.instance, QStringLiteral("edge-1"));
        QCOMPARE(o.threads, 3);
        QCOMPARE(o.recordBatchRows, 7);
        QCOMPARE(o.recordBatchMs, 0);
        QCOMPARE(o.limits.maxBodyBytes, 2048);
        QCOMPARE(o.limits.maxHeaderBytes, HttpLimits().maxHeaderBytes);
        QVERIFY(o.takeOver);
        QCOMPARE(o.dsn.host, QStringLiteral("db.example"));
        QCOMPARE(o.dsn.port, 3307);
        QCOMPARE(command.logLevel, QStringLiteral("debug"));
        // Nothing given: the defaults of docs/callback-contract.md, "Limits".
        const ServiceCommandLine plain = parse({});
        QVERIFY2(plain.error.isEmpty(), qPrintable(plain.error));
        QCOMPARE(plain.options.host, QStringLiteral("127.0.0.1"));
        QCOMPARE(plain.options.port, 8080);
        QCOMPARE(plain.options.handler, QStringLiteral("safe"));
        QVERIFY(!plain.options.takeOver);
        QCOMPARE(plain.options.recordBatchRows, 100);
        QCOMPARE(plain.options.recordBatchMs, 0);
    }

    void ipv6ListenAddressesGoInBrackets()
    {
        for (const auto &[listen, host] :
             {std::pair{"[::1]:0", "::1"}, std::pair{"[::]:8443", "::"},
              std::pair{"[fe80::1%lo]:80", "fe80::1%lo"}}) {
            const ServiceCommandLine command =
                parse({QStringLiteral("--listen"), QString::fromLatin1(listen)});
            QVERIFY2(command.error.isEmpty(), qPrintable(command.error));
            QCOMPARE(command.options.host, QString::fromLatin1(host));
            // Written back (the instance's listen address, the log) as it was given.
            const QString written =
                ServiceOptions::hostAndPort(command.options.host, command.options.port);
            QCOMPARE(written, QString::fromLatin1(listen));
        }
        QCOMPARE(ServiceOptions::hostAndPort(QStringLiteral("127.0.0.1"), 8080),
                 QStringLiteral("127.0.0.1:8080"));
    }

    void badListen_data()
    {
        QTest::addColumn<QString>("listen");
        for (const char *listen :
             {"localhost", ":8080", "host:", "host:http", "host:65536", "host:-1", "::1:8080",
              "[::1]", "[]:8080", "[::1:8080", "::1]:8080", "[[::1]]:8080"})
            QTest::newRow(listen) << QString::fromLatin1(listen);
    }
    void badListen()
    {
        QFETCH(QString, listen);
        QCOMPARE(parse({QStringLiteral("--listen"), listen}).error,
                 QStringLiteral("--listen must be HOST:PORT, not '%1'").arg(listen));
    }

    void theSecret()
    {
        QCOMPARE(parse({}, QString()).error, QStringLiteral("--secret-file is required"));
        const QString missing = m_dir.filePath(QStringLiteral("absent"));
        QVERIFY(
            parse({}, missing)
                .error.startsWith(QStringLiteral("cannot read the secret file %1: ").arg(missing)));
        QCOMPARE(parse({}, m_short).error,
                 QStringLiteral("the secret in %1 is shorter than 16 bytes").arg(m_short));
        const QString huge = writeFile(QStringLiteral("huge"), QByteArray(64 * 1024 + 1, 'x'));
        QCOMPARE(parse({}, huge).error,
                 QStringLiteral("the secret file %1 is larger than 64 KiB: is it the right file?")
                     .arg(huge));
    }

    // Whoever reads the secret can sign a callback that pays: a file other users may read or
    // write is refused at start, as ssh refuses such a private key.
    void aSecretOthersMayUseIsRefused_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<bool>("refused");
        QTest::newRow("0600") << 0600 << false;
        QTest::newRow("0400") << 0400 << false;
        QTest::newRow("0644") << 0644 << true;
        QTest::newRow("0640") << 0640 << true;
        QTest::newRow("0604") << 0604 << true;
        QTest::newRow("0620, group may write") << 0620 << true;
        QTest::newRow("0602, others may write") << 0602 << true;
    }

    void aSecretOthersMayUseIsRefused()
    {
        QFETCH(int, mode);
        QFETCH(bool, refused);
        const QString path =
            writeFile(QStringLiteral("secret-%1").arg(mode, 4, 8, QLatin1Char('0')),
                      "0123456789abcdef-long-enough\n");
        QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode_t(mode)), 0);
        const ServiceCommandLine command = parse({}, path);
        if (!refused) {
            QVERIFY2(command.error.isEmpty(), qPrintable(command.error));
            return;
        }
        QCOMPARE(
            command.error,
            QStringLiteral("the secret file %1 is open to other users (mode %2): make it readable "
                           "by its owner only (chmod 600 %1)")
                .arg(path, QString::number(mode, 8).rightJustified(4, QLatin1Char('0'))));
    }

    void badHandlerAndInstance()
    {
        QCOMPARE(parse({QStringLiteral("--handler"), QStringLiteral("unsafe")}).error,
                 QStringLiteral("--handler must be safe or unsafe-demo"));
        QCOMPARE(parse({QStringLiteral("--instance"), QString(65, QLatin1Char('x'))}).error,
                 QStringLiteral("--instance is longer than 64 characters"));
        QVERIFY(
            parse({QStringLiteral("--instance"), QString(64, QLatin1Char('x'))}).error.isEmpty());
    }

    // Gateway mode: --upstream chooses it, and --handler with it is a start error.
    void gatewayMode()
    {
        const QString url = QStringLiteral("https://team.example:8443/notify");
        const ServiceCommandLine gateway =
            parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-timeout"),
                   QStringLiteral("3")});
        QVERIFY2(gateway.error.isEmpty(), qPrintable(gateway.error));
        QCOMPARE(gateway.options.handler, QStringLiteral("gateway"));
        QCOMPARE(gateway.options.upstream.url, url);
        QCOMPARE(gateway.options.upstream.timeoutSeconds, 3);
        QCOMPARE(parse({}).options.upstream.url, QString());
        QCOMPARE(parse({QStringLiteral("--upstream"), url, QStringLiteral("--handler"),
                        QStringLiteral("safe")})
                     .error,
                 QStringLiteral("--handler and --upstream exclude each other: a gateway pays "
                                "nothing itself, the upstream does"));
        QCOMPARE(
            parse({QStringLiteral("--upstream"), QStringLiteral("ftp://team.example/x")}).error,
            QStringLiteral("--upstream must be an http:// or https:// URL, not "
                           "'ftp://team.example/x'"));
        // The password of a URL is never repeated in a message.
        QCOMPARE(
            parse({QStringLiteral("--upstream"), QStringLiteral("gopher://u:pw@team.example/")})
                .error,
            QStringLiteral("--upstream must be an http:// or https:// URL, not "
                           "'gopher://team.example/'"));
        QCOMPARE(parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-timeout"),
                        QStringLiteral("61")})
                     .error,
                 QStringLiteral("--upstream-timeout must be 1-60 seconds"));
        QCOMPARE(parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-ca"),
                        m_dir.filePath(QStringLiteral("no-such.pem"))})
                     .error,
                 QStringLiteral("--upstream-ca: cannot read %1")
                     .arg(m_dir.filePath(QStringLiteral("no-such.pem"))));
        QCOMPARE(parse({QStringLiteral("--upstream-timeout"), QStringLiteral("3")}).error,
                 QStringLiteral("--upstream-timeout needs --upstream"));
        QCOMPARE(parse({QStringLiteral("--upstream-connections"), QStringLiteral("3")}).error,
                 QStringLiteral("--upstream-connections needs --upstream"));
        QCOMPARE(parse({QStringLiteral("--upstream"), url, QStringLiteral("--hold-by-retries"),
                        QStringLiteral("wechatpay,paypal")})
                     .error,
                 QStringLiteral("--hold-by-retries takes wechatpay, alipay or pay, not 'paypal'"));
        // A channel's own upstream: its URL is checked as --upstream's, by its own name, and it
        // needs its channel's keys.
        QCOMPARE(parse({QStringLiteral("--upstream-alipay"), QStringLiteral("ftp://x/")}).error,
                 QStringLiteral("--upstream-alipay must be an http:// or https:// URL, not "
                                "'ftp://x/'"));
        QCOMPARE(parse({QStringLiteral("--upstream-alipay"), url}).error,
                 QStringLiteral("--upstream-alipay needs --alipay-app-id and --alipay-public-key, "
                                "or --alipay-app"));
        const ServiceCommandLine perChannel =
            parse({QStringLiteral("--upstream-wechatpay"), url,
                   QStringLiteral("--upstream-timeout"), QStringLiteral("3")});
        QCOMPARE(perChannel.error,
                 QStringLiteral("--upstream-wechatpay needs the WeChat Pay options "
                                "(--wechatpay-mchid and the three after it)"));
        const ServiceCommandLine held =
            parse({QStringLiteral("--upstream"), url, QStringLiteral("--hold-by-retries"),
                   QStringLiteral("wechatpay,pay")});
        QCOMPARE(held.error, QString());
        QCOMPARE(held.options.holdByRetries,
                 (QList<WireFormat>{WireFormat::WechatPay, WireFormat::Payops}));
        // The platform is answered before a forward may end.
        QCOMPARE(
            parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-timeout"),
                   QStringLiteral("10"), QStringLiteral("--upstream-bound"), QStringLiteral("10")})
                .error,
            QStringLiteral("--upstream-bound must be more than --upstream-timeout (10) and "
                           "at most 600 seconds"));
        QCOMPARE(parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-connections"),
                        QStringLiteral("0")})
                     .error,
                 QStringLiteral("--upstream-connections must be 1-4096"));
        const ServiceCommandLine slow =
            parse({QStringLiteral("--upstream"), url, QStringLiteral("--upstream-timeout"),
                   QStringLiteral("20")});
        QCOMPARE(slow.error, QString());
        QCOMPARE(slow.options.upstream.boundSeconds, 40);
        QCOMPARE(slow.options.upstream.connections, 256);
    }

    void integersOutOfRange_data()
    {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("error");
        const QString threads = QStringLiteral("--threads must be 1-256");
        QTest::newRow("threads 0") << QStringLiteral("threads") << QStringLiteral("0") << threads;
        QTest::newRow("threads 257")
            << QStringLiteral("threads") << QStringLiteral("257") << threads;
        QTest::newRow("lock-timeout") << QStringLiteral("lock-timeout") << QStringLiteral("601")
                                      << QStringLiteral("--lock-timeout must be 0-600 seconds");
        QTest::newRow("commit-delay-ms")
            << QStringLiteral("commit-delay-ms") << QStringLiteral("-1")
            << QStringLiteral("--commit-delay-ms must be 0-60000");
        const QString rows = QStringLiteral("--record-batch-rows must be 1-1000");
        QTest::newRow("record-batch-rows 0")
            << QStringLiteral("record-batch-rows") << QStringLiteral("0") << rows;
        QTest::newRow("record-batch-rows 1001")
            << QStringLiteral("record-batch-rows") << QStringLiteral("1001") << rows;
        QTest::newRow("record-batch-ms") << QStringLiteral("record-batch-ms") << QStringLiteral("x")
                                         << QStringLiteral("--record-batch-ms must be 0-1000");
        // Every limit flag, just below its minimum, just above its maximum, and not a number.
        for (const HttpLimitOption &limit : httpLimitOptions()) {
            const QString flag = QString::fromLatin1(limit.name);
            const QString error = QStringLiteral("--%1 must be %2-%3")
                                      .arg(flag)
                                      .arg(limit.minimum)
                                      .arg(limit.maximum);
            QTest::addRow("%s below", limit.name)
                << flag << QString::number(qint64(limit.minimum) - 1) << error;
            QTest::addRow("%s above", limit.name)
                << flag << QString::number(qint64(limit.maximum) + 1) << error;
            QTest::addRow("%s text", limit.name) << flag << QStringLiteral("many") << error;
        }
    }
    void integersOutOfRange()
    {
        QFETCH(QString, flag);
        QFETCH(QString, value);
        QFETCH(QString, error);
        QCOMPARE(parse({QStringLiteral("--") + flag, value}).error, error);
    }

    void limitsAtTheirBounds()
    {
        for (const HttpLimitOption &limit : httpLimitOptions()) {
            for (const int value : {limit.minimum, limit.maximum}) {
                const ServiceCommandLine command =
                    parse({QStringLiteral("--%1").arg(QLatin1String(limit.name)),
                           QString::number(value)});
                QVERIFY2(command.error.isEmpty(), qPrintable(command.error));
                QCOMPARE(command.options.limits.*limit.field, value);
            }
        }
    }

    void dsnFromTheEnvironment()
    {
        // The process's own environment is not consulted: only what is passed.
        qputenv("PAYOPS_DB_PASSWORD", "from-the-process");
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("PAYOPS_DB"),
                           QStringLiteral("mysql://env@envhost/envdb"));
        environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), QStringLiteral("from-env"));
        const ServiceCommandLine fromEnvironment = parse({}, m_secret, environment, false);
        QVERIFY2(fromEnvironment.error.isEmpty(), qPrintable(fromEnvironment.error));
        QCOMPARE(fromEnvironment.options.dsn.user, QStringLiteral("env"));
        QCOMPARE(fromEnvironment.options.dsn.host, QStringLiteral("envhost"));
        QCOMPARE(fromEnvironment.options.dsn.database, QStringLiteral("envdb"));
        QCOMPARE(fromEnvironment.options.dsn.password, QStringLiteral("from-env"));
        // --db wins over PAYOPS_DB; a password in the DSN wins over PAYOPS_DB_PASSWORD.
        const ServiceCommandLine given =
            parse({QStringLiteral("--db"), QStringLiteral("mysql://ops:inline@db/payops")},
                  m_secret, environment, false);
        QCOMPARE(given.options.dsn.host, QStringLiteral("db"));
        QCOMPARE(given.options.dsn.password, QStringLiteral("inline"));
        const ServiceCommandLine noPassword = parse({}, m_secret, QProcessEnvironment(), true);
        QVERIFY(noPassword.options.dsn.password.isEmpty());
        qunsetenv("PAYOPS_DB_PASSWORD");
    }

    // A password on the command line is readable by every user of the machine: warned of at
    // start, pointing to PAYOPS_DB_PASSWORD; the environment's is not.
    void aPasswordInDbIsWarnedOf()
    {
        const ServiceCommandLine inline_ =
            parse({QStringLiteral("--db"), QStringLiteral("mysql://ops:Zq9pw@db/payops")}, m_secret,
                  QProcessEnvironment(), false);
        QVERIFY2(inline_.error.isEmpty(), qPrintable(inline_.error));
        QVERIFY2(inline_.warning.contains(QStringLiteral("PAYOPS_DB_PASSWORD")),
                 qPrintable(inline_.warning));
        QVERIFY2(!inline_.warning.contains(QStringLiteral("Zq9pw")),
                 "the password must never be printed");

        QProcessEnvironment environment;
        environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), QStringLiteral("Zq9pw"));
        const ServiceCommandLine fromVariable =
            parse({QStringLiteral("--db"), QStringLiteral("mysql://ops@db/payops")}, m_secret,
                  environment, false);
        QCOMPARE(fromVariable.options.dsn.password, QStringLiteral("Zq9pw"));
        QCOMPARE(fromVariable.warning, QString());
        environment.insert(QStringLiteral("PAYOPS_DB"),
                           QStringLiteral("mysql://ops:Zq9pw@db/payops"));
        QCOMPARE(parse({}, m_secret, environment, false).warning, QString());
    }

    void noDsnOrABadOne()
    {
        QCOMPARE(parse({}, m_secret, QProcessEnvironment(), false).error,
                 QStringLiteral("no database given: pass --db DSN or set PAYOPS_DB"));
        const QString bad =
            parse({QStringLiteral("--db"), QStringLiteral("postgres://ops:Zq9pw@db/payops")},
                  m_secret, QProcessEnvironment(), false)
                .error;
        QVERIFY2(bad.startsWith(QStringLiteral("invalid DSN: ")), qPrintable(bad));
        QVERIFY2(!bad.contains(QStringLiteral("Zq9pw")), "the password must never be printed");
    }

    // The platforms' keys: none (their paths answer 404), all of a platform's, or an error.
    void platformKeys_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("error"); // empty: accepted
        QFile pem(QStringLiteral(PAYOPS_PLATFORM_VECTORS "/wechat.pub.pem"));
        QVERIFY(pem.open(QIODevice::ReadOnly));
        const QString key = writeFile(QStringLiteral("platform.pem"), pem.readAll());
        const QString apiV3 = writeFile(QStringLiteral("apiv3"), QByteArray(32, 'k') + "\r\n");
        const QString shortApiV3 = writeFile(QStringLiteral("apiv3-short"), QByteArray(31, 'k'));
        const QString notPem = writeFile(QStringLiteral("not.pem"), "-----BEGIN NOTHING-----\n");
        const QStringList wechat{
            QStringLiteral("--wechatpay-mchid"),          QStringLiteral("1900000109"),
            QStringLiteral("--wechatpay-appid"),          QStringLiteral("wxd678efh567hg6787"),
            QStringLiteral("--wechatpay-apiv3-key-file"), apiV3,
            QStringLiteral("--wechatpay-platform-key"),   QStringLiteral("S1=") + key,
            QStringLiteral("--wechatpay-platform-key"),   QStringLiteral("S2=") + key};
        const QStringList alipay{QStringLiteral("--alipay-app-id"), QStringLiteral("2021"),
                                 QStringLiteral("--alipay-public-key"), key};
        const auto replaced = [](QStringList list, const QString &from, const QString &to) {
            list[list.indexOf(from)] = to;
            return list;
        };
        QTest::newRow("both platforms") << wechat + alipay << QString();
        QTest::newRow("WeChat Pay in part")
            << wechat.mid(0, 4) << QStringLiteral("WeChat Pay needs all of");
        QTest::newRow("Alipay in part") << alipay.mid(0, 2) << QStringLiteral("Alipay needs both");
        QTest::newRow("an APIv3 key of 31 bytes")
            << replaced(wechat, apiV3, shortApiV3) << QStringLiteral("is 31 bytes; it must be 32");
        QTest::newRow("a platform key without its serial")
            << replaced(wechat, QStringLiteral("S1=") + key, key)
            << QStringLiteral("must be SERIAL=PEMFILE");
        QTest::newRow("one serial twice")
            << replaced(wechat, QStringLiteral("S2=") + key, QStringLiteral("S1=") + key)
            << QStringLiteral("gives serial S1 twice");
        QTest::newRow("not a PEM")
            << replaced(alipay, key, notPem) << QStringLiteral("is not an RSA public key");
        // Several Alipay apps, each with its key: --alipay-app alone, or beside the first.
        const QStringList secondApp{QStringLiteral("--alipay-app"), QStringLiteral("2022=") + key};
        QTest::newRow("two Alipay apps") << wechat + alipay + secondApp << QString();
        QTest::newRow("an Alipay app alone") << wechat + secondApp << QString();
        QTest::newRow("an Alipay app without its key")
            << wechat + QStringList{QStringLiteral("--alipay-app"), QStringLiteral("2022")}
            << QStringLiteral("--alipay-app must be ID=PEMFILE");
        QTest::newRow("one Alipay app twice")
            << wechat + alipay +
                   QStringList{QStringLiteral("--alipay-app"), QStringLiteral("2021=") + key}
            << QStringLiteral("Alipay app 2021 is given twice");
    }

    void platformKeys()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, error);
        const ServiceCommandLine command = parse(arguments);
        QVERIFY2(command.error.contains(error), qPrintable(command.error));
        if (!error.isEmpty())
            return;
        QVERIFY(command.error.isEmpty());
        QVERIFY(command.options.wechatPay.configured());
        QCOMPARE(command.options.wechatPay.apiV3Key, QByteArray(32, 'k'));
        QCOMPARE(command.options.wechatPay.platformKeys.size(), 2);
        QVERIFY(command.options.alipay.configured());
        QVERIFY(!parse({}).options.wechatPay.configured());
        QVERIFY(!parse({}).options.alipay.configured());
    }

    void helpAndUnknownOptions()
    {
        const ServiceCommandLine help = parse({QStringLiteral("--help")});
        QCOMPARE(help.action, ServiceCommandLine::Action::Help);
        for (const HttpLimitOption &limit : httpLimitOptions())
            QVERIFY(help.helpText.contains(QStringLiteral("--%1").arg(QLatin1String(limit.name))));
        QCOMPARE(parse({QStringLiteral("--version")}).action, ServiceCommandLine::Action::Version);
        const QString unknown = parse({QStringLiteral("--listne"), QStringLiteral("x:1")}).error;
        QVERIFY2(unknown.contains(QStringLiteral("listne")), qPrintable(unknown));
        QVERIFY(!unknown.contains(QLatin1Char('\n')));
    }

private:
    QString writeFile(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
            file.write(content) != content.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    // The command line with a DSN and the long secret unless told otherwise.
    ServiceCommandLine parse(const QStringList &arguments,
                             const QString &secretFile = QStringLiteral("<default>"),
                             const QProcessEnvironment &environment = QProcessEnvironment(),
                             bool withDb = true) const
    {
        QStringList all{QStringLiteral("payops-callbackd")};
        if (withDb)
            all << QStringLiteral("--db") << QString::fromLatin1(kDsn);
        const QString secret = secretFile == QLatin1String("<default>") ? m_secret : secretFile;
        if (!secret.isEmpty())
            all << QStringLiteral("--secret-file") << secret;
        all << arguments;
        const ServiceCommandLine command = parseServiceCommandLine(all, environment);
        if (command.error.contains(QLatin1Char('\n')))
            qWarning("not one line: %s", qPrintable(command.error));
        return command;
    }

    QTemporaryDir m_dir;
    QString m_secret;
    QString m_short;
};

PAYOPS_TEST_MAIN_CORE(TestServiceOptions)
#include "tst_serviceoptions.moc"
