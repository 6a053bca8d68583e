#include "alipay.h"

#include <QList>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <iconv.h>

namespace payops {
namespace {

using Parameters = QList<std::pair<QByteArray, QByteArray>>;

// application/x-www-form-urlencoded into its parameters, names and values percent-decoded to
// the bytes the platform encoded (in the form's charset). nullopt, with *error, for a pair
// without '=', a broken escape or a name given twice.
std::optional<Parameters> parseForm(const QByteArray &body, QString *error)
{
    static const QRegularExpression brokenEscape(QStringLiteral("%(?![0-9A-Fa-f]{2})"));
    Parameters parameters;
    QSet<QByteArray> names;
    for (const QByteArray &pair : body.split('&')) {
        const qsizetype equals = pair.indexOf('=');
        if (equals <= 0) {
            *error = QStringLiteral("body is not a form: a parameter without a name or '='");
            return std::nullopt;
        }
        if (QString::fromLatin1(pair).contains(brokenEscape)) {
            *error = QStringLiteral("body is not a form: '%' without two hex digits");
            return std::nullopt;
        }
        const auto decode = [](QByteArray text) {
            return QByteArray::fromPercentEncoding(text.replace('+', ' '));
        };
        const QByteArray name = decode(pair.left(equals));
        // Before the signature is checked: a set, so that a body of many names costs no more
        // than reading it.
        if (names.contains(name)) {
            *error = QStringLiteral("body is not a form: a parameter is given twice");
            return std::nullopt;
        }
        names.insert(name);
        parameters.append({name, decode(pair.mid(equals + 1))});
    }
    return parameters;
}

QByteArray valueOf(const Parameters &parameters, const char *name)
{
    for (const auto &[key, value] : parameters)
        if (key == name)
            return value;
    return {};
}

// What Alipay signs: every parameter but sign and sign_type with a value, sorted by name, as
// name=value joined by '&', in the form's own bytes.
QByteArray signedContent(Parameters parameters)
{
    std::sort(parameters.begin(), parameters.end());
    QByteArrayList pairs;
    for (const auto &[name, value] : std::as_const(parameters))
        if (name != "sign" && name != "sign_type" && !value.isEmpty())
            pairs << name + '=' + value;
    return pairs.join('&');
}

// Bytes in `charset` (as iconv names it) as UTF-8; nullopt when they are not valid in it.
std::optional<QByteArray> toUtf8(const QByteArray &bytes, const char *charset)
{
    const iconv_t converter = iconv_open("UTF-8", charset);
    if (converter == iconv_t(-1))
        return std::nullopt;
    QByteArray input = bytes;
    QByteArray output(bytes.size() * 2 + 4, Qt::Uninitialized); // GBK: 2 bytes become 3 at most
    char *in = input.data();
    char *out = output.data();
    size_t inLeft = size_t(input.size());
    size_t outLeft = size_t(output.size());
    const size_t converted = ::iconv(converter, &in, &inLeft, &out, &outLeft);
    ::iconv_close(converter);
    if (converted == size_t(-1) || inLeft != 0)
        return std::nullopt;
    output.truncate(output.size() - qsizetype(outLeft));
    return output;
}

// Beijing time as Alipay writes it ("2026-12-02 17:00:00") in RFC 3339, or empty.
QString beijingTime(const QByteArray &gmt)
{
    static const QRegularExpression pattern(QRegularExpression::anchoredPattern(
        QStringLiteral("([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2})")));
    const QRegularExpressionMatch match = pattern.match(QString::fromLatin1(gmt));
    return match.hasMatch()
               ? match.captured(1) + QLatin1Char('T') + match.captured(2) + QStringLiteral("+08:00")
               : QString();
}

// The verified form as the pipeline's callback: its fields in UTF-8.
std::variant<CallbackRequest, CallbackAnswer> readTrade(const Parameters &form, const char *charset)
{
    CallbackRequest request;
    QString error;
    const auto field = [&form, charset, &error](const char *name,
                                                int maxLength) -> std::optional<QByteArray> {
        const auto text = toUtf8(valueOf(form, name), charset);
        if (!text) {
            error =
                QStringLiteral("%1 is not valid in the form's charset").arg(QLatin1String(name));
            return std::nullopt;
        }
        if (!checkLength(*text, name, maxLength, &error))
            return std::nullopt;
        return text;
    };
    const auto tradeNo = field("trade_no", 64);
    const auto outTradeNo = tradeNo ? field("out_trade_no", 64) : std::nullopt;
    const auto totalAmount = outTradeNo ? field("total_amount", 32) : std::nullopt;
    const auto tradeStatus = totalAmount ? field("trade_status", 32) : std::nullopt;
    if (!tradeStatus)
        return invalid(error);
    // Alipay's statuses are words of capitals (TRADE_SUCCESS, WAIT_BUYER_PAY); one names a
    // later event of the trade in a header to the handler.
    if (!checkAlipayOrderNo(*outTradeNo, &error) ||
        !checkVisibleAscii(*tradeStatus, "trade_status", &error))
        return invalid(error);
    const auto fen = yuanToFen(*totalAmount);
    if (!fen)
        return invalid(
            QStringLiteral("total_amount must be yuan with at most two decimals, such as 88.80"));
    request.payNo = *tradeNo;
    request.orderNo = *outTradeNo;
    request.orderId = orderIdFrom(*outTradeNo).value_or(0);
    request.amountFen = *fen;
    request.currency = QStringLiteral("CNY");
    request.tradeStatus = QString::fromUtf8(*tradeStatus);
    // A refund's notice (a partial refund says TRADE_SUCCESS, a whole one TRADE_CLOSED) is a
    // later event of the trade: out_biz_no names the refund, refund_fee is the total refunded
    // so far. Without out_biz_no (a refund made in Alipay's own portal) that total names it,
    // since it grows with each refund.
    const QByteArray outBizNo = valueOf(form, "out_biz_no");
    const QByteArray refundFee = valueOf(form, "refund_fee");
    if (!outBizNo.isEmpty() || !refundFee.isEmpty() || !valueOf(form, "gmt_refund").isEmpty()) {
        if (!outBizNo.isEmpty() && !checkVisibleAscii(outBizNo, "out_biz_no", &error))
            return invalid(error);
        const auto refunded = yuanToFen(refundFee);
        if (!refunded)
            return invalid(
                QStringLiteral("refund_fee must be yuan with at most two decimals, such as 88.80"));
        request.amountFen = *refunded;
        request.event = *tradeStatus + '/' +
                        (outBizNo.isEmpty() ? QByteArray("refund_fee=") + refundFee : outBizNo);
        return request;
    }
    const QByteArray gmtPayment = valueOf(form, "gmt_payment");
    if (!gmtPayment.isEmpty()) {
        request.paidAt = beijingTime(gmtPayment);
        const QString problem = request.paidAt.isEmpty()
                                    ? QStringLiteral("gmt_payment must be YYYY-MM-DD HH:MM:SS")
                                    : paidAtProblem(request.paidAt.toLatin1(), "gmt_payment");
        if (!problem.isEmpty())
            return invalid(problem);
    }
    return request;
}

} // namespace

bool AlipayKeys::configured() const
{
    return !apps.isEmpty();
}

std::optional<qint64> yuanToFen(const QByteArray &yuan)
{
    // Up to 15 digits of yuan: fen stay far inside a BIGINT.
    static const QRegularExpression pattern(QRegularExpression::anchoredPattern(
        QStringLiteral("(0|[1-9][0-9]{0,14})(?:\\.([0-9]{1,2}))?")));
    const QRegularExpressionMatch match = pattern.match(QString::fromLatin1(yuan));
    if (!match.hasMatch())
        return std::nullopt;
    const QString cents = (match.captured(2) + QStringLiteral("00")).left(2);
    return match.capturedView(1).toLongLong() * 100 + cents.toLongLong();
}

Admission admitAlipay(const AlipayKeys &keys, const HeaderLookup &header, const QByteArray &body)
{
    if (!keys.configured())
        return unauthorized(QStringLiteral("Alipay's keys are not configured"));
    QString error;
    const auto form = parseForm(body, &error);
    if (!form)
        return invalid(error);
    const QByteArray charsetName = valueOf(*form, "charset").toLower();
    const char *charset = charsetName.isEmpty() || charsetName == "utf-8" ? "UTF-8"
                          : charsetName == "gbk"                          ? "GBK"
                                                                          : nullptr;
    if (!charset)
        return invalid(QStringLiteral("charset must be utf-8 or gbk"));
    const QByteArray signType = valueOf(*form, "sign_type");
    if (signType != "RSA2")
        return invalid(QStringLiteral("sign_type must be RSA2"));
    const auto signature = QByteArray::fromBase64Encoding(valueOf(*form, "sign"),
                                                          QByteArray::AbortOnBase64DecodingErrors);
    // The app names the key: a key of one app never verifies another's notification.
    const auto app = keys.apps.constFind(valueOf(*form, "app_id"));
    if (app == keys.apps.cend())
        return invalid(QStringLiteral("app_id is none of this merchant's apps (--alipay-app-id, "
                                      "--alipay-app)"));
    const QByteArray content = signedContent(*form);
    if (!signature || signature.decoded.isEmpty() || !app->verifySha256(content, *signature))
        return unauthorized(QStringLiteral("sign does not match (Alipay's public key, RSA2)"));

    auto read = readTrade(*form, charset);
    if (auto *request = std::get_if<CallbackRequest>(&read)) {
        request->channel = QStringLiteral("alipay");
        request->wire = WireFormat::Alipay;
        request->rawBody = body;
        request->rawHeaders = capturedHeaders(WireFormat::Alipay, header);
    }
    return signedOver(std::move(read), content);
}

} // namespace payops
