// The callback parser and the signature check, as payops-callbackd runs them on every body.
// Input: "<X-Payops-Timestamp>\n<X-Payops-Signature>\n<body>".
#include "fuzzinput.h"

#include "domain/callback/callbackrequest.h"
#include "domain/callback/signature.h"
#include "domain/callback/strictjson.h"

using namespace payops;

namespace {

const QByteArray kSecret = "fuzz-secret";
constexpr qint64 kNow = 1764666000; // 2025-12-02T09:00:00Z, the corpus's timestamps are near it

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::quietLogs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto [timestamp, rest] = fuzz::splitFirstLine(fuzz::bytes(data, size));
    const auto [signature, body] = fuzz::splitFirstLine(rest);

    verifySignature(kSecret, timestamp, signature, body, kNow);
    // Whatever the body holds, its own signature verifies and a changed body does not.
    const QByteArray good = signatureHeader(kSecret, kNow, body);
    if (verifySignature(kSecret, QByteArray::number(kNow), good, body, kNow) !=
        SignatureCheck::Valid)
        fuzz::broken("a body signed with the secret verifies");
    if (verifySignature(kSecret, QByteArray::number(kNow), good, body + ' ', kNow) !=
        SignatureCheck::Mismatch)
        fuzz::broken("a changed body does not verify");

    const auto parse = [&signed_ = body](QString *error) {
        return CallbackRequest::parse(signed_, error);
    };
    const auto request = fuzz::parseExplained(parse, "a refused body names its reason");
    if (!request)
        return 0;
    // The contract (docs/callback-contract.md, "The request") as the parser promises it.
    const qsizetype payNoLength = strictjson::codePointCount(request->payNo);
    if (payNoLength < 1 || payNoLength > 64)
        fuzz::broken("pay_no is 1-64 characters");
    if (request->orderId <= 0 || request->amountFen < 0)
        fuzz::broken("order_id is positive and amount_fen not negative");
    if (request->orderNo != QByteArray::number(request->orderId))
        fuzz::broken("the order number is order_id in decimal");
    if (request->rawBody != body || !request->sameContentAs(*request))
        fuzz::broken("the request keeps its body and equals itself");
    return 0;
}
