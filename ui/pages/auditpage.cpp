#include "auditpage.h"

#include "console/audit.h"
#include "console/worker.h"
#include "models/auditmodel.h"
#include "palette.h"
#include "widgets/datatable.h"
#include "widgets/fixedtextview.h"
#include "widgets/utctimeedit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <stdexcept>

namespace payops {

namespace {

// Off until its box is ticked: an open end by default.
QDateTimeEdit *timeEdit(const QString &objectName, const QDateTime &initial, QWidget *parent)
{
    QDateTimeEdit *edit = utcTimeEdit(objectName, initial, parent);
    edit->setEnabled(false);
    return edit;
}

QString prettyJson(const QString &json)
{
    if (json.isEmpty())
        return QStringLiteral("—");
    const QJsonDocument document = QJsonDocument::fromJson(json.toUtf8());
    return document.isNull() ? json : QString::fromUtf8(document.toJson(QJsonDocument::Indented));
}

QWidget *labelled(const QString &title, QWidget *content, QWidget *parent)
{
    auto *box = new QWidget(parent);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 6, 0, 0);
    layout->addWidget(new QLabel(title, box));
    layout->addWidget(content, 1);
    return box;
}

} // namespace

AuditPage::AuditPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
    , m_jobWorker(std::make_unique<console::Worker>(target.readingDsn()))
{
    setObjectName(QStringLiteral("auditPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);

    auto *filters = new QHBoxLayout;
    m_actor = new QLineEdit(this);
    m_actor->setObjectName(QStringLiteral("actorFilter"));
    m_actor->setPlaceholderText(tr("anyone"));
    m_actor->setMaximumWidth(180);
    m_action = new QComboBox(this);
    m_action->setObjectName(QStringLiteral("actionFilter"));
    m_action->setEditable(true);
    m_action->addItems({QString(), QStringLiteral("switch."), QStringLiteral("compensation."),
                        QStringLiteral("compensation.request"),
                        QStringLiteral("compensation.approve"), QStringLiteral("backlog.drain")});
    m_action->lineEdit()->setPlaceholderText(tr("any action"));
    m_action->setMinimumWidth(200);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    m_fromOn = new QCheckBox(tr("From"), this);
    m_fromOn->setObjectName(QStringLiteral("fromEnabled"));
    m_from = timeEdit(QStringLiteral("fromTime"), now.addDays(-1), this);
    m_toOn = new QCheckBox(tr("to"), this);
    m_toOn->setObjectName(QStringLiteral("toEnabled"));
    m_to = timeEdit(QStringLiteral("toTime"), now.addSecs(3600), this);
    auto *apply = new QPushButton(tr("Show"), this);
    apply->setObjectName(QStringLiteral("applyFilter"));
    filters->addWidget(new QLabel(tr("Who"), this));
    filters->addWidget(m_actor);
    filters->addWidget(new QLabel(tr("Action"), this));
    filters->addWidget(m_action);
    filters->addStretch(1);
    layout->addLayout(filters);
    // The time range on a line of its own: on one line with the rest the filters alone were
    // wider than a laptop leaves the page beside the playbook.
    auto *range = new QHBoxLayout;
    range->addWidget(m_fromOn);
    range->addWidget(m_from);
    range->addWidget(m_toOn);
    range->addWidget(m_to);
    range->addWidget(new QLabel(tr("UTC"), this));
    range->addWidget(apply);
    range->addStretch(1);
    layout->addLayout(range);

    auto *acts = new QHBoxLayout;
    m_verify = new QPushButton(tr("Verify the chain"), this);
    m_verify->setObjectName(QStringLiteral("verifyButton"));
    m_verify->setToolTip(
        tr("Walks every entry, as payops audit verify does: no id missing, each hash over the "
           "previous one and the entry's content."));
    m_export = new QPushButton(tr("Export CSV…"), this);
    m_export->setObjectName(QStringLiteral("exportButton"));
    m_export->setToolTip(tr("Every entry the filter shows, oldest first, as CSV."));
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("auditProgress"));
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_progress->hide();
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName(QStringLiteral("stopAuditJob"));
    m_stop->hide();
    m_result = new QLabel(this);
    m_result->setObjectName(QStringLiteral("auditResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    acts->addWidget(m_verify, 0, Qt::AlignTop);
    acts->addWidget(m_export, 0, Qt::AlignTop);
    acts->addWidget(m_progress, 0, Qt::AlignTop);
    acts->addWidget(m_stop, 0, Qt::AlignTop);
    acts->addWidget(m_result, 1);
    layout->addLayout(acts);

    m_model = new AuditModel(worker(), this);
    m_table = new DataTable(QStringLiteral("auditTable"), m_model, this);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_before = fixedTextView(QStringLiteral("beforeJson"), this);
    m_after = fixedTextView(QStringLiteral("afterJson"), this);
    auto *detail = new QSplitter(Qt::Horizontal, this);
    detail->addWidget(labelled(tr("Before"), m_before, detail));
    detail->addWidget(labelled(tr("After"), m_after, detail));
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(detail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter, 1);
    auto *note = new QLabel(
        tr("Who and when are set by the database, never by the client. The log is append-only "
           "for every account, and each entry's hash covers the one before: an entry edited or "
           "removed, even by root, breaks the chain at that entry."),
        this);
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(apply, &QPushButton::clicked, this, &AuditPage::refresh);
    connect(m_actor, &QLineEdit::returnPressed, this, &AuditPage::refresh);
    connect(m_action, &QComboBox::activated, this, &AuditPage::refresh);
    connect(m_fromOn, &QCheckBox::toggled, m_from, &QWidget::setEnabled);
    connect(m_toOn, &QCheckBox::toggled, m_to, &QWidget::setEnabled);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AuditPage::showDetail);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_table->currentIndex().isValid()) // the first page: show its first entry at once
            m_table->selectRow(0);
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, &AuditPage::showDetail);
    connect(m_model, &AuditModel::failed, m_result, &QLabel::setText);
    connect(m_verify, &QPushButton::clicked, this, &AuditPage::verify);
    connect(m_export, &QPushButton::clicked, this, &AuditPage::chooseExportFile);
    connect(m_stop, &QPushButton::clicked, this, &AuditPage::cancelJob);
    refresh();
}

