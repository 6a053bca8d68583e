#pragma once

#include "console/duplicatescan.h"

#include <QWidget>

class QChart;
class QChartView;

namespace payops {

// Two charts of the duplicates page: extra copies over time (per minute or hour, stacked by
// kind) and the totals by kind. QBarSeries cannot sit on a QDateTimeAxis in Qt 6.4, so the
// time axis is a category axis with one label per bucket.
class DuplicateCharts final : public QWidget
{
    Q_OBJECT

public:
    explicit DuplicateCharts(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DuplicateCharts)

    void setTimeline(const console::DuplicateTimeline &timeline);
    void setTotals(const console::DuplicateTotals &totals);
    QChart *timelineChart() const;
    QChart *kindChart() const;

private:
    QChartView *m_timeline = nullptr;
    QChartView *m_byKind = nullptr;
};

} // namespace payops
