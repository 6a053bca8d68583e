#pragma once

#include "console/duplicatescan.h"
#include "console/mappedduplicates.h"
#include "page.h"

class QComboBox;
class QPushButton;
class QLabel;
class QLineEdit;
class QStandardItemModel;
class QTableView;
class QVBoxLayout;

namespace payops {

class BusyIndicator;
class DataTable;
class CompensationDialog;
class MappedCompensationDialog;
class DuplicateCharts;
class DuplicateModel;
class MappedGroupModel;
class WindowCombo;

// Every duplicate side effect, grouped by order, with the money it puts at risk, charts over
// time and by kind, and filters. The table pages in lazily. With a mapping (docs/mapping.md)
// the page shows the team's tables instead: the mapped watch's figures per side effect, the
// open groups its time, side effect and user filters show, and the selected group's order's
// rows of every side effect (duplicatespagemapped.cpp).
class DuplicatesPage final : public Page
{
    Q_OBJECT

public:
    DuplicatesPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DuplicatesPage)

    enum class CompensateWhat { SelectedGroups, SelectedOrders, AllInFilter };

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Opens the compensation dialog (window-modal, non-blocking) and returns it; nullptr with a
    // mapping (compensateMapped() then).
    CompensationDialog *compensate(CompensateWhat what);
    QTableView *table() const { return m_table; }
    DuplicateModel *model() const { return m_model; }
    console::DuplicateFilter filter() const;
    // With a mapping: the open groups the filter shows, and the selected group's order's rows
    // of every side effect.
    DataTable *mappedGroups() const { return m_mappedGroups; }
    QTableView *mappedCopies() const { return m_mappedCopies; }
    console::MappedDuplicateFilter mappedFilter() const;
    const console::MappedDuplicates &mappedDuplicates() const { return m_mapped; }
    // With a mapping: compensates the selected groups' orders, or every open one (window-modal).
    MappedCompensationDialog *compensateMapped(bool selectedOnly);

Q_SIGNALS:
    void mappedShown(); // the mapped figures and orders are on screen

private:
    void loadSummary();
    void updateBusy();
    void updateActions();
    void followPointsRate();
    void buildUserFilter(); // m_user, on either set of tables
    void buildMapped(QVBoxLayout *layout);
    void loadMapped();
    void showMapped(const console::MappedDuplicates &mapped,
                    const console::MappedDuplicateFilter &filter);
    void showMappedCopies();

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
    // With a mapping, in place of the charts and the table above; m_window and m_user filter,
    // m_kind names a side effect.
    console::MappedDuplicates m_mapped;
    DataTable *m_mappedGroups = nullptr;
    MappedGroupModel *m_mappedGroupModel = nullptr;
    QTableView *m_mappedCopies = nullptr;
    QStandardItemModel *m_mappedCopyRows = nullptr;
};

} // namespace payops
