#pragma once

#include "db/dsn.h"

#include <QList>
#include <QString>

namespace payops::console {

// A saved way to reach a database. Never holds the password: that lives in the system
// keychain, or nowhere when the machine has none.
struct ConnectionProfile
{
    QString name;
    QString host = QStringLiteral("localhost");
    int port = 3306;
    QString socket;
    QString user;
    QString database;
    QString sslCa;
    QString sslCert;
    QString sslKey;

    Dsn toDsn(const QString &password) const;
    // The keychain entry of this profile's password.
    QString keychainKey() const { return QStringLiteral("%1@%2/%3").arg(user, socket.isEmpty() ? host : socket, database); }
};

QList<ConnectionProfile> loadProfiles();
// Adds or replaces (by name).
void saveProfile(const ConnectionProfile &profile);
void removeProfile(const QString &name);

} // namespace payops::console
