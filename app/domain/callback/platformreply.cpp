#include "platformreply.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payops {
namespace {

bool is2xx(int status)
{
    return status >= 200 && status < 300;
}

QString messageOf(const CallbackAnswer &answer)
{
    const QJsonObject body = QJsonDocument::fromJson(answer.body).object();
    const QString message = body.value(QStringLiteral("message")).toString();
    return message.isEmpty() ? QString::fromLatin1(outcomeLabel(answer.outcome)) : message;
}

} // namespace

PlatformReply platformFailure(WireFormat format, int status, const QString &message)
{
    switch (format) {
    case WireFormat::Alipay:
        return {status, "fail", "text/plain; charset=utf-8"};
    case WireFormat::Payops:
    case WireFormat::WechatPay:
        break;
    }
    const QJsonObject body{{QStringLiteral("code"), QStringLiteral("FAIL")},
                           {QStringLiteral("message"), message}};
    return {status, QJsonDocument(body).toJson(QJsonDocument::Compact)};
}

PlatformReply platformReply(WireFormat format, const CallbackAnswer &answer)
{
    if (answer.verbatim) // already the platform's answer: a gateway's upstream gave it
        return {answer.httpStatus, answer.body, answer.contentType};
    if (!is2xx(answer.httpStatus))
        return format == WireFormat::Payops ? PlatformReply{answer.httpStatus, answer.body}
                                            : platformFailure(format, answer.httpStatus,
                                                              messageOf(answer));
    switch (format) {
    case WireFormat::Payops:
        return {answer.httpStatus, answer.body};
    case WireFormat::WechatPay:
        return {200, {}, {}};
    case WireFormat::Alipay:
        return {200, "success", "text/plain; charset=utf-8"};
    }
    return {answer.httpStatus, answer.body};
}

bool isPlatformSuccess(WireFormat format, int status, const QByteArray &body)
{
    if (!is2xx(status))
        return false;
    return format != WireFormat::Alipay || body.trimmed() == "success";
}

} // namespace payops
