#pragma once

#include "domain/mapping/mapping.h"
#include "mainwindow.h"
#include "pages/duplicatespage.h"
#include "scratchdatabase.h"
#include "teamshop.h"

#include <QSignalSpy>

#include <memory>

namespace payops::test {

// A window connected as `account` to the shop through its mapping, its grants known; with
// `readToo`, reading the same database as a read database (--read-db), in read-only sessions.
inline std::unique_ptr<MainWindow> windowAs(const TeamShop &shop, const ScratchAccount &account,
                                            bool readToo = false)
{
    auto window = std::make_unique<MainWindow>(std::nullopt);
    QSignalSpy known(window.get(), &MainWindow::privilegesKnown);
    window->resize(1366, 740);
    console::Target target{account.dsnFor(shop.dsn().database),
                           mapping::loadMapping(shop.mappingPath())};
    if (readToo)
        target.readDsn = target.dsn;
    window->connectTo(target);
    window->show();
    if (!known.wait(10000) && known.isEmpty())
        qWarning("the privileges probe did not answer");
    return window;
}

// The duplicates page shown, once it has shown what it read.
inline DuplicatesPage *duplicatesShown(MainWindow &window)
{
    window.showPage(Page::DuplicatesId);
    auto *page = static_cast<DuplicatesPage *>(window.page(Page::DuplicatesId));
    QSignalSpy shown(page, &DuplicatesPage::mappedShown);
    if (page->mappedDuplicates().orders.isEmpty())
        static_cast<void>(shown.wait(20000));
    return page;
}

} // namespace payops::test
