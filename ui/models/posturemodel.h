#pragma once

#include "domain/inspection/posture.h"

#include "rowtablemodel.h"

namespace payops {

// The defences as inspectPosture() found them, in the order of the table of defences; each read
// replaces them all.
class PostureModel final : public RowTableModel<Defence>
{
    Q_OBJECT

public:
    enum Columns { StateColumn, DefenceColumn, EvidenceColumn, LetsThroughColumn, NUM_COLUMNS };
    enum Roles { NameRole = Qt::UserRole + 1, StateRole };

    explicit PostureModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(PostureModel)

    void setDefences(const QList<Defence> &defences) { setRows(defences); }
    const QList<Defence> &defences() const { return rows(); }
    // The state as a person reads it, translated.
    static QString stateText(DefenceState state);

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace payops
