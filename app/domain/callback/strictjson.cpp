#include "strictjson.h"

#include <QRegularExpression>

#include <algorithm>

namespace payops::strictjson {
namespace {

// Offset of the first byte that is not well-formed UTF-8 (Unicode table 3-7: no overlong
// forms, no encoded surrogates, nothing above U+10FFFF), or -1.
qsizetype firstInvalidUtf8(const QByteArray &bytes)
{
    const auto *data = reinterpret_cast<const uchar *>(bytes.constData());
    const qsizetype size = bytes.size();
    qsizetype i = 0;
    while (i < size) {
        const uchar lead = data[i];
        if (lead < 0x80) {
            ++i;
            continue;
        }
        int length = 0;
        uchar low = 0x80;
        uchar high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            low = lead == 0xE0 ? 0xA0 : 0x80;
            high = lead == 0xED ? 0x9F : 0xBF;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            low = lead == 0xF0 ? 0x90 : 0x80;
            high = lead == 0xF4 ? 0x8F : 0xBF;
        } else {
            return i;
        }
        if (size - i < length || data[i + 1] < low || data[i + 1] > high)
            return i;
        for (int k = 2; k < length; ++k) {
            if ((data[i + k] & 0xC0) != 0x80)
                return i;
        }
        i += length;
    }
    return -1;
}

int hexDigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    const char lower = char(c | 0x20);
    return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}

static_assert(kMaxDepth == 32, "the parser's error text names the bound");

// Recursive descent, bounded by kMaxDepth; every read checks the end first.
class Parser
{
public:
    explicit Parser(const QByteArray &input)
        : m_data(input.constData())
        , m_size(input.size())
    {
    }

    std::optional<Members> document(QString *error)
    {
        // RFC 8259 lets a parser ignore a leading byte order mark, and QJsonDocument did.
        if (m_size >= 3 && qstrncmp(m_data, "\xEF\xBB\xBF", 3) == 0)
            m_pos = 3;
        Members members;
        Value top;
        skipSpace();
        bool ok = value(1, &top, &members);
        skipSpace();
        if (ok && m_pos != m_size)
            ok = fail("unexpected data after the value");
        if (!ok) {
            *error = QStringLiteral("body is not JSON: %1 at offset %2")
                         .arg(QLatin1String(m_error), QString::number(m_errorAt));
            return std::nullopt;
        }
        if (top.kind != Kind::Object) {
            *error = QStringLiteral("body must be a JSON object");
            return std::nullopt;
        }
        return members;
    }

private:
    bool atEnd() const { return m_pos >= m_size; }

    bool fail(const char *why)
    {
        m_error = why;
        m_errorAt = m_pos;
        return false;
    }

    bool consume(char c)
    {
        if (atEnd() || m_data[m_pos] != c)
            return false;
        ++m_pos;
        return true;
    }

    void skipSpace()
    {
        while (!atEnd() && (m_data[m_pos] == ' ' || m_data[m_pos] == '\t' ||
                            m_data[m_pos] == '\n' || m_data[m_pos] == '\r'))
            ++m_pos;
    }

    // members receives an object's members; nullptr for values nobody reads.
    bool value(int depth, Value *out, Members *members)
    {
        if (atEnd())
            return fail("unexpected end");
        switch (m_data[m_pos]) {
        case '{': {
            out->kind = Kind::Object;
            const qsizetype start = m_pos;
            if (!object(depth, members))
                return false;
            out->text = QByteArray(m_data + start, m_pos - start);
            return true;
        }
        case '[':
            out->kind = Kind::Array;
            return array(depth);
        case '"':
            out->kind = Kind::String;
            return string(&out->text);
        case 't':
            out->kind = Kind::Bool;
            return literal("true");
        case 'f':
            out->kind = Kind::Bool;
            return literal("false");
        case 'n':
            out->kind = Kind::Null;
            return literal("null");
        default:
            out->kind = Kind::Number;
            return number(&out->text);
        }
    }

    bool object(int depth, Members *members)
    {
        if (depth > kMaxDepth)
            return fail("objects and arrays nested deeper than 32 levels");
        Members local;
        Members &seen = members ? *members : local;
        ++m_pos;
        skipSpace();
        if (consume('}'))
            return true;
        for (;;) {
            if (atEnd() || m_data[m_pos] != '"')
                return fail("expected a key");
            const qsizetype keyAt = m_pos;
            QByteArray key;
            if (!string(&key))
                return false;
            if (seen.contains(key)) {
                m_pos = keyAt;
                return fail("a key is given twice");
            }
            skipSpace();
            if (!consume(':'))
                return fail("expected ':'");
            skipSpace();
            Value member;
            if (!value(depth + 1, &member, nullptr))
                return false;
            seen.insert(key, member);
            skipSpace();
            if (consume('}'))
                return true;
            if (!consume(','))
                return fail("expected ',' or '}'");
            skipSpace();
        }
    }

