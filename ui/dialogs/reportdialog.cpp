#include "reportdialog.h"

#include "console/consolesettings.h"
#include "console/incidentfactsjob.h"
#include "console/worker.h"
#include "palette.h"
#include "report/incidentreport.h"
#include "widgets/utctimeedit.h"

#include <QDateTimeEdit>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

#include <stdexcept>

namespace payops {
namespace {

// What a report job ends with: the file written, or why not.
struct ReportOutcome
{
    QString path; // empty: not written
    QString message;
};

} // namespace

ReportDialog::ReportDialog(const Dsn &dsn, QWidget *parent)
    : QDialog(parent)
    , m_worker(std::make_unique<console::Worker>(dsn))
{
    setObjectName(QStringLiteral("reportDialog"));
    setWindowTitle(tr("Incident report"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(
        tr("A PDF of one window: when the duplicates began, the switch's flips and who made them, "
           "what was compensated and by whom, the totals in yuan, the reconciliation, charts and "
           "the audit chain's head. The same file as <tt>payops report</tt>."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    if (dsn.readOnlySession) { // the read database the pages read: as far as it has caught up
        auto *source = new QLabel(tr("Read from %1, as far as it has caught up with its primary "
                                     "(the status bar says how far behind it is).")
                                      .arg(dsn.toDisplayString().toHtmlEscaped()),
                                  this);
        source->setObjectName(QStringLiteral("reportReadSource"));
        source->setWordWrap(true);
        layout->addWidget(source);
    }

    // The last six hours, to the next whole minute, as a start.
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QDateTime to =
        QDateTime::fromSecsSinceEpoch((now.toSecsSinceEpoch() / 60 + 1) * 60, Qt::UTC);
    auto *form = new QFormLayout;
    m_from = utcTimeEdit(QStringLiteral("reportFrom"), to.addSecs(-6 * 3600), this);
    m_to = utcTimeEdit(QStringLiteral("reportTo"), to, this);
    form->addRow(tr("From (UTC, included)"), m_from);
    form->addRow(tr("To (UTC, excluded)"), m_to);
    auto *file = new QHBoxLayout;
    m_path =
        new QLineEdit(QDir::home().filePath(QStringLiteral("payops-incident-report.pdf")), this);
    m_path->setObjectName(QStringLiteral("reportPath"));
    auto *browse = new QPushButton(tr("Choose…"), this);
    file->addWidget(m_path, 1);
    file->addWidget(browse);
    form->addRow(tr("File"), file);
    layout->addLayout(form);

    auto *acts = new QHBoxLayout;
    m_write = new QPushButton(tr("Write report"), this);
    m_write->setObjectName(QStringLiteral("writeReport"));
    m_write->setDefault(true);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_progress->hide();
    m_stop = new QPushButton(tr("Cancel"), this);
    m_stop->setObjectName(QStringLiteral("cancelReport"));
    m_stop->hide();
    acts->addWidget(m_write);
    acts->addWidget(m_progress);
    acts->addWidget(m_stop);
    acts->addStretch(1);
    layout->addLayout(acts);
    m_result = new QLabel(this);
    m_result->setObjectName(QStringLiteral("reportResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextBrowserInteraction);
    m_result->setOpenExternalLinks(true);
    layout->addWidget(m_result);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    layout->addWidget(buttons);

    connect(browse, &QPushButton::clicked, this, &ReportDialog::choosePath);
    connect(m_write, &QPushButton::clicked, this, &ReportDialog::write);
    connect(m_stop, &QPushButton::clicked, this, &ReportDialog::cancel);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

ReportDialog::~ReportDialog()
{
    cancel();
}

void ReportDialog::setWindow(const QDateTime &from, const QDateTime &to)
{
    m_from->setDateTime(from.toUTC());
    m_to->setDateTime(to.toUTC());
}

void ReportDialog::setPath(const QString &path)
{
    m_path->setText(path);
}

void ReportDialog::choosePath()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Write the incident report"),
                                                      m_path->text(), tr("PDF files (*.pdf)"));
    if (!path.isEmpty())
        m_path->setText(path);
}

void ReportDialog::cancel()
{
    if (!m_cancel)
        return;
    m_cancel->store(true);
    m_worker->cancel(QStringLiteral("incident-report"));
    m_stop->setEnabled(false);
}

void ReportDialog::end(const QString &path, const QString &message)
{
    m_cancel.reset();
    m_write->setEnabled(true);
    m_progress->hide();
    m_stop->hide();
    m_result->setText(message);
    Q_EMIT finished(path, message);
}

void ReportDialog::write()
{
    if (isBusy())
        return;
    const QDateTime from = m_from->dateTime();
    const QDateTime to = m_to->dateTime();
    const QString path = m_path->text().trimmed();
    const QString refused = palette::strong(palette::Role::Danger, tr("Not written:"));
    if (from >= to) {
        m_result->setText(tr("%1 the window is empty: “from” must be before “to”.").arg(refused));
        return;
    }
    if (path.isEmpty()) {
        m_result->setText(tr("%1 choose a file to write.").arg(refused));
        return;
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_write->setEnabled(false);
    m_progress->show();
    m_stop->setEnabled(true);
    m_stop->show();
    m_result->setText(tr("Reading the incident from the database …"));
    const auto cancel = m_cancel;
    const QPointer<ReportDialog> guard(this);
    const QString written = tr("Written to <a href=\"%1\">%2</a>.");
    const QString cancelled = tr("Cancelled: no file was written.");
    const QString printing = tr("Printing the PDF …");
    const qint64 pointsPerYuan = console::ConsoleSettings::instance().pointsPerYuan();
    // Printed where the facts were read: a long report never holds up the UI thread.
    const auto print = [=](const IncidentFacts &facts) -> ReportOutcome {
        if (cancel->load())
            return {QString(), cancelled};
        console::Worker::postTo(guard, [printing](ReportDialog *dialog) {
            if (dialog->isBusy())
                dialog->m_result->setText(printing);
        });
        try {
            IncidentReport(facts).writePdf(path);
        } catch (const std::runtime_error &error) {
            return {QString(),
                    refused + QLatin1Char(' ') + QString::fromUtf8(error.what()).toHtmlEscaped()};
        }
        return {path, written.arg(QUrl::fromLocalFile(path).toString(),
                                  QDir::toNativeSeparators(path).toHtmlEscaped())};
    };
    m_worker->submit<ReportOutcome>(
        QStringLiteral("incident-report"),
        console::withIncidentFacts<ReportOutcome>(from, to, pointsPerYuan, cancel, print), this,
        [this](const ReportOutcome &outcome) { end(outcome.path, outcome.message); },
        [this, refused, cancelled](const db::Error &error) {
            end(QString(),
                console::Worker::isCancelled(error)
                    ? cancelled
                    : refused + QLatin1Char(' ') + db::userMessage(error).toHtmlEscaped());
        });
}

} // namespace payops
