#include "localinstances.h"

#include "db/dberror.h"
#include "db/dbworker.h"
#include "db/migrator.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>

#include <optional>

namespace payops::console {
namespace {

constexpr int kMaximumInstances = 16;
// How long the console's close waits for its children to finish their callbacks in flight.
constexpr int kCloseWaitMs = 3000;

QString stateDirectory()
{
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return QDir(base).filePath(QStringLiteral("payops/instances"));
}

// callbackd logs "[time] [level] message" on stderr; a user wants the message.
QString withoutLogPrefix(const QString &line)
{
    static const QRegularExpression prefix(QStringLiteral("^(\\[[^\\]]*\\]\\s*)+"));
    return QString(line).remove(prefix).trimmed();
}

} // namespace

struct LocalInstances::Child
{
    Instance info;
    QProcess *process = nullptr;
    QByteArray partial[2]; // stdout, stderr: the part of a line not yet ended
    QString lastError;     // the last line on stderr, which names why a start failed
    std::unique_ptr<QFile> log;
};

LocalInstances::LocalInstances(QObject *parent)
    : QObject(parent)
{
    const QString fromEnvironment =
        QProcessEnvironment::systemEnvironment().value(QStringLiteral("PAYOPS_CALLBACKD"));
    m_callbackdPath = !fromEnvironment.isEmpty()
                          ? fromEnvironment
                          : QDir(QCoreApplication::applicationDirPath())
                                .filePath(QStringLiteral("payops-callbackd"));
    m_secretFile = QDir(stateDirectory()).filePath(QStringLiteral("callback-secret"));
}

LocalInstances::~LocalInstances()
{
    terminateAll(kCloseWaitMs);
}

void LocalInstances::setCallbackdPath(const QString &path)
{
    m_callbackdPath = path;
}

QString LocalInstances::callbackdPath() const
{
    return m_callbackdPath;
}

QString LocalInstances::secretFilePath() const
{
    return m_secretFile;
}

QList<LocalInstances::Instance> LocalInstances::instances() const
{
    QList<Instance> list;
    for (const auto &child : m_children)
        list << child->info;
    return list;
}

QStringList LocalInstances::targets() const
{
    QStringList urls;
    for (const auto &child : m_children)
        if (child->info.running)
            urls << QStringLiteral("http://127.0.0.1:%1").arg(child->info.port);
    return urls;
}

bool LocalInstances::isBusy() const
{
    if (m_checking || m_pendingLaunch)
        return true;
    for (const auto &child : m_children)
        if (child->info.state == Instance::State::Starting ||
            child->info.state == Instance::State::Stopping)
            return true;
    return false;
}

QByteArray LocalInstances::secret() const
{
    if (m_secret.isEmpty()) {
        QFile file(m_secretFile);
        if (file.open(QIODevice::ReadOnly))
            m_secret = file.readAll().trimmed();
    }
    return m_secret;
}

bool LocalInstances::ensureSecretFile(QString *error)
{
    if (!secret().isEmpty())
        return true;
    if (!QDir().mkpath(QFileInfo(m_secretFile).absolutePath())) {
        *error = tr("cannot create the folder %1").arg(QFileInfo(m_secretFile).absolutePath());
        return false;
    }
    // 32 random bytes as hex: printable, so the file can be handed to payops storm as it is.
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->generate(bytes.begin(), bytes.end());
    const QByteArray text = bytes.toHex();
    QFile file(m_secretFile);
    // Readable by the user only, before the secret is in it.
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(text) != text.size()) {
        *error = tr("cannot write the secret file %1: %2").arg(m_secretFile, file.errorString());
        return false;
    }
    m_secret = text;
    return true;
}

