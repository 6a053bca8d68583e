#include "palette.h"
#include "testmain.h"

#include <QApplication>
#include <QDirIterator>
#include <QFile>
#include <QLabel>
#include <QRegularExpression>

using namespace payops;

namespace {

const QList<palette::Role> kRoles{
    palette::Role::Danger,      palette::Role::Warning, palette::Role::Ok,
    palette::Role::Muted,       palette::Role::Neutral, palette::Role::Lock,
    palette::Role::Transaction, palette::Role::Coupon,  palette::Role::Points};

QPalette themed(const QColor &window, const QColor &text, const QColor &base,
                const QColor &alternate)
{
    QPalette p;
    for (const auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        p.setColor(group, QPalette::Window, window);
        p.setColor(group, QPalette::WindowText, text);
        p.setColor(group, QPalette::Base, base);
        p.setColor(group, QPalette::AlternateBase, alternate);
        p.setColor(group, QPalette::Text, text);
        p.setColor(group, QPalette::Button, window);
        p.setColor(group, QPalette::ButtonText, text);
    }
    return p;
}

// Breeze Dark and Adwaita light, roughly: the two themes an operator's desktop most likely has.
QPalette darkTheme()
{
    return themed(QColor(0x2a, 0x2e, 0x32), QColor(0xfc, 0xfc, 0xfc), QColor(0x1b, 0x1e, 0x20),
                  QColor(0x23, 0x26, 0x29));
}

QPalette lightTheme()
{
    return themed(QColor(0xf6, 0xf5, 0xf4), QColor(0x2e, 0x34, 0x36), QColor(0xff, 0xff, 0xff),
                  QColor(0xf0, 0xf0, 0xf0));
}

} // namespace

class TestPalette final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { QApplication::setPalette(lightTheme()); }

    void everyRoleReadsOnBothThemes_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::newRow("light") << false;
        QTest::newRow("dark") << true;
    }
    void everyRoleReadsOnBothThemes()
    {
        QFETCH(bool, dark);
        QApplication::setPalette(dark ? darkTheme() : lightTheme());
        QCOMPARE(palette::isDark(), dark);
        const QPalette theme = QApplication::palette();
        for (const palette::Role role : kRoles) {
            const QColor colour = palette::colour(role);
            for (const auto background :
                 {QPalette::Window, QPalette::Base, QPalette::AlternateBase}) {
                const double ratio = palette::contrast(colour, theme.color(background));
                QVERIFY2(ratio >= 3.0,
                         qPrintable(QStringLiteral("role %1 is %2 on %3: contrast %4")
                                        .arg(int(role))
                                        .arg(colour.name(), theme.color(background).name())
                                        .arg(ratio)));
            }
        }
        // Text on a tinted cell, and on the alarm fill of the banner and the switch button.
        for (const palette::Role role : {palette::Role::Warning, palette::Role::Danger}) {
            QVERIFY(palette::contrast(palette::text(), palette::tint(role, 0.3)) >= 4.5);
            QVERIFY(palette::contrast(
                        palette::readableOn(palette::colour(role), palette::tint(role, 0.3)),
                        palette::tint(role, 0.3)) >= 4.5);
            QVERIFY(palette::contrast(palette::textOn(palette::fill(role)), palette::fill(role)) >=
                    4.5);
        }
    }

    void rolesFollowTheTheme()
    {
        QApplication::setPalette(lightTheme());
        const QColor lightDanger = palette::danger();
        const QString lightHtml = palette::strong(palette::Role::Danger, QStringLiteral("broken"));
        QApplication::setPalette(darkTheme());
        const QColor darkDanger = palette::danger();
        QVERIFY2(darkDanger.lightnessF() > lightDanger.lightnessF(),
                 qPrintable(lightDanger.name() + QLatin1Char(' ') + darkDanger.name()));
        QVERIFY(palette::muted() != palette::text());
        QCOMPARE(lightHtml,
                 QStringLiteral("<b style='color:%1'>broken</b>").arg(lightDanger.name()));

        QLabel label;
        palette::setTextRole(&label, palette::Role::Danger);
        QCOMPARE(label.palette().color(QPalette::WindowText), darkDanger);
        palette::setTextRole(&label, std::nullopt);
        QCOMPARE(label.palette().color(QPalette::WindowText),
                 QApplication::palette().color(QPalette::WindowText));
    }

    // Every colour of the console comes from the palette: a literal anywhere else would not
    // follow a dark theme.
    void noColourLiteralOutsideThePalette()
    {
        const QList<QRegularExpression> literals{
            QRegularExpression(QStringLiteral("QColor\\s*\\(\\s*(0x|\\d|\"|QString|Qt::)")),
            QRegularExpression(QStringLiteral("#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\\b")),
            QRegularExpression(QStringLiteral("Qt::(?:red|darkRed|green|darkGreen|blue|darkBlue|"
                                              "cyan|darkCyan|magenta|darkMagenta|yellow|darkYellow|"
                                              "gray|darkGray|lightGray|white|black)\\b")),
            QRegularExpression(QStringLiteral(
                "(?:color|background)\\s*:\\s*(?:#[0-9a-fA-F]|[a-zA-Z]+\\s*[;}'\"])")),
        };
        // Each pattern catches what it is for: these are lines the console had.
        const QStringList known{QStringLiteral("return QBrush(QColor(0xc6, 0x28, 0x28));"),
                                QStringLiteral("setStyleSheet(QStringLiteral(\"color: #555;\"));"),
                                QStringLiteral("text->setBrush(Qt::darkGray);"),
                                QStringLiteral("\"QLabel { color: white; font-weight: bold; }\"")};
        for (int i = 0; i < literals.size(); ++i)
            QVERIFY2(literals.at(i).match(known.at(i)).hasMatch(), qPrintable(known.at(i)));
        QStringList found;
        int files = 0;
        QDirIterator it(QStringLiteral(PAYOPS_UI_SOURCE_DIR),
                        {QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            if (QFileInfo(path).completeBaseName() == QLatin1String("palette"))
                continue;
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
            ++files;
            int number = 0;
            while (!file.atEnd()) {
                const QString line = QString::fromUtf8(file.readLine());
                ++number;
                for (const QRegularExpression &literal : literals)
                    if (literal.match(line).hasMatch())
                        found << QStringLiteral("%1:%2: %3")
                                     .arg(path)
                                     .arg(number)
                                     .arg(line.trimmed());
            }
        }
        QVERIFY(files > 20);
        QVERIFY2(found.isEmpty(), qPrintable(found.join(QLatin1Char('\n'))));
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestPalette test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_palette.moc"
