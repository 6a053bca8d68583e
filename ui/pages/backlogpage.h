#pragma once

#include "page.h"

namespace payops {

class BacklogPage final : public Page
{
    Q_OBJECT

public:
    BacklogPage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(BacklogPage)

    void refresh() override;
};

} // namespace payops
