#include "upstreamclient.h"

#include "callbacktrace.h"
#include "channel.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QUrl>

#include <curl/curl.h>

#include <mutex>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct UpstreamOptionCheck
{
    Q_DECLARE_TR_FUNCTIONS(payops::UpstreamOptionCheck)
};

// An answer to a platform's notification is a word or a small JSON. One that runs past this (a
// URL that serves a file, a handler that never stops writing) is not read on: each worker
// would hold it whole in memory. The forward then counts as unanswered.
constexpr qsizetype kMaxAnswerBytes = 1024 * 1024;

struct AnswerBody
{
    QByteArray *bytes = nullptr;
    bool tooLong = false;
};

size_t appendBody(char *data, size_t size, size_t count, void *target)
{
    auto *body = static_cast<AnswerBody *>(target);
    const qsizetype length = qsizetype(size * count);
    if (body->bytes->size() + length > kMaxAnswerBytes) {
        body->tooLong = true;
        return 0; // curl stops the transfer: CURLE_WRITE_ERROR
    }
    body->bytes->append(data, length);
    return size * count;
}

CURL *handleOf(void *curl)
{
    return static_cast<CURL *>(curl);
}

} // namespace

UpstreamClient::UpstreamClient(UpstreamOptions options)
    : m_options(std::move(options))
{
    // curl_global_init is not thread-safe and must run once before any handle.
    static std::once_flag global;
    std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    m_curl = curl_easy_init();
}

UpstreamClient::~UpstreamClient()
{
    curl_easy_cleanup(handleOf(m_curl));
}

UpstreamAnswer UpstreamClient::post(const QByteArray &body,
                                    const QList<std::pair<QByteArray, QByteArray>> &headers)
{
    CURL *curl = handleOf(m_curl);
    UpstreamAnswer answer;
    const QByteArray url = m_options.url.toUtf8();
    const QByteArray caFile = m_options.caFile.toLocal8Bit();
    // curl adds Accept and, for larger bodies, Expect: 100-continue; an empty value removes
    // them, so the upstream gets the platform's headers and ours, nothing else.
    curl_slist *list = nullptr;
    list = curl_slist_append(list, "Accept:");
    list = curl_slist_append(list, "Expect:");
    bool typed = false;
    for (const auto &[name, value] : headers) {
        // A row stored before values were checked on the way in is checked on the way out.
        if (!isPassableHeaderValue(value))
            continue;
        typed = typed || name.compare("Content-Type", Qt::CaseInsensitive) == 0;
        list = curl_slist_append(list, QByteArray(name + ": " + value).constData());
    }
    // Without one, curl would send its own form type: the upstream gets none, as sent.
    if (!typed)
        list = curl_slist_append(list, "Content-Type:");
    char errorText[CURL_ERROR_SIZE] = {};

    curl_easy_reset(curl); // keeps the live connection, forgets the last request's options
    curl_easy_setopt(curl, CURLOPT_URL, url.constData());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.constData());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendBody);
    AnswerBody answerBody{&answer.body};
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answerBody);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorText);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, long(m_options.timeoutSeconds) * 1000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); // timeouts without SIGALRM, in any thread
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!caFile.isEmpty())
        curl_easy_setopt(curl, CURLOPT_CAINFO, caFile.constData());

    answer.sentMicros = nowMicros();
    const CURLcode result = curl_easy_perform(curl);
    answer.answeredMicros = nowMicros();
    curl_slist_free_all(list);
    if (result != CURLE_OK) {
        answer.body.clear();
        answer.timedOut = result == CURLE_OPERATION_TIMEDOUT;
        // In English, as curl's own reasons are: it is stored with the row (upstream_error).
        answer.error = answerBody.tooLong
                           ? QStringLiteral("the answer ran past %1 bytes and was not read on")
                                 .arg(kMaxAnswerBytes)
                           : QString::fromUtf8(*errorText ? errorText : curl_easy_strerror(result));
        return answer;
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    char *contentType = nullptr;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &contentType);
    // A status no HTTP client knows (600, 999) is not passed to a platform as an answer.
    if (status < 200 || status > 599) {
        answer.body.clear();
        answer.error =
            QStringLiteral("answered status %1, which is not HTTP's").arg(QString::number(status));
        return answer;
    }
    answer.status = int(status);
    answer.contentType = contentType ? QByteArray(contentType) : QByteArray();
    return answer;
}

QString checkUpstreamOptions(const QString &url, const QString &caFile, const QString &timeout,
                             UpstreamOptions *options)
{
    const QUrl parsed(url, QUrl::StrictMode);
    const QString scheme = parsed.scheme();
    if (!parsed.isValid() || parsed.host().isEmpty() ||
        (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
        return UpstreamOptionCheck::tr("--upstream must be an http:// or https:// URL, not '%1'")
            .arg(upstreamWithoutCredentials(url));
    if (!caFile.isEmpty() && !QFileInfo(caFile).isReadable())
        return UpstreamOptionCheck::tr("--upstream-ca: cannot read %1").arg(caFile);
    bool ok = false;
    const int seconds = timeout.isEmpty() ? 5 : timeout.toInt(&ok);
    if (!timeout.isEmpty() && (!ok || seconds < 1 || seconds > 60))
        return UpstreamOptionCheck::tr("--upstream-timeout must be 1-60 seconds");
    options->url = url;
    options->caFile = caFile;
    options->timeoutSeconds = seconds;
    return QString();
}

QString upstreamWithoutCredentials(const QString &url)
{
    return QUrl(url).toString(QUrl::RemoveUserInfo);
}

} // namespace payops
