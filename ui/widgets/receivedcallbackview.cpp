#include "receivedcallbackview.h"

#include "domain/callback/channel.h"
#include "fixedtextview.h"
#include "palette.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QVBoxLayout>

namespace payops {
ReceivedCallbackView::ReceivedCallbackView(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 6, 0, 0);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("bodyTitle"));
    m_title->setWordWrap(true);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("bodyNote"));
    m_note->setWordWrap(true);
    palette::setTextRole(m_note, palette::Role::Warning);
    m_note->hide();
    m_headers = fixedTextView(QStringLiteral("rawHeaders"), this);
    m_headers->setPlaceholderText(tr("No platform headers kept."));
    m_headers->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_body = fixedTextView(QStringLiteral("rawBody"), this);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_headers);
    splitter->addWidget(m_body);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(m_title);
    layout->addWidget(m_note);
    layout->addWidget(splitter, 1);
}

void ReceivedCallbackView::showCallback(qint64 id, const QString &wireFormat,
                                        const QByteArray &rawHeaders, const QByteArray &rawBody)
{
    const QString text = QString::fromUtf8(rawBody);
    // The endpoint records only what it could read, but a row edited by hand need not be UTF-8.
    const bool exact = text.toUtf8() == rawBody;
    m_title->setText(
        tr("Callback %1 as received (%2): the platform's headers, and the raw body (%n "
           "byte(s))%3:",
           nullptr, int(rawBody.size()))
            .arg(QString::number(id), wireFormat,
                 exact ? QString() : tr("; not valid UTF-8, undecodable bytes shown as \uFFFD")));
    const bool cipher = wireFormatFromName(wireFormat.toUtf8()) == WireFormat::WechatPay;
    m_note->setText(cipher ? tr("Encrypted by WeChat Pay: its resource is AES-256-GCM ciphertext, "
                                "unreadable without the merchant's API v3 key; the payment's "
                                "fields were decrypted from it.")
                           : QString());
    m_note->setVisible(cipher);
    QStringList lines;
    for (const auto &[name, value] : splitHeaders(rawHeaders))
        lines << QString::fromUtf8(name + ": " + value);
    m_headers->setPlainText(lines.join(QLatin1Char('\n')));
    m_body->setPlainText(text);
}

void ReceivedCallbackView::showNothing(const QString &why)
{
    m_title->setText(why);
    m_note->hide();
    m_headers->clear();
    m_body->clear();
}

} // namespace payops
