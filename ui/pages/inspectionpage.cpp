#include "inspectionpage.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "models/inspectionrunmodel.h"
#include "palette.h"
#include "widgets/datatable.h"
#include "widgets/inspectionchart.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

namespace payops {
namespace {

// The chart shows this many of the newest runs: a day of a schedule every 15 minutes.
constexpr int kChartRuns = 100;

QString idList(const QJsonValue &value)
{
    QStringList ids;
    for (const QJsonValue &id : value.toArray())
        ids << QString::number(id.toInteger());
    return ids.join(QStringLiteral(", "));
}

} // namespace

InspectionPage::InspectionPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("inspectionPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);

    auto *header = new QHBoxLayout;
    m_schedule = new QLabel(this);
    m_schedule->setObjectName(QStringLiteral("inspectionSchedule"));
    m_schedule->setWordWrap(true);
    m_runNow = new QPushButton(tr("Inspect now"), this);
    m_runNow->setObjectName(QStringLiteral("inspectNowButton"));
    header->addWidget(m_schedule, 1);
    header->addWidget(m_runNow);
    layout->addLayout(header);
    m_lastRun = new QLabel(this);
    m_lastRun->setObjectName(QStringLiteral("inspectionLastRun"));
    m_lastRun->setWordWrap(true);
    layout->addWidget(m_lastRun);

    auto *split = new QSplitter(Qt::Vertical, this);
    m_chart = new InspectionChart(split);
    split->addWidget(m_chart);
    auto *lower = new QSplitter(Qt::Horizontal, split);
    m_model = new InspectionRunModel(worker(), this);
    m_table = new DataTable(QStringLiteral("inspectionTable"), m_model, lower);
    lower->addWidget(m_table);
    m_findings = new QPlainTextEdit(lower);
    m_findings->setObjectName(QStringLiteral("inspectionFindings"));
    m_findings->setReadOnly(true);
    m_findings->setPlaceholderText(tr("Select a run to read its findings."));
    lower->addWidget(m_findings);
    lower->setStretchFactor(0, 3);
    lower->setStretchFactor(1, 2);
    split->addWidget(lower);
    layout->addWidget(split, 1);

    m_scheduler = new console::InspectionScheduler(target.dsn, target.mapping, this);
    connect(m_scheduler, &console::InspectionScheduler::finished, this,
            &InspectionPage::onRunFinished);
    connect(m_scheduler, &console::InspectionScheduler::failed, this,
            [this](const QString &message) {
                m_runNow->setEnabled(true);
                m_lastRun->setText(
                    palette::strong(palette::Role::Danger,
                                    tr("The inspection failed: %1").arg(message.toHtmlEscaped())));
            });
    connect(m_scheduler, &console::InspectionScheduler::scheduleChanged, this,
            &InspectionPage::showSchedule);
    connect(m_runNow, &QPushButton::clicked, this, [this] {
        m_runNow->setEnabled(false);
        m_lastRun->setText(tr("Inspecting…"));
        m_scheduler->runNow();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &InspectionPage::showSelected);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] { m_findings->clear(); });
    connect(m_model, &PagedTableModel::failed, this,
            [this](const QString &message) { m_lastRun->setText(message); });

    showSchedule();
    connect(startRefreshTimer(), &QTimer::timeout, this, [this] {
        // Only the chart follows the timer: its newest runs are one primary-key range. The table
        // is reloaded when a run is stored here or on refresh(), so a selection is not lost.
        if (isVisible())
            refreshChart();
    });
    refresh();
}

void InspectionPage::showSchedule()
{
    const int minutes = console::ConsoleSettings::instance().inspectionMinutes();
    if (m_scheduler->isActive())
        m_schedule->setText(
            tr("<b>This console inspects every %1 minute(s)</b> and stores each run; new findings "
               "raise a desktop notification.")
                .arg(minutes));
    else
        m_schedule->setText(
            tr("<b>No schedule in this console.</b> Set one in File → Settings (Run the inspection "
               "every), or run payops inspect from cron; each run is listed here."));
}

void InspectionPage::refresh()
{
    m_model->reload();
    refreshChart();
}

void InspectionPage::refreshChart()
{
    if (m_chartPending)
        return;
    m_chartPending = true;
    worker()->submit<QList<InspectionRun>>(
        QStringLiteral("inspection-chart"),
        console::jobOf(loadInspectionRuns, qint64(0), kChartRuns), this,
        [this](const QList<InspectionRun> &runs) {
            m_chartPending = false;
            m_chart->setRuns(runs);
        },
        [this](const db::Error &error) {
            m_chartPending = false;
            m_lastRun->setText(db::userMessage(error));
        });
}

