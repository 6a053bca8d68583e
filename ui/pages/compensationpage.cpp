#include "compensationpage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace payops {

CompensationPage::CompensationPage(const Dsn &dsn, QWidget *parent)
    : Page(dsn, parent)
{
    setObjectName(QStringLiteral("compensationPage"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Compensation"), this));
}

void CompensationPage::refresh()
{
}

} // namespace payops
