#include "signature.h"

#include <QCoreApplication>
#include <QFile>
#include <QMessageAuthenticationCode>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Signature
{
    Q_DECLARE_TR_FUNCTIONS(payops::Signature)
};

QByteArray hmacHex(const QByteArray &secret, const QByteArray &timestamp, const QByteArray &body)
{
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, secret);
    mac.addData(timestamp);
    mac.addData(".", 1);
    mac.addData(body);
    return mac.result().toHex();
}

// Compares in time that depends only on the length, so that an attacker cannot learn the
// expected signature byte by byte from response times.
bool constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char difference = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        difference |= static_cast<unsigned char>(a.at(i) ^ b.at(i));
    return difference == 0;
}

} // namespace

QByteArray signatureHeader(const QByteArray &secret, qint64 timestamp, const QByteArray &body)
{
    return "v1=" + hmacHex(secret, QByteArray::number(timestamp), body);
}

SignatureCheck verifySignature(const QByteArray &secret, const QByteArray &timestampHeader,
                               const QByteArray &signatureHeader, const QByteArray &body,
                               qint64 nowSeconds)
{
    if (timestampHeader.isEmpty() || signatureHeader.isEmpty())
        return SignatureCheck::Missing;
    bool ok = false;
    const qint64 timestamp = timestampHeader.trimmed().toLongLong(&ok);
    if (!ok || !signatureHeader.startsWith("v1=") || signatureHeader.size() != 3 + 64)
        return SignatureCheck::Malformed;
    if (timestamp < nowSeconds - kSignatureToleranceSeconds ||
        timestamp > nowSeconds + kSignatureToleranceSeconds)
        return SignatureCheck::Stale;
    const QByteArray expected = hmacHex(secret, timestampHeader.trimmed(), body);
    return constantTimeEquals(expected, signatureHeader.mid(3).toLower())
               ? SignatureCheck::Valid
               : SignatureCheck::Mismatch;
}

const char *describe(SignatureCheck check)
{
    switch (check) {
    case SignatureCheck::Valid:
        return "valid";
    case SignatureCheck::Missing:
        return "signature or timestamp header missing";
    case SignatureCheck::Malformed:
        return "signature or timestamp header malformed";
    case SignatureCheck::Stale:
        return "timestamp outside the 300 s tolerance";
    case SignatureCheck::Mismatch:
        return "signature does not match";
    }
    return "invalid";
}

QString readSecretFile(const QString &path, QByteArray *secret)
{
    if (path.isEmpty())
        return Signature::tr("--secret-file is required");
    QByteArray content;
    const QString error = readPrivateFile(path, Signature::tr("the secret file"), &content);
    if (error.isEmpty())
        *secret = content.trimmed();
    return error;
}

QString readPrivateFile(const QString &path, const QString &kind, QByteArray *content)
{
    constexpr qint64 kLargest = 64 * 1024;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Signature::tr("cannot read %1 %2: %3").arg(kind, path, file.errorString());
    // Anyone who reads the secret can sign a callback that pays an order, and anyone who can
    // change a platform's key file can put their own key in it; refused as ssh refuses a
    // private key others can read. Checked on the open file, not on its name.
    struct stat info
    {
    };
    if (::fstat(file.handle(), &info) != 0)
        return Signature::tr("cannot read %1 %2: %3")
            .arg(kind, path, QString::fromLocal8Bit(std::strerror(errno)));
    if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        return Signature::tr("%1 %2 is open to other users (mode %3): make it readable by its "
                             "owner only (chmod 600 %2)")
            .arg(kind, path,
                 QString::number(info.st_mode & 07777, 8).rightJustified(4, QLatin1Char('0')));
    *content = file.read(kLargest + 1);
    if (content->size() > kLargest)
        return Signature::tr("%1 %2 is larger than 64 KiB: is it the right file?").arg(kind, path);
    return {};
}

} // namespace payops
