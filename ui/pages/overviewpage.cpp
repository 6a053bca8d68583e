#include "overviewpage.h"

#include "console/consolesettings.h"
#include "console/databasesummary.h"
#include "console/displayformat.h"
#include "console/livetraffic.h"
#include "console/overview.h"
#include "console/worker.h"
#include "domain/callback/instanceliveness.h"
#include "palette.h"
#include "widgets/busyindicator.h"
#include "widgets/livetrafficchart.h"
#include "widgets/switchcontrol.h"
#include "widgets/tile.h"

#include <QDateTime>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QTimer>
#include <QVBoxLayout>

namespace payops {

OverviewPage::OverviewPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
    , m_traffic(std::make_shared<console::LiveTrafficReader>())
{
    setObjectName(QStringLiteral("overviewPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    layout->setSpacing(10);
    m_headline = new QLabel(this);
    m_headline->setObjectName(QStringLiteral("headline"));
    QFont big = m_headline->font();
    big.setPointSizeF(big.pointSizeF() * 1.8);
    big.setBold(true);
    m_headline->setFont(big);
    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setWordWrap(true);
    m_switch = new SwitchControl(target.dsn, this);
    connect(m_switch, &SwitchControl::flipped, this, [this] { rereadAfterAction(); });
    auto *header = new QHBoxLayout;
    header->addWidget(m_headline, 1);
    header->addWidget(m_switch, 0, Qt::AlignTop);
    layout->addLayout(header);
    layout->addWidget(m_details);

    auto *grid = new QGridLayout;
    grid->setSpacing(10);
    m_mode = new Tile(QStringLiteral("tileMode"), tr("Callback endpoint mode"), this);
    m_rate = new Tile(QStringLiteral("tileRate"), tr("Payments, last minute"), this);
    m_duplicates =
        new Tile(QStringLiteral("tileDuplicates"), tr("Duplicate side effects (open)"), this);
    m_backlog = new Tile(QStringLiteral("tileBacklog"), tr("Backlog of recorded callbacks"), this);
    m_money = new Tile(QStringLiteral("tileMoney"), tr("Money at risk"), this);
    m_instances = new Tile(QStringLiteral("tileInstances"), tr("Callback instances alive"), this);
    const QList<QPair<Tile *, Page::Id>> tiles{
        {m_mode, InstancesId},  {m_rate, StateMachineId}, {m_duplicates, DuplicatesId},
        {m_backlog, BacklogId}, {m_money, DuplicatesId},  {m_instances, InstancesId}};
    for (int i = 0; i < tiles.size(); ++i) {
        grid->addWidget(tiles.at(i).first, i / 3, i % 3);
        const Page::Id destination = tiles.at(i).second;
        connect(tiles.at(i).first, &Tile::clicked, this,
                [this, destination] { Q_EMIT navigate(destination); });
    }
    m_staleNote = new QLabel(this);
    m_staleNote->setObjectName(QStringLiteral("staleNote"));
    m_staleNote->setWordWrap(true);
    m_staleNote->hide();
    layout->addWidget(m_staleNote);
    layout->addLayout(grid);
    m_chart = new LiveTrafficChart(this);
    layout->addWidget(m_chart, 1);
    if (mapping()) {
        // The chart counts payops's own callbacks and side-effect tables: on the team's tables
        // its duplicates line would read zero whatever happens. Said plainly instead.
        m_chart->hide();
        auto *note = new QLabel(tr("The live chart of callbacks and duplicates reads payops's own "
                                   "tables: it is not shown on the team's tables. The tiles above "
                                   "come from the mapped duplicate watch."),
                                this);
        note->setObjectName(QStringLiteral("mappedChartNote"));
        note->setWordWrap(true);
        palette::setTextRole(note, palette::Role::Muted);
        layout->addWidget(note);
        layout->addStretch(1);
    }
    auto *footer = new QHBoxLayout;
    m_updated = new QLabel(this);
    m_updated->setObjectName(QStringLiteral("updatedLabel"));
    m_busy = new BusyIndicator(this);
    footer->addWidget(m_updated, 1);
    footer->addWidget(m_busy);
    layout->addLayout(footer);
    connect(m_busy, &BusyIndicator::cancelRequested, this, [this] {
        worker()->cancel(QStringLiteral("overview"));
        m_pending = false;
        m_busy->stop();
    });

    connect(startRefreshTimer(), &QTimer::timeout, this, &OverviewPage::refresh);
    connect(&console::ConsoleSettings::instance(), &console::ConsoleSettings::changed, this,
            [this] {
                // A refresh under way counts with the old values: this one supersedes it (the
                // worker drops the older result), so old figures never stand under the new
                // settings.
                m_pending = false;
                refresh();
            });
    m_headline->setText(tr("Connecting …"));
    refresh();

    // The chart has a beat of its own, faster than the figures': during a storm the moment
    // the bleeding stops should show within seconds, and each read costs only what is new.
    auto *trafficTimer = new QTimer(this);
    trafficTimer->setObjectName(QStringLiteral("liveTrafficTimer"));
    connect(trafficTimer, &QTimer::timeout, this, &OverviewPage::refreshTraffic);
    if (!mapping()) {
        trafficTimer->start(kTrafficRefreshMs);
        refreshTraffic();
    }
}

void OverviewPage::refreshTraffic()
{
    if (m_trafficPending)
        return;
    m_trafficPending = true;
    worker()->submit<console::LiveTraffic>(
        QStringLiteral("liveTraffic"), console::liveTrafficJob(m_traffic), this,
        [this](const console::LiveTraffic &traffic) {
            m_trafficPending = false;
            m_chart->setTraffic(traffic);
            Q_EMIT trafficShown();
        },
        [this](const db::Error &error) {
            m_trafficPending = false;
            m_chart->setError(db::userMessage(error));
        });
}

void OverviewPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    m_switch->setAllowed(privileges.flipSwitch);
}

void OverviewPage::setReadSource(const ReadSource &source)
{
    const bool stale = source.stale();
    for (Tile *tile : {m_mode, m_rate, m_duplicates, m_backlog, m_money, m_instances})
        tile->setStale(stale);
    m_staleNote->setVisible(stale);
    if (stale)
        m_staleNote->setText(palette::strong(
            palette::Role::Warning,
            tr("These figures are stale: %1. Actions still run on the primary, and a "
               "compensation is planned there again before it runs.")
                .arg(source.describe().toHtmlEscaped())));
}

void OverviewPage::refresh()
{
    // One refresh at a time: on a slow server a queue of refreshes would only grow.
    if (m_pending)
        return;
    m_pending = true;
    m_busy->start(tr("Refreshing"));
    const console::ConsoleSettings &settings = console::ConsoleSettings::instance();
    const qint64 pointsPerYuan = settings.pointsPerYuan();
    if (!m_activity)
        m_activity = std::make_shared<console::ActivityTally>(console::kRecentActivitySeconds);
    if (!m_tallies)
        m_tallies = std::make_shared<console::OverviewTallies>();
    worker()->submit<console::OverviewRefresh>(
        QStringLiteral("overview"),
        console::overviewJob(m_tallies, m_activity, pointsPerYuan,
                             mapping() ? std::optional(*mapping()) : std::nullopt),
        this,
        [this](const console::OverviewRefresh &result) {
            m_pending = false;
            m_busy->stop();
            show(result.summary, result.figures);
        },
        [this](const db::Error &error) {
            m_pending = false;
            m_busy->stop();
            showError(db::userMessage(error));
        });
}

void OverviewPage::show(const console::DatabaseSummary &summary, const console::OverviewFigures &f)
{
    const Dsn &dsn = worker()->dsn();
    if (summary.schemaLevel.isEmpty()) {
        m_headline->setText(tr("Database %1 has no payops schema").arg(dsn.database));
        m_details->setText(tr("Run: payops migrate --db %1").arg(dsn.toDisplayString()));
        return;
    }
    m_headline->setText(summary.sandbox ? tr("%1 — sandbox").arg(dsn.database) : dsn.database);
    const QLocale locale;
    const QString recent =
        tr("%1 orders created, %2 paid, %3 repeated payments refused")
            .arg(locale.toString(f.recent.ordersCreated),
                 locale.toString(f.recent.entered(QStringLiteral("PAID"))),
                 locale.toString(f.recent.refused(QStringLiteral("PAID"), QStringLiteral("PAID"))));
    // On the team's tables payops's own orders are empty: their last hour would read as zero.
    m_details->setText(mapping()
                           ? tr("%1 as %2 · server %3 · schema level %4 · the team's tables of %5")
                                 .arg(dsn.toDisplayString(), summary.currentUser,
                                      summary.serverVersion, summary.schemaLevel, mapping()->path)
                           : tr("%1 as %2 · server %3 · schema level %4 · last hour: %5")
                                 .arg(dsn.toDisplayString(), summary.currentUser,
                                      summary.serverVersion, summary.schemaLevel, recent));
    m_details->setToolTip(
        tr("The last hour's orders and transitions, counted by the minute: read once when the page "
           "opens, then only what is new at each refresh."));
    const console::ConsoleSettings &settings = console::ConsoleSettings::instance();
    const bool recordOnly = f.mode == QLatin1String("RECORD_ONLY");
    m_switch->setMode(f.mode);
    m_mode->setValue(f.mode.isEmpty() ? tr("unknown") : f.mode,
                     tr("switch v%1, set by %2: %3")
                         .arg(QString::number(f.switchVersion), f.switchChangedBy, f.switchReason),
                     recordOnly ? Tile::Tone::Warning : Tile::Tone::Good);
    if (mapping())
        m_rate->setValue(tr("n/a"), tr("not available on mapped tables: the team's payments do "
                                       "not all pass through payops's callback log"));
    else
        m_rate->setValue(locale.toString(f.callbacksLastMinute),
                         tr("distinct pay_no first received in the last 60 s"));
    const auto &d = f.duplicates;
    // Until the duplicate watch has read the history once, its figures are a lower bound.
    const QString counting =
        f.duplicatesComplete || !f.duplicatesWatched
            ? QString()
            : tr("<br><b>Counting for the first time: %1 % of the orders read</b>, the figures "
                 "grow until then")
                  .arg(f.duplicatesPercent);
    const QString note = f.duplicatesNote.isEmpty()
                             ? QString()
                             : QStringLiteral("<br>") + f.duplicatesNote.toHtmlEscaped();
    QString backlogDetail = tr("callbacks recorded in RECORD_ONLY mode, waiting to be processed");
    if (f.unmatched.callbacks >
        0) // a payment waiting for the drain is worth a second look, an orphan less so
        backlogDetail +=
            QStringLiteral("<br><b%1>%2</b>")
                .arg(
                    f.unmatched.withOrder > 0
                        ? QStringLiteral(" style='color:%1'").arg(palette::warning().name())
                        : QString(),
                    tr("%1 unmatched (arrived before their order), %2 of them with their order now")
                        .arg(locale.toString(f.unmatched.callbacks),
                             locale.toString(f.unmatched.withOrder)));
    m_backlog->setValue(locale.toString(f.backlog), backlogDetail,
                        f.backlog > 0 ? Tile::Tone::Warning : Tile::Tone::Neutral);
    if (f.mapped) {
        showMapped(*f.mapped, f, counting + note);
    } else {
        m_duplicates->setValue(
            f.duplicatesWatched ? locale.toString(d.extraRows()) : tr("unknown"),
            tr("extra copies on %1 orders: %2 coupons, %3 points rows; %4 compensations recorded")
                    .arg(locale.toString(d.orders), locale.toString(d.couponExtra),
                         locale.toString(d.pointExtra), locale.toString(d.compensations)) +
                counting + note,
            d.extraRows() > 0      ? Tile::Tone::Bad
            : f.duplicatesComplete ? Tile::Tone::Good
                                   : Tile::Tone::Warning);
        m_money->setValue(f.duplicatesWatched ? console::formatMoney(d.atRiskFen()) : tr("unknown"),
                          tr("coupons ¥%1 + points ¥%2 (%3 points = ¥1)")
                                  .arg(console::formatYuan(d.couponFen),
                                       console::formatYuan(d.pointFen),
                                       QString::number(settings.pointsPerYuan())) +
                              counting,
                          d.atRiskFen() > 0      ? Tile::Tone::Bad
                          : f.duplicatesComplete ? Tile::Tone::Good
                                                 : Tile::Tone::Warning);
    }
    m_instances->setValue(
        QStringLiteral("%1 / %2").arg(QString::number(f.instancesAlive),
                                      QString::number(f.instancesKnown)),
        f.unsafeInstancesAlive > 0
            ? tr("%1 alive instance(s) run the UNSAFE demo handler").arg(f.unsafeInstancesAlive)
            : tr("heartbeat within %1 s").arg(f.instanceAliveSeconds),
        f.unsafeInstancesAlive > 0 ? Tile::Tone::Bad
        : f.instancesAlive > 0     ? Tile::Tone::Good
                                   : Tile::Tone::Warning);
    m_updated->setText(
        tr("Updated %1 UTC · every %2 s")
            .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("HH:mm:ss")),
                 QString::number(settings.refreshSeconds())));
}

