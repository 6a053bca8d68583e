#include "upstreamdraindialog.h"

#include "palette.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace payops {

UpstreamDrainDialog::UpstreamDrainDialog(const QStringList &upstreams,
                                         const QHash<QString, QString> &channels, qint64 rows,
                                         QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("upstreamDrainDialog"));
    setWindowTitle(tr("Forward to the upstream"));
    auto *layout = new QVBoxLayout(this);
    auto *what = new QLabel(
        tr("Forward %1 gateway callback(s) without a final answer to the team's handler, oldest "
           "first, each once, as a gateway forwards them: the platform's body and headers as "
           "received. A pay_no that live traffic is forwarding right now is skipped, and one that "
           "gets no final answer stays for the next drain. The drain stops by itself if the "
           "switch turns RECORD_ONLY.")
            .arg(QLocale().toString(rows)),
        this);
    what->setWordWrap(true);
    layout->addWidget(what);
    auto *form = new QFormLayout;
    m_url = new QComboBox(this);
    m_url->setObjectName(QStringLiteral("upstreamUrl"));
    m_url->setEditable(true);
    m_url->addItems(upstreams); // the live gateways' first
    m_url->setMinimumContentsLength(40);
    form->addRow(tr("Upstream URL"), m_url);
    // A gateway with a handler per channel: each handler takes its own channel's callbacks.
    m_channel = new QComboBox(this);
    m_channel->setObjectName(QStringLiteral("upstreamChannel"));
    m_channel->addItem(tr("Every channel"));
    m_channel->addItem(tr("WeChat Pay"), QStringLiteral("wechatpay"));
    m_channel->addItem(tr("Alipay"), QStringLiteral("alipay"));
    m_channel->addItem(tr("payops's own (/callbacks/pay)"), QStringLiteral("payops"));
    const auto followUrl = [this, channels](const QString &url) {
        const QString channel = channels.value(url.trimmed());
        const int index = m_channel->findData(
            channel == QLatin1String("pay") ? QStringLiteral("payops") : channel);
        m_channel->setCurrentIndex(channel.isEmpty() || index < 0 ? 0 : index);
    };
    connect(m_url, &QComboBox::currentTextChanged, this, followUrl);
    followUrl(m_url->currentText());
    form->addRow(tr("Callbacks of"), m_channel);
    m_rate = new QSpinBox(this);
    m_rate->setObjectName(QStringLiteral("upstreamRate"));
    m_rate->setRange(0, 10'000);
    m_rate->setSpecialValueText(tr("no limit"));
    m_rate->setSuffix(tr(" a second"));
    // What the team's handler takes beside its live traffic is the operator's call; a modest
    // default keeps a large backlog from arriving all at once.
    m_rate->setValue(50);
    form->addRow(tr("Forwards at most"), m_rate);
    layout->addLayout(form);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("upstreamError"));
    m_error->setWordWrap(true);
    palette::setTextRole(m_error, palette::Role::Danger);
    m_error->hide();
    layout->addWidget(m_error);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Forward"));
    connect(buttons, &QDialogButtonBox::accepted, this, &UpstreamDrainDialog::tryAccept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

int UpstreamDrainDialog::rate() const
{
    return m_rate->value();
}

std::optional<WireFormat> UpstreamDrainDialog::channel() const
{
    return wireFormatFromName(m_channel->currentData().toString().toLatin1());
}

void UpstreamDrainDialog::tryAccept()
{
    // The check `payops drain --upstream` makes; its wording names the command's option, so
    // the dialog says it in its own words.
    if (!checkUpstreamOptions(m_url->currentText().trimmed(), QString(), QString(), &m_upstream)
             .isEmpty()) {
        m_error->setText(tr("The upstream must be an http:// or https:// URL with a host."));
        m_error->show();
        return;
    }
    accept();
}

} // namespace payops
