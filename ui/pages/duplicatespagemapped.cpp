// The duplicates page on a team's own tables (docs/mapping.md): see duplicatespage.h.
#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "dialogs/mappedcompensationdialog.h"
#include "duplicatespage.h"
#include "models/mappedgroupmodel.h"
#include "palette.h"
#include "widgets/busyindicator.h"
#include "widgets/datatable.h"
#include "windowcombo.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace payops {
namespace {

const QString &mappedKey()
{
    static const QString key = QStringLiteral("duplicates-mapped");
    return key;
}

QTableView *rowTable(const QString &objectName, QStandardItemModel *model, QWidget *parent)
{
    auto *table = new QTableView(parent);
    table->setObjectName(objectName);
    table->setModel(model);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    return table;
}

QStandardItem *cell(const QString &text, Qt::Alignment align = Qt::AlignLeft)
{
    auto *item = new QStandardItem(text);
    item->setTextAlignment(align | Qt::AlignVCenter);
    return item;
}

QString valueText(qint64 value, bool points)
{
    return points ? DuplicatesPage::tr("%1 points").arg(QLocale().toString(value))
                  : console::formatMoney(value);
}

// The extra copies' value as the side effect counts it: fen, or points.
qint64 extraValue(const mapping::MappedSideEffectFigures &side)
{
    qint64 sum = 0;
    for (const auto &[value, copies] : side.extraByValue)
        sum += value * copies;
    return sum;
}

} // namespace

void DuplicatesPage::buildMapped(QVBoxLayout *layout)
{
    // The filters of the page on payops's own tables; the kind is a side effect of the mapping.
    auto *filters = new QHBoxLayout;
    m_window = new WindowCombo(this, 4);
    m_kind = new QComboBox(this);
    m_kind->setObjectName(QStringLiteral("kindCombo"));
    m_kind->addItem(tr("every side effect"), QString());
    for (const mapping::SideEffectMapping &effect : mapping()->sideEffects)
        m_kind->addItem(effect.name, effect.name);
    buildUserFilter();
    m_busy = new BusyIndicator(this);
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    filters->addWidget(new QLabel(tr("Last copy issued in"), this));
    filters->addWidget(m_window);
    filters->addWidget(new QLabel(tr("Side effect"), this));
    filters->addWidget(m_kind);
    filters->addWidget(new QLabel(tr("User"), this));
    filters->addWidget(m_user);
    filters->addStretch(1);
    filters->addWidget(m_busy);
    filters->addWidget(refreshButton);
    layout->addLayout(filters);

    m_totals = new QLabel(this);
    m_totals->setObjectName(QStringLiteral("totalsLabel"));
    m_totals->setWordWrap(true);
    m_totals->setTextFormat(Qt::RichText);
    layout->addWidget(m_totals);

    m_mappedGroupModel = new MappedGroupModel(worker(), *mapping(), this);
    m_mappedGroups = new DataTable(QStringLiteral("mappedGroupsTable"), m_mappedGroupModel, this);
    m_mappedGroups->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_mappedGroups->setAlternatingRowColors(true);
    m_mappedCopyRows = new QStandardItemModel(0, 7, this);
    m_mappedCopyRows->setHorizontalHeaderLabels({tr("Side effect"), tr("Row id"), tr("Key"),
                                                 tr("Value"), tr("Created"), tr("Live / used"),
                                                 tr("Compensated")});
    m_mappedCopies = rowTable(QStringLiteral("mappedCopiesTable"), m_mappedCopyRows, this);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_mappedGroups);
    splitter->addWidget(m_mappedCopies);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);

    auto *acts = new QHBoxLayout;
    m_compensateOrders = new QPushButton(tr("Compensate their orders…"), this);
    m_compensateOrders->setObjectName(QStringLiteral("compensateOrders"));
    m_compensateAll = new QPushButton(tr("Compensate every open order…"), this);
    m_compensateAll->setObjectName(QStringLiteral("compensateAll"));
    auto *preview = new QLabel(tr("Each opens a dry-run preview first:"), this);
    acts->addWidget(preview);
    acts->addWidget(m_compensateOrders);
    acts->addWidget(m_compensateAll);
    acts->addStretch(1);
    // Every group of the filter, not only the orders listed (MappedGroupModel::csvJob).
    auto *exportButton = new QToolButton(this);
    exportButton->setObjectName(QStringLiteral("exportDuplicates"));
    exportButton->setDefaultAction(m_mappedGroups->exportAction());
    exportButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    acts->addWidget(exportButton);
    layout->addLayout(acts);
    auto *note = new QLabel(
        tr("The team's tables, through the mapping %1. A group is listed while a side effect "
           "has more than one live copy for one key in an order; the first copy stays. "
           "Double-click a group for its order's evidence. Points at their cash value from the "
           "settings.")
            .arg(mapping()->path),
        this);
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(refreshButton, &QPushButton::clicked, this, &DuplicatesPage::refresh);
    connect(m_window, &QComboBox::currentIndexChanged, this, &DuplicatesPage::refresh);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &DuplicatesPage::refresh);
    connect(m_user, &QLineEdit::editingFinished, this, &DuplicatesPage::refresh);
    connect(m_mappedGroups, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT openOrder(m_mappedGroupModel->group(index.row()).orderId);
    });
    connect(m_mappedGroups->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        showMappedCopies();
        updateActions();
    });
    connect(m_compensateOrders, &QPushButton::clicked, this, [this] { compensateMapped(true); });
    connect(m_compensateAll, &QPushButton::clicked, this, [this] { compensateMapped(false); });
    connect(m_busy, &BusyIndicator::cancelRequested, this, [this] {
        worker()->cancel(mappedKey());
        m_busy->stop();
        m_totals->setText(tr("Cancelled. Refresh to read again; the watch goes on from where it "
                             "stopped."));
    });
    updateActions();
}

