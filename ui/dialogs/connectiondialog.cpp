#include "connectiondialog.h"

#include "console/sandboxlauncher.h"
#include "console/worker.h"
#include "db/dberror.h"
#include "passwordstore.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace payops {

ConnectionDialog::ConnectionDialog(QWidget *parent)
    : QDialog(parent)
    , m_passwords(new PasswordStore(this))
    , m_sandbox(new console::SandboxLauncher(this))
{
    setObjectName(QStringLiteral("connectionDialog"));
    setWindowTitle(tr("Connect — payops console"));
    resize(760, 480);
    auto *layout = new QHBoxLayout(this);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("profilesList"));
    m_list->setMaximumWidth(220);
    layout->addWidget(m_list);

    auto *right = new QVBoxLayout;
    m_form = new QWidget(this);
    auto *form = new QFormLayout(m_form);
    m_name = new QLineEdit(m_form);
    m_host = new QLineEdit(m_form);
    m_port = new QSpinBox(m_form);
    m_port->setRange(1, 65535);
    m_port->setValue(3306);
    m_failover = new QLineEdit(m_form);
    m_failover->setObjectName(QStringLiteral("failoverEdit"));
    m_failover->setPlaceholderText(tr("optional: db2:3306, the replica that takes over"));
    m_failover->setToolTip(
        tr("The replica that takes over after a failover. Each connection goes to the first "
           "server that answers and is not read-only, and is refused when two take writes "
           "(docs/servers.md, \"Failover\")."));
    m_socket = new QLineEdit(m_form);
    m_socket->setObjectName(QStringLiteral("socketEdit"));
    m_socket->setPlaceholderText(tr("unix socket path (instead of host and port)"));
    m_user = new QLineEdit(m_form);
    m_database = new QLineEdit(m_form);
    m_sslCa = new QLineEdit(m_form);
    m_sslCert = new QLineEdit(m_form);
    m_sslKey = new QLineEdit(m_form);
    m_mappingPath = new QLineEdit(m_form);
    m_mappingPath->setObjectName(QStringLiteral("mappingEdit"));
    m_mappingPath->setPlaceholderText(tr("optional: your own tables, described by a TOML file"));
    m_mappingPath->setToolTip(
        tr("Without a mapping the console reads payops's own tables. With one it reads the "
           "team's own orders, payments and side effects where the file says they are "
           "(docs/mapping.md)."));
    auto *mappingRow = new QHBoxLayout;
    mappingRow->addWidget(m_mappingPath, 1);
    auto *browse = new QPushButton(tr("Choose…"), m_form);
    mappingRow->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Mapping file"), m_mappingPath->text(), tr("Mapping files (*.toml)"));
        if (!path.isEmpty())
            m_mappingPath->setText(path);
    });
    m_password = new QLineEdit(m_form);
    m_password->setObjectName(QStringLiteral("passwordEdit"));
    m_password->setEchoMode(QLineEdit::Password);
    m_remember = new QCheckBox(tr("Remember in the system keychain"), m_form);
    form->addRow(tr("Profile name"), m_name);
    form->addRow(tr("Host"), m_host);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("Fail over to"), m_failover);
    form->addRow(tr("Socket"), m_socket);
    form->addRow(tr("User"), m_user);
    form->addRow(tr("Database"), m_database);
    form->addRow(tr("TLS CA file"), m_sslCa);
    form->addRow(tr("TLS certificate"), m_sslCert);
    form->addRow(tr("TLS key"), m_sslKey);
    form->addRow(tr("Mapping file"), mappingRow);
    form->addRow(tr("Password"), m_password);
    form->addRow(QString(), m_remember);
    // Optional: operations staff are often given a replica; the pages read there, the actions
    // run on the database above.
    auto *readGroup = new QGroupBox(tr("Read from (replica)"), m_form);
    readGroup->setObjectName(QStringLiteral("readGroup"));
    readGroup->setToolTip(tr("Optional. The pages read from this server, the same database on "
                             "a replica; switching, draining, compensating and approving still "
                             "run on the server above. Empty: everything on the server above."));
    auto *readForm = new QFormLayout(readGroup);
    m_readHost = new QLineEdit(readGroup);
    m_readHost->setObjectName(QStringLiteral("readHostEdit"));
    m_readPort = new QSpinBox(readGroup);
    m_readPort->setObjectName(QStringLiteral("readPortSpin"));
    m_readPort->setRange(1, 65535);
    m_readPort->setValue(3306);
    m_readSocket = new QLineEdit(readGroup);
    m_readSocket->setObjectName(QStringLiteral("readSocketEdit"));
    m_readSocket->setPlaceholderText(tr("unix socket path (instead of host and port)"));
    m_readUser = new QLineEdit(readGroup);
    m_readUser->setObjectName(QStringLiteral("readUserEdit"));
    m_readUser->setPlaceholderText(tr("the same user when empty"));
    m_readPassword = new QLineEdit(readGroup);
    m_readPassword->setObjectName(QStringLiteral("readPasswordEdit"));
    m_readPassword->setEchoMode(QLineEdit::Password);
    readForm->addRow(tr("Host"), m_readHost);
    readForm->addRow(tr("Port"), m_readPort);
    readForm->addRow(tr("Socket"), m_readSocket);
    readForm->addRow(tr("User"), m_readUser);
    readForm->addRow(tr("Password"), m_readPassword);
    form->addRow(readGroup);
    right->addWidget(m_form);
    m_keychainStatus = new QLabel(tr("Looking for a system keychain …"), this);
    m_keychainStatus->setObjectName(QStringLiteral("keychainStatus"));
    m_keychainStatus->setWordWrap(true);
    right->addWidget(m_keychainStatus);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("connectStatus"));
    m_status->setWordWrap(true);
    right->addWidget(m_status);
    right->addStretch(1);

    auto *buttons = new QDialogButtonBox(this);
    auto *save = buttons->addButton(tr("Save profile"), QDialogButtonBox::ActionRole);
    auto *remove = buttons->addButton(tr("Delete profile"), QDialogButtonBox::ActionRole);
    m_connect = buttons->addButton(tr("Connect"), QDialogButtonBox::AcceptRole);
    m_connect->setObjectName(QStringLiteral("connectButton"));
    buttons->addButton(QDialogButtonBox::Cancel);
    right->addWidget(buttons);
    layout->addLayout(right, 1);

    connect(save, &QPushButton::clicked, this, &ConnectionDialog::saveCurrent);
    connect(remove, &QPushButton::clicked, this, &ConnectionDialog::deleteCurrent);
    connect(m_connect, &QPushButton::clicked, this, &ConnectionDialog::connectNow);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_list, &QListWidget::currentRowChanged, this, &ConnectionDialog::showProfile);
    connect(m_sandbox, &console::SandboxLauncher::progress, this,
            [this](const QString &text) { m_status->setText(text); });
    connect(m_sandbox, &console::SandboxLauncher::started, this, [this](const Dsn &dsn) {
        m_dsn = dsn;
        accept();
    });
    connect(m_sandbox, &console::SandboxLauncher::failed, this, [this](const QString &message) {
        setWorking(false, tr("The sandbox did not start: %1").arg(message));
    });
    connect(
        m_passwords, &PasswordStore::availabilityKnown, this,
        [this](PasswordStore::Availability a) {
            const bool ok = a == PasswordStore::Availability::Available;
            m_remember->setEnabled(ok);
            m_remember->setChecked(ok);
            m_keychainStatus->setText(
                ok ? tr("Passwords are kept in the system keychain, never in the settings file.")
                   : tr("No system keychain service answered (it said: %1), so passwords are not "
                        "stored anywhere: the password is asked for each time.")
                         .arg(m_passwords->unavailableReason()));
        });
    m_remember->setEnabled(false);
    m_passwords->probe();
    reloadProfiles();
}

