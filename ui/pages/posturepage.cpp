#include "posturepage.h"

#include "console/worker.h"
#include "domain/inspection/posture.h"
#include "models/posturemodel.h"
#include "palette.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace payops {

PosturePage::PosturePage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("posturePage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    m_summary = new QLabel(tr("Reading the defences…"), this);
    m_summary->setObjectName(QStringLiteral("postureSummary"));
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    m_model = new PostureModel(this);
    // Not a DataTable: its columns fit their contents on one line, and these cells are
    // sentences that must wrap to be read at a glance.
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("postureTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(true);
    m_table->setAlternatingRowColors(true);
    // Sentences of two or three lines read better with air around them.
    m_table->setStyleSheet(QStringLiteral("QTableView::item { padding: 4px 6px; }"));
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    QHeaderView *header = m_table->horizontalHeader();
    header->setSectionResizeMode(PostureModel::StateColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PostureModel::DefenceColumn, QHeaderView::Interactive);
    header->setSectionResizeMode(PostureModel::EvidenceColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(PostureModel::LetsThroughColumn, QHeaderView::Interactive);
    header->resizeSection(PostureModel::DefenceColumn, 230);
    header->resizeSection(PostureModel::LetsThroughColumn, 340);
    layout->addWidget(m_table, 1);

    auto *note = new QLabel(
        tr("Read from the schema, the last hour's callback traces and payment attempts, the "
           "heartbeats and the newest audit entries; never from history. Unknown means there "
           "was nothing to judge by, and does not count as missing for payops posture."),
        this);
    note->setObjectName(QStringLiteral("postureNote"));
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(startRefreshTimer(), &QTimer::timeout, this, &PosturePage::refresh);
    refresh();
}

void PosturePage::refresh()
{
    // One read at a time: on a slow server the timer must not queue reads behind each other.
    if (m_pending)
        return;
    m_pending = true;
    // On the team's own tables the defences are its side effects' unique keys and the orders'
    // compare-and-set key, not payops's.
    worker()->submit<QList<Defence>>(
        QStringLiteral("posture"),
        mapping() ? console::jobOf(inspectMappedPosture, *mapping())
                  : console::jobOf(inspectPosture),
        this,
        [this](const QList<Defence> &defences) {
            m_pending = false;
            showDefences(defences);
        },
        [this](const db::Error &error) {
            m_pending = false;
            m_summary->setText(db::userMessage(error));
        });
}

void PosturePage::showDefences(const QList<Defence> &defences)
{
    m_model->setDefences(defences);
    int missing = 0;
    int unknown = 0;
    for (const Defence &defence : defences) {
        missing += defence.state == DefenceState::Missing;
        unknown += defence.state == DefenceState::Unknown;
    }
    const int present = static_cast<int>(defences.size()) - missing - unknown;
    QString text = tr("<b>%1 of %2 defences present.</b>")
                       .arg(QString::number(present), QString::number(defences.size()));
    if (missing)
        text +=
            QLatin1Char(' ') +
            palette::strong(palette::Role::Danger,
                            tr("%1 missing: each lets duplicates through, as the last column says.")
                                .arg(missing));
    else
        text += QLatin1Char(' ') + palette::coloured(palette::Role::Ok, tr("None missing."));
    if (unknown)
        text += QLatin1Char(' ') + tr("%1 unknown: nothing to judge them by yet.").arg(unknown);
    m_summary->setText(text);
}

} // namespace payops