console::MappedDuplicateFilter DuplicatesPage::mappedFilter() const
{
    console::MappedDuplicateFilter f;
    f.window = m_window->window();
    f.sideEffect = m_kind->currentData().toString();
    f.userId = m_user->text().toLongLong();
    return f;
}

void DuplicatesPage::loadMapped()
{
    m_busy->start(tr("Reading the team's tables"));
    QPointer<DuplicatesPage> guard(this);
    // The first pass over the history reports how far it is, so that a long one is seen to move.
    const auto progress = [guard](int percent) {
        console::Worker::postTo(guard, [percent](DuplicatesPage *page) {
            page->m_busy->start(tr("First pass: %1 % read").arg(percent));
        });
    };
    const console::MappedDuplicateFilter filter = mappedFilter();
    worker()->submit<console::MappedDuplicates>(
        mappedKey(), console::mappedDuplicatesJob(*mapping(), filter, progress), this,
        [this, filter](const console::MappedDuplicates &mapped) {
            m_busy->stop();
            showMapped(mapped, filter);
        },
        [this](const db::Error &error) {
            m_busy->stop();
            if (!console::Worker::isCancelled(error))
                m_totals->setText(db::userMessage(error).toHtmlEscaped());
        });
}

void DuplicatesPage::showMapped(const console::MappedDuplicates &mapped,
                                const console::MappedDuplicateFilter &filter)
{
    m_mapped = mapped;
    const QLocale locale;
    const mapping::MappedWatchFigures &w = mapped.watch.figures;
    QStringList sides;
    for (const mapping::MappedSideEffectFigures &side : w.sideEffects)
        sides << tr("<b>%1</b>: %2 open groups, %3 extra copies (%4)")
                     .arg(side.name.toHtmlEscaped(), locale.toString(side.openGroups),
                          locale.toString(side.extraCopies),
                          valueText(extraValue(side), side.unit == mapping::Unit::Points));
    const qint64 fen = w.valueFen(m_pointsPerYuan);
    QString text = tr("<b>%1 open duplicate groups on %2 orders.</b> <b style='color:%3'>Money at "
                      "risk %4.</b><br>%5")
                       .arg(locale.toString(w.groups()), locale.toString(w.openOrders),
                            (fen > 0 ? palette::danger() : palette::ok()).name(),
                            console::formatMoney(fen), sides.join(QStringLiteral(" · ")));
    if (!mapped.watch.why.isEmpty())
        text += QStringLiteral("<br>") + mapped.watch.why.toHtmlEscaped();
    const bool filtered =
        !filter.window.isAll() || !filter.sideEffect.isEmpty() || filter.userId > 0;
    if (filtered)
        text +=
            tr("<br>The filter shows %1 groups on %2 orders.")
                .arg(locale.toString(mapped.groups.size()), locale.toString(mapped.orders.size()));
    if (mapped.more)
        text += tr("<br>The first %1 orders are listed; the CSV export holds every group.")
                    .arg(mapped.orders.size());
    m_totals->setText(text);

    m_mappedGroupModel->setGroups(mapped.groups, filter, m_pointsPerYuan);
    showMappedCopies();
    updateActions();
    Q_EMIT mappedShown();
}

void DuplicatesPage::showMappedCopies()
{
    m_mappedCopyRows->removeRows(0, m_mappedCopyRows->rowCount());
    const QModelIndexList rows = m_mappedGroups->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    const qint64 orderId = m_mappedGroupModel->group(rows.first().row()).orderId;
    const auto order = std::find_if(
        m_mapped.orders.cbegin(), m_mapped.orders.cend(),
        [orderId](const mapping::MappedOrderEvidence &o) { return o.order.id == orderId; });
    if (order == m_mapped.orders.cend())
        return;
    for (const mapping::MappedSideEffectRow &row : order->sideEffects) {
        QList<QStandardItem *> items{
            cell(row.sideEffect),
            cell(QString::number(row.id), Qt::AlignRight),
            cell(row.key.join(QStringLiteral(" / "))),
            cell(valueText(row.value, row.points), Qt::AlignRight),
            cell(row.createdAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))),
            cell(row.used   ? tr("used")
                 : row.live ? tr("live")
                            : tr("not live")),
            cell(row.compensated)};
        // A used copy is what compensation leaves to finance: it stands out.
        if (row.used && row.live && row.compensated.isEmpty())
            for (QStandardItem *item : items)
                item->setForeground(palette::warning());
        m_mappedCopyRows->appendRow(items);
    }
    m_mappedCopies->resizeColumnsToContents();
}

MappedCompensationDialog *DuplicatesPage::compensateMapped(bool selectedOnly)
{
    mapping::MappedScope scope = mapping::MappedScope::all();
    QString text = tr("every order with an open duplicate");
    if (selectedOnly) {
        scope = {};
        for (const QModelIndex &index : m_mappedGroups->selectionModel()->selectedRows()) {
            const qint64 order = m_mappedGroupModel->group(index.row()).orderId;
            if (!scope.orders.contains(order))
                scope.orders << order;
        }
        if (scope.orders.isEmpty())
            return nullptr;
        text = tr("%n selected order(s)", nullptr, int(scope.orders.size()));
    }
    auto *dialog =
        new MappedCompensationDialog(target(), *mapping(), text, scope, m_pointsPerYuan, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &MappedCompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

} // namespace payops
