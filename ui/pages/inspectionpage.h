#pragma once

#include "console/inspectionschedule.h"
#include "page.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace payops {

class DataTable;
class InspectionChart;
class InspectionRunModel;

// "Inspections": every stored run of the inspection, from payops inspect or this console's
// schedule: a chart of the findings over the runs, the runs newest first (paged by id), and
// the findings of the run selected. The page owns the console's schedule (the setting
// "Run the inspection every"), which runs on a worker of its own.
class InspectionPage final : public Page
{
    Q_OBJECT

public:
    InspectionPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InspectionPage)

    void refresh() override;
    console::InspectionScheduler *scheduler() const { return m_scheduler; }
    InspectionRunModel *model() const { return m_model; }
    InspectionChart *chart() const { return m_chart; }
    // A run as a person reads it, from its stored findings.
    static QString findingsText(const InspectionRun &run);

Q_SIGNALS:
    // A scheduled run found something the run before it did not.
    void newFindings(const payops::console::NewFindings &fresh, const payops::InspectionRun &run);

private:
    void showSchedule();
    void refreshChart();
    void onRunFinished(const console::ScheduledInspection &result);
    void showSelected();

    console::InspectionScheduler *m_scheduler = nullptr;
    QLabel *m_schedule = nullptr;
    QLabel *m_lastRun = nullptr;
    QPushButton *m_runNow = nullptr;
    InspectionChart *m_chart = nullptr;
    InspectionRunModel *m_model = nullptr;
    DataTable *m_table = nullptr;
    QPlainTextEdit *m_findings = nullptr;
    bool m_chartPending = false;
};

} // namespace payops
