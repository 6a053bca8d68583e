#include "auditmodel.h"

namespace payops {

namespace {

QString oneLine(const QString &text)
{
    QString line = text;
    line.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return line;
}
} // namespace

AuditModel::AuditModel(console::Worker *worker, QObject *parent)
    : PagedRowModel(worker, NUM_COLUMNS, parent)
{
}

void AuditModel::reload(const AuditFilter &filter)
{
    m_filter = filter;
    restart();
}

QVariant AuditModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AuditEntry &row = rowAt(index.row());
    if (role == BeforeJsonRole)
        return row.beforeJson;
    if (role == AfterJsonRole)
        return row.afterJson;
    if (role == Qt::ToolTipRole && index.column() == ReasonColumn)
        return row.reason;
    if (role != Qt::DisplayRole)
        return {};
    return displayText(row, index.column());
}

QVariant AuditModel::displayText(const AuditEntry &row, int column)
{
    switch (column) {
    case IdColumn:
        return row.id;
    case AtColumn:
        return row.at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    case ActorColumn:
        return row.actor;
    case ActionColumn:
        return row.action;
    case TargetColumn:
        return row.target;
    case ReasonColumn:
        return oneLine(row.reason);
    case TicketColumn:
        return row.ticket;
    default:
        return {};
    }
}

QVariant AuditModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Entry");
    case AtColumn:
        return tr("At (UTC)");
    case ActorColumn:
        return tr("Who (database account)");
    case ActionColumn:
        return tr("Action");
    case TargetColumn:
        return tr("Target");
    case ReasonColumn:
        return tr("Reason");
    case TicketColumn:
        return tr("Ticket");
    default:
        return {};
    }
}

void AuditModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    const AuditFilter filter = m_filter;
    const qint64 before = rows().isEmpty() ? 0 : rows().last().id;
    const int limit = pageSize();
    fetchPage(QStringLiteral("audit-page"), limit,
              console::jobOf(loadAuditPage, filter, before, limit));
}

StreamedCsvSource::Job AuditModel::csvJob() const
{
    return console::auditCsvRows(m_filter, [](const AuditEntry &entry) {
        QStringList cells;
        for (int column = 0; column < NUM_COLUMNS; ++column)
            cells << displayText(entry, column).toString();
        return cells;
    });
}

} // namespace payops
