#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>

#include <optional>

// A JSON reader stricter than QJsonDocument, for bodies whose every byte is signed: a key
// given twice, a lone surrogate escape or invalid UTF-8 is an error, never resolved by a
// guess, and numbers are kept as written so that 100.0 and 1e2 cannot pass as integers.
namespace payops::strictjson {

// Objects and arrays nest at most this deep: deeper input is refused, not recursed into.
constexpr int kMaxDepth = 32;

enum class Kind { Null, Bool, Number, String, Object, Array };

struct Value
{
    Kind kind = Kind::Null;
    // String: decoded UTF-8; Number and Object: as written (parseObject reads a nested
    // object's members); otherwise empty
    QByteArray text;
};

// The members of the top-level object, by decoded key.
using Members = QHash<QByteArray, Value>;

// Parses a body that must be one JSON object. On failure returns nullopt and sets *error to
// a reason naming the byte offset, never quoting the input.
std::optional<Members> parseObject(const QByteArray &body, QString *error);

// The value of a number written as a JSON integer (no fraction, no exponent) that fits in
// 64 bits; nullopt for anything else.
std::optional<qint64> integerValue(const QByteArray &number);

// Code points in valid UTF-8.
qsizetype codePointCount(const QByteArray &utf8);

} // namespace payops::strictjson
