#include "translation.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QPointer>
#include <QTranslator>

#include <spdlog/spdlog.h>

#include <memory>

namespace payops {
namespace {

const QString catalogueDirectory = QStringLiteral(":/i18n");

// Those of the previous call, removed before new ones go in.
QPointer<QTranslator> ownTranslator;
QPointer<QTranslator> qtTranslator;

void removeInstalled()
{
    for (QPointer<QTranslator> *translator : {&ownTranslator, &qtTranslator}) {
        if (*translator) {
            QCoreApplication::removeTranslator(*translator);
            delete translator->data();
        }
    }
}

bool isEnglish(const QLocale &locale)
{
    return locale.language() == QLocale::English || locale.language() == QLocale::C;
}

// payops' catalogue for the first of `preferred` it has; English (the source) ends the search,
// so LANGUAGE=en:zh_CN stays English.
std::unique_ptr<QTranslator> loadCatalogue(const QStringList &preferred)
{
    for (const QString &name : preferred) {
        const QLocale candidate(name);
        if (isEnglish(candidate))
            return nullptr;
        auto translator = std::make_unique<QTranslator>();
        if (translator->load(candidate, QStringLiteral("payops"), QStringLiteral("_"),
                             catalogueDirectory))
            return translator;
    }
    return nullptr;
}

} // namespace

const std::vector<Language> &availableLanguages()
{
    static const std::vector<Language> languages{
        {QStringLiteral("en"), QStringLiteral("English")},
        {QStringLiteral("zh_CN"), QStringLiteral("简体中文")},
    };
    return languages;
}

QString installTranslations(const QString &code)
{
    removeInstalled();
    const QStringList preferred =
        code.isEmpty() ? QLocale::system().uiLanguages() : QStringList{code};
    std::unique_ptr<QTranslator> own = loadCatalogue(preferred);
    if (!own) {
        // An explicit English formats as English too; otherwise the system's own locale (en_GB,
        // say) formats, as it would without this call.
        QLocale::setDefault(code.isEmpty() ? QLocale::system()
                                           : QLocale(QLocale::English, QLocale::UnitedStates));
        return QStringLiteral("en");
    }
    const QLocale locale(own->language());
    auto qt = std::make_unique<QTranslator>();
    // Missing when the distribution's Qt translations are not installed: payops' own words
    // are still translated, Qt's standard buttons stay English.
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        qtTranslator = qt.release();
    else
        spdlog::debug("no Qt translation for {} in {}", own->language().toStdString(),
                      QLibraryInfo::path(QLibraryInfo::TranslationsPath).toStdString());
    ownTranslator = own.release();
    for (QTranslator *translator : {ownTranslator.data(), qtTranslator.data()}) {
        if (translator) {
            translator->setParent(QCoreApplication::instance());
            QCoreApplication::installTranslator(translator);
        }
    }
    QLocale::setDefault(locale);
    return ownTranslator->language();
}

} // namespace payops
