#include "utctimeedit.h"

#include <QDateTimeEdit>

namespace payops {

QDateTimeEdit *utcTimeEdit(const QString &objectName, const QDateTime &initial, QWidget *parent)
{
    auto *edit = new QDateTimeEdit(initial, parent);
    edit->setObjectName(objectName);
    edit->setTimeSpec(Qt::UTC);
    edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm"));
    edit->setCalendarPopup(true);
    return edit;
}

} // namespace payops
