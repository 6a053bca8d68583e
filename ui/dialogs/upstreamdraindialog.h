#pragma once

#include "domain/callback/channel.h"
#include "domain/callback/upstreamclient.h"

#include <QDialog>
#include <QHash>
#include <QStringList>

class QComboBox;
class QLabel;
class QSpinBox;

namespace payops {

// Asks where and how fast to forward a gateway's backlog, as `payops drain --upstream` takes
// it: the upstream's URL, offered from the gateways' own, and a rate. Accepted only with a
// URL the drain can use.
class UpstreamDrainDialog final : public QDialog
{
    Q_OBJECT

public:
    // channels: an upstream that a gateway gives one channel, by URL ("wechatpay").
    UpstreamDrainDialog(const QStringList &upstreams, const QHash<QString, QString> &channels,
                        qint64 rows, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(UpstreamDrainDialog)

    // Valid once accepted.
    const UpstreamOptions &upstream() const { return m_upstream; }
    int rate() const; // forwards a second at most; 0: no limit
    // Only the callbacks that came in this format; nullopt: every channel's.
    std::optional<WireFormat> channel() const;

private:
    void tryAccept();

    QComboBox *m_url = nullptr;
    QComboBox *m_channel = nullptr;
    QSpinBox *m_rate = nullptr;
    QLabel *m_error = nullptr;
    UpstreamOptions m_upstream;
};

} // namespace payops
