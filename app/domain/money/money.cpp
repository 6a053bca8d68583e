#include "domain/money/money.h"

#include <limits>

namespace payops {

std::optional<qint64> yuanToFen(QStringView text)
{
    // Digits are accumulated as integers and checked against the limit before each step, so
    // "99999999.99" is 9999999999 fen exactly and a 20-digit amount is refused, not wrapped.
    qsizetype i = 0;
    const bool negative = !text.isEmpty() && text.front() == QLatin1Char('-');
    if (negative)
        ++i;
    constexpr qint64 limit = std::numeric_limits<qint64>::max();
    qint64 fen = 0;
    int integerDigits = 0;
    for (; i < text.size() && text[i] != QLatin1Char('.'); ++i, ++integerDigits) {
        const char16_t c = text[i].unicode();
        if (c < u'0' || c > u'9')
            return std::nullopt;
        if (fen > (limit - (c - u'0')) / 10)
            return std::nullopt;
        fen = fen * 10 + (c - u'0');
    }
    if (integerDigits == 0)
        return std::nullopt; // "", "-", ".5"
    int decimals = 0;
    if (i < text.size()) { // at the '.'
        ++i;
        for (; i < text.size(); ++i, ++decimals) {
            const char16_t c = text[i].unicode();
            if (c < u'0' || c > u'9' || decimals == 2)
                return std::nullopt;
            if (fen > (limit - (c - u'0')) / 10)
                return std::nullopt;
            fen = fen * 10 + (c - u'0');
        }
        if (decimals == 0)
            return std::nullopt; // "12."
    }
    for (; decimals < 2; ++decimals) {
        if (fen > limit / 10)
            return std::nullopt;
        fen *= 10;
    }
    return negative ? -fen : fen;
}

QString fenToYuan(qint64 fen)
{
    // Unsigned, so that the most negative fen has a magnitude too.
    const quint64 magnitude = fen < 0 ? 0 - static_cast<quint64>(fen) : static_cast<quint64>(fen);
    return QStringLiteral("%1%2.%3").arg(
        fen < 0 ? QStringLiteral("-") : QString(), QString::number(magnitude / 100),
        QStringLiteral("%1").arg(magnitude % 100, 2, 10, QLatin1Char('0')));
}

} // namespace payops
