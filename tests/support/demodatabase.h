#pragma once

#include "scratchdatabase.h"

#include <QSqlDatabase>

#include <memory>

namespace payops::test {

// A scratch database at level legacy with the sandbox's demo data: 3,000 orders and a past
// incident of 48 orders whose coupons and points were issued twice.
std::unique_ptr<ScratchDatabase> demoDatabase();

// One number from the database, read on the calling thread (tests only).
qint64 count(const Dsn &dsn, const QString &sql);

} // namespace payops::test