ConnectionDialog::~ConnectionDialog() = default;

bool ConnectionDialog::sandboxSelected() const
{
    return m_list->currentRow() == 0;
}

void ConnectionDialog::reloadProfiles(const QString &select)
{
    const QSignalBlocker blocker(m_list);
    m_list->clear();
    m_list->addItem(tr("Local sandbox"));
    int row = 0;
    for (const console::ConnectionProfile &p : console::loadProfiles()) {
        m_list->addItem(p.name);
        if (p.name == select)
            row = m_list->count() - 1;
    }
    m_list->addItem(tr("+ New profile"));
    m_list->setCurrentRow(row);
    showProfile(row);
}

void ConnectionDialog::showProfile(int row)
{
    const bool sandbox = row == 0;
    m_form->setEnabled(!sandbox);
    m_status->setText(
        sandbox ? tr("Starts a private MariaDB with demo data in ~/.local/share/payops/sandbox "
                     "(the first start takes a while) and connects to it.")
                : QString());
    console::ConnectionProfile profile;
    const QList<console::ConnectionProfile> profiles = console::loadProfiles();
    if (row > 0 && row - 1 < profiles.size())
        profile = profiles.at(row - 1);
    m_name->setText(profile.name);
    m_host->setText(profile.host);
    m_port->setValue(profile.port);
    m_socket->setText(profile.socket);
    m_failover->setText(profile.failover);
    m_user->setText(profile.user);
    m_database->setText(profile.database);
    m_sslCa->setText(profile.sslCa);
    m_sslCert->setText(profile.sslCert);
    m_sslKey->setText(profile.sslKey);
    m_mappingPath->setText(profile.mapping);
    m_readHost->setText(profile.readHost);
    m_readPort->setValue(profile.readPort);
    m_readSocket->setText(profile.readSocket);
    m_readUser->setText(profile.readUser);
    m_password->clear();
    m_readPassword->clear();
    if (!profile.name.isEmpty() &&
        m_passwords->availability() == PasswordStore::Availability::Available) {
        const auto fill = [this](const QString &key, QLineEdit *target) {
            QPointer<QLineEdit> edit(target);
            m_passwords->read(key, [edit](bool found, const QString &password) {
                if (edit && found && edit->text().isEmpty())
                    edit->setText(password);
            });
        };
        fill(profile.keychainKey(), m_password);
        if (profile.toReadDsn({}))
            fill(profile.readKeychainKey(), m_readPassword);
    }
}

