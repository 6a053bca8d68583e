#pragma once

#include "page.h"

#include <QString>
#include <QStringList>

#include <span>

namespace payops {

// One page of the console: its id, its name on the command line (--page), its title in the
// navigation, and how it is made.
struct PageEntry
{
    Page::Id id;
    const char *name;
    const char *title; // untranslated: see pageTitle()
    Page *(*make)(const console::Target &target, QWidget *parent);
};

// Every page of the console, in the order the navigation lists them. The window's navigation
// and stack and payops-console's --page (and its --help) are all read from this one table.
std::span<const PageEntry> pageTable();
// A page's place in the table, which is its row in the navigation.
qsizetype pageRow(Page::Id id);
// The entry named so on the command line, or null.
const PageEntry *findPage(QStringView name);
QStringList pageNames();
QString pageTitle(const PageEntry &entry);

} // namespace payops
