#pragma once

#include <QCoreApplication>
#include <QSqlDatabase>
#include <QString>

namespace payops::db {

// A server-side named lock (GET_LOCK), held by one connection. It is not part of any
// transaction: COMMIT does not release it and RELEASE_LOCK does not commit. Where it is
// released relative to COMMIT is the whole difference between the safe handler and the
// incident's. Released on destruction if still held; the server also releases it if the
// connection dies.
class NamedLock final
{
    Q_DECLARE_TR_FUNCTIONS(payops::db::NamedLock)

public:
    // Names are limited to 64 characters on MySQL; longer ones are refused here.
    NamedLock(const QSqlDatabase &db, const QString &name);
    ~NamedLock();
    Q_DISABLE_COPY_MOVE(NamedLock)

    // Waits up to timeoutSeconds; false when someone else held it all that time.
    bool acquire(int timeoutSeconds);
    void release();
    bool isHeld() const { return m_held; }

private:
    QSqlDatabase m_db;
    QString m_name;
    bool m_held = false;
};

// "payops:pay:" + 48 hex digits of SHA-256(pay_no): a pay_no may be 64 characters of any
// script, a lock name may not.
QString payNoLockName(const QByteArray &payNo);

} // namespace payops::db
