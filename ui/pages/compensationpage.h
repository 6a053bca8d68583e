#pragma once

#include "page.h"

namespace payops {

class CompensationPage final : public Page
{
    Q_OBJECT

public:
    CompensationPage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(CompensationPage)

    void refresh() override;
};

} // namespace payops
