#include "page.h"

#include "console/consolesettings.h"
#include "console/worker.h"

#include <QTimer>

namespace payops {

Page::Page(const console::Target &target, QWidget *parent)
    : QWidget(parent)
    , m_worker(std::make_unique<console::Worker>(target.dsn))
    , m_mapping(target.mapping)
{
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