void LocalInstances::start(const Dsn &dsn, const QString &handler, int count)
{
    if (handler != QLatin1String("safe") && handler != QLatin1String("unsafe-demo")) {
        Q_EMIT failed(tr("unknown handler '%1': it is safe or unsafe-demo").arg(handler));
        return;
    }
    if (count < 1 || count > kMaximumInstances) {
        Q_EMIT failed(tr("start 1 to %1 instances, not %2")
                          .arg(QString::number(kMaximumInstances), QString::number(count)));
        return;
    }
    if (!QFileInfo(m_callbackdPath).isExecutable()) {
        Q_EMIT failed(tr("payops-callbackd not found at %1; set PAYOPS_CALLBACKD to its path")
                          .arg(m_callbackdPath));
        return;
    }
    QString error;
    if (!ensureSecretFile(&error)) {
        Q_EMIT failed(error);
        return;
    }
    const int generation = ++m_generation; // an earlier start still checking is superseded
    m_checking = false;
    if (handler != QLatin1String("unsafe-demo")) {
        launch(dsn, handler, count);
        return;
    }
    // The unsafe handler pays out twice on purpose: ask the database first, so the refusal
    // names the database rather than arriving as N children dying one by one.
    m_checking = true;
    Q_EMIT changed();
    auto *worker = new db::DbWorker(dsn, this);
    worker->submit<bool>(
        QStringLiteral("sandbox"), [](const QSqlDatabase &db) { return db::isSandboxDatabase(db); },
        this,
        [this, worker, dsn, handler, count, generation](bool sandbox) {
            worker->deleteLater();
            if (generation != m_generation)
                return;
            m_checking = false;
            if (sandbox)
                launch(dsn, handler, count);
            else {
                Q_EMIT changed();
                Q_EMIT failed(tr("refusing the unsafe-demo handler: database '%1' is not marked as "
                                 "a sandbox. It pays "
                                 "out twice on purpose; run it only on a sandbox")
                                  .arg(dsn.database));
            }
        },
        [this, worker, generation](const db::Error &failure) {
            worker->deleteLater();
            if (generation != m_generation)
                return;
            m_checking = false;
            Q_EMIT changed();
            Q_EMIT failed(tr("cannot tell whether the database is a sandbox: %1")
                              .arg(db::userMessage(failure)));
        });
}

void LocalInstances::launch(const Dsn &dsn, const QString &handler, int count)
{
    m_dsn = dsn;
    m_pendingLaunch = PendingLaunch{dsn, handler, count};
    stopAll();
    launchWhenStopped();
}

void LocalInstances::launchWhenStopped()
{
    if (!m_pendingLaunch)
        return;
    for (const auto &child : m_children)
        if (child->process)
            return; // the rest when the last old child is gone: a name is free once its process
                    // ends
    const PendingLaunch launch = *m_pendingLaunch;
    m_pendingLaunch.reset();
    m_children.clear();
    for (int i = 1; i <= launch.count; ++i)
        launchOne(launch.dsn, launch.handler,
                  QStringLiteral("%1-%2").arg(launch.handler, QString::number(i)));
    Q_EMIT changed();
}

