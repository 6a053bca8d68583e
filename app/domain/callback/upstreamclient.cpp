#include "upstreamclient.h"

#include "callbacktrace.h"
#include "channel.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QUrl>

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <mutex>

namespace payops {

// One forward in flight: what it sends, what came back, and whom to tell.
struct UpstreamTransfer
{
    UpstreamRequest request;
    std::function<void()> onLate;
    std::function<void(const UpstreamAnswer &)> onDone;
    std::chrono::steady_clock::time_point lateAt;
    bool lateCalled = false;
    qsizetype sent = 0; // body bytes handed to curl so far
    bool tooLong = false;
    UpstreamAnswer answer;
    curl_slist *headers = nullptr;
    CURL *easy = nullptr;
    char errorText[CURL_ERROR_SIZE] = {};

    ~UpstreamTransfer()
    {
        curl_slist_free_all(headers);
        if (easy)
            curl_easy_cleanup(easy);
    }
};

namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct UpstreamOptionCheck
{
    Q_DECLARE_TR_FUNCTIONS(payops::UpstreamOptionCheck)
};

// An answer to a platform's notification is a word or a small JSON. One that runs past this (a
// URL that serves a file, a handler that never stops writing) is not read on: each forward
// would hold it whole in memory. The forward then counts as unanswered.
constexpr qsizetype kMaxAnswerBytes = 1024 * 1024;

size_t appendBody(char *data, size_t size, size_t count, void *target)
{
    auto *transfer = static_cast<UpstreamTransfer *>(target);
    const qsizetype length = qsizetype(size * count);
    if (transfer->answer.body.size() + length > kMaxAnswerBytes) {
        transfer->tooLong = true;
        return 0; // curl stops the transfer: CURLE_WRITE_ERROR
    }
    transfer->answer.body.append(data, length);
    return size * count;
}

size_t readBody(char *buffer, size_t size, size_t count, void *source)
{
    auto *transfer = static_cast<UpstreamTransfer *>(source);
    const QByteArray &body = transfer->request.body;
    const qsizetype length = std::min(qsizetype(size * count), body.size() - transfer->sent);
    std::memcpy(buffer, body.constData() + transfer->sent, size_t(length));
    transfer->sent += length;
    return size_t(length);
}

// curl asks to start the body again when it would send the request once more: on a fresh
// connection after a kept-alive one closed with no answer. Once any of the body went out the
// handler may have read it all, so it is not sent again (CURLE_SEND_FAIL_REWIND).
int refuseResend(void *source, curl_off_t offset, int origin)
{
    const auto *transfer = static_cast<UpstreamTransfer *>(source);
    return offset == 0 && origin == SEEK_SET && transfer->sent == 0 ? CURL_SEEKFUNC_OK
                                                                    : CURL_SEEKFUNC_FAIL;
}

CURLM *multiOf(void *multi)
{
    return static_cast<CURLM *>(multi);
}

} // namespace

UpstreamClient::UpstreamClient(UpstreamOptions options)
    : m_options(std::move(options))
    , m_url(m_options.url.toUtf8())
    , m_caFile(m_options.caFile.toLocal8Bit())
{
    // curl_global_init is not thread-safe and must run once before any handle.
    static std::once_flag global;
    std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    m_multi = curl_multi_init();
    curl_multi_setopt(multiOf(m_multi), CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      long(m_options.connections));
    curl_multi_setopt(multiOf(m_multi), CURLMOPT_MAXCONNECTS, long(m_options.connections));
    m_thread = std::thread([this] { run(); });
}

UpstreamClient::~UpstreamClient()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    curl_multi_wakeup(multiOf(m_multi));
    m_thread.join();
    curl_multi_cleanup(multiOf(m_multi));
}

bool UpstreamClient::reserve()
{
    std::lock_guard lock(m_mutex);
    if (m_taken >= m_options.connections)
        return false;
    ++m_taken;
    return true;
}

void UpstreamClient::unreserve()
{
    std::lock_guard lock(m_mutex);
    --m_taken;
}

int UpstreamClient::inFlight() const
{
    std::lock_guard lock(m_mutex);
    return m_taken;
}

void UpstreamClient::post(UpstreamRequest request, std::function<void()> onLate,
                          std::function<void(const UpstreamAnswer &)> onDone)
{
    auto transfer = std::make_unique<UpstreamTransfer>();
    transfer->request = std::move(request);
    transfer->onLate = std::move(onLate);
    transfer->onDone = std::move(onDone);
    transfer->lateAt =
        std::chrono::steady_clock::now() + std::chrono::seconds(m_options.timeoutSeconds);
    {
        std::lock_guard lock(m_mutex);
        m_incoming.push_back(std::move(transfer));
    }
    curl_multi_wakeup(multiOf(m_multi));
}

UpstreamAnswer UpstreamClient::postAndWait(UpstreamRequest request)
{
    UpstreamAnswer answer;
    if (!reserve()) {
        answer.error = QStringLiteral("no connection to the upstream is free");
        return answer;
    }
    std::promise<UpstreamAnswer> done;
    std::future<UpstreamAnswer> result = done.get_future();
    post(std::move(request), {}, [&done](const UpstreamAnswer &end) { done.set_value(end); });
    return result.get();
}

