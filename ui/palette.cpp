#include "palette.h"

#include <QGuiApplication>
#include <QPalette>
#include <QWidget>

#include <algorithm>
#include <cmath>

namespace payops::palette {
namespace {

// The only colour literals of the console: each role's shade on a light and on a dark theme.
// The light shades are dark enough for white text on them (fill()).
struct Shades
{
    QRgb light;
    QRgb dark;
};

Shades shadesOf(Role role)
{
    switch (role) {
    case Role::Danger:
        return {0xc62828, 0xef5350};
    case Role::Warning:
        return {0xb35900, 0xffa726};
    case Role::Ok:
        return {0x1b7f3b, 0x66bb6a};
    case Role::Neutral:
        return {0x37474f, 0xb0bec5};
    case Role::Lock:
        return {0x1565c0, 0x64b5f6};
    case Role::Transaction:
        return {0x2e7d32, 0x81c784};
    case Role::Coupon:
        return {0xef6c00, 0xffb74d};
    case Role::Points:
        return {0x5e35b1, 0xb39ddb};
    case Role::Muted:
        break; // for fill() only: colour() derives it from the theme's text
    }
    return {0x616161, 0x9e9e9e};
}

QPalette theme()
{
    return QGuiApplication::palette();
}

double channel(double value)
{
    return value <= 0.04045 ? value / 12.92 : std::pow((value + 0.055) / 1.055, 2.4);
}

double luminance(const QColor &colour)
{
    const QColor rgb = colour.toRgb();
    return 0.2126 * channel(rgb.redF()) + 0.7152 * channel(rgb.greenF()) +
           0.0722 * channel(rgb.blueF());
}

QColor blend(const QColor &front, const QColor &back, double frontShare)
{
    const auto mix = [frontShare](double a, double b) {
        return a * frontShare + b * (1 - frontShare);
    };
    return QColor::fromRgbF(float(mix(front.redF(), back.redF())),
                            float(mix(front.greenF(), back.greenF())),
                            float(mix(front.blueF(), back.blueF())));
}

// Steps the lightness away from the backgrounds until every one of them is far enough.
QColor readableOnAll(const QColor &colour, const QList<QColor> &backgrounds, double ratio)
{
    const QColor white(255, 255, 255);
    const QColor black(0, 0, 0);
    const bool lighten =
        contrast(white, backgrounds.first()) > contrast(black, backgrounds.first());
    const auto worst = [&backgrounds](const QColor &c) {
        double least = 21;
        for (const QColor &background : backgrounds)
            least = std::min(least, contrast(c, background));
        return least;
    };
    QColor c = colour.toHsl();
    for (int step = 0; step < 60 && worst(c) < ratio; ++step) {
        const float lightness = std::clamp(c.lightnessF() + (lighten ? 0.02f : -0.02f), 0.0f, 1.0f);
        c.setHslF(std::max(0.0f, c.hslHueF()), c.hslSaturationF(), lightness);
    }
    return c.toRgb();
}

} // namespace

bool isDark()
{
    const QPalette p = theme();
    return luminance(p.color(QPalette::Window)) < luminance(p.color(QPalette::WindowText));
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor text()
{
    return theme().color(QPalette::Text);
}

QColor base()
{
    return theme().color(QPalette::Base);
}

QColor alternateBase()
{
    return theme().color(QPalette::AlternateBase);
}

QColor colour(Role role)
{
    const QPalette p = theme();
    QColor shade;
    if (role == Role::Muted) {
        shade = blend(p.color(QPalette::WindowText), p.color(QPalette::Window), 0.55);
    } else {
        const Shades shades = shadesOf(role);
        shade = QColor::fromRgb(isDark() ? shades.dark : shades.light);
    }
    return readableOnAll(shade, {p.color(QPalette::Window), p.color(QPalette::Base)},
                         kReadableContrast);
}

QColor tint(Role role, double strength)
{
    return tint(colour(role), strength);
}

QColor tint(const QColor &colour, double strength)
{
    return blend(colour, base(), strength);
}

QColor fill(Role role)
{
    return QColor::fromRgb(shadesOf(role).light);
}

QColor textOn(const QColor &background)
{
    const QColor white(255, 255, 255);
    const QColor black(0, 0, 0);
    return contrast(white, background) >= contrast(black, background) ? white : black;
}

QColor readableOn(const QColor &colour, const QColor &background, double ratio)
{
    return readableOnAll(colour, {background}, ratio);
}

QString strong(Role role, const QString &html)
{
    return QStringLiteral("<b style='color:%1'>%2</b>").arg(colour(role).name(), html);
}

QString coloured(Role role, const QString &html)
{
    return QStringLiteral("<span style='color:%1'>%2</span>").arg(colour(role).name(), html);
}

void setTextRole(QWidget *widget, std::optional<Role> role)
{
    // A palette with no role set resolves every role from the parent again.
    QPalette own;
    if (role) {
        const QColor c = colour(*role);
        for (const QPalette::ColorRole target :
             {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
            own.setColor(target, c);
    }
    widget->setPalette(own);
}

} // namespace payops::palette
