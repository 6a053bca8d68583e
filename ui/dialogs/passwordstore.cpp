#include "passwordstore.h"

#include <qt6keychain/keychain.h>

namespace payops {
namespace {

const QString &service()
{
    static const QString name = QStringLiteral("payops-console");
    return name;
}

bool meansNoKeychain(QKeychain::Error error)
{
    return error == QKeychain::NoBackendAvailable || error == QKeychain::NotImplemented ||
           error == QKeychain::OtherError || error == QKeychain::AccessDenied;
}

} // namespace

PasswordStore::PasswordStore(QObject *parent)
    : QObject(parent)
{
}

void PasswordStore::probe()
{
    auto *job = new QKeychain::ReadPasswordJob(service(), this);
    job->setAutoDelete(true);
    job->setKey(QStringLiteral("payops-probe"));
    connect(job, &QKeychain::Job::finished, this, [this](QKeychain::Job *finished) {
        // Not finding the probe entry is the normal answer of a working keychain.
        if (finished->error() == QKeychain::NoError ||
            finished->error() == QKeychain::EntryNotFound) {
            m_availability = Availability::Available;
        } else {
            m_availability = Availability::Unavailable;
            m_reason = finished->errorString();
        }
        Q_EMIT availabilityKnown(m_availability);
    });
    job->start();
}

void PasswordStore::read(const QString &key, std::function<void(bool, const QString &)> done)
{
    auto *job = new QKeychain::ReadPasswordJob(service(), this);
    job->setAutoDelete(true);
    job->setKey(key);
    connect(job, &QKeychain::Job::finished, this, [job, done](QKeychain::Job *) {
        done(job->error() == QKeychain::NoError, job->textData());
    });
    job->start();
}

void PasswordStore::write(const QString &key, const QString &password,
                          std::function<void(bool, const QString &)> done)
{
    auto *job = new QKeychain::WritePasswordJob(service(), this);
    job->setAutoDelete(true);
    job->setKey(key);
    job->setTextData(password);
    connect(job, &QKeychain::Job::finished, this, [this, done](QKeychain::Job *finished) {
        if (meansNoKeychain(finished->error())) {
            m_availability = Availability::Unavailable;
            m_reason = finished->errorString();
        }
        done(finished->error() == QKeychain::NoError, finished->errorString());
    });
    job->start();
}

void PasswordStore::remove(const QString &key)
{
    auto *job = new QKeychain::DeletePasswordJob(service(), this);
    job->setAutoDelete(true);
    job->setKey(key);
    job->start();
}

} // namespace payops
