#pragma once

#include "db/connection.h"
#include "db/dsn.h"

namespace payops {

// Qt allows a connection only on the thread that opened it: each worker thread of the endpoint
// keeps its own, made on first use and dropped after a connection failure.
db::Connection &threadConnection(const Dsn &dsn);
// Null when this thread has none open (never made, or dropped).
db::Connection *openThreadConnection();
void dropThreadConnection();

} // namespace payops
