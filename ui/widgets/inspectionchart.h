#pragma once

#include "domain/inspection/inspectionrun.h"

#include <QChartView>

class QLineSeries;

namespace payops {

// The findings of the stored inspections over time: open duplicate groups, unmatched
// callbacks and orders paid twice (refunds owed), one point per run on a time axis. Line
// series sit on a QDateTimeAxis in Qt 6.4 (bar series do not).
class InspectionChart final : public QChartView
{
    Q_OBJECT

public:
    explicit InspectionChart(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InspectionChart)

    // Runs in any order; the chart sorts them by start.
    void setRuns(QList<InspectionRun> runs);
    QLineSeries *duplicatesSeries() const { return m_duplicates; }
    QLineSeries *unmatchedSeries() const { return m_unmatched; }
    QLineSeries *refundsSeries() const { return m_refunds; }

private:
    QLineSeries *m_duplicates = nullptr;
    QLineSeries *m_unmatched = nullptr;
    QLineSeries *m_refunds = nullptr;
};

} // namespace payops
