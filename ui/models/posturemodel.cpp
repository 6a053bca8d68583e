#include "posturemodel.h"

#include "palette.h"

#include <QFont>

namespace payops {
namespace {

palette::Role roleOf(DefenceState state)
{
    switch (state) {
    case DefenceState::Present:
        return palette::Role::Ok;
    case DefenceState::Missing:
        return palette::Role::Danger;
    case DefenceState::Unknown:
        break;
    }
    return palette::Role::Muted;
}

} // namespace

PostureModel::PostureModel(QObject *parent)
    : RowTableModel(NUM_COLUMNS, parent)
{
}

QString PostureModel::stateText(DefenceState state)
{
    switch (state) {
    case DefenceState::Present:
        return tr("Present");
    case DefenceState::Missing:
        return tr("Missing");
    case DefenceState::Unknown:
        break;
    }
    return tr("Unknown");
}

QVariant PostureModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Defence &d = rowAt(index.row());
    switch (role) {
    case NameRole:
        return d.name;
    case StateRole:
        return defenceStateName(d.state);
    case Qt::ForegroundRole:
        if (index.column() == StateColumn)
            return palette::colour(roleOf(d.state));
        // What gets through is real only while the defence is missing; otherwise it is a reminder.
        if (index.column() == LetsThroughColumn)
            return palette::colour(d.state == DefenceState::Missing ? palette::Role::Danger
                                                                    : palette::Role::Muted);
        return {};
    case Qt::BackgroundRole:
        return index.column() == StateColumn ? QVariant(palette::tint(roleOf(d.state)))
                                             : QVariant();
    case Qt::FontRole:
        if (index.column() == StateColumn) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ToolTipRole:
        return index.column() == DefenceColumn ? QVariant(d.name) : QVariant();
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case StateColumn:
        return stateText(d.state);
    case DefenceColumn:
        return d.title;
    case EvidenceColumn:
        return d.evidence;
    // What is absent lets it through; for a present defence it is what the defence stops.
    case LetsThroughColumn:
        return d.letsThrough;
    default:
        return {};
    }
}

QVariant PostureModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case StateColumn:
        return tr("State");
    case DefenceColumn:
        return tr("Defence");
    case EvidenceColumn:
        return tr("What was found");
    case LetsThroughColumn:
        return tr("Without it, what gets through");
    default:
        return {};
    }
}

} // namespace payops