namespace {

// The request's options on its own handle; the connection comes from the multi handle's cache.
void prepare(UpstreamTransfer &transfer, const QByteArray &url, const QByteArray &caFile,
             int boundSeconds)
{
    // curl adds Accept and, for larger bodies, Expect: 100-continue; an empty value removes
    // them, so the upstream gets the platform's headers and ours, nothing else.
    curl_slist *list = curl_slist_append(nullptr, "Accept:");
    list = curl_slist_append(list, "Expect:");
    bool typed = false;
    for (const auto &[name, value] : transfer.request.headers) {
        // A row stored before values were checked on the way in is checked on the way out.
        if (!isPassableHeaderValue(value))
            continue;
        typed = typed || name.compare("Content-Type", Qt::CaseInsensitive) == 0;
        list = curl_slist_append(list, QByteArray(name + ": " + value).constData());
    }
    // Without one, curl would send its own form type: the upstream gets none, as sent.
    if (!typed)
        list = curl_slist_append(list, "Content-Type:");
    transfer.headers = list;

    CURL *curl = curl_easy_init();
    transfer.easy = curl;
    curl_easy_setopt(curl, CURLOPT_PRIVATE, &transfer);
    curl_easy_setopt(curl, CURLOPT_URL, url.constData());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, readBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, refuseResend);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer.request.body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, transfer.errorText);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, long(boundSeconds) * 1000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); // timeouts without SIGALRM, in any thread
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!caFile.isEmpty())
        curl_easy_setopt(curl, CURLOPT_CAINFO, caFile.constData());
}

// The answer of a finished transfer, or why there was none.
void conclude(UpstreamTransfer &transfer, CURLcode result)
{
    UpstreamAnswer &answer = transfer.answer;
    answer.answeredMicros = nowMicros();
    if (result != CURLE_OK) {
        answer.body.clear();
        answer.timedOut = result == CURLE_OPERATION_TIMEDOUT;
        // In English, as curl's own reasons are: it is stored with the row (upstream_error).
        answer.error =
            transfer.tooLong ? QStringLiteral("the answer ran past %1 bytes and was not read on")
                                   .arg(kMaxAnswerBytes)
            : result == CURLE_SEND_FAIL_REWIND
                ? QStringLiteral("the connection closed after the request went out, with no "
                                 "answer; not sent again")
                : QString::fromUtf8(*transfer.errorText ? transfer.errorText
                                                        : curl_easy_strerror(result));
        return;
    }
    long status = 0;
    curl_easy_getinfo(transfer.easy, CURLINFO_RESPONSE_CODE, &status);
    char *contentType = nullptr;
    curl_easy_getinfo(transfer.easy, CURLINFO_CONTENT_TYPE, &contentType);
    // A status no HTTP client knows (600, 999) is not passed to a platform as an answer.
    if (status < 200 || status > 599) {
        answer.body.clear();
        answer.error =
            QStringLiteral("answered status %1, which is not HTTP's").arg(QString::number(status));
        return;
    }
    answer.status = int(status);
    answer.contentType = contentType ? QByteArray(contentType) : QByteArray();
}

} // namespace

void UpstreamClient::run()
{
    CURLM *multi = multiOf(m_multi);
    std::map<CURL *, std::unique_ptr<UpstreamTransfer>> active;
    for (;;) {
        std::deque<std::unique_ptr<UpstreamTransfer>> incoming;
        {
            std::lock_guard lock(m_mutex);
            incoming.swap(m_incoming);
            if (m_stopping && incoming.empty() && active.empty())
                return;
        }
        for (std::unique_ptr<UpstreamTransfer> &transfer : incoming) {
            prepare(*transfer, m_url, m_caFile, m_options.boundSeconds);
            transfer->answer.sentMicros = nowMicros();
            curl_multi_add_handle(multi, transfer->easy);
            active.emplace(transfer->easy, std::move(transfer));
        }

        int running = 0;
        curl_multi_perform(multi, &running);
        int left = 0;
        while (CURLMsg *message = curl_multi_info_read(multi, &left)) {
            if (message->msg != CURLMSG_DONE)
                continue;
            // The message is not to be read once its handle is removed.
            const CURLcode result = message->data.result;
            const auto found = active.find(message->easy_handle);
            std::unique_ptr<UpstreamTransfer> transfer = std::move(found->second);
            active.erase(found);
            curl_multi_remove_handle(multi, transfer->easy);
            conclude(*transfer, result);
            unreserve();
            transfer->onDone(transfer->answer);
        }

        // The platform is answered at its time; the forward goes on to its answer or bound.
        const auto now = std::chrono::steady_clock::now();
        auto wake = now + std::chrono::seconds(1);
        for (auto &[easy, transfer] : active) {
            if (transfer->lateCalled || !transfer->onLate)
                continue;
            if (transfer->lateAt <= now) {
                transfer->lateCalled = true;
                transfer->onLate();
            } else {
                wake = std::min(wake, transfer->lateAt);
            }
        }
        const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now);
        curl_multi_poll(multi, nullptr, 0, int(std::max<qint64>(1, waitMs.count())), nullptr);
    }
}

QString checkUpstreamOptions(const QString &url, const QString &caFile, const QString &timeout,
                             UpstreamOptions *options, const QString &option)
{
    const QUrl parsed(url, QUrl::StrictMode);
    const QString scheme = parsed.scheme();
    if (!parsed.isValid() || parsed.host().isEmpty() ||
        (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
        return UpstreamOptionCheck::tr("%1 must be an http:// or https:// URL, not '%2'")
            .arg(option, upstreamWithoutCredentials(url));
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
