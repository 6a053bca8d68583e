#include "backlogpage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace payops {

BacklogPage::BacklogPage(const Dsn &dsn, QWidget *parent)
    : Page(dsn, parent)
{
    setObjectName(QStringLiteral("backlogPage"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Backlog"), this));
}

void BacklogPage::refresh()
{
}

} // namespace payops
