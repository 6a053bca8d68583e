#pragma once

#include "console/connectionprofile.h"
#include "db/dsn.h"

#include <QDialog>

#include <optional>

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace payops {

class PasswordStore;
namespace console {
class SandboxLauncher;
class Worker;
} // namespace console

// Where to connect: the local sandbox, or a saved profile (name, host, port or socket, user,
// database, TLS files). The password comes from the keychain when one runs, and is asked
// for otherwise. Connecting is tried on a worker thread before the dialog closes.
class ConnectionDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit ConnectionDialog(QWidget *parent = nullptr);
    ~ConnectionDialog() override;
    Q_DISABLE_COPY_MOVE(ConnectionDialog)

    std::optional<Dsn> dsn() const { return m_dsn; }
    // The replica the pages read from, when the profile names one ("Read from (replica)").
    const std::optional<Dsn> &readDsn() const { return m_readDsn; }
    // What to connect the window to: the database, the mapping and the read database.
    console::Target target() const;
    // The mapping file of the profile connected to, read; none for payops's own tables.
    const std::optional<mapping::Mapping> &mapping() const { return m_mapping; }

private:
    void reloadProfiles(const QString &select = QString());
    void showProfile(int row);
    console::ConnectionProfile profileFromForm() const;
    void saveCurrent();
    void deleteCurrent();
    void connectNow();
    void tryConnect(const Dsn &dsn, bool rememberPassword, const QString &keychainKey);
    // The read database's turn, once the primary answered.
    void tryRead(const Dsn &read, bool rememberPassword);
    void setWorking(bool working, const QString &text);
    bool sandboxSelected() const;

    QListWidget *m_list = nullptr;
    QLineEdit *m_name = nullptr;
    QLineEdit *m_host = nullptr;
    QSpinBox *m_port = nullptr;
    QLineEdit *m_failover = nullptr;
    QLineEdit *m_socket = nullptr;
    QLineEdit *m_user = nullptr;
    QLineEdit *m_database = nullptr;
    QLineEdit *m_sslCa = nullptr;
    QLineEdit *m_sslCert = nullptr;
    QLineEdit *m_sslKey = nullptr;
    QLineEdit *m_mappingPath = nullptr;
    QLineEdit *m_password = nullptr;
    QLineEdit *m_readHost = nullptr;
    QSpinBox *m_readPort = nullptr;
    QLineEdit *m_readSocket = nullptr;
    QLineEdit *m_readUser = nullptr;
    QLineEdit *m_readPassword = nullptr;
    QCheckBox *m_remember = nullptr;
    QLabel *m_keychainStatus = nullptr;
    QLabel *m_status = nullptr;
    QPushButton *m_connect = nullptr;
    QWidget *m_form = nullptr;
    PasswordStore *m_passwords = nullptr;
    console::SandboxLauncher *m_sandbox = nullptr;
    console::Worker *m_probe = nullptr; // the last attempt's, with the DSN it tries
    std::optional<Dsn> m_dsn;
    std::optional<Dsn> m_readDsn;
    QString m_readKeychainKey;
    std::optional<mapping::Mapping> m_mapping;
};

} // namespace payops