    bool array(int depth)
    {
        if (depth > kMaxDepth)
            return fail("objects and arrays nested deeper than 32 levels");
        ++m_pos;
        skipSpace();
        if (consume(']'))
            return true;
        for (;;) {
            Value element;
            if (!value(depth + 1, &element, nullptr))
                return false;
            skipSpace();
            if (consume(']'))
                return true;
            if (!consume(','))
                return fail("expected ',' or ']'");
            skipSpace();
        }
    }

    // The body was checked to be UTF-8 before parsing, so bytes are copied through as they are.
    bool string(QByteArray *out)
    {
        ++m_pos;
        for (;;) {
            if (atEnd())
                return fail("unterminated string");
            const char c = m_data[m_pos];
            if (c == '"') {
                ++m_pos;
                return true;
            }
            if (uchar(c) < 0x20)
                return fail("unescaped control character in a string");
            ++m_pos;
            if (c != '\\') {
                out->append(c);
                continue;
            }
            if (atEnd())
                return fail("unterminated string");
            switch (m_data[m_pos++]) {
            case '"':
                out->append('"');
                break;
            case '\\':
                out->append('\\');
                break;
            case '/':
                out->append('/');
                break;
            case 'b':
                out->append('\b');
                break;
            case 'f':
                out->append('\f');
                break;
            case 'n':
                out->append('\n');
                break;
            case 'r':
                out->append('\r');
                break;
            case 't':
                out->append('\t');
                break;
            case 'u':
                if (!unicodeEscape(out))
                    return false;
                break;
            default:
                m_pos -= 2;
                return fail("invalid escape in a string");
            }
        }
    }

    // After "\u". A surrogate must come as a high and low pair: replacing a lone one with
    // U+FFFD, as QJsonDocument does, would make two different identifiers one.
    bool unicodeEscape(QByteArray *out)
    {
        const qsizetype escapeAt = m_pos - 2;
        char32_t unit = 0;
        if (!hex4(&unit))
            return false;
        char32_t codePoint = unit;
        if (QChar::isLowSurrogate(unit)) {
            m_pos = escapeAt;
            return fail("lone low surrogate escape in a string");
        }
        if (QChar::isHighSurrogate(unit)) {
            char32_t low = 0;
            if (!consume('\\') || !consume('u') || !hex4(&low) || !QChar::isLowSurrogate(low)) {
                m_pos = escapeAt;
                return fail("lone high surrogate escape in a string");
            }
            codePoint = QChar::surrogateToUcs4(char16_t(unit), char16_t(low));
        }
        out->append(QString::fromUcs4(&codePoint, 1).toUtf8());
        return true;
    }

    bool hex4(char32_t *unit)
    {
        if (m_size - m_pos < 4)
            return fail("unterminated \\u escape");
        for (int k = 0; k < 4; ++k) {
            const int digit = hexDigit(m_data[m_pos + k]);
            if (digit < 0)
                return fail("invalid \\u escape");
            *unit = *unit * 16 + char32_t(digit);
        }
        m_pos += 4;
        return true;
    }

    bool digits()
    {
        const qsizetype start = m_pos;
        while (!atEnd() && m_data[m_pos] >= '0' && m_data[m_pos] <= '9')
            ++m_pos;
        return m_pos > start;
    }

    bool number(QByteArray *out)
    {
        const qsizetype start = m_pos;
        consume('-');
        if (!consume('0') && !digits())
            return fail(m_pos == start ? "unexpected character" : "expected a digit");
        if (consume('.') && !digits())
            return fail("expected a digit");
        if (consume('e') || consume('E')) {
            if (!consume('+'))
                consume('-');
            if (!digits())
                return fail("expected a digit");
        }
        *out = QByteArray(m_data + start, m_pos - start);
        return true;
    }

    bool literal(const char *word)
    {
        const qsizetype length = qsizetype(qstrlen(word));
        if (m_size - m_pos < length || qstrncmp(m_data + m_pos, word, length) != 0)
            return fail("unexpected character");
        m_pos += length;
        return true;
    }

    const char *m_data;
    qsizetype m_size;
    qsizetype m_pos = 0;
    const char *m_error = "";
    qsizetype m_errorAt = 0;
};

} // namespace

std::optional<Members> parseObject(const QByteArray &body, QString *error)
{
    if (const qsizetype invalid = firstInvalidUtf8(body); invalid >= 0) {
        *error = QStringLiteral("body is not valid UTF-8 at offset %1").arg(invalid);
        return std::nullopt;
    }
    return Parser(body).document(error);
}

std::optional<qint64> integerValue(const QByteArray &number)
{
    static const QRegularExpression integer(
        QRegularExpression::anchoredPattern(QStringLiteral("-?(0|[1-9][0-9]*)")));
    if (!integer.match(QString::fromLatin1(number)).hasMatch())
        return std::nullopt;
    bool ok = false;
    const qint64 value = number.toLongLong(&ok);
    return ok ? std::optional(value) : std::nullopt;
}

qsizetype codePointCount(const QByteArray &utf8)
{
    return std::count_if(utf8.begin(), utf8.end(),
                         [](char c) { return (uchar(c) & 0xC0) != 0x80; });
}

} // namespace payops::strictjson
