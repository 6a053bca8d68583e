#pragma once

#include "domain/reconciliation.h"

#include "rowtablemodel.h"

namespace payops {

// The findings of a statement's newest reconciliation, as stored; each read replaces them.
class FindingModel final : public RowTableModel<ReconciliationFinding>
{
    Q_OBJECT

public:
    enum Columns { KindColumn, PayNoColumn, OrderColumn, PlatformAmountColumn, OurAmountColumn, LineColumn,
                   PlatformStatusColumn, OurStatusColumn, NUM_COLUMNS };
    enum Roles { OrderIdRole = Qt::UserRole + 1, KindRole, LineRole };

    explicit FindingModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(FindingModel)

    void setFindings(const QList<ReconciliationFinding> &findings) { setRows(findings); }
    // "漏单 · not with us", as finance says it; the tooltip says the rest.
    static QString kindText(FindingKind kind);
    // What finance does about it, one sentence.
    static QString kindAdvice(FindingKind kind);

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
};

} // namespace payops
