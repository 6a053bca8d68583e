#include "frozenserver.h"

#include "db/connection.h"
#include "lab/localserver.h"

#include <QProcess>
#include <QStringList>

#include <csignal>
#include <stdexcept>
#include <sys/types.h>

namespace payops::test {

bool runsOnServer(const Dsn &dsn, const QString &pattern)
{
    db::Connection admin(dsn, QStringLiteral("t"));
    return db::scalar(admin.database(),
                      QStringLiteral("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB "
                                     "= ? AND INFO LIKE ?"),
                      {dsn.database, pattern})
               .toLongLong() > 0;
}

FrozenServer::FrozenServer()
    : m_pid(LocalServer(QStringLiteral(PAYOPS_TEST_SERVER_DIR)).status().pid)
{
    if (m_pid <= 0)
        throw std::runtime_error("the test server is not running");
    QProcess watchdog;
    watchdog.setProgram(QStringLiteral("/bin/sh"));
    watchdog.setArguments(
        {QStringLiteral("-c"), QStringLiteral("sleep 60; kill -CONT %1").arg(m_pid)});
    // No inherited output: ctest would wait for the watchdog to close it.
    watchdog.setStandardInputFile(QProcess::nullDevice());
    watchdog.setStandardOutputFile(QProcess::nullDevice());
    watchdog.setStandardErrorFile(QProcess::nullDevice());
    watchdog.startDetached();
    ::kill(pid_t(m_pid), SIGSTOP);
    m_frozen = true;
}

FrozenServer::~FrozenServer()
{
    thaw();
}

void FrozenServer::thaw()
{
    if (m_frozen)
        ::kill(pid_t(m_pid), SIGCONT);
    m_frozen = false;
}

} // namespace payops::test
