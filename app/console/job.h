#pragma once

#include <QSqlDatabase>

#include <functional>
#include <type_traits>

namespace payops::db {
struct StandaloneContext;
}

namespace payops::console {

// A piece of work on the database, run on a worker's thread. Jobs are built by the console
// core's functions (overviewJob(), a reader's method, ...): the UI submits them and never
// writes one itself, so that no SQL and no connection lives in a widget.
template <typename Result> using Job = std::function<Result(const QSqlDatabase &)>;
// Work that needs no worker's connection but opens what it needs with the worker's DSN (a
// connection of its own, a process, HTTP clients) and returns early once the context's stop
// flag is up (see db::StandaloneContext).
template <typename Result>
using StandaloneJob = std::function<Result(const db::StandaloneContext &)>;

// The job that calls `read(db, args...)`: for a screen whose read or action is one call of
// the console core (or the domain), so that the screen need not write the lambda itself.
// The arguments are copied into the job, which runs on another thread.
template <typename Function, typename... Args> auto jobOf(Function read, Args... args)
{
    using Result =
        std::decay_t<std::invoke_result_t<Function, const QSqlDatabase &, const Args &...>>;
    return Job<Result>([read, args...](const QSqlDatabase &db) { return read(db, args...); });
}

} // namespace payops::console
