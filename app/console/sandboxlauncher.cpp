#include "sandboxlauncher.h"

#include "db/dberror.h"
#include "db/dbworker.h"
#include "lab/sandbox.h"
#include "worker.h"

#include <QPointer>

namespace payops::console {

SandboxLauncher::SandboxLauncher(QObject *parent)
    : QObject(parent)
{
}

SandboxLauncher::~SandboxLauncher() = default;

void SandboxLauncher::start(const QString &directory)
{
    if (m_running)
        return;
    m_running = true;
    if (!m_worker)
        m_worker =
            std::make_unique<db::DbWorker>(Dsn()); // the job makes the DSN: it starts the server
    const QPointer<SandboxLauncher> self(this);
    const QString dir = directory.isEmpty() ? LocalServer::defaultDirectory() : directory;
    m_worker->submitStandalone<Dsn>(
        QStringLiteral("start"),
        [self, dir](const db::StandaloneContext &) {
            LocalServer server(dir);
            const auto report = [self](const QString &text) {
                Worker::postTo(
                    self, [text](SandboxLauncher *launcher) { Q_EMIT launcher->progress(text); });
            };
            return startSandbox(server, 0, true, report).dsn;
        },
        this,
        [this](const Dsn &dsn) {
            m_running = false;
            Q_EMIT started(dsn);
        },
        [this](const db::Error &error) {
            m_running = false;
            Q_EMIT failed(db::userMessage(error));
        });
}

} // namespace payops::console
