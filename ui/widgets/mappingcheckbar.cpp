#include "mappingcheckbar.h"

#include "console/connectionprofile.h"
#include "console/worker.h"
#include "palette.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>

namespace payops {

namespace {

const QString kJob = QStringLiteral("mappingCheck");

int count(const mapping::MappingCheck &check, mapping::Severity severity)
{
    return int(std::count_if(check.problems.cbegin(), check.problems.cend(),
                             [severity](const mapping::MappingProblem &problem) {
                                 return problem.severity == severity;
                             }));
}

// One line per problem, as `payops mapping check` prints them.
QString problemLines(const mapping::MappingCheck &check)
{
    QStringList lines;
    for (const mapping::MappingProblem &problem : check.problems)
        lines << QStringLiteral("%1 %2: %3")
                     .arg(mapping::severityName(problem.severity), problem.where, problem.message);
    return lines.join(QLatin1Char('\n'));
}

} // namespace

MappingCheckBar::MappingCheckBar(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("mappingCheckBar"));
    // Its own background, tinted by the check's outcome: a line apart from the page below it.
    setAttribute(Qt::WA_StyledBackground);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(12, 3, 12, 3);
    m_text = new QLabel(this);
    m_text->setObjectName(QStringLiteral("mappingCheckText"));
    m_text->setTextFormat(Qt::RichText);
    m_details = new QPushButton(tr("Details…"), this);
    m_details->setObjectName(QStringLiteral("mappingCheckDetails"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("mappingCheckCancel"));
    m_again = new QPushButton(tr("Check again"), this);
    m_again->setObjectName(QStringLiteral("mappingCheckAgain"));
    for (QPushButton *button : {m_details, m_cancel, m_again})
        button->setFlat(true);
    layout->addWidget(m_text);
    layout->addWidget(m_details);
    layout->addWidget(m_cancel);
    layout->addWidget(m_again);
    layout->addStretch(1);
    connect(m_details, &QPushButton::clicked, this, &MappingCheckBar::showDetails);
    connect(m_cancel, &QPushButton::clicked, this, &MappingCheckBar::cancel);
    connect(m_again, &QPushButton::clicked, this, &MappingCheckBar::run);
    hide();
}

MappingCheckBar::~MappingCheckBar() = default;

QString MappingCheckBar::text() const
{
    return m_text->text();
}

void MappingCheckBar::check(const console::Target &target)
{
    m_result.reset();
    m_mapping = target.mapping;
    if (!m_mapping) {
        m_worker.reset();
        hide();
        return;
    }
    // A worker of its own: the EXPLAINs of a large mapping must not hold up the pages' reads.
    m_worker = std::make_unique<console::Worker>(target.dsn);
    QWidget::show();
    run();
}

void MappingCheckBar::run()
{
    m_result.reset();
    tintBy(palette::Role::Muted);
    m_text->setText(tr("Checking the mapping against the team's tables…"));
    m_text->setToolTip(QString());
    m_details->hide();
    m_again->hide();
    m_cancel->show();
    const mapping::Mapping mapping = *m_mapping;
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_worker->submit<mapping::MappingCheck>(
        kJob,
        [mapping, stop = m_stop](const QSqlDatabase &db) {
            return mapping::checkMapping(db, mapping, stop.get());
        },
        this, [this](const mapping::MappingCheck &check) { showCheck(check); },
        [this](const db::Error &error) {
            showUnchecked(palette::coloured(
                palette::Role::Warning,
                tr("Mapping not checked: %1").arg(db::userMessage(error).toHtmlEscaped())));
        });
}

void MappingCheckBar::cancel()
{
    // The flag first: the statement the kill interrupts counts as a refused condition, and the
    // check must stop there rather than wait on the next one. Its result is dropped anyway.
    m_stop->store(true);
    m_worker->cancel(kJob);
    showUnchecked(tr("Mapping check cancelled: figures from the team's tables are unchecked."));
}

void MappingCheckBar::showUnchecked(const QString &text)
{
    m_cancel->hide();
    m_again->show();
    tintBy(palette::Role::Warning);
    m_text->setText(text);
    Q_EMIT finished();
}

void MappingCheckBar::showCheck(const mapping::MappingCheck &check)
{
    m_result = check;
    m_cancel->hide();
    const int errors = count(check, mapping::Severity::Error);
    const int warnings = count(check, mapping::Severity::Warning);
    QString text;
    if (errors)
        text = palette::strong(
            palette::Role::Danger,
            errors == 1 ? tr("Mapping has 1 error: figures from the team's tables may be wrong.")
                        : tr("Mapping has %1 errors: figures from the team's tables may be wrong.")
                              .arg(errors));
    else if (warnings)
        text = palette::coloured(palette::Role::Warning,
                                 warnings == 1 ? tr("Mapping OK with 1 warning")
                                               : tr("Mapping OK with %1 warnings").arg(warnings));
    else
        text = palette::coloured(palette::Role::Ok, tr("Mapping OK"));
    tintBy(errors ? palette::Role::Danger : warnings ? palette::Role::Warning : palette::Role::Ok);
    m_text->setText(text);
    m_text->setToolTip(problemLines(check));
    m_details->setVisible(!check.problems.isEmpty());
    m_again->show();
    Q_EMIT finished();
}

void MappingCheckBar::tintBy(palette::Role role)
{
    setStyleSheet(
        QStringLiteral("#mappingCheckBar { background: %1; border-bottom: 1px solid %2; }")
            .arg(palette::tint(role, 0.12).name(), palette::tint(role, 0.4).name()));
}

void MappingCheckBar::showDetails()
{
    if (!m_result)
        return;
    auto *box =
        new QMessageBox(m_result->hasErrors() ? QMessageBox::Warning : QMessageBox::Information,
                        tr("Mapping check"), tr("%1 on this database:").arg(m_mapping->path),
                        QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("mappingCheckDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(problemLines(*m_result));
    box->open();
}

} // namespace payops
