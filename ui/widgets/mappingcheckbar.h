#pragma once

#include "domain/mapping/mappingcheck.h"
#include "palette.h"

#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

class QLabel;
class QPushButton;

namespace payops {

namespace console {
class Worker;
struct Target;
} // namespace console

// The line under the window's banner that says whether the mapping the console reads the
// team's tables through holds on this database: checkMapping() run once on connecting, on a
// worker of its own (so that the pages' first reads do not wait behind it) and cancellable.
// "mapping OK", "mapping OK with N warnings" or, in the danger colour, "mapping has N errors";
// the problems one per line in its tooltip and behind "Details…". Hidden without a mapping.
class MappingCheckBar final : public QWidget
{
    Q_OBJECT

public:
    explicit MappingCheckBar(QWidget *parent = nullptr);
    ~MappingCheckBar() override;
    Q_DISABLE_COPY_MOVE(MappingCheckBar)

    // Checks the target's mapping, or hides the bar when it has none.
    void check(const console::Target &target);
    // The last check's answer; empty while it runs or when it failed.
    const std::optional<mapping::MappingCheck> &result() const { return m_result; }
    QString text() const;

Q_SIGNALS:
    void finished();

private:
    void run();
    void showCheck(const mapping::MappingCheck &check);
    void showDetails();
    void cancel();
    void showUnchecked(const QString &text);
    void tintBy(palette::Role role);

    std::unique_ptr<console::Worker> m_worker;
    std::optional<mapping::Mapping> m_mapping;
    std::optional<mapping::MappingCheck> m_result;
    std::shared_ptr<std::atomic<bool>> m_stop; // the running check's cancel flag
    QLabel *m_text = nullptr;
    QPushButton *m_details = nullptr;
    QPushButton *m_cancel = nullptr;
    QPushButton *m_again = nullptr;
};

} // namespace payops
