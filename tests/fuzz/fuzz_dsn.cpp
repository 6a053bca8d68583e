// The DSN parser: what --db and PAYOPS_DB give every binary.
#include "fuzzinput.h"

#include "db/dsn.h"

using namespace payops;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(fuzz::bytes(data, size));
    const auto dsn = fuzz::parseExplained([&](QString *error) { return Dsn::parse(text, error); },
                                          "a refused DSN names its fault");
    if (!dsn)
        return 0;
    dsn->toDisplayString();
    // toString promises a form that parses back to the same DSN.
    const QString written = dsn->toString(true);
    const auto again = Dsn::parse(written, nullptr);
    if (!again)
        fuzz::broken("toString(true) parses again");
    if (again->user != dsn->user || again->password != dsn->password || again->host != dsn->host ||
        again->port != dsn->port || again->database != dsn->database ||
        again->socket != dsn->socket || again->sslCa != dsn->sslCa ||
        again->sslCert != dsn->sslCert || again->sslKey != dsn->sslKey ||
        again->connectTimeoutSeconds != dsn->connectTimeoutSeconds ||
        again->laterServers != dsn->laterServers)
        fuzz::broken("toString(true) parses back to the same DSN");
    return 0;
}
