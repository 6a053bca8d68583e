#include "localserver.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QThread>

#include <csignal>
#include <memory>
#include <pwd.h>
#include <stdexcept>
#include <sys/types.h>
#include <unistd.h>

namespace payops {
namespace {

// mariadbd lives in /usr/sbin, which is not on an ordinary user's PATH on Debian.
QString findProgram(const QString &name)
{
    QString found = QStandardPaths::findExecutable(name);
    if (found.isEmpty())
        found = QStandardPaths::findExecutable(name, {QStringLiteral("/usr/sbin"),
                                                      QStringLiteral("/usr/local/sbin"),
                                                      QStringLiteral("/usr/bin")});
    if (found.isEmpty())
        throw std::runtime_error(LocalServer::tr("%1 not found; install the mariadb-server package "
                                                 "(script/bootstrap does)")
                                     .arg(name)
                                     .toStdString());
    return found;
}

QByteArray procFile(qint64 pid, const char *name)
{
    QFile file(QStringLiteral("/proc/%1/%2").arg(QString::number(pid), QLatin1String(name)));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// True when pid is a live (not zombie) mariadbd serving dataDir. A pid file can outlive its
// server and the number can be reused by an unrelated process.
bool isOurServer(qint64 pid, const QString &dataDir)
{
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0)
        return false;
    const QByteArray stat = procFile(pid, "stat");
    const qsizetype close = stat.lastIndexOf(')');
    if (close != -1 && stat.mid(close + 2, 1) == "Z")
        return false;
    const QByteArray cmdline = procFile(pid, "cmdline");
    return cmdline.contains("mariadbd") || cmdline.contains("mysqld")
               ? cmdline.contains(dataDir.toUtf8())
               : false;
}

// The file's text without surrounding white space; empty when it cannot be read.
QString readTrimmed(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromLatin1(file.readAll().trimmed())
                                          : QString();
}

qint64 readPid(const QString &path)
{
    return readTrimmed(path).toLongLong();
}

QString tail(const QString &path, int lines)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QStringList all =
        QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    return all.mid(qMax(0, all.size() - lines)).join(QLatin1Char('\n'));
}

bool runningAsRoot()
{
    return ::geteuid() == 0;
}

constexpr QFileDevice::Permissions kOwnerOnly =
    QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner;

// 'text' as an SQL string literal; only for names this class makes or reads from passwd,
// which hold no quote, and for the hex password.
QString sqlText(const QString &text)
{
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('\''), QStringLiteral("''"));
    return QLatin1Char('\'') + escaped + QLatin1Char('\'');
}

} // namespace

LocalServer::LocalServer(const QString &directory)
    : m_dir(QDir(directory).absolutePath())
{
}

QString LocalServer::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/sandbox");
}

QString LocalServer::socketPath() const
{
    return m_dir + QStringLiteral("/mysqld.sock");
}
QString LocalServer::errorLogPath() const
{
    return m_dir + QStringLiteral("/mysqld.err");
}
QString LocalServer::pidFilePath() const
{
    return m_dir + QStringLiteral("/mysqld.pid");
}
QString LocalServer::tmpDir() const
{
    return m_dir + QStringLiteral("/tmp");
}
QString LocalServer::filesDir() const
{
    return m_dir + QStringLiteral("/files");
}
QString LocalServer::tcpPasswordPath() const
{
    return m_dir + QStringLiteral("/tcp-root-password");
}

QString LocalServer::osUserName()
{
    const passwd *entry = ::getpwuid(::geteuid());
    if (!entry)
        throw std::runtime_error(
            LocalServer::tr("user id %1 has no name in the password database; the local "
                            "server's administrator is named after it")
                .arg(::geteuid())
                .toStdString());
    return QString::fromLocal8Bit(entry->pw_name);
}

Dsn LocalServer::rootDsn(const QString &database) const
{
    Dsn dsn;
    dsn.user = osUserName();
    dsn.host = QStringLiteral("localhost");
    dsn.socket = socketPath();
    dsn.database = database;
    return dsn;
}

Dsn LocalServer::tcpRootDsn(int port, const QString &database) const
{
    Dsn dsn;
    dsn.user = QStringLiteral("root");
    dsn.host = QStringLiteral("127.0.0.1");
    dsn.port = port;
    dsn.database = database;
    dsn.password = readTrimmed(tcpPasswordPath());
    return dsn;
}

