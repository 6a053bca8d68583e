#pragma once

#include <QString>

class QPlainTextEdit;
class QWidget;

namespace payops {

// A read-only text in the system's fixed-width font: a body, headers or JSON, byte for byte.
QPlainTextEdit *fixedTextView(const QString &objectName, QWidget *parent);

} // namespace payops
