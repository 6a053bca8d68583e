#include "serviceoptions.h"

#include "domain/callback/signature.h"

#include <QCommandLineParser>

#include <algorithm>

namespace payops {
namespace {

constexpr qsizetype kMinimumSecretBytes = 16;
constexpr qsizetype kMaximumInstanceLength = 64; // callback_instance.id

void addOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(
        ServiceCommandLine::tr("The payment-callback endpoint payops operates."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {QStringLiteral("db"), ServiceCommandLine::tr("Database DSN (default: PAYOPS_DB)."),
         QStringLiteral("dsn")},
        {QStringLiteral("listen"),
         ServiceCommandLine::tr("HOST:PORT to listen on (port 0: any free port)."),
         QStringLiteral("host:port"), QStringLiteral("127.0.0.1:8080")},
        {QStringLiteral("secret-file"),
         ServiceCommandLine::tr("File holding the HMAC signing secret."), QStringLiteral("file")},
        {QStringLiteral("handler"),
         ServiceCommandLine::tr("safe, or unsafe-demo (the incident's bug; sandbox only)."),
         QStringLiteral("name"), QStringLiteral("safe")},
        {QStringLiteral("instance"),
         ServiceCommandLine::tr("Instance name (default: HOSTNAME:PORT)."), QStringLiteral("name")},
        {QStringLiteral("threads"),
         ServiceCommandLine::tr("Database workers, each with its own connection."),
         QStringLiteral("n"), QStringLiteral("8")},
        {QStringLiteral("take-over"),
         ServiceCommandLine::tr("Start even if a live instance already has this "
                                "--instance name.")},
        {QStringLiteral("lock-timeout"),
         ServiceCommandLine::tr("Seconds to wait for a pay_no's lock before answering "
                                "503."),
         QStringLiteral("seconds"), QStringLiteral("5")},
        {QStringLiteral("record-batch-rows"),
         ServiceCommandLine::tr("RECORD_ONLY: at most this many callbacks share one commit."),
         QStringLiteral("n"), QStringLiteral("100")},
        {QStringLiteral("record-batch-ms"),
         ServiceCommandLine::tr("RECORD_ONLY: milliseconds a batch waits for more callbacks "
                                "before it commits."),
         QStringLiteral("ms"), QStringLiteral("0")},
        {QStringLiteral("commit-delay-ms"),
         ServiceCommandLine::tr(
             "unsafe-demo only: time between lock release and commit (widens the window)."),
         QStringLiteral("ms"), QStringLiteral("60")},
        {QStringLiteral("upstream"),
         ServiceCommandLine::tr("Gateway mode: pay nothing, forward each callback exactly once to "
                                "this URL (http or https), the team's own handler."),
         QStringLiteral("url")},
        {QStringLiteral("upstream-wechatpay"),
         ServiceCommandLine::tr("Gateway mode: forward WeChat Pay notifications to this URL "
                                "instead of --upstream."),
         QStringLiteral("url")},
        {QStringLiteral("upstream-alipay"),
         ServiceCommandLine::tr("Gateway mode: forward Alipay notifications to this URL instead "
                                "of --upstream."),
         QStringLiteral("url")},
        {QStringLiteral("upstream-ca"),
         ServiceCommandLine::tr("Verify the upstream's https certificate against this file "
                                "instead of the system's CA store."),
         QStringLiteral("file")},
        {QStringLiteral("upstream-timeout"),
         ServiceCommandLine::tr("Seconds the platform waits for the upstream's answer before it "
                                "is answered 504; the forward goes on."),
         QStringLiteral("seconds"), QStringLiteral("5")},
        {QStringLiteral("upstream-bound"),
         ServiceCommandLine::tr("Seconds a forward may take in all; then its connection is "
                                "closed and the payment may be forwarded again (default: twice "
                                "--upstream-timeout, at least 30)."),
         QStringLiteral("seconds")},
        {QStringLiteral("hold-by-retries"),
         ServiceCommandLine::tr("Gateway mode, RECORD_ONLY: record these formats' deliveries "
                                "and answer 503, so that the platform's retry after the hold is "
                                "forwarded."),
         QStringLiteral("formats")},
        {QStringLiteral("upstream-connections"),
         ServiceCommandLine::tr("Forwards in flight at most, each on a connection of its own."),
         QStringLiteral("n"), QStringLiteral("256")},
        {QStringLiteral("log-level"),
         ServiceCommandLine::tr("trace, debug, info, warn, error or off."),
         QStringLiteral("level")},
        {QStringLiteral("wechatpay-mchid"),
         ServiceCommandLine::tr("WeChat Pay merchant id: serves /callbacks/wechatpay with the "
                                "three options below."),
         QStringLiteral("id")},
        {QStringLiteral("wechatpay-appid"),
         ServiceCommandLine::tr("WeChat Pay app id the payments are for; once for each app of "
                                "the merchant."),
         QStringLiteral("id")},
        {QStringLiteral("wechatpay-apiv3-key-file"),
         ServiceCommandLine::tr("File holding the 32-byte WeChat Pay APIv3 key (mode 0600)."),
         QStringLiteral("file")},
        {QStringLiteral("wechatpay-platform-key"),
         ServiceCommandLine::tr("A WeChat Pay platform public key by its serial; repeat while "
                                "keys rotate."),
         QStringLiteral("serial=pemfile")},
        {QStringLiteral("alipay-app-id"),
         ServiceCommandLine::tr("Alipay app id: serves /callbacks/alipay with "
                                "--alipay-public-key."),
         QStringLiteral("id")},
        {QStringLiteral("alipay-public-key"),
         ServiceCommandLine::tr("PEM file holding Alipay's public key (mode 0600)."),
         QStringLiteral("pemfile")},
        {QStringLiteral("alipay-app"),
         ServiceCommandLine::tr("Another Alipay app of the merchant, with Alipay's public key "
                                "for it; repeat for each."),
         QStringLiteral("id=pemfile")},
    });
    const HttpLimits defaults;
    for (const HttpLimitOption &limit : httpLimitOptions())
        parser.addOption(
            {QString::fromLatin1(limit.name),
             QCoreApplication::translate("payops::ServiceCommandLine", limit.description),
             QStringLiteral("n"), QString::number(defaults.*limit.field)});
}

// Gateway mode's options; returns the first fault, or an empty text.
QString checkUpstream(const QCommandLineParser &parser, ServiceOptions &options)
{
    const bool gateway = parser.isSet(QStringLiteral("upstream")) ||
                         parser.isSet(QStringLiteral("upstream-wechatpay")) ||
                         parser.isSet(QStringLiteral("upstream-alipay"));
    if (!gateway) {
        for (const char *option : {"upstream-ca", "upstream-timeout", "upstream-bound",
                                   "upstream-connections", "hold-by-retries"}) {
            if (parser.isSet(QString::fromLatin1(option)))
                return ServiceCommandLine::tr("--%1 needs --upstream").arg(QLatin1String(option));
        }
        return QString();
    }
    if (parser.isSet(QStringLiteral("handler")))
        return ServiceCommandLine::tr("--handler and --upstream exclude each other: a gateway pays "
                                      "nothing itself, the upstream does");
    // Each URL is checked as --upstream is; the other settings are the same for all.
    for (const auto &[option, url] : {std::pair{"upstream", &options.upstream.url},
                                      std::pair{"upstream-wechatpay", &options.wechatPayUpstream},
                                      std::pair{"upstream-alipay", &options.alipayUpstream}}) {
        const QString name = QString::fromLatin1(option);
        if (!parser.isSet(name))
            continue;
        UpstreamOptions checked;
        const QString wrong = checkUpstreamOptions(
            parser.value(name), parser.value(QStringLiteral("upstream-ca")),
            parser.value(QStringLiteral("upstream-timeout")), &checked, QLatin1String("--") + name);
        if (!wrong.isEmpty())
            return wrong;
        options.upstream.caFile = checked.caFile;
        options.upstream.timeoutSeconds = checked.timeoutSeconds;
        *url = checked.url;
    }
    bool ok = true;
    // By default a forward may take twice what the platform waits, and half a minute at least.
    const int bound = parser.isSet(QStringLiteral("upstream-bound"))
                          ? parser.value(QStringLiteral("upstream-bound")).toInt(&ok)
                          : std::max(30, 2 * options.upstream.timeoutSeconds);
    // Longer than the platform waits: the platform is answered before the forward may end.
    if (!ok || bound <= options.upstream.timeoutSeconds || bound > 600)
        return ServiceCommandLine::tr("--upstream-bound must be more than --upstream-timeout "
                                      "(%1) and at most 600 seconds")
            .arg(options.upstream.timeoutSeconds);
    options.upstream.boundSeconds = bound;
    const int connections = parser.value(QStringLiteral("upstream-connections")).toInt(&ok);
    if (!ok || connections < 1 || connections > 4096)
        return ServiceCommandLine::tr("--upstream-connections must be 1-4096");
    options.upstream.connections = connections;
    for (const QString &name : parser.values(QStringLiteral("hold-by-retries"))
                                   .join(u',')
                                   .split(u',', Qt::SkipEmptyParts)) {
        const QByteArray wire = name.trimmed().toLatin1();
        const auto format = wireFormatFromName(wire == "pay" ? QByteArray("payops") : wire);
        if (!format)
            return ServiceCommandLine::tr("--hold-by-retries takes wechatpay, alipay or pay, not "
                                          "'%1'")
                .arg(name);
        options.holdByRetries.append(*format);
    }
    return QString();
}

// A platform's public key from a PEM file only its owner may change.
QString readPublicKey(const QString &path, std::optional<RsaPublicKey> *key)
{
    QByteArray pem;
    QString error = readPrivateFile(path, ServiceCommandLine::tr("the key file"), &pem);
    if (!error.isEmpty())
        return error;
    *key = RsaPublicKey::fromPem(pem, &error);
    return *key ? QString()
                : ServiceCommandLine::tr("%1 is not an RSA public key: %2").arg(path, error);
}

// The WeChat Pay options: none (the path answers 404), or all of them.
QString readWechatPay(const QCommandLineParser &parser, WechatPayKeys &keys)
{
    const QStringList platformKeys = parser.values(QStringLiteral("wechatpay-platform-key"));
    const QString keyFile = parser.value(QStringLiteral("wechatpay-apiv3-key-file"));
    keys.mchid = parser.value(QStringLiteral("wechatpay-mchid")).toUtf8();
    for (const QString &appid : parser.values(QStringLiteral("wechatpay-appid"))) {
        if (!appid.isEmpty() && !keys.appids.contains(appid.toUtf8()))
            keys.appids << appid.toUtf8();
    }
    const int given = int(!keys.mchid.isEmpty()) + int(!keys.appids.isEmpty()) +
                      int(!keyFile.isEmpty()) + int(!platformKeys.isEmpty());
    if (given == 0)
        return {};
    if (given < 4)
        return ServiceCommandLine::tr(
            "WeChat Pay needs all of --wechatpay-mchid, --wechatpay-appid, "
            "--wechatpay-apiv3-key-file and --wechatpay-platform-key");
    QString error =
        readPrivateFile(keyFile, ServiceCommandLine::tr("the APIv3 key file"), &keys.apiV3Key);
    if (!error.isEmpty())
        return error;
    if (keys.apiV3Key.endsWith('\n'))
        keys.apiV3Key.chop(keys.apiV3Key.endsWith("\r\n") ? 2 : 1);
    if (keys.apiV3Key.size() != 32)
        return ServiceCommandLine::tr("the APIv3 key in %1 is %2 bytes; it must be 32")
            .arg(keyFile, QString::number(keys.apiV3Key.size()));
    for (const QString &platformKey : platformKeys) {
        const qsizetype equals = platformKey.indexOf(QLatin1Char('='));
        const QByteArray serial = platformKey.left(equals).toUtf8();
        if (equals <= 0 || equals == platformKey.size() - 1)
            return ServiceCommandLine::tr(
                       "--wechatpay-platform-key must be SERIAL=PEMFILE, not '%1'")
                .arg(platformKey);
        if (keys.platformKeys.contains(serial))
            return ServiceCommandLine::tr("--wechatpay-platform-key gives serial %1 twice")
                .arg(QString::fromUtf8(serial));
        std::optional<RsaPublicKey> key;
        error = readPublicKey(platformKey.mid(equals + 1), &key);
        if (!error.isEmpty())
            return error;
        keys.platformKeys.insert(serial, *key);
    }
    return {};
}

// The Alipay options: none (the path answers 404), or an app with its key given by both
// --alipay-app-id and --alipay-public-key, and each further app by --alipay-app ID=PEMFILE.
QString readAlipay(const QCommandLineParser &parser, AlipayKeys &keys)
{
    const QString appId = parser.value(QStringLiteral("alipay-app-id"));
    const QString keyFile = parser.value(QStringLiteral("alipay-public-key"));
    if (appId.isEmpty() != keyFile.isEmpty())
        return ServiceCommandLine::tr("Alipay needs both --alipay-app-id and --alipay-public-key");
    QStringList apps = parser.values(QStringLiteral("alipay-app"));
    if (!appId.isEmpty())
        apps.prepend(appId + QLatin1Char('=') + keyFile);
    for (const QString &app : std::as_const(apps)) {
        const qsizetype equals = app.indexOf(QLatin1Char('='));
        const QByteArray id = app.left(equals).toUtf8();
        if (equals <= 0 || equals == app.size() - 1)
            return ServiceCommandLine::tr("--alipay-app must be ID=PEMFILE, not '%1'").arg(app);
        if (keys.apps.contains(id))
            return ServiceCommandLine::tr("Alipay app %1 is given twice")
                .arg(QString::fromUtf8(id));
        std::optional<RsaPublicKey> key;
        const QString error = readPublicKey(app.mid(equals + 1), &key);
        if (!error.isEmpty())
            return error;
        keys.apps.insert(id, *key);
    }
    return {};
}

// Every check after the parse; returns the first fault, or an empty text.
QString check(const QCommandLineParser &parser, const QProcessEnvironment &environment,
              ServiceOptions &options)
{
    QString error;
    const auto dsn =
        Dsn::fromOptionOrEnvironment(parser.value(QStringLiteral("db")), environment, &error);
    if (!dsn)
        return error;
    options.dsn = *dsn;

    const QString listen = parser.value(QStringLiteral("listen"));
    const qsizetype colon = listen.lastIndexOf(QLatin1Char(':'));
    bool portOk = false;
    options.port = colon > 0 ? listen.mid(colon + 1).toInt(&portOk) : -1;
    options.host = listen.left(colon);
    // An IPv6 address is written in brackets ([::1]:8080), as in a URL; a bare one is ambiguous.
    const bool bracketed =
        options.host.startsWith(QLatin1Char('[')) && options.host.endsWith(QLatin1Char(']'));
    if (bracketed)
        options.host = options.host.mid(1, options.host.size() - 2);
    const bool hostOk = !options.host.isEmpty() && !options.host.contains(QLatin1Char('[')) &&
                        !options.host.contains(QLatin1Char(']')) &&
                        (bracketed || !options.host.contains(QLatin1Char(':')));
    if (!portOk || options.port < 0 || options.port > 65535 || !hostOk)
        return ServiceCommandLine::tr("--listen must be HOST:PORT, not '%1'").arg(listen);

    const QString secretPath = parser.value(QStringLiteral("secret-file"));
    error = readSecretFile(secretPath, &options.secret);
    if (!error.isEmpty())
        return error;
    if (options.secret.size() < kMinimumSecretBytes)
        return ServiceCommandLine::tr("the secret in %1 is shorter than %2 bytes")
            .arg(secretPath, QString::number(kMinimumSecretBytes));

    error = checkUpstream(parser, options);
    if (!error.isEmpty())
        return error;
    options.handler = parser.value(QStringLiteral("handler"));
    if (options.handler != QLatin1String("safe") && options.handler != QLatin1String("unsafe-demo"))
        return ServiceCommandLine::tr("--handler must be safe or unsafe-demo");
    if (options.gateway())
        options.handler = QStringLiteral("gateway");
    options.instance = parser.value(QStringLiteral("instance"));
    if (options.instance.size() > kMaximumInstanceLength)
        return ServiceCommandLine::tr("--instance is longer than %1 characters")
            .arg(kMaximumInstanceLength);

    const auto inRange = [&parser](const char *name, int minimum, int maximum, int *target) {
        bool ok = false;
        *target = parser.value(QLatin1String(name)).toInt(&ok);
        return ok && *target >= minimum && *target <= maximum;
    };
    if (!inRange("threads", 1, 256, &options.threads))
        return ServiceCommandLine::tr("--threads must be 1-256");
    if (!inRange("lock-timeout", 0, 600, &options.lockTimeoutSeconds))
        return ServiceCommandLine::tr("--lock-timeout must be 0-600 seconds");
    if (!inRange("record-batch-rows", 1, 1000, &options.recordBatchRows))
        return ServiceCommandLine::tr("--record-batch-rows must be 1-1000");
    if (!inRange("record-batch-ms", 0, 1000, &options.recordBatchMs))
        return ServiceCommandLine::tr("--record-batch-ms must be 0-1000");
    if (!inRange("commit-delay-ms", 0, 60000, &options.unsafeCommitDelayMs))
        return ServiceCommandLine::tr("--commit-delay-ms must be 0-60000");
    for (const HttpLimitOption &limit : httpLimitOptions()) {
        if (!inRange(limit.name, limit.minimum, limit.maximum, &(options.limits.*limit.field)))
            return ServiceCommandLine::tr("--%1 must be %2-%3")
                .arg(QLatin1String(limit.name), QString::number(limit.minimum),
                     QString::number(limit.maximum));
    }
    if (!parser.isSet(QStringLiteral("max-connections-per-ip")))
        options.limits.maxConnectionsPerIp = HttpLimits::perIpFor(options.limits.maxConnections);
    options.takeOver = parser.isSet(QStringLiteral("take-over"));
    error = readWechatPay(parser, options.wechatPay);
    if (!error.isEmpty())
        return error;
    error = readAlipay(parser, options.alipay);
    if (!error.isEmpty())
        return error;
    // A channel's own upstream without its keys would forward nothing: a mistake of the set-up.
    if (!options.wechatPayUpstream.isEmpty() && !options.wechatPay.configured())
        return ServiceCommandLine::tr("--upstream-wechatpay needs the WeChat Pay options "
                                      "(--wechatpay-mchid and the three after it)");
    if (!options.alipayUpstream.isEmpty() && !options.alipay.configured())
        return ServiceCommandLine::tr("--upstream-alipay needs --alipay-app-id and "
                                      "--alipay-public-key, or --alipay-app");
    // A gateway's configured channel without an upstream would refuse the platform for a day.
    if (options.gateway() && options.wechatPay.configured() &&
        options.upstreamUrlFor(WireFormat::WechatPay).isEmpty())
        return ServiceCommandLine::tr("WeChat Pay has no upstream: give --upstream or "
                                      "--upstream-wechatpay");
    if (options.gateway() && options.alipay.configured() &&
        options.upstreamUrlFor(WireFormat::Alipay).isEmpty())
        return ServiceCommandLine::tr("Alipay has no upstream: give --upstream or "
                                      "--upstream-alipay");
    return QString();
}

} // namespace