QString LocalServer::tcpPassword() const
{
    if (const QString existing = readTrimmed(tcpPasswordPath()); !existing.isEmpty())
        return existing;
    QFile file(tcpPasswordPath());
    const QByteArray password = QByteArray::number(QRandomGenerator::system()->generate64(), 16) +
                                QByteArray::number(QRandomGenerator::system()->generate64(), 16);
    // Created 0600 in one step, never readable by others for a moment.
    if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly,
                   QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(password + '\n') != password.size() + 1 || !file.flush())
        throw std::runtime_error(LocalServer::tr("cannot write %1: %2")
                                     .arg(tcpPasswordPath(), file.errorString())
                                     .toStdString());
    return QString::fromLatin1(password);
}

LocalServer::Status LocalServer::status() const
{
    Status status;
    const qint64 pid = readPid(pidFilePath());
    if (isOurServer(pid, m_dir + QStringLiteral("/data"))) {
        status.state = State::Running;
        status.pid = pid;
        for (const QByteArray &argument : procFile(pid, "cmdline").split('\0'))
            if (argument.startsWith("--port="))
                status.tcpPort = argument.mid(7).toInt();
        return status;
    }
    const bool pidFile = QFileInfo::exists(pidFilePath());
    const bool socketFile = QFileInfo::exists(socketPath());
    if (pidFile || socketFile)
        status.state = State::Stale;
    if (pidFile && socketFile)
        status.detail = tr("pid file (pid %1 is not running) and socket file left by a server that "
                           "ended abnormally")
                            .arg(pid);
    else if (pidFile)
        status.detail =
            tr("pid file (pid %1 is not running) left by a server that ended abnormally").arg(pid);
    else if (socketFile)
        status.detail = tr("socket file left by a server that ended abnormally");
    return status;
}

void LocalServer::removeStaleFiles() const
{
    QFile::remove(pidFilePath());
    QFile::remove(socketPath());
    QFile::remove(socketPath() + QStringLiteral(".lock"));
}

void LocalServer::initializeDataDirectory(const Progress &progress)
{
    const QString dataDir = m_dir + QStringLiteral("/data");
    if (QFileInfo::exists(dataDir + QStringLiteral("/mysql")))
        return;
    if (progress)
        progress(LocalServer::tr("creating a new MariaDB data directory in %1").arg(dataDir));
    QDir(dataDir).removeRecursively(); // a half-made directory from an interrupted first start
    QDir().mkpath(dataDir);

    QStringList args{QStringLiteral("--no-defaults"), QStringLiteral("--datadir=") + dataDir,
                     QStringLiteral("--tmpdir=") + tmpDir(),
                     // root@localhost for the OS root only, and an account named after the
                     // user who starts it, both by unix socket; no account without password.
                     QStringLiteral("--auth-root-authentication-method=socket"),
                     QStringLiteral("--auth-root-socket-user=") + osUserName(),
                     QStringLiteral("--skip-test-db")};
    if (!serverUser().isEmpty())
        args << QStringLiteral("--user=") + serverUser();
    QProcess install;
    install.setProcessChannelMode(QProcess::MergedChannels);
    install.start(findProgram(QStringLiteral("mariadb-install-db")), args);
    if (!install.waitForFinished(180000) || install.exitStatus() != QProcess::NormalExit ||
        install.exitCode() != 0) {
        const QString output = QString::fromUtf8(install.readAll()).trimmed();
        QDir(dataDir).removeRecursively();
        throw std::runtime_error(LocalServer::tr("mariadb-install-db failed in %1:\n%2")
                                     .arg(dataDir, output.right(2000))
                                     .toStdString());
    }
}

void LocalServer::waitUntilReady(qint64 pid, int timeoutSeconds) const
{
    QDeadlineTimer deadline(timeoutSeconds * 1000);
    while (!deadline.hasExpired()) {
        if (!isOurServer(pid, m_dir + QStringLiteral("/data")))
            throw std::runtime_error(
                LocalServer::tr("the MariaDB server in %1 exited during start-up:\n%2")
                    .arg(m_dir, tail(errorLogPath(), 15))
                    .toStdString());
        if (QFileInfo::exists(socketPath())) {
            try {
                connectAsAdmin(QStringLiteral("probe"));
                return;
            } catch (const db::Error &) {
                // not accepting connections yet
            }
        }
        QThread::msleep(100);
    }
    throw std::runtime_error(
        LocalServer::tr("the MariaDB server in %1 did not accept connections within %2 s:\n%3")
            .arg(m_dir, QString::number(timeoutSeconds), tail(errorLogPath(), 15))
            .toStdString());
}

