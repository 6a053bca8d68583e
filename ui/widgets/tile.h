#pragma once

#include <QFrame>

class QLabel;

namespace payops {

// A figure of the overview: a caption, a value in large type and a line of detail. The whole
// tile is a button that leads to the page behind the figure.
class Tile final : public QFrame
{
    Q_OBJECT

public:
    enum class Tone { Neutral, Good, Warning, Bad };

    Tile(const QString &objectName, const QString &caption, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(Tile)

    void setValue(const QString &value, const QString &detail, Tone tone = Tone::Neutral);
    QString value() const;
    QString detail() const;
    // Says on the tile that its figure is read from a replica behind its primary.
    void setStale(bool stale);

Q_SIGNALS:
    void clicked();

protected:
    void mouseReleaseEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    // Keeps room for the whole detail at the tile's width.
    void fitDetail();

    QString m_captionText;
    QLabel *m_caption = nullptr;
    QLabel *m_value = nullptr;
    QLabel *m_detail = nullptr;
};

} // namespace payops
