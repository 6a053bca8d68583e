#pragma once

#include "db/dsn.h"
#include "demostatements.h"
#include "localserver.h"
#include "sandboxkeys.h"

#include <QStringList>

namespace payops {

// The local sandbox: a LocalServer with a database named payops, migrated to level legacy so
// that the incident can be reproduced on it, marked as a sandbox, and seeded with demo data
// the first time. Starting it again is harmless and returns the same DSN. It also makes the
// test keys of the platforms' formats once (sandboxkeys.h) and, on demo data, the demo
// statements (demostatements.h).
struct SandboxStartResult
{
    Dsn dsn;
    QStringList migrationsApplied;
    bool seeded = false;
    SandboxKeys keys;
    DemoStatements demoStatements; // empty paths without demo data
};

SandboxStartResult startSandbox(LocalServer &server, int tcpPort = 0, bool seedDemoData = true,
                                const LocalServer::Progress &progress = {});

inline QString sandboxDatabaseName()
{
    return QStringLiteral("payops");
}

// Loads sql/demo/seed.sql (compiled in) into a migrated, empty database. Throws db::Error.
void seedDemoData(const Dsn &dsn);

} // namespace payops
