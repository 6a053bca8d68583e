#include "inspectionrunmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "palette.h"

namespace payops {

InspectionRunModel::InspectionRunModel(console::Worker *worker, QObject *parent)
    : PagedRowModel(worker, NUM_COLUMNS, parent)
{
}

QVariant InspectionRunModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const InspectionRun &run = rowAt(index.row());
    if (role == CleanRole)
        return run.clean;
    if (role == Qt::ForegroundRole && index.column() == ResultColumn)
        return run.clean ? palette::ok() : palette::danger();
    if (role == Qt::TextAlignmentRole && index.column() >= DuplicatesColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case IdColumn:
        return run.id;
    case StartedColumn:
        return run.startedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case SourceColumn:
        return run.source == QLatin1String("console") ? tr("console") : tr("command line");
    case RunByColumn:
        return run.runBy;
    case ResultColumn:
        return run.clean ? tr("Clean") : tr("Findings");
    case DuplicatesColumn:
        return run.duplicateGroups;
    case LatePaymentsColumn:
        return QStringLiteral("%1 / %2").arg(QString::number(run.unmatchedWithOrder),
                                             QString::number(run.unmatched));
    case RefundsColumn:
        return run.doublePaymentOrders == 0 ? QStringLiteral("0")
                                            : tr("%1 (¥%2)")
                                                  .arg(QString::number(run.doublePaymentOrders),
                                                       console::formatYuan(run.refundOwedFen));
    case BacklogColumn:
        return run.backlog;
    default:
        return {};
    }
}

QVariant InspectionRunModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Run");
    case StartedColumn:
        return tr("Started (UTC)");
    case SourceColumn:
        return tr("From");
    case RunByColumn:
        return tr("Who (database account)");
    case ResultColumn:
        return tr("Result");
    case DuplicatesColumn:
        return tr("Duplicate groups");
    case LatePaymentsColumn:
        return tr("Late payments / unmatched");
    case RefundsColumn:
        return tr("Refunds owed (orders)");
    case BacklogColumn:
        return tr("Backlog");
    default:
        return {};
    }
}

void InspectionRunModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    const qint64 before = rows().isEmpty() ? 0 : rows().last().id;
    const int limit = pageSize();
    fetchPage(QStringLiteral("inspection-runs"), limit,
              console::jobOf(loadInspectionRuns, before, limit));
}

} // namespace payops
