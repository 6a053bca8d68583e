#pragma once

#include "db/dsn.h"

#include <QString>

namespace payops::test {

// True while a session on dsn's database runs a statement LIKE `pattern`: the moment to
// freeze the server with a query hanging in it.
bool runsOnServer(const Dsn &dsn, const QString &pattern);

// Stops the test run's MariaDB server with SIGSTOP for as long as this object lives: every
// statement and every connection attempt hangs, none fails, as with a server that froze.
// The server runs again when the object goes, also when a test fails half-way; a watchdog
// process resumes it after a minute should the test process itself die meanwhile.
class FrozenServer final
{
public:
    FrozenServer();
    ~FrozenServer();
    Q_DISABLE_COPY_MOVE(FrozenServer)

    // Resumes the server now.
    void thaw();
    qint64 pid() const { return m_pid; }

private:
    qint64 m_pid = 0;
    bool m_frozen = false;
};

} // namespace payops::test
