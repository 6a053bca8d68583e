#include "windowcombo.h"

namespace payops {

WindowCombo::WindowCombo(QWidget *parent, int defaultIndex, Span span)
    : QComboBox(parent)
{
    setObjectName(QStringLiteral("windowCombo"));
    addItem(tr("last hour"), qint64(3600));
    addItem(tr("last 24 hours"), qint64(86400));
    addItem(tr("last 7 days"), qint64(7 * 86400));
    addItem(tr("last 30 days"), qint64(30 * 86400));
    if (span == WithAllTime)
        addItem(tr("all time"), qint64(0));
    setCurrentIndex(defaultIndex);
}

} // namespace payops
