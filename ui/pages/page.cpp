#include "page.h"

#include "console/consolesettings.h"
#include "console/worker.h"

#include <QTimer>

namespace payops {

Page::Page(const console::Target &target, QWidget *parent)
    : QWidget(parent)
    , m_target(target)
    , m_worker(std::make_unique<console::Worker>(target.readDsn ? target.readDsn->asReadOnly()
                                                                : target.dsn))
{
    if (target.readDsn)
        m_actionWorker = std::make_unique<console::Worker>(target.dsn);
}

Page::~Page() = default;

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
