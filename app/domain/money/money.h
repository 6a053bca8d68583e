#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace payops {

// Money is integer fen everywhere (docs/callback-contract.md, "Money"); yuan exist only in what
// people and platforms read and write.

// Yuan as the platforms write them ("12.30", "-0.01", "12") to fen, exactly, never through
// floating point. At most two decimals, no sign but a leading '-', no spaces, no thousands
// separators, no exponent; std::nullopt for anything else or beyond 64 bits.
std::optional<qint64> yuanToFen(QStringView text);

// Fen as yuan with two decimals: 1230 -> "12.30", -1 -> "-0.01".
QString fenToYuan(qint64 fen);

} // namespace payops
