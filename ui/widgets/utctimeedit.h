#pragma once

#include <QDateTime>
#include <QString>

class QDateTimeEdit;
class QWidget;

namespace payops {

// A date and time picker in UTC to the minute, as every time the console shows is UTC.
QDateTimeEdit *utcTimeEdit(const QString &objectName, const QDateTime &initial, QWidget *parent);

} // namespace payops
