#pragma once

#include "domain/callback/missingpayment.h"

#include "rowtablemodel.h"

namespace payops {

// The missing payments drafted from a statement, newest first; each read replaces them.
class DraftModel final : public RowTableModel<MissingPaymentDraft>
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        StatusColumn,
        OrderColumn,
        PayNoColumn,
        AmountColumn,
        LineColumn,
        DraftedByColumn,
        DecidedByColumn,
        CallbackColumn,
        ReasonColumn,
        NUM_COLUMNS
    };
    enum Roles { DraftIdRole = Qt::UserRole + 1, OrderIdRole, StatusRole };

    explicit DraftModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DraftModel)

    void setDrafts(const QList<MissingPaymentDraft> &drafts) { setRows(drafts); }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace payops
