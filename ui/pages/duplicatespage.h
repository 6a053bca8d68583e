#pragma once

#include "console/duplicatescan.h"
#include "page.h"

class QComboBox;
class QPushButton;
class QLabel;
class QLineEdit;
class QTableView;

namespace payops {

class BusyIndicator;
class CompensationDialog;
class DuplicateCharts;
class DuplicateModel;
class WindowCombo;

// Every duplicate side effect, grouped by order, with the money it puts at risk, charts over
// time and by kind, and filters. The table pages in lazily.
class DuplicatesPage final : public Page
{
    Q_OBJECT

public:
    DuplicatesPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DuplicatesPage)

    enum class CompensateWhat { SelectedGroups, SelectedOrders, AllInFilter };

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Opens the compensation dialog (window-modal, non-blocking) and returns it.
    CompensationDialog *compensate(CompensateWhat what);
    QTableView *table() const { return m_table; }
    DuplicateModel *model() const { return m_model; }
    console::DuplicateFilter filter() const;

private:
    void loadSummary();
    void updateBusy();
    void updateActions();

    qint64 m_pointsPerYuan = 0; // of the settings, as the figures on screen count them
    WindowCombo *m_window = nullptr;
    QComboBox *m_kind = nullptr;
    QComboBox *m_compensation = nullptr;
    QLineEdit *m_user = nullptr;
    QLabel *m_totals = nullptr;
    DuplicateCharts *m_charts = nullptr;
    QTableView *m_table = nullptr;
    DuplicateModel *m_model = nullptr;
    BusyIndicator *m_busy = nullptr;
    QPushButton *m_compensateSelected = nullptr;
    QPushButton *m_compensateOrders = nullptr;
    QPushButton *m_compensateAll = nullptr;
    bool m_summaryPending = false;
};

} // namespace payops
