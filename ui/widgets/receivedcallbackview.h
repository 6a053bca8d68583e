#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace payops {

// One callback as the platform sent it, from pay_callback_log: its wire format, the platform's
// signature headers beside the raw body, byte for byte. The backlog and the order's evidence
// show callbacks this one way.
class ReceivedCallbackView final : public QWidget
{
    Q_OBJECT

public:
    explicit ReceivedCallbackView(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(ReceivedCallbackView)

    // wireFormat as pay_callback_log.wire_format names it; rawHeaders as channel.h joins them.
    void showCallback(qint64 id, const QString &wireFormat, const QByteArray &rawHeaders,
                      const QByteArray &rawBody);
    // No callback to show, and why.
    void showNothing(const QString &why);

private:
    QLabel *m_title = nullptr;
    QLabel *m_note = nullptr; // a WeChat Pay body is ciphertext: said, not shown as if readable
    QPlainTextEdit *m_headers = nullptr;
    QPlainTextEdit *m_body = nullptr;
};

} // namespace payops
