#pragma once

#include "db/dsn.h"
#include "domain/callback/alipay.h"
#include "domain/callback/channel.h"
#include "domain/callback/upstreamclient.h"
#include "domain/callback/wechatpay.h"
#include "httplimits.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace payops {

struct ServiceOptions
{
    Dsn dsn;
    QString host = QStringLiteral("127.0.0.1");
    int port = 8080; // 0: any free port
    QByteArray secret;
    QString handler = QStringLiteral("safe"); // or unsafe-demo
    QString instance;                         // default: <hostname>:<port>
    int threads = 8;                          // database workers, each with its own connection
    int lockTimeoutSeconds = 5;
    int unsafeCommitDelayMs = 60;
    // Record-only group commit: callbacks arriving within recordBatchMs share one transaction
    // of at most recordBatchRows rows (docs/decisions/0054-group-commit.md).
    int recordBatchRows = 100;
    int recordBatchMs = 0;
    bool takeOver = false; // start even if a live instance has this name
    // With a url: gateway mode, forwarding to the team's own handler; its timeouts, CA file and
    // connections hold for the channels' own upstreams too.
    UpstreamOptions upstream;
    // A channel's own handler, when it has one (--upstream-wechatpay, --upstream-alipay).
    QString wechatPayUpstream;
    QString alipayUpstream;
    // Gateway mode: the formats whose deliveries RECORD_ONLY records and answers 503, so that
    // the platform's own retry after the hold is what is forwarded, freshly signed.
    QList<WireFormat> holdByRetries;
    HttpLimits limits;
    WechatPayKeys wechatPay; // /callbacks/wechatpay answers 404 unless configured
    AlipayKeys alipay;       // /callbacks/alipay likewise

    // Gateway mode: some upstream is given.
    bool gateway() const;
    // Where a gateway forwards this format's deliveries: its channel's own upstream, else
    // --upstream; empty when neither is given (the format is not served then).
    QString upstreamUrlFor(WireFormat format) const;
    // Every upstream, as logs, /healthz and callback_instance show it (without credentials):
    // the URL alone when all formats share it, else "wechatpay URL; alipay URL; pay URL".
    QString upstreamsText() const;

    // HOST:PORT as --listen and a URL write it: an IPv6 host in brackets ([::1]:8080).
    static QString hostAndPort(const QString &host, int port);
};

// payops-callbackd's command line, read and checked before anything starts.
struct ServiceCommandLine
{
    Q_DECLARE_TR_FUNCTIONS(payops::ServiceCommandLine)

public:
    enum class Action { Run, Help, Version };
    Action action = Action::Run;
    ServiceOptions options;
    QString logLevel; // --log-level as given; empty leaves it to PAYOPS_LOG_LEVEL
    QString error;    // one line for stderr when the options cannot run; empty when they can
    QString warning;  // one line to log at start (a password in --db); empty when none
    QString helpText;
};

// Parses `arguments` (the program's name first, as QCoreApplication::arguments() has them),
// reads the secret file and the platforms' keys, and takes the DSN as every payops binary does
// (Dsn::fromOptionOrEnvironment) from `environment`. The first option that is wrong is the error.
ServiceCommandLine parseServiceCommandLine(const QStringList &arguments,
                                           const QProcessEnvironment &environment);

} // namespace payops
