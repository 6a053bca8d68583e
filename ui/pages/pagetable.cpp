#include "pagetable.h"

#include "auditpage.h"
#include "backlogpage.h"
#include "compensationpage.h"
#include "duplicatespage.h"
#include "evidencepage.h"
#include "inspectionpage.h"
#include "instancespage.h"
#include "overviewpage.h"
#include "posturepage.h"
#include "reconciliationpage.h"
#include "simulationpage.h"
#include "statemachinepage.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>
#include <string_view>

namespace payops {
namespace {

template <typename P> Page *make(const console::Target &target, QWidget *parent)
{
    return new P(target, parent);
}

// The titles keep the translation context they had when the window listed them itself.
constexpr std::array table{
    PageEntry{Page::OverviewId, "overview", QT_TRANSLATE_NOOP("payops::MainWindow", "Overview"),
              &make<OverviewPage>},
    PageEntry{Page::StateMachineId, "state-machine",
              QT_TRANSLATE_NOOP("payops::MainWindow", "State machine"), &make<StateMachinePage>},
    PageEntry{Page::DuplicatesId, "duplicates",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Duplicates"), &make<DuplicatesPage>},
    PageEntry{Page::EvidenceId, "evidence",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Order evidence"), &make<EvidencePage>},
    PageEntry{Page::InstancesId, "instances", QT_TRANSLATE_NOOP("payops::MainWindow", "Instances"),
              &make<InstancesPage>},
    PageEntry{Page::BacklogId, "backlog", QT_TRANSLATE_NOOP("payops::MainWindow", "Backlog"),
              &make<BacklogPage>},
    PageEntry{Page::CompensationId, "compensation",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Compensation"), &make<CompensationPage>},
    PageEntry{Page::AuditId, "audit", QT_TRANSLATE_NOOP("payops::MainWindow", "Audit log"),
              &make<AuditPage>},
    PageEntry{Page::PostureId, "defences", QT_TRANSLATE_NOOP("payops::MainWindow", "Defences"),
              &make<PosturePage>},
    PageEntry{Page::SimulationId, "simulation",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Simulation"), &make<SimulationPage>},
    PageEntry{Page::InspectionId, "inspections",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Inspections"), &make<InspectionPage>},
    PageEntry{Page::ReconciliationId, "reconciliation",
              QT_TRANSLATE_NOOP("payops::MainWindow", "Reconciliation"), &make<ReconciliationPage>},
};

// Every id exactly once and every name once: a page left out, or two rows for one page or
// one name, does not build.
constexpr bool listsEveryPageOnce()
{
    for (int id = 0; id < Page::NUM_PAGES; ++id)
        if (std::count_if(table.begin(), table.end(),
                          [id](const PageEntry &e) { return e.id == id; }) != 1)
            return false;
    for (const PageEntry &entry : table)
        if (std::count_if(table.begin(), table.end(), [&entry](const PageEntry &e) {
                return std::string_view(e.name) == std::string_view(entry.name);
            }) != 1)
            return false;
    return table.size() == Page::NUM_PAGES;
}
static_assert(listsEveryPageOnce(),
              "the page table lists each Page::Id and each name exactly once");

} // namespace

std::span<const PageEntry> pageTable()
{
    return table;
}

qsizetype pageRow(Page::Id id)
{
    return std::find_if(table.begin(), table.end(),
                        [id](const PageEntry &e) { return e.id == id; }) -
           table.begin();
}

const PageEntry *findPage(QStringView name)
{
    const auto found = std::find_if(table.begin(), table.end(), [name](const PageEntry &e) {
        return name == QLatin1String(e.name);
    });
    return found == table.end() ? nullptr : &*found;
}

QStringList pageNames()
{
    QStringList names;
    for (const PageEntry &entry : table)
        names << QString::fromLatin1(entry.name);
    return names;
}

QString pageTitle(const PageEntry &entry)
{
    return QCoreApplication::translate("payops::MainWindow", entry.title);
}

} // namespace payops
