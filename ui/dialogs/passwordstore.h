#pragma once

#include <QObject>
#include <QString>

#include <functional>

namespace payops {

// Database passwords in the system keychain (Secret Service, KWallet) through qtkeychain;
// never in the settings file. Where no keychain service runs, available() is false and the
// console asks for the password each time. Every call is asynchronous.
class PasswordStore final : public QObject
{
    Q_OBJECT

public:
    explicit PasswordStore(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(PasswordStore)

    enum class Availability { Unknown, Available, Unavailable };
    Availability availability() const { return m_availability; }
    QString unavailableReason() const { return m_reason; }

    // Finds out once whether a keychain answers; availabilityKnown() follows.
    void probe();
    void read(const QString &key, std::function<void(bool found, const QString &password)> done);
    void write(const QString &key, const QString &password,
               std::function<void(bool ok, const QString &error)> done);
    void remove(const QString &key);

Q_SIGNALS:
    void availabilityKnown(payops::PasswordStore::Availability availability);

private:
    Availability m_availability = Availability::Unknown;
    QString m_reason;
};

} // namespace payops
