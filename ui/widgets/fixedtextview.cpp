#include "fixedtextview.h"

#include <QFontDatabase>
#include <QPlainTextEdit>

namespace payops {

QPlainTextEdit *fixedTextView(const QString &objectName, QWidget *parent)
{
    auto *view = new QPlainTextEdit(parent);
    view->setObjectName(objectName);
    view->setReadOnly(true);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return view;
}

} // namespace payops
