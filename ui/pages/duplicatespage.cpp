#include "duplicatespage.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "dialogs/compensationdialog.h"
#include "models/duplicatemodel.h"
#include "palette.h"
#include "widgets/busyindicator.h"
#include "widgets/datatable.h"
#include "widgets/duplicatecharts.h"
#include "windowcombo.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QIntValidator>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace payops {
namespace {

const QString &summaryKey()
{
    static const QString key = QStringLiteral("duplicates-summary");
    return key;
}

} // namespace

DuplicatesPage::DuplicatesPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
    , m_pointsPerYuan(console::ConsoleSettings::instance().pointsPerYuan())
{
    setObjectName(QStringLiteral("duplicatesPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    if (mapping()) {
        buildMapped(layout);
        followPointsRate();
        refresh();
        return;
    }

    auto *filters = new QHBoxLayout;
    m_window = new WindowCombo(this, 4);
    m_kind = new QComboBox(this);
    m_kind->setObjectName(QStringLiteral("kindCombo"));
    m_kind->addItem(tr("coupons and points"), int(console::DuplicateKind::Any));
    m_kind->addItem(tr("coupons"), int(console::DuplicateKind::Coupon));
    m_kind->addItem(tr("points"), int(console::DuplicateKind::Points));
    m_compensation = new QComboBox(this);
    m_compensation->setObjectName(QStringLiteral("compensationCombo"));
    m_compensation->addItem(tr("not yet compensated"), int(console::CompensationFilter::Open));
    m_compensation->addItem(tr("compensated"), int(console::CompensationFilter::Compensated));
    m_compensation->addItem(tr("both"), int(console::CompensationFilter::All));
    buildUserFilter();
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    filters->addWidget(new QLabel(tr("Issued in"), this));
    filters->addWidget(m_window);
    filters->addWidget(new QLabel(tr("Kind"), this));
    filters->addWidget(m_kind);
    filters->addWidget(new QLabel(tr("User"), this));
    filters->addWidget(m_user);
    filters->addWidget(new QLabel(tr("Show"), this));
    filters->addWidget(m_compensation);
    filters->addStretch(1);
    m_busy = new BusyIndicator(this);
    filters->addWidget(m_busy);
    filters->addWidget(refreshButton);
    layout->addLayout(filters);

    m_totals = new QLabel(this);
    m_totals->setObjectName(QStringLiteral("totalsLabel"));
    m_totals->setWordWrap(true);
    layout->addWidget(m_totals);

    m_charts = new DuplicateCharts(this);
    m_model = new DuplicateModel(worker(), this);
    auto *table = new DataTable(QStringLiteral("duplicatesTable"), m_model, this);
    m_table = table;
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_charts);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    layout->addWidget(splitter, 1);
    auto *acts = new QHBoxLayout;
    m_compensateSelected = new QPushButton(tr("Compensate selected…"), this);
    m_compensateSelected->setObjectName(QStringLiteral("compensateSelected"));
    m_compensateOrders = new QPushButton(tr("Compensate their orders…"), this);
    m_compensateOrders->setObjectName(QStringLiteral("compensateOrders"));
    m_compensateAll = new QPushButton(tr("Compensate all in this filter…"), this);
    m_compensateAll->setObjectName(QStringLiteral("compensateAll"));
    // Wrapped, so that on a laptop it takes a second line rather than the buttons' room.
    auto *preview = new QLabel(tr("Each opens a dry-run preview first:"), this);
    preview->setWordWrap(true);
    acts->addWidget(preview, 1);
    acts->addWidget(m_compensateSelected);
    acts->addWidget(m_compensateOrders);
    acts->addWidget(m_compensateAll);
    acts->addStretch(1);
    // Every group of the filter, not only those scrolled to (see DataTable).
    auto *exportButton = new QToolButton(this);
    exportButton->setObjectName(QStringLiteral("exportDuplicates"));
    exportButton->setDefaultAction(table->exportAction());
    exportButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    acts->addWidget(exportButton);
    layout->addLayout(acts);
    auto *note = new QLabel(
        tr("Double-click a row for the order's evidence. Duplicate callbacks by pay_no cannot "
           "exist: pay_callback_log has a unique key on it. Money at risk counts live extra copies "
           "only; points at their cash value from the settings."),
        this);
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(refreshButton, &QPushButton::clicked, this, &DuplicatesPage::refresh);
    connect(m_window, &QComboBox::currentIndexChanged, this, &DuplicatesPage::refresh);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &DuplicatesPage::refresh);
    connect(m_compensation, &QComboBox::currentIndexChanged, this, &DuplicatesPage::refresh);
    connect(m_user, &QLineEdit::editingFinished, this, &DuplicatesPage::refresh);
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT openOrder(index.data(DuplicateModel::OrderIdRole).toLongLong());
    });
    connect(m_model, &DuplicateModel::loadingChanged, this, &DuplicatesPage::updateBusy);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &DuplicatesPage::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &DuplicatesPage::updateActions);
    connect(m_compensateSelected, &QPushButton::clicked, this,
            [this] { compensate(CompensateWhat::SelectedGroups); });
    connect(m_compensateOrders, &QPushButton::clicked, this,
            [this] { compensate(CompensateWhat::SelectedOrders); });
    connect(m_compensateAll, &QPushButton::clicked, this,
            [this] { compensate(CompensateWhat::AllInFilter); });
    updateActions();
    connect(m_model, &DuplicateModel::failed, this,
            [this](const QString &message) { m_totals->setText(message); });
    connect(m_busy, &BusyIndicator::cancelRequested, this, [this] {
        worker()->cancel(summaryKey());
        worker()->cancel(QStringLiteral("duplicates-page"));
        m_summaryPending = false;
        m_busy->stop();
        m_totals->setText(tr("Cancelled. Refresh to scan again."));
    });
    followPointsRate();
    refresh();
}

