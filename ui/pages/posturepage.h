#pragma once

#include "page.h"

class QLabel;
class QTableView;

namespace payops {

class PostureModel;
struct Defence;

// "Defences": each defence of the table of what each layer stops, as the live database
// shows it (present, missing or unknown), what was found and what a missing one lets through.
// Read on the console's refresh interval through the page's worker: information_schema, the
// last hour's traces and attempts, the newest audit entries.
class PosturePage final : public Page
{
    Q_OBJECT

public:
    PosturePage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(PosturePage)

    void refresh() override;
    PostureModel *model() const { return m_model; }

private:
    void showDefences(const QList<Defence> &defences);

    QLabel *m_summary = nullptr;
    QTableView *m_table = nullptr;
    PostureModel *m_model = nullptr;
    bool m_pending = false;
};

} // namespace payops
