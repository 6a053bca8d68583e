#pragma once

#include "page.h"

namespace payops {

class AuditPage final : public Page
{
    Q_OBJECT

public:
    AuditPage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(AuditPage)

    void refresh() override;
};

} // namespace payops
