#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace payops {

namespace console {
struct LiveTraffic;
}

// The overview's live chart of the last minutes: callbacks per second (left axis), new
// duplicate side effects per minute (right axis; counted in 10 s steps, drawn as a step line:
// Qt Charts 6.4 cannot put bars on a time axis) and each flip of the switch as a vertical line, so
// the moment the bleeding stops shows as the red line falling flat after an orange one.
class LiveTrafficChart final : public QWidget
{
    Q_OBJECT

public:
    explicit LiveTrafficChart(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(LiveTrafficChart)

    void setTraffic(const console::LiveTraffic &traffic);
    void setError(const QString &message);
    QChart *chart() const;

private:
    QLineSeries *flipLine(const QString &mode);

    QChartView *m_view = nullptr;
    QLabel *m_caption = nullptr;
    QDateTimeAxis *m_time = nullptr;
    QValueAxis *m_rateAxis = nullptr;
    QValueAxis *m_duplicateAxis = nullptr;
    QLineSeries *m_rate = nullptr;
    QLineSeries *m_duplicates = nullptr;
    QList<QLineSeries *> m_flips;
};

} // namespace payops
