#pragma once

#include <QString>

#include <vector>

namespace payops {

// A language the binaries speak: its code ("en", "zh_CN") and its name in itself, as a
// language menu shows it ("English", "简体中文"), so that someone who cannot read the current
// language still finds their own.
struct Language
{
    QString code;
    QString nativeName;
};

// English (the source language) first, then every catalogue embedded in the binaries.
const std::vector<Language> &availableLanguages();

// Installs payops' catalogue and Qt's own (qtbase_*.qm, for standard buttons and dialogs) for
// `code`, or, when `code` is empty, for the first of the system's UI languages that payops
// speaks (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as Qt reads them); QLocale's default follows,
// so numbers and dates are written the same way. Needs a QCoreApplication; may be called
// again to switch (the previous translators are removed). Returns the code installed: "en"
// when the choice is English, unknown, or no system language has a catalogue.
QString installTranslations(const QString &code = {});

} // namespace payops
