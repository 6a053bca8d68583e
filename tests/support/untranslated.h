#pragma once

#include <QSet>
#include <QString>
#include <QStringList>

namespace payops::test {

// The English words a Chinese reader would be left with in `text`: what remains once HTML,
// accelerators, numbers, times, codes (PAID, pay_no, --db), paths, URLs and DSNs, and the
// names the glossary keeps in English (payops, MariaDB, JSON, ...) are taken out. Empty for a
// fully translated text. `alsoKept` adds words that are code where this text is concerned
// (the command line's command names and argument values, say).
QStringList untranslatedWords(const QString &text, const QSet<QString> &alsoKept = {});

} // namespace payops::test
