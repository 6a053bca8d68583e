#pragma once

#include <QByteArray>
#include <QString>

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

// What every fuzz target shares: the input as bytes, split at its first newline where a target
// takes two parts, and one way to report an input that broke a promise of the code.
namespace payops::fuzz {

inline QByteArray bytes(const uint8_t *data, size_t size)
{
    return QByteArray(reinterpret_cast<const char *>(data), qsizetype(size));
}

// "first\nrest": the fuzzer mutates both parts of one input.
inline std::pair<QByteArray, QByteArray> splitFirstLine(const QByteArray &input)
{
    const qsizetype newline = input.indexOf('\n');
    if (newline < 0)
        return {input, {}};
    return {input.left(newline), input.mid(newline + 1)};
}

// A broken promise is a crash to libFuzzer, which then keeps the input that caused it.
[[noreturn]] inline void broken(const char *promise)
{
    std::fprintf(stderr, "broken promise: %s\n", promise);
    std::abort();
}

// Runs a parser of the project's shape, `parse(input, &error)` returning an optional: whatever
// it refuses, it must say why.
template <typename Parse> auto parseExplained(Parse parse, const char *promise)
{
    QString error;
    auto result = parse(&error);
    if (!result && error.isEmpty())
        broken(promise);
    return result;
}

// The code logs what it refuses; a million refusals on stderr only slow the run down.
inline void quietLogs()
{
    spdlog::set_level(spdlog::level::off);
}

} // namespace payops::fuzz