void OverviewPage::showMapped(const mapping::MappedWatchFigures &watch,
                              const console::OverviewFigures &f, const QString &notes)
{
    const QLocale locale;
    const qint64 pointsPerYuan = console::ConsoleSettings::instance().pointsPerYuan();
    QStringList copies;
    QStringList values;
    for (const mapping::MappedSideEffectFigures &side : watch.sideEffects) {
        copies << tr("%1: %2 extra in %3 groups")
                      .arg(side.name.toHtmlEscaped(), locale.toString(side.extraCopies),
                           locale.toString(side.openGroups));
        values << tr("%1 ¥%2").arg(side.name.toHtmlEscaped(),
                                   console::formatYuan(side.valueFen(pointsPerYuan)));
    }
    const qint64 extra = watch.extraCopies();
    const qint64 fen = watch.valueFen(pointsPerYuan);
    const auto tone = [&f](qint64 figure) {
        return figure > 0             ? Tile::Tone::Bad
               : f.duplicatesComplete ? Tile::Tone::Good
                                      : Tile::Tone::Warning;
    };
    m_duplicates->setValue(
        f.duplicatesWatched ? locale.toString(extra) : tr("unknown"),
        tr("on %1 orders of the team's tables<br>%2")
                .arg(locale.toString(watch.openOrders), copies.join(QStringLiteral("<br>"))) +
            notes,
        tone(extra));
    m_money->setValue(
        f.duplicatesWatched ? console::formatMoney(fen) : tr("unknown"),
        values.join(QStringLiteral(" + ")) + tr(" (%1 points = ¥1)").arg(pointsPerYuan), tone(fen));
}

void OverviewPage::showError(const QString &message)
{
    m_headline->setText(tr("Cannot read the database"));
    m_details->setText(message);
    m_updated->setText(
        tr("Last attempt %1 UTC failed")
            .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("HH:mm:ss"))));
}

} // namespace payops