std::unique_ptr<db::Connection> LocalServer::connectAsAdmin(const QString &purpose) const
{
    try {
        return std::make_unique<db::Connection>(rootDsn(QString()), purpose);
    } catch (const db::Error &) {
        // A directory an older payops made: root without a password, and no account for a
        // user other than root until secureAccounts() makes it.
        Dsn legacy = rootDsn(QString());
        legacy.user = QStringLiteral("root");
        return std::make_unique<db::Connection>(legacy, purpose);
    }
}

void LocalServer::secureAccounts() const
{
    const QString password = tcpPassword();
    const auto admin = connectAsAdmin(QStringLiteral("secure-accounts"));
    const QSqlDatabase db = admin->database();
    // Each server's accounts are its own: a replica must not take its primary's password for
    // root over TCP from the binary log, nor a Galera node another node's.
    db::execDirect(db, QStringLiteral("SET SESSION sql_log_bin = 0"));
    QSqlQuery wsrep = db::exec(db, QStringLiteral("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'"));
    if (wsrep.next() && wsrep.value(1).toString() == QLatin1String("ON"))
        db::execDirect(db, QStringLiteral("SET SESSION wsrep_on = OFF"));
    const QString user = osUserName();
    if (user != QLatin1String("root")) {
        db::execDirect(
            db,
            QStringLiteral("CREATE USER IF NOT EXISTS %1@'localhost' IDENTIFIED VIA unix_socket")
                .arg(sqlText(user)));
        db::execDirect(
            db, QStringLiteral("GRANT ALL PRIVILEGES ON *.* TO %1@'localhost' WITH GRANT OPTION")
                    .arg(sqlText(user)));
    }
    db::execDirect(db, QStringLiteral("ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket"));
    // An older install also made root@<host name> and root@'::1' without a password.
    QSqlQuery others =
        db::exec(db, QStringLiteral("SELECT host FROM mysql.user WHERE user = 'root' "
                                    "AND host NOT IN ('localhost', '127.0.0.1')"));
    QStringList hosts;
    while (others.next())
        hosts << others.value(0).toString();
    for (const QString &host : hosts)
        db::execDirect(db, QStringLiteral("DROP USER 'root'@%1").arg(sqlText(host)));
    db::execDirect(db, QStringLiteral("CREATE OR REPLACE USER 'root'@'127.0.0.1' IDENTIFIED BY %1")
                           .arg(sqlText(password)));
    db::execDirect(
        db, QStringLiteral("GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"));
}

