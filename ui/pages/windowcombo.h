#pragma once

#include "console/sqltime.h"

#include <QComboBox>

namespace payops {

// The time window a page looks at: last hour, day, week, month, or (unless Bounded) everything.
class WindowCombo final : public QComboBox
{
    Q_OBJECT

public:
    enum Span { WithAllTime, Bounded };
    explicit WindowCombo(QWidget *parent = nullptr, int defaultIndex = 2, Span span = WithAllTime);
    Q_DISABLE_COPY_MOVE(WindowCombo)

    console::TimeWindow window() const { return console::TimeWindow{currentData().toLongLong()}; }
};

} // namespace payops
