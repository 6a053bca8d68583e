#include "threadconnection.h"

#include <memory>

namespace payops {
namespace {

thread_local std::unique_ptr<db::Connection> t_connection;

} // namespace

db::Connection &threadConnection(const Dsn &dsn)
{
    if (!t_connection)
        t_connection = std::make_unique<db::Connection>(dsn, QStringLiteral("http"));
    return *t_connection;
}

db::Connection *openThreadConnection()
{
    return t_connection.get();
}

void dropThreadConnection()
{
    t_connection.reset();
}

} // namespace payops