console::ConnectionProfile ConnectionDialog::profileFromForm() const
{
    console::ConnectionProfile p;
    p.name = m_name->text().trimmed();
    p.host = m_host->text().trimmed();
    p.port = m_port->value();
    p.socket = m_socket->text().trimmed();
    p.failover = m_failover->text().trimmed();
    p.user = m_user->text().trimmed();
    p.database = m_database->text().trimmed();
    p.sslCa = m_sslCa->text().trimmed();
    p.sslCert = m_sslCert->text().trimmed();
    p.sslKey = m_sslKey->text().trimmed();
    p.mapping = m_mappingPath->text().trimmed();
    p.readHost = m_readHost->text().trimmed();
    p.readPort = m_readPort->value();
    p.readSocket = m_readSocket->text().trimmed();
    p.readUser = m_readUser->text().trimmed();
    return p;
}

void ConnectionDialog::saveCurrent()
{
    const console::ConnectionProfile p = profileFromForm();
    if (sandboxSelected() || p.name.isEmpty()) {
        m_status->setText(tr("Give the profile a name first."));
        return;
    }
    console::saveProfile(p);
    reloadProfiles(p.name);
    m_status->setText(tr("Profile %1 saved (without its password).").arg(p.name));
}

void ConnectionDialog::deleteCurrent()
{
    if (sandboxSelected() || m_name->text().isEmpty())
        return;
    const console::ConnectionProfile p = profileFromForm();
    m_passwords->remove(p.keychainKey());
    console::removeProfile(p.name);
    reloadProfiles();
}

void ConnectionDialog::setWorking(bool working, const QString &text)
{
    m_connect->setEnabled(!working);
    m_list->setEnabled(!working);
    m_form->setEnabled(!working && !sandboxSelected());
    m_status->setText(text);
}

void ConnectionDialog::connectNow()
{
    m_mapping.reset();
    m_readDsn.reset();
    if (sandboxSelected()) {
        setWorking(true, tr("Starting the local sandbox …"));
        m_sandbox->start();
        return;
    }
    const console::ConnectionProfile p = profileFromForm();
    if (const QString problem = p.problem(); !problem.isEmpty()) {
        m_status->setText(problem);
        return;
    }
    // A small local file: read here, so that a mapping that cannot be used is said before
    // anything is connected to.
    if (!p.mapping.isEmpty()) {
        try {
            m_mapping = mapping::loadMapping(p.mapping);
        } catch (const mapping::MappingError &error) {
            m_status->setText(error.message());
            return;
        }
    }
    m_readDsn = p.toReadDsn(m_readPassword->text());
    m_readKeychainKey = p.readKeychainKey();
    tryConnect(p.toDsn(m_password->text()), m_remember->isChecked() && m_remember->isEnabled(),
               p.keychainKey());
}

console::Target ConnectionDialog::target() const
{
    console::Target target(m_dsn.value_or(Dsn()), m_mapping);
    target.readDsn = m_readDsn;
    return target;
}

void ConnectionDialog::tryConnect(const Dsn &dsn, bool rememberPassword, const QString &keychainKey)
{
    setWorking(true, tr("Connecting to %1 …").arg(dsn.toDisplayString()));
    // Opening a connection can take the whole connect timeout: never on the UI thread. A
    // worker per attempt, since each has its own DSN; an earlier attempt's goes, unheard.
    delete m_probe;
    m_probe = new console::Worker(dsn, this);
    m_probe->submitStandalone<Dsn>(
        QStringLiteral("probe"), console::probeConnection, this,
        [this, rememberPassword, keychainKey](const Dsn &reached) {
            if (rememberPassword && !reached.password.isEmpty())
                m_passwords->write(keychainKey, reached.password, [](bool, const QString &) {});
            m_dsn = reached;
            if (m_readDsn)
                tryRead(*m_readDsn, rememberPassword);
            else
                accept();
        },
        [this](const db::Error &error) { setWorking(false, db::userMessage(error)); });
}

void ConnectionDialog::tryRead(const Dsn &read, bool rememberPassword)
{
    setWorking(true, tr("Connecting to the replica %1 …").arg(read.toDisplayString()));
    delete m_probe;
    m_probe = new console::Worker(read, this);
    m_probe->submitStandalone<Dsn>(
        QStringLiteral("probe"), console::probeConnection, this,
        [this, rememberPassword](const Dsn &reached) {
            if (rememberPassword && !reached.password.isEmpty())
                m_passwords->write(m_readKeychainKey, reached.password,
                                   [](bool, const QString &) {});
            accept();
        },
        [this](const db::Error &error) {
            setWorking(false, tr("The replica: %1").arg(db::userMessage(error)));
        });
}

} // namespace payops
