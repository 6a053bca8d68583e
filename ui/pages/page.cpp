#include "page.h"

#include "db/dbworker.h"

namespace payops {

Page::Page(const Dsn &dsn, QWidget *parent)
    : QWidget(parent)
    , m_worker(std::make_unique<db::DbWorker>(dsn))
{
}

Page::~Page() = default;

} // namespace payops
