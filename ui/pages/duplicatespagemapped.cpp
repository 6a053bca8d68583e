// The duplicates page on a team's own tables (docs/mapping.md): see duplicatespage.h.
#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "dialogs/mappedcompensationdialog.h"
#include "duplicatespage.h"
#include "palette.h"
#include "widgets/busyindicator.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMap>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
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

// Extra live copies of an order per side effect: its live, uncompensated rows by (side effect,
// key), less the one of each that stays.
QMap<QString, int> extraCopies(const mapping::MappedOrderEvidence &order)
{
    QMap<QPair<QString, QStringList>, int> live;
    for (const mapping::MappedSideEffectRow &row : order.sideEffects)
        if (row.live && row.compensated.isEmpty())
            ++live[{row.sideEffect, row.key}];
    QMap<QString, int> extra;
    for (auto it = live.cbegin(); it != live.cend(); ++it)
        if (it.value() > 1)
            extra[it.key().first] += it.value() - 1;
    return extra;
}

} // namespace

void DuplicatesPage::buildMapped(QVBoxLayout *layout)
{
    auto *top = new QHBoxLayout;
    m_totals = new QLabel(this);
    m_totals->setObjectName(QStringLiteral("totalsLabel"));
    m_totals->setWordWrap(true);
    m_totals->setTextFormat(Qt::RichText);
    m_busy = new BusyIndicator(this);
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    top->addWidget(m_totals, 1);
    top->addWidget(m_busy);
    top->addWidget(refreshButton);
    layout->addLayout(top);

    m_mappedOrderRows = new QStandardItemModel(0, 5, this);
    m_mappedOrderRows->setHorizontalHeaderLabels(
        {tr("Order"), tr("User"), tr("Amount"), tr("State"), tr("Extra live copies")});
    m_mappedOrders = rowTable(QStringLiteral("mappedOrdersTable"), m_mappedOrderRows, this);
    m_mappedCopyRows = new QStandardItemModel(0, 7, this);
    m_mappedCopyRows->setHorizontalHeaderLabels({tr("Side effect"), tr("Row id"), tr("Key"),
                                                 tr("Value"), tr("Created"), tr("Live / used"),
                                                 tr("Compensated")});
    m_mappedCopies = rowTable(QStringLiteral("mappedCopiesTable"), m_mappedCopyRows, this);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_mappedOrders);
    splitter->addWidget(m_mappedCopies);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);

    auto *acts = new QHBoxLayout;
    m_compensateOrders = new QPushButton(tr("Compensate selected orders…"), this);
    m_compensateOrders->setObjectName(QStringLiteral("compensateOrders"));
    m_compensateAll = new QPushButton(tr("Compensate every open order…"), this);
    m_compensateAll->setObjectName(QStringLiteral("compensateAll"));
    auto *preview = new QLabel(tr("Each opens a dry-run preview first:"), this);
    acts->addWidget(preview);
    acts->addWidget(m_compensateOrders);
    acts->addWidget(m_compensateAll);
    acts->addStretch(1);
    layout->addLayout(acts);
    auto *note = new QLabel(
        tr("The team's tables, through the mapping %1. An order is listed while a side effect "
           "has more than one live copy for one key; the first copy stays. Double-click an order "
           "for its evidence. Points at their cash value from the settings.")
            .arg(mapping()->path),
        this);
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(refreshButton, &QPushButton::clicked, this, &DuplicatesPage::refresh);
    connect(m_mappedOrders, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT openOrder(m_mapped.orders.at(index.row()).order.id);
    });
    connect(m_mappedOrders->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
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
    worker()->submit<console::MappedDuplicates>(
        mappedKey(), console::mappedDuplicatesJob(*mapping(), progress), this,
        [this](const console::MappedDuplicates &mapped) {
            m_busy->stop();
            showMapped(mapped);
        },
        [this](const db::Error &error) {
            m_busy->stop();
            if (!console::Worker::isCancelled(error))
                m_totals->setText(db::userMessage(error).toHtmlEscaped());
        });
}

void DuplicatesPage::showMapped(const console::MappedDuplicates &mapped)
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
    if (mapped.more)
        text += tr("<br>The first %1 orders are listed.").arg(mapped.orders.size());
    m_totals->setText(text);

    m_mappedOrderRows->removeRows(0, m_mappedOrderRows->rowCount());
    for (const mapping::MappedOrderEvidence &order : mapped.orders) {
        const QMap<QString, int> extra = extraCopies(order);
        QStringList copies;
        for (auto it = extra.cbegin(); it != extra.cend(); ++it)
            copies << tr("%1 ×%2").arg(it.key()).arg(it.value());
        m_mappedOrderRows->appendRow(
            {cell(QString::number(order.order.id), Qt::AlignRight),
             cell(QString::number(order.order.user), Qt::AlignRight),
             cell(console::formatMoney(order.order.amountFen), Qt::AlignRight),
             cell(order.order.state), cell(copies.join(QStringLiteral(", ")))});
    }
    m_mappedOrders->resizeColumnsToContents();
    showMappedCopies();
    updateActions();
    Q_EMIT mappedShown();
}

void DuplicatesPage::showMappedCopies()
{
    m_mappedCopyRows->removeRows(0, m_mappedCopyRows->rowCount());
    const QModelIndexList rows = m_mappedOrders->selectionModel()->selectedRows();
    if (rows.isEmpty() || rows.first().row() >= m_mapped.orders.size())
        return;
    for (const mapping::MappedSideEffectRow &row :
         m_mapped.orders.at(rows.first().row()).sideEffects) {
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
        for (const QModelIndex &index : m_mappedOrders->selectionModel()->selectedRows())
            scope.orders << m_mapped.orders.at(index.row()).order.id;
        if (scope.orders.isEmpty())
            return nullptr;
        text = tr("%n selected order(s)", nullptr, int(scope.orders.size()));
    }
    auto *dialog = new MappedCompensationDialog(worker()->dsn(), *mapping(), text, scope,
                                                m_pointsPerYuan, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &MappedCompensationDialog::changed, this, &DuplicatesPage::refresh);
    dialog->open();
    return dialog;
}

} // namespace payops
