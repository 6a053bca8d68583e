#include "page.h"

#include "console/consolesettings.h"
#include "console/worker.h"
#include "domain/inspection/readsource.h"
#include "palette.h"

#include <QBoxLayout>
#include <QLabel>
#include <QTimer>

namespace payops {

namespace {

// How long a page waits for the replica after an action before it shows what it has: a
// replica that keeps up needs a fraction of it, and an operator should not watch a page that
// does not move for longer.
constexpr int kCatchUpSeconds = 3;
// How often, once that wait ran out, the page looks again; each look only reads a variable.
constexpr int kLookAgainMs = 1000;

} // namespace

Page::Page(const console::Target &target, QWidget *parent)
    : QWidget(parent)
    , m_target(target)
    , m_worker(std::make_unique<console::Worker>(target.readingDsn()))
{
    if (target.readDsn)
        m_actionWorker = std::make_unique<console::Worker>(target.dsn);
}

Page::~Page() = default;

void Page::rereadAfterAction(std::function<void()> reread)
{
    if (!reread)
        reread = [this] { refresh(); };
    if (!m_actionWorker) {
        reread();
        return;
    }
    const quint64 action = ++m_catchUpAction;
    m_catchUpReread = std::move(reread);
    // Read on the primary once the action's result is back, so after its commit: the
    // server's binary log position then holds the action, whichever connection committed it.
    m_actionWorker->submit<QString>(
        QStringLiteral("catch-up-position"), console::jobOf(readPrimaryPosition), this,
        [this, action](const QString &position) {
            awaitReplica(position, kCatchUpSeconds, action);
        },
        [this, action](const db::Error &) {
            if (action == m_catchUpAction) // the primary is gone: nothing to wait for
                m_catchUpReread();
        });
}

void Page::awaitReplica(const QString &position, int seconds, quint64 action)
{
    const bool first = seconds > 0;
    m_worker->submit<bool>(
        QStringLiteral("catch-up"), console::jobOf(awaitPosition, position, seconds), this,
        [this, position, action, first](bool caughtUp) {
            if (action != m_catchUpAction) // a later action is waited for instead
                return;
            if (first || caughtUp)
                m_catchUpReread();
            if (caughtUp) {
                showCatchUp(QString());
                return;
            }
            showCatchUp(tr("%1 (waited %2 s): this page shows what the replica had before it, "
                           "and reads again by itself once the replica has applied it.")
                            .arg(palette::strong(
                                     palette::Role::Warning,
                                     tr("The replica has not caught up with your last action yet")),
                                 QString::number(kCatchUpSeconds)));
            QTimer::singleShot(kLookAgainMs, this, [this, position, action] {
                if (action == m_catchUpAction)
                    awaitReplica(position, 0, action);
            });
        },
        [this, action, first](const db::Error &error) {
            if (action != m_catchUpAction)
                return;
            if (first)
                m_catchUpReread();
            showCatchUp(tr("%1: this page may not show your last action yet.")
                            .arg(palette::strong(
                                palette::Role::Warning,
                                tr("Could not ask the replica whether it has applied your last "
                                   "action (%1)")
                                    .arg(db::userMessage(error).toHtmlEscaped()))));
        });
}

void Page::showCatchUp(const QString &html)
{
    if (!m_catchUpNote) {
        if (html.isEmpty())
            return;
        m_catchUpNote = new QLabel(this);
        m_catchUpNote->setObjectName(QStringLiteral("catchUpNote"));
        m_catchUpNote->setWordWrap(true);
        // Every page lays itself out in a column: the note goes on top of it.
        if (auto *column = qobject_cast<QBoxLayout *>(layout()))
            column->insertWidget(0, m_catchUpNote);
    }
    m_catchUpNote->setText(html);
    m_catchUpNote->setVisible(!html.isEmpty());
}

QTimer *Page::startRefreshTimer()
{
    auto *timer = new QTimer(this);
    timer->setObjectName(QStringLiteral("refreshTimer"));
    const console::ConsoleSettings &settings = console::ConsoleSettings::instance();
    const auto follow = [timer, &settings] {
        const int period = settings.refreshSeconds() * 1000;
        if (timer->interval() != period ||
            !timer->isActive()) // another setting changed: keep the beat
            timer->start(period);
    };
    connect(&settings, &console::ConsoleSettings::changed, timer, follow);
    follow();
    return timer;
}

} // namespace payops
