#include "sandboxlauncher.h"

#include "db/dberror.h"
#include "lab/sandbox.h"

#include <QThread>

#include <memory>

namespace payops::console {

SandboxLauncher::SandboxLauncher(QObject *parent)
    : QObject(parent)
{
}

SandboxLauncher::~SandboxLauncher()
{
    // The server start cannot be interrupted half-way; wait for it rather than leave a
    // thread running into a deleted object.
    if (m_thread)
        m_thread->wait();
}

void SandboxLauncher::start(const QString &directory)
{
    if (m_thread)
        return;
    struct Outcome
    {
        Dsn dsn;
        QString error;
    };
    auto outcome = std::make_shared<Outcome>();
    QPointer<SandboxLauncher> self(this);
    const QString dir = directory.isEmpty() ? LocalServer::defaultDirectory() : directory;
    m_thread = QThread::create([outcome, self, dir] {
        try {
            LocalServer server(dir);
            const auto report = [self](const QString &text) {
                if (self)
                    QMetaObject::invokeMethod(self.data(), [self, text] {
                        if (self)
                            Q_EMIT self->progress(text);
                    }, Qt::QueuedConnection);
            };
            outcome->dsn = startSandbox(server, 0, true, report).dsn;
        } catch (const std::exception &error) {
            outcome->error = db::userMessage(error);
        }
    });
    m_thread->setObjectName(QStringLiteral("sandbox-start"));
    connect(m_thread, &QThread::finished, this, [this, outcome] {
        m_thread->deleteLater();
        m_thread = nullptr;
        if (outcome->error.isEmpty())
            Q_EMIT started(outcome->dsn);
        else
            Q_EMIT failed(outcome->error);
    });
    m_thread->start();
}

} // namespace payops::console
