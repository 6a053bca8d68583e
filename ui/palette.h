#pragma once

#include <QColor>
#include <QString>

#include <optional>

class QWidget;

namespace payops::palette {

// What a colour says on screen. Every colour of the console comes from here, derived from the
// application's QPalette: a role has one shade for light themes and one for dark ones, and is
// then made lighter or darker until it reads against the window and base backgrounds.
enum class Role {
    Danger,      // refused, broken, at risk: the unsafe handler, a lock released before its commit
    Warning,     // needs a look: pending, degraded, behind
    Ok,          // intact, alive, nothing wrong
    Muted,       // notes, guides, things of the past
    Neutral,     // plain marks: legal edges of the state machine, counts
    Lock,        // the evidence's lock spans
    Transaction, // the evidence's transaction spans
    Coupon,      // charts: coupons
    Points,      // charts: points
};

// The contrast every role keeps against the window and base colours (WCAG's for text).
constexpr double kReadableContrast = 4.5;

// The role's colour for text and lines on the window or a view.
QColor colour(Role role);
inline QColor danger()
{
    return colour(Role::Danger);
}
inline QColor warning()
{
    return colour(Role::Warning);
}
inline QColor ok()
{
    return colour(Role::Ok);
}
inline QColor muted()
{
    return colour(Role::Muted);
}

// A faint wash of the role (or of a colour) over the base colour: the background of a table
// cell, a box or a bar whose outline is in the colour itself.
QColor tint(Role role, double strength = 0.18);
QColor tint(const QColor &colour, double strength = 0.18);
// A solid background in the role's colour (a banner, a button); put textOn() on it.
QColor fill(Role role);
// Black or white, whichever reads better on `background`.
QColor textOn(const QColor &background);
// `colour` made lighter or darker until its contrast with `background` reaches `ratio`.
QColor readableOn(const QColor &colour, const QColor &background, double ratio = kReadableContrast);

// The theme's own colours, for what draws itself (diagrams) rather than through a widget.
QColor text();
QColor base();
QColor alternateBase();
bool isDark();

// WCAG 2 contrast ratio of two colours, from 1 (none) to 21 (black on white).
double contrast(const QColor &a, const QColor &b);

// Rich text in the role's colour: `html` bold, or as it is.
QString strong(Role role, const QString &html);
QString coloured(Role role, const QString &html);

// A widget's text (a label's, a button's) in the role's colour; nullopt gives the theme's back.
void setTextRole(QWidget *widget, std::optional<Role> role);

} // namespace payops::palette