void LocalServer::start(int tcpPort, const Progress &progress, const QStringList &serverOptions)
{
    if (!QDir().mkpath(m_dir))
        throw std::runtime_error(LocalServer::tr("cannot create %1").arg(m_dir).toStdString());
    // Also for a directory an older payops made 0755: other users must not reach the socket.
    if (!QFile::setPermissions(m_dir, kOwnerOnly))
        throw std::runtime_error(LocalServer::tr("cannot make %1 private to its owner (mode 0700)")
                                     .arg(m_dir)
                                     .toStdString());
    // Two starts at once must not both launch a server on the same data directory.
    QLockFile startLock(m_dir + QStringLiteral("/start.lock"));
    startLock.setStaleLockTime(0);
    if (!startLock.tryLock(120000))
        throw std::runtime_error(LocalServer::tr("another start of the server in %1 is in progress")
                                     .arg(m_dir)
                                     .toStdString());

    const Status current = status();
    if (current.state == State::Running)
        return;
    if (current.state == State::Stale) {
        if (progress)
            progress(LocalServer::tr("recovering: removing the %1").arg(current.detail));
        removeStaleFiles();
    }
    // A unix socket path longer than the kernel's limit fails obscurely inside mariadbd.
    if (socketPath().toLocal8Bit().size() > 100)
        throw std::runtime_error(
            LocalServer::tr("the directory %1 is too long for a unix socket path; "
                            "choose a shorter one with --dir")
                .arg(m_dir)
                .toStdString());
    QDir().mkpath(tmpDir());
    QDir().mkpath(filesDir());
    giveDirectoryToServerUser();
    initializeDataDirectory(progress);

    QStringList args{
        QStringLiteral("--no-defaults"),
        QStringLiteral("--datadir=") + m_dir + QStringLiteral("/data"),
        QStringLiteral("--tmpdir=") + tmpDir(), QStringLiteral("--socket=") + socketPath(),
        QStringLiteral("--pid-file=") + pidFilePath(),
        QStringLiteral("--log-error=") + errorLogPath(),
        // INTO OUTFILE and LOAD DATA INFILE write and read with the rights of the
        // user who started the server: only inside its own directory.
        QStringLiteral("--secure-file-priv=") + filesDir(),
        QStringLiteral("--character-set-server=utf8mb4"),
        QStringLiteral("--collation-server=utf8mb4_unicode_ci"),
        QStringLiteral("--default-time-zone=+00:00"), QStringLiteral("--skip-name-resolve"),
        QStringLiteral("--max-connections=400"), QStringLiteral("--innodb-buffer-pool-size=512M"),
        QStringLiteral("--innodb-log-file-size=256M"),
        // A sandbox and a test server trade the last second of durability on an
        // OS crash for speed; a server crash still loses nothing.
        QStringLiteral("--innodb-flush-log-at-trx-commit=2"),
        QStringLiteral("--max-allowed-packet=64M")};
    if (tcpPort > 0)
        args << QStringLiteral("--port=%1").arg(tcpPort)
             << QStringLiteral("--bind-address=127.0.0.1");
    else
        args << QStringLiteral("--skip-networking");
    if (!serverUser().isEmpty())
        args << QStringLiteral("--user=") + serverUser();
    args << serverOptions;

    if (progress)
        progress(LocalServer::tr("starting MariaDB in %1").arg(m_dir));
    QProcess server;
    server.setProgram(findProgram(QStringLiteral("mariadbd")));
    server.setArguments(args);
    server.setWorkingDirectory(m_dir);
    server.setStandardInputFile(QProcess::nullDevice());
    server.setStandardOutputFile(m_dir + QStringLiteral("/mysqld.out"), QIODevice::Append);
    server.setStandardErrorFile(m_dir + QStringLiteral("/mysqld.out"), QIODevice::Append);
    qint64 pid = 0;
    if (!server.startDetached(&pid))
        throw std::runtime_error(
            LocalServer::tr("cannot run %1").arg(server.program()).toStdString());
    waitUntilReady(pid, 120);
    secureAccounts();
}

QString LocalServer::serverUser() const
{
    if (!runningAsRoot())
        return {};
    return m_serviceUser.isEmpty() ? QStringLiteral("root") : m_serviceUser;
}

void LocalServer::giveDirectoryToServerUser() const
{
    const QString user = serverUser();
    if (user.isEmpty() || user == QLatin1String("root"))
        return;
    const passwd *account = ::getpwnam(user.toLocal8Bit().constData());
    if (!account)
        throw std::runtime_error(
            LocalServer::tr("no OS user %1 to run the server as").arg(user).toStdString());
    QStringList paths{m_dir};
    QDirIterator entries(m_dir,
                         QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                         QDirIterator::Subdirectories);
    while (entries.hasNext())
        paths << entries.next();
    for (const QString &path : paths)
        if (::lchown(QFile::encodeName(path).constData(), account->pw_uid, account->pw_gid) != 0)
            throw std::runtime_error(
                LocalServer::tr("cannot give %1 to the OS user %2").arg(path, user).toStdString());
}

bool LocalServer::stop(int timeoutSeconds)
{
    const Status current = status();
    if (current.state != State::Running) {
        if (current.state == State::Stale)
            removeStaleFiles();
        return false;
    }
    ::kill(static_cast<pid_t>(current.pid), SIGTERM);
    QDeadlineTimer deadline(timeoutSeconds * 1000);
    while (isOurServer(current.pid, m_dir + QStringLiteral("/data"))) {
        if (deadline.hasExpired())
            throw std::runtime_error(
                LocalServer::tr("the MariaDB server (pid %1) did not stop within %2 s; see %3")
                    .arg(QString::number(current.pid), QString::number(timeoutSeconds),
                         errorLogPath())
                    .toStdString());
        QThread::msleep(100);
    }
    removeStaleFiles();
    return true;
}

} // namespace payops
