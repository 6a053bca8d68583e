#include "tile.h"

#include "palette.h"

#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QVBoxLayout>

namespace payops {

Tile::Tile(const QString &objectName, const QString &caption, QWidget *parent)
    : QFrame(parent)
{
    setObjectName(objectName);
    setFrameShape(QFrame::StyledPanel);
    setCursor(Qt::PointingHandCursor);
    setFocusPolicy(Qt::StrongFocus);
    // Three to a row beside the navigation and the playbook on a 1366 px laptop.
    setMinimumSize(200, 120);
    setAutoFillBackground(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(14, 10, 14, 10);
    m_captionText = caption;
    m_caption = new QLabel(caption, this);
    m_caption->setObjectName(objectName + QStringLiteral("Caption"));
    m_caption->setWordWrap(true); // "— stale" fits beside the longest caption on two lines
    QFont captionFont = m_caption->font();
    captionFont.setBold(true);
    m_caption->setFont(captionFont);
    m_value = new QLabel(QStringLiteral("…"), this);
    m_value->setObjectName(objectName + QStringLiteral("Value"));
    QFont big = m_value->font();
    big.setPointSizeF(big.pointSizeF() * 2.6);
    big.setBold(true);
    m_value->setFont(big);
    m_detail = new QLabel(this);
    m_detail->setObjectName(objectName + QStringLiteral("Detail"));
    m_detail->setWordWrap(true);
    fitDetail();
    layout->addWidget(m_caption);
    layout->addWidget(m_value);
    layout->addWidget(m_detail);
    layout->addStretch(1);
}

void Tile::setStale(bool stale)
{
    m_caption->setText(stale ? tr("%1 — stale").arg(m_captionText) : m_captionText);
}

void Tile::setValue(const QString &value, const QString &detail, Tone tone)
{
    m_value->setText(value);
    m_detail->setText(detail);
    fitDetail();
    // Colour says the same as the words, never instead of them.
    std::optional<palette::Role> role;
    switch (tone) {
    case Tone::Good:
        role = palette::Role::Ok;
        break;
    case Tone::Warning:
        role = palette::Role::Warning;
        break;
    case Tone::Bad:
        role = palette::Role::Danger;
        break;
    case Tone::Neutral:
        break;
    }
    palette::setTextRole(m_value, role);
}

void Tile::resizeEvent(QResizeEvent *event)
{
    QFrame::resizeEvent(event);
    fitDetail();
}

void Tile::fitDetail()
{
    // Room for three lines at least, and for the whole detail at the width it has: a detail that
    // wraps (the money at risk of three side effects, why a figure is not available, where a
    // replica's figure comes from) is otherwise cut off when the window is short.
    const int width = layout() ? layout()->contentsRect().width() : 0; // 0 until laid out
    m_detail->setMinimumHeight(std::max(3 * m_detail->fontMetrics().lineSpacing(),
                                        width > 0 ? m_detail->heightForWidth(width) : 0));
}

QString Tile::value() const
{
    return m_value->text();
}

QString Tile::detail() const
{
    return m_detail->text();
}

void Tile::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && rect().contains(event->position().toPoint()))
        Q_EMIT clicked();
    QFrame::mouseReleaseEvent(event);
}

void Tile::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter ||
        event->key() == Qt::Key_Space) {
        Q_EMIT clicked();
        return;
    }
    QFrame::keyPressEvent(event);
}

} // namespace payops
