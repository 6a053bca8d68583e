#include "namedlock.h"

#include "connection.h"
#include "dberror.h"

#include <QCryptographicHash>

namespace payops::db {

NamedLock::NamedLock(const QSqlDatabase &db, const QString &name)
    : m_db(db)
    , m_name(name)
{
    if (m_name.size() > 64)
        throw Error(NamedLock::tr("lock name longer than 64 characters: %1").arg(m_name));
}

NamedLock::~NamedLock()
{
    if (!m_held)
        return;
    try {
        release();
    } catch (const Error &) {
        // The connection is gone, and the server released the lock with it.
    }
}

bool NamedLock::acquire(int timeoutSeconds)
{
    m_held =
        scalar(m_db, QStringLiteral("SELECT GET_LOCK(?, ?)"), {m_name, timeoutSeconds}).toInt() ==
        1;
    return m_held;
}

void NamedLock::release()
{
    m_held = false;
    scalar(m_db, QStringLiteral("SELECT RELEASE_LOCK(?)"), {m_name});
}

QString payNoLockName(const QByteArray &payNo)
{
    return QStringLiteral("payops:pay:") +
           QString::fromLatin1(
               QCryptographicHash::hash(payNo, QCryptographicHash::Sha256).toHex().left(48));
}

} // namespace payops::db