AuditPage::~AuditPage()
{
    cancelJob();
}

AuditFilter AuditPage::filter() const
{
    AuditFilter f;
    f.actor = m_actor->text().trimmed();
    f.action = m_action->currentText().trimmed();
    if (m_fromOn->isChecked())
        f.from = m_from->dateTime();
    if (m_toOn->isChecked())
        f.to = m_to->dateTime();
    return f;
}

void AuditPage::refresh()
{
    const AuditFilter f = filter();
    const bool emptyRange = f.from.isValid() && f.to.isValid() && f.from >= f.to;
    if (emptyRange)
        m_result->setText(palette::strong(palette::Role::Danger, tr("The time range is empty:")) +
                          tr(" “from” must be before “to”."));
    else if (m_rangeRefused && !isBusy())
        m_result->clear();
    m_rangeRefused = emptyRange;
    if (!emptyRange)
        m_model->reload(f);
}

void AuditPage::startJob(const QString &what)
{
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_verify->setEnabled(false);
    m_export->setEnabled(false);
    m_progress->show();
    m_stop->setEnabled(true);
    m_stop->show();
    m_result->setText(what);
}

void AuditPage::endJob(const QString &result)
{
    m_cancel.reset();
    m_verify->setEnabled(true);
    m_export->setEnabled(true);
    m_progress->hide();
    m_stop->hide();
    m_result->setText(result);
}

std::function<void(qint64)> AuditPage::rowsReporter(const QString &what)
{
    QPointer<AuditPage> guard(this);
    return [guard, what](qint64 rows) { // called on the job's worker thread
        console::Worker::postTo(guard, [what, rows](AuditPage *page) {
            if (page->isBusy())
                page->m_result->setText(
                    tr("%1 … %2 entries so far").arg(what, QLocale().toString(rows)));
        });
    };
}

void AuditPage::cancelJob()
{
    if (!m_cancel)
        return;
    m_cancel->store(true);
    m_stop->setEnabled(false);
}

void AuditPage::verify()
{
    if (isBusy())
        return;
    const QString what = tr("Verifying the chain");
    startJob(what + tr(" …"));
    m_jobWorker->submit<AuditVerification>(
        QStringLiteral("audit-verify"), console::auditVerificationJob(m_cancel, rowsReporter(what)),
        this,
        [this](const AuditVerification &v) {
            if (v.cancelled)
                endJob(
                    tr("The check was stopped after %1 entries: nothing is known about the rest.")
                        .arg(QLocale().toString(v.rows)));
            else if (v.intact)
                endJob(
                    tr("%1 %2 entries. Head hash <tt>%3</tt>; keep it elsewhere to compare later.")
                        .arg(palette::strong(palette::Role::Ok, tr("The chain is intact:")),
                             QLocale().toString(v.rows), v.headHash));
            else
                endJob(tr("%1 %2. Everything from there on can no longer be trusted.")
                           .arg(palette::strong(
                                    palette::Role::Danger,
                                    tr("The chain is broken at entry %1:").arg(v.firstBrokenId)),
                                v.problem.toHtmlEscaped()));
        },
        [this](const db::Error &error) {
            endJob(tr("The check failed: %1").arg(db::userMessage(error).toHtmlEscaped()));
        });
}

void AuditPage::chooseExportFile()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the audit log"), QDir::home().filePath(QStringLiteral("payops-audit.csv")),
        tr("CSV files (*.csv)"));
    if (!path.isEmpty())
        exportCsv(path);
}

void AuditPage::exportCsv(const QString &path)
{
    if (isBusy())
        return;
    const QString what = tr("Exporting");
    startJob(what + tr(" …"));
    m_jobWorker->submit<console::AuditExport>(
        QStringLiteral("audit-export"),
        console::auditExportJob(filter(), path, m_cancel, rowsReporter(what)), this,
        [this, path](const console::AuditExport &result) {
            if (!result.failure.isEmpty())
                endJob(tr("%1 %2").arg(palette::strong(palette::Role::Danger, tr("Not exported:")),
                                       result.failure.toHtmlEscaped()));
            else if (result.written < 0)
                endJob(tr("The export was stopped; no file was written."));
            else
                endJob(tr("Exported %1 entries to <tt>%2</tt>.")
                           .arg(QLocale().toString(result.written), path.toHtmlEscaped()));
        },
        [this](const db::Error &error) {
            endJob(tr("The export failed: %1").arg(db::userMessage(error).toHtmlEscaped()));
        });
}

void AuditPage::showDetail()
{
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    m_before->setPlainText(current.isValid()
                               ? prettyJson(current.data(AuditModel::BeforeJsonRole).toString())
                               : QString());
    m_after->setPlainText(current.isValid()
                              ? prettyJson(current.data(AuditModel::AfterJsonRole).toString())
                              : QString());
}

} // namespace payops