void LocalInstances::launchOne(const Dsn &dsn, const QString &handler, const QString &name)
{
    auto child = std::make_unique<Child>();
    Child *c = child.get();
    c->info.name = name;
    c->info.handler = handler;
    c->info.state = Instance::State::Starting;
    c->info.logPath = QDir(stateDirectory()).filePath(name + QStringLiteral(".log"));
    c->log = std::make_unique<QFile>(c->info.logPath);
    if (!c->log->open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
        c->log.reset(); // the log tab still shows the lines

    auto *process = new QProcess(this);
    c->process = process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    // Never on the command line, where every user of the machine can read it.
    if (!dsn.password.isEmpty())
        environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), dsn.password);
    process->setProcessEnvironment(environment);
    QStringList arguments{QStringLiteral("--db"),          dsn.toString(false),
                          QStringLiteral("--listen"),      QStringLiteral("127.0.0.1:0"),
                          QStringLiteral("--secret-file"), m_secretFile,
                          QStringLiteral("--instance"),    name,
                          QStringLiteral("--handler"),     handler};
    if (handler == QLatin1String("unsafe-demo"))
        arguments << QStringLiteral("--commit-delay-ms") << QString::number(m_unsafeCommitDelayMs);
    connect(process, &QProcess::readyReadStandardOutput, this, [this, c] { readLines(c, 0); });
    connect(process, &QProcess::readyReadStandardError, this, [this, c] { readLines(c, 1); });
    connect(process, &QProcess::errorOccurred, this, [this, c](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            c->info.state = Instance::State::Failed;
            Q_EMIT failed(tr("%1 did not start: %2").arg(c->info.name, c->process->errorString()));
            finishChild(c);
        }
    });
    connect(
        process, &QProcess::finished, this, [this, c](int exitCode, QProcess::ExitStatus status) {
            readLines(c, 0);
            readLines(c, 1);
            const bool wasStopping = c->info.state == Instance::State::Stopping;
            if (!wasStopping && (status != QProcess::NormalExit || exitCode != 0)) {
                c->info.state = Instance::State::Failed;
                const QString why =
                    c->lastError.isEmpty() ? tr("exit code %1").arg(exitCode) : c->lastError;
                Q_EMIT failed(c->info.port == 0 ? tr("%1 did not start: %2").arg(c->info.name, why)
                                                : tr("%1 stopped: %2").arg(c->info.name, why));
            } else {
                c->info.state = Instance::State::Stopped;
            }
            finishChild(c);
        });
    m_children.push_back(std::move(child));
    process->start(m_callbackdPath, arguments);
}

void LocalInstances::finishChild(Child *child)
{
    child->info.running = false;
    if (child->process) {
        child->process->disconnect(this);
        child->process->deleteLater();
        child->process = nullptr;
    }
    child->log.reset();
    Q_EMIT changed();
    launchWhenStopped();
}

void LocalInstances::readLines(Child *child, int channel)
{
    if (!child->process)
        return;
    child->process->setReadChannel(channel == 0 ? QProcess::StandardOutput
                                                : QProcess::StandardError);
    QByteArray &partial = child->partial[channel];
    partial += child->process->readAll();
    static const QRegularExpression listening(QStringLiteral("listening on [^ ]+:(\\d+)"));
    qsizetype end;
    while ((end = partial.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(partial.left(end)).trimmed();
        partial.remove(0, end + 1);
        if (line.isEmpty())
            continue;
        if (child->log) {
            child->log->write(line.toUtf8());
            child->log->write("\n");
            child->log->flush();
        }
        if (channel == 1)
            child->lastError = withoutLogPrefix(line);
        if (child->info.port == 0) {
            const QRegularExpressionMatch match = listening.match(line);
            if (match.hasMatch()) {
                child->info.port = match.captured(1).toInt();
                child->info.running = true;
                if (child->info.state == Instance::State::Starting)
                    child->info.state = Instance::State::Running;
                Q_EMIT changed();
            }
        }
        Q_EMIT logLine(child->info.name, line);
    }
}

void LocalInstances::stopAll()
{
    bool any = false;
    for (const auto &child : m_children) {
        if (child->process && child->info.state != Instance::State::Stopping) {
            // SIGTERM: callbackd finishes the callbacks in flight and marks itself stopped.
            child->info.state = Instance::State::Stopping;
            child->info.running = false;
            child->process->terminate();
            any = true;
        }
    }
    if (any)
        Q_EMIT changed();
}

void LocalInstances::restartAll(const QString &handler)
{
    const int count = int(m_children.size());
    if (count == 0) {
        Q_EMIT failed(tr("no instances to restart: start some first"));
        return;
    }
    start(m_dsn, handler, count);
}

void LocalInstances::terminateAll(int waitMs)
{
    m_pendingLaunch.reset();
    QDeadlineTimer deadline(waitMs);
    for (const auto &child : m_children)
        if (child->process) {
            child->process->disconnect(this);
            child->process->terminate();
        }
    for (const auto &child : m_children)
        if (child->process &&
            !child->process->waitForFinished(int(qMax<qint64>(0, deadline.remainingTime())))) {
            child->process->kill();
            child->process->waitForFinished(500);
        }
}

} // namespace payops::console
