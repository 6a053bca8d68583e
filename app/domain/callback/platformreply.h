#pragma once

#include "callbackanswer.h"
#include "channel.h"

#include <QByteArray>
#include <QString>

namespace payops {

// An answer as the platform of a wire format expects it. The pipeline's answers are payops's
// JSON; each platform reads its own: WeChat Pay takes a 2xx (empty body) as success and
// otherwise reads {"code":"FAIL","message":...}; Alipay takes only the plain-text body
// "success", anything else ("fail") makes it retry.
struct PlatformReply
{
    int status = 200;
    QByteArray body;
    QByteArray contentType = "application/json";
};

// A verbatim answer (CallbackAnswer::verbatim) is returned as it is.
PlatformReply platformReply(WireFormat format, const CallbackAnswer &answer);

// A failure in the platform's format, so that it retries.
PlatformReply platformFailure(WireFormat format, int status, const QString &message);

// Whether an answer is the platform's own success answer: what a gateway takes as final from
// the team's handler. A 2xx for payops and WeChat Pay; for Alipay a 2xx whose body is
// "success" (a handler that says "fail" does so with a 200).
bool isPlatformSuccess(WireFormat format, int status, const QByteArray &body);

} // namespace payops