void DuplicatesPage::buildUserFilter()
{
    m_user = new QLineEdit(this);
    m_user->setObjectName(QStringLiteral("userFilter"));
    m_user->setPlaceholderText(tr("any user"));
    m_user->setValidator(new QIntValidator(1, INT_MAX, m_user));
    m_user->setMaximumWidth(110);
}

void DuplicatesPage::followPointsRate()
{
    // Only a new cash value of points changes what this page shows; a scan is not cheap.
    const console::ConsoleSettings &settings = console::ConsoleSettings::instance();
    connect(&settings, &console::ConsoleSettings::changed, this, [this, &settings] {
        if (settings.pointsPerYuan() == m_pointsPerYuan)
            return;
        m_pointsPerYuan = settings.pointsPerYuan();
        refresh();
    });
}

void DuplicatesPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    updateActions();
}

void DuplicatesPage::updateActions()
{
    const bool allowed = privileges().compensate;
    if (mapping()) {
        const bool selected = m_mappedGroups->selectionModel()->hasSelection();
        m_compensateOrders->setEnabled(allowed && selected);
        // Every open order, whatever the filter shows.
        m_compensateAll->setEnabled(allowed && m_mapped.watch.figures.groups() > 0);
        const QString refused =
            tr("This database account may not compensate (the "
               "payops_operator role may, with the grants of docs/mapping.md).");
        for (QPushButton *button : {m_compensateOrders, m_compensateAll})
            button->setToolTip(allowed ? QString() : refused);
        return;
    }
    const bool selected = m_table->selectionModel()->hasSelection();
    m_compensateSelected->setEnabled(allowed && selected);
    m_compensateOrders->setEnabled(allowed && selected);
    m_compensateAll->setEnabled(allowed);
    const QString refused =
        tr("This database account may not compensate (the payops_operator role may).");
    for (QPushButton *button : {m_compensateSelected, m_compensateOrders, m_compensateAll})
        button->setToolTip(allowed ? QString() : refused);
}

CompensationDialog *DuplicatesPage::compensate(CompensateWhat what)
{
    if (mapping()) // payops's own tables' dialog; see compensateMapped()
        return nullptr;
    QString text;
    CompensationDialog::ScopeSource source;
    if (what == CompensateWhat::AllInFilter) {
        const console::DuplicateFilter f = filter();
        text = tr("every open duplicate this filter shows (%1)").arg(m_window->currentText());
        source = console::jobOf(console::compensationScopeOf, f);
    } else {
        CompensationScope scope;
        for (const QModelIndex &index : m_table->selectionModel()->selectedRows()) {
            const console::DuplicateGroup &group = m_model->group(index.row());
            if (what == CompensateWhat::SelectedOrders && !scope.orders.contains(group.orderId))
                scope.orders << group.orderId;
            else if (what == CompensateWhat::SelectedGroups)
                scope.groups << console::compensationGroupOf(group);
        }
        if (scope.isEmpty())
            return nullptr;
        text = what == CompensateWhat::SelectedOrders
                   ? tr("%n whole order(s)", nullptr, int(scope.orders.size()))
                   : tr("%n selected duplicate group(s)", nullptr, int(scope.groups.size()));
        source = console::knownScopeJob(scope);
    }
    auto *dialog = new CompensationDialog(target(), text, source, m_pointsPerYuan, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

console::DuplicateFilter DuplicatesPage::filter() const
{
    console::DuplicateFilter f;
    f.window = m_window->window();
    f.kind = console::DuplicateKind(m_kind->currentData().toInt());
    f.compensation = console::CompensationFilter(m_compensation->currentData().toInt());
    f.userId = m_user->text().toLongLong();
    f.pointsPerYuan = m_pointsPerYuan;
    return f;
}

void DuplicatesPage::refresh()
{
    if (mapping()) {
        loadMapped();
        return;
    }
    m_model->reload(filter());
    loadSummary();
}

void DuplicatesPage::loadSummary()
{
    m_summaryPending = true;
    updateBusy();
    const console::DuplicateFilter f = filter();
    worker()->submit<console::DuplicateSummary>(
        summaryKey(), console::jobOf(console::loadDuplicateSummary, f), this,
        [this](const console::DuplicateSummary &s) {
            m_summaryPending = false;
            updateBusy();
            const QLocale locale;
            const auto &t = s.totals;
            m_totals->setText(
                tr("<b>%1 open duplicate groups on %2 orders</b>: %3 extra coupons (¥%4) and %5 "
                   "extra "
                   "points rows (¥%6). <b style='color:%9'>Money at risk ¥%7.</b> "
                   "%8 compensations recorded.")
                    .arg(locale.toString(t.couponGroups + t.pointGroups), locale.toString(t.orders),
                         locale.toString(t.couponExtra), console::formatYuan(t.couponFen),
                         locale.toString(t.pointExtra), console::formatYuan(t.pointFen),
                         console::formatYuan(t.atRiskFen()), locale.toString(t.compensations),
                         (t.atRiskFen() > 0 ? palette::danger() : palette::ok()).name()));
            m_charts->setTimeline(s.timeline);
            m_charts->setTotals(t);
        },
        [this](const db::Error &error) {
            m_summaryPending = false;
            updateBusy();
            if (!console::Worker::isCancelled(error))
                m_totals->setText(db::userMessage(error));
        });
}

void DuplicatesPage::updateBusy()
{
    const bool busy = m_summaryPending || m_model->isLoading();
    if (busy && !m_busy->isBusy())
        m_busy->start(tr("Scanning"));
    else if (!busy)
        m_busy->stop();
}

} // namespace payops