void InspectionPage::onRunFinished(const console::ScheduledInspection &result)
{
    m_runNow->setEnabled(true);
    if (result.waitingForFirstCount) {
        m_lastRun->setText(
            tr("The first count of duplicates is at %1 %; the inspection runs once it is done.")
                .arg(result.percentScanned));
        return;
    }
    const InspectionRun &run = result.run;
    QString text = run.clean ? palette::coloured(palette::Role::Ok, tr("Last run: clean."))
                             : palette::strong(palette::Role::Danger, tr("Last run: findings."));
    if (result.stored.stored())
        text += QLatin1Char(' ') + tr("Stored as run %1.").arg(run.id);
    else
        text +=
            QLatin1Char(' ') +
            palette::coloured(palette::Role::Warning,
                              tr("Not stored: %1").arg(result.stored.notStored.toHtmlEscaped()));
    m_lastRun->setText(text);
    refresh();
    if (result.fresh.any())
        Q_EMIT newFindings(result.fresh, run);
}

void InspectionPage::showSelected()
{
    const QModelIndex current = m_table->currentIndex();
    if (!current.isValid()) {
        m_findings->clear();
        return;
    }
    m_findings->setPlainText(findingsText(m_model->rowAt(current.row())));
}

QString InspectionPage::findingsText(const InspectionRun &run)
{
    const QJsonObject json = QJsonDocument::fromJson(run.findingsJson.toUtf8()).object();
    const QJsonObject duplicates = json.value(QStringLiteral("duplicates")).toObject();
    const QJsonObject twice = json.value(QStringLiteral("double_payments")).toObject();
    QStringList lines;
    lines << tr("Run %1, %2 UTC, from %3 by %4: %5.")
                 .arg(QString::number(run.id),
                      run.startedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), run.source,
                      run.runBy, run.clean ? tr("clean") : tr("findings"));
    lines << QString();
    if (run.duplicateGroups > 0)
        lines << tr("Duplicate side effects: %1 open group(s), %2 extra copies, %3 yuan at risk; "
                    "orders %4. Compensate "
                    "them from the duplicates page.")
                     .arg(QString::number(run.duplicateGroups),
                          QString::number(run.duplicateExtraCopies),
                          console::formatYuan(run.moneyAtRiskFen),
                          idList(duplicates.value(QStringLiteral("sample_orders"))));
    else
        lines << tr("Duplicate side effects: none open.");
    // A run on a team's own tables (payops inspect --mapping, or this console with a mapping)
    // counted each side effect of the mapping apart.
    for (const QJsonValue &value : duplicates.value(QStringLiteral("side_effects")).toArray()) {
        const QJsonObject sideEffect = value.toObject();
        lines << tr("  %1: %2 open group(s), %3 extra copies, %4 yuan.")
                     .arg(sideEffect.value(QStringLiteral("name")).toString(),
                          QString::number(sideEffect.value(QStringLiteral("groups")).toInteger()),
                          QString::number(
                              sideEffect.value(QStringLiteral("extra_copies")).toInteger()),
                          console::formatYuan(
                              sideEffect.value(QStringLiteral("value_fen")).toInteger()));
    }
    if (run.unmatchedWithOrder > 0)
        lines << tr("Late payments: %1 unmatched callback(s) whose order exists now, %2 yuan to "
                    "apply. Drain them on "
                    "the backlog page.")
                     .arg(QString::number(run.unmatchedWithOrder),
                          console::formatYuan(
                              json.value(QStringLiteral("unmatched_with_order_fen")).toInteger()));
    lines << tr("Unmatched callbacks: %1 (%2 still without their order).")
                 .arg(QString::number(run.unmatched),
                      QString::number(run.unmatched - run.unmatchedWithOrder));
    if (run.doublePaymentOrders > 0)
        lines << tr("Paid twice by the customer: %1 order(s), %2 second payment(s), %3 yuan to "
                    "refund; orders %4. "
                    "Refund each second payment through its platform.")
                     .arg(QString::number(run.doublePaymentOrders),
                          QString::number(run.doublePaymentCallbacks),
                          console::formatYuan(run.refundOwedFen),
                          idList(twice.value(QStringLiteral("sample_orders"))));
    else
        lines << tr("Paid twice by the customer: none.");
    lines << tr("Backlog: %1 recorded callback(s).").arg(run.backlog);
    const QJsonObject sw = json.value(QStringLiteral("switch")).toObject();
    if (!sw.isEmpty())
        lines << tr("Switch: %1 (version %2).")
                     .arg(sw.value(QStringLiteral("mode")).toString(),
                          QString::number(sw.value(QStringLiteral("version")).toInteger()));
    return lines.join(QLatin1Char('\n'));
}

} // namespace payops