QString ServiceOptions::hostAndPort(const QString &host, int port)
{
    return (host.contains(QLatin1Char(':')) ? QStringLiteral("[%1]:%2") : QStringLiteral("%1:%2"))
        .arg(host, QString::number(port));
}

bool ServiceOptions::gateway() const
{
    return !upstream.url.isEmpty() || !wechatPayUpstream.isEmpty() || !alipayUpstream.isEmpty();
}

QString ServiceOptions::upstreamUrlFor(WireFormat format) const
{
    const QString &own = format == WireFormat::WechatPay ? wechatPayUpstream
                         : format == WireFormat::Alipay  ? alipayUpstream
                                                         : upstream.url;
    return own.isEmpty() ? upstream.url : own;
}

QString ServiceOptions::upstreamsText() const
{
    if (wechatPayUpstream.isEmpty() && alipayUpstream.isEmpty())
        return upstreamWithoutCredentials(upstream.url);
    QStringList each;
    for (const WireFormat format :
         {WireFormat::WechatPay, WireFormat::Alipay, WireFormat::Payops}) {
        const QString url = upstreamUrlFor(format);
        const bool served = format == WireFormat::WechatPay ? wechatPay.configured()
                            : format == WireFormat::Alipay  ? alipay.configured()
                                                            : true;
        if (!url.isEmpty() && served)
            each << QStringLiteral("%1 %2").arg(
                QLatin1String(format == WireFormat::Payops ? "pay" : wireFormatName(format)),
                upstreamWithoutCredentials(url));
    }
    return each.join(QStringLiteral("; "));
}

ServiceCommandLine parseServiceCommandLine(const QStringList &arguments,
                                           const QProcessEnvironment &environment)
{
    ServiceCommandLine command;
    QCommandLineParser parser;
    addOptions(parser);
    if (!parser.parse(arguments)) {
        command.error = parser.errorText();
        return command;
    }
    command.logLevel = parser.value(QStringLiteral("log-level"));
    if (parser.isSet(QStringLiteral("help"))) {
        command.action = ServiceCommandLine::Action::Help;
        command.helpText = parser.helpText();
        return command;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        command.action = ServiceCommandLine::Action::Version;
        return command;
    }
    command.error = check(parser, environment, command.options);
    command.warning = Dsn::commandLinePasswordWarning(parser.value(QStringLiteral("db")));
    return command;
}

} // namespace payops
