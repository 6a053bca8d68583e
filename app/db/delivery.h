#pragma once

#include <functional>
#include <memory>

namespace payops::db {

// Hands a job's result to its receiver; called on the UI thread.
using Delivery = std::function<void()>;

// A job's result, computed on a worker's thread, packed with the call that hands it over on
// the UI thread: how every kind of job, on the worker's connection or standalone, through
// DbWorker or console::Worker, turns its result into a Delivery.
template <typename Result>
Delivery deliveryOf(Result result, std::function<void(const Result &)> onResult)
{
    return [shared = std::make_shared<const Result>(std::move(result)),
            onResult = std::move(onResult)] { onResult(*shared); };
}

} // namespace payops::db
