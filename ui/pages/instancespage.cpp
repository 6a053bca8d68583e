#include "instancespage.h"

#include "console/instanceprober.h"
#include "console/instances.h"
#include "console/worker.h"
#include "domain/callback/instanceliveness.h"
#include "models/instancemodel.h"
#include "palette.h"
#include "widgets/datatable.h"
#include "widgets/switchcontrol.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace payops {

InstancesPage::InstancesPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("instancesPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("instancesSummary"));
    m_summary->setWordWrap(true);
    m_switch = new SwitchControl(target.dsn, this);
    connect(m_switch, &SwitchControl::flipped, this, [this] { rereadAfterAction(); });
    auto *header = new QHBoxLayout;
    header->addWidget(m_summary, 1);
    header->addWidget(m_switch, 0, Qt::AlignTop);
    layout->addLayout(header);
    m_model = new InstanceModel(this);
    m_table = new DataTable(QStringLiteral("instancesTable"), m_model, this);
    layout->addWidget(m_table, 1);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("instancesNote"));
    palette::setTextRole(m_note, palette::Role::Muted);
    layout->addWidget(m_note);

    m_prober = new console::InstanceProber(this);
    connect(m_prober, &console::InstanceProber::healthChanged, m_model, &InstanceModel::setHealth);
    connect(startRefreshTimer(), &QTimer::timeout, this, &InstancesPage::refresh);
    // The default until the first read says what the database's setting is.
    showAliveThreshold(kInstanceAliveSeconds);
    refresh();
}

void InstancesPage::showAliveThreshold(int seconds)
{
    m_note->setText(
        tr("Alive: a heartbeat within %1 s and not stopped. Callbacks per second come from two "
           "successive scrapes of /metrics.")
            .arg(seconds));
}

void InstancesPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    m_switch->setAllowed(privileges.flipSwitch);
}

void InstancesPage::refresh()
{
    if (m_pending)
        return;
    m_pending = true;
    worker()->submit<console::InstanceList>(
        QStringLiteral("instances"), console::jobOf(console::loadInstances), this,
        [this](const console::InstanceList &list) {
            m_pending = false;
            m_model->setInstances(list);
            showAliveThreshold(list.aliveSeconds);
            m_switch->setMode(list.mode);
            int alive = 0;
            int unsafe = 0;
            int behind = 0;
            int gateways = 0;
            int failing = 0;
            for (const console::InstanceRow &row : list.rows) {
                if (!row.alive)
                    continue;
                ++alive;
                unsafe += row.handler == QLatin1String("unsafe-demo");
                behind += row.switchVersionApplied != list.switchVersion;
                gateways += row.isGateway();
                failing += row.isGateway() && row.upstreamState == QLatin1String("failing");
                m_prober->probe(row.id, row.listen);
            }
            QString text = tr("<b>%1 of %2 instances alive.</b> Switch: %3, version %4.")
                               .arg(QString::number(alive), QString::number(list.rows.size()),
                                    list.mode, QString::number(list.switchVersion));
            if (gateways)
                text +=
                    QLatin1Char(' ') +
                    tr("%n of them in gateway mode, forwarding to an upstream.", nullptr, gateways);
            if (failing)
                text += QLatin1Char(' ') +
                        palette::strong(palette::Role::Danger,
                                        tr("%n gateway(s) get no answer from their upstream.",
                                           nullptr, failing));
            if (unsafe)
                text += QLatin1Char(' ') +
                        palette::strong(
                            palette::Role::Danger,
                            tr("%1 alive instance(s) run the unsafe demo handler.").arg(unsafe));
            if (behind)
                text += QLatin1Char(' ') +
                        palette::strong(
                            palette::Role::Warning,
                            tr("%1 instance(s) have not applied the current switch version.")
                                .arg(behind));
            m_summary->setText(text);
        },
        [this](const db::Error &error) {
            m_pending = false;
            m_summary->setText(db::userMessage(error));
        });
}

} // namespace payops
