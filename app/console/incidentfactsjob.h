#pragma once

#include "domain/inspection/incidentfacts.h"
#include "job.h"

#include <atomic>
#include <functional>
#include <memory>

namespace payops::console {

// Reads the incident's facts over [from, to) on the worker, then hands them to `then` there:
// the console prints its PDF with them off the UI thread, and the report layer, which only
// lays out facts, never sees the database. The job holds `stop`, which the read checks, so
// that the flag outlives a dialog closed meanwhile.
template <typename Result>
Job<Result> withIncidentFacts(QDateTime from, QDateTime to, qint64 pointsPerYuan,
                              std::shared_ptr<std::atomic<bool>> stop,
                              std::function<Result(const IncidentFacts &)> then)
{
    return [=](const QSqlDatabase &db) {
        return then(readIncidentFacts(db, from, to, pointsPerYuan, stop.get()));
    };
}

} // namespace payops::console
