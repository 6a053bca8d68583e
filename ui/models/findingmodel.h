#pragma once

#include "domain/mapping/mapping.h"
#include "domain/statement/reconciliation.h"

#include "rowtablemodel.h"
#include "streamedcsvsource.h"

namespace payops {

// The findings of a statement's newest reconciliation, as stored: the first of them (the page
// holds a bounded number) that each read replaces. Its CSV export reads every finding of the
// run again on the worker and writes each as it comes.
class FindingModel final : public RowTableModel<ReconciliationFinding>, public StreamedCsvSource
{
    Q_OBJECT

public:
    enum Columns {
        KindColumn,
        PayNoColumn,
        OrderColumn,
        PlatformAmountColumn,
        OurAmountColumn,
        LineColumn,
        PlatformStatusColumn,
        OurStatusColumn,
        NUM_COLUMNS
    };
    // OrderNoRole: the merchant's order number, when the finding has no payops order id.
    enum Roles { OrderIdRole = Qt::UserRole + 1, KindRole, LineRole, OrderNoRole };

    FindingModel(console::Worker *worker, QObject *parent);
    Q_DISABLE_COPY_MOVE(FindingModel)

    // The first findings of run `runId` (0: none), reconciled against the team's tables when
    // `mapping` is given: the export reads the statuses from the same side.
    void setFindings(const QList<ReconciliationFinding> &findings, qint64 runId,
                     std::optional<mapping::Mapping> mapping = std::nullopt)
    {
        m_runId = runId;
        m_mapping = std::move(mapping);
        setRows(findings);
    }
    // "漏单 · not with us", as finance says it; the tooltip says the rest.
    static QString kindText(FindingKind kind);
    // What finance does about it, one sentence.
    static QString kindAdvice(FindingKind kind);

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    console::Worker *csvWorker() const override { return m_worker; }
    Job csvJob() const override;

private:
    // A cell's text, for the table and its export alike.
    static QString displayText(const ReconciliationFinding &finding, int column);

    console::Worker *m_worker;
    qint64 m_runId = 0;
    std::optional<mapping::Mapping> m_mapping;
};

} // namespace payops
