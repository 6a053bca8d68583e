#include "auditpage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace payops {

AuditPage::AuditPage(const Dsn &dsn, QWidget *parent)
    : Page(dsn, parent)
{
    setObjectName(QStringLiteral("auditPage"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Audit"), this));
}

void AuditPage::refresh()
{
}

} // namespace payops
