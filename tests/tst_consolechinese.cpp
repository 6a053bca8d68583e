#include "consolewindow.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "dialogs/compensationdialog.h"
#include "dialogs/reportdialog.h"
#include "dialogs/settingsdialog.h"
#include "dialogs/switchdialog.h"
#include "log/translation.h"
#include "mainwindow.h"
#include "pages/pagetable.h"
#include "playbook/playbookdock.h"
#include "testmain.h"
#include "untranslated.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDockWidget>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QGraphicsView>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QSqlQuery>
#include <QTabWidget>
#include <QTextEdit>
#include <QTimer>

#include <algorithm>

using namespace payops;

namespace {

// Where a text was seen, as a person would look for it: the widget's class and its object
// names up to the window.
QString describe(const QObject *object)
{
    QStringList names;
    for (const QObject *o = object; o; o = o->parent()) {
        if (!o->objectName().isEmpty())
            names.prepend(o->objectName());
        if (o->isWidgetType() && static_cast<const QWidget *>(o)->isWindow())
            break;
    }
    return QStringLiteral("%1 %2").arg(QString::fromLatin1(object->metaObject()->className()),
                                       names.join(QLatin1Char('/')));
}

// Every text of a window a person can read, with where it is. The rows a view shows are read
// from the first rows of its model: headers, the data and the tooltips.
class TextCollector
{
public:
    // Texts that come from the database as they were stored (coupon names, instance names, a
    // switch's reason): data, not words of the console, and left out of the check.
    explicit TextCollector(QStringList data)
        : m_data(std::move(data))
    {
        std::sort(m_data.begin(), m_data.end(),
                  [](const QString &a, const QString &b) { return a.size() > b.size(); });
    }

    void collect(QWidget *window)
    {
        add(window, window->windowTitle());
        const QList<QWidget *> widgets = window->findChildren<QWidget *>();
        for (QWidget *widget : widgets)
            collectWidget(widget);
        for (QAction *action : window->findChildren<QAction *>())
            collectAction(action);
    }

    // Everything found that is still English, one line each.
    QStringList findings() const { return m_findings; }
    // How many texts were read: a collector that reads nothing finds nothing.
    int seen() const { return m_seen; }

private:
    void add(const QObject *where, const QString &text)
    {
        if (text.trimmed().isEmpty())
            return;
        ++m_seen;
        QString checked = text;
        for (const QString &data : m_data)
            checked.replace(data, QStringLiteral(" "));
        const QStringList words = test::untranslatedWords(checked);
        if (words.isEmpty())
            return;
        const QString line =
            QStringLiteral("%1: \"%2\"   [%3]")
                .arg(describe(where), text.simplified().left(200), words.join(QLatin1Char(' ')));
        if (!m_findings.contains(line))
            m_findings << line;
    }

    void collectAction(const QAction *action)
    {
        add(action, action->text());
        if (action->toolTip() != QString(action->text()).remove(QLatin1Char('&')))
            add(action, action->toolTip());
        add(action, action->statusTip());
        if (action->menu())
            for (const QAction *inner : action->menu()->actions())
                collectAction(inner);
    }

    void collectModel(const QObject *where, const QAbstractItemModel *model)
    {
        if (!model)
            return;
        for (int column = 0; column < model->columnCount(); ++column) {
            add(where, model->headerData(column, Qt::Horizontal).toString());
            add(where, model->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString());
        }
        for (int row = 0; row < qMin(model->rowCount(), 3); ++row) {
            for (int column = 0; column < model->columnCount(); ++column) {
                const QModelIndex index = model->index(row, column);
                add(where, index.data().toString());
                add(where, index.data(Qt::ToolTipRole).toString());
            }
        }
    }

    void collectChart(const QChartView *view)
    {
        const QChart *chart = view->chart();
        add(view, chart->title());
        for (QAbstractAxis *axis : chart->axes()) {
            add(view, axis->titleText());
            if (auto *categories = qobject_cast<QBarCategoryAxis *>(axis))
                for (const QString &category : categories->categories())
                    add(view, category);
        }
        for (const QAbstractSeries *series : chart->series())
            add(view, series->name());
    }

    void collectWidget(QWidget *widget)
    {
        add(widget, widget->toolTip());
        add(widget, widget->statusTip());
        add(widget, widget->whatsThis());
        if (widget->isWindow() || qobject_cast<QDockWidget *>(widget))
            add(widget, widget->windowTitle());
        if (const auto *label = qobject_cast<QLabel *>(widget))
            add(widget, label->text());
        if (const auto *button = qobject_cast<QAbstractButton *>(widget))
            add(widget, button->text());
        if (const auto *group = qobject_cast<QGroupBox *>(widget))
            add(widget, group->title());
        if (const auto *tabs = qobject_cast<QTabWidget *>(widget))
            for (int i = 0; i < tabs->count(); ++i) {
                add(widget, tabs->tabText(i));
                add(widget, tabs->tabToolTip(i));
            }
        if (const auto *edit = qobject_cast<QLineEdit *>(widget))
            add(widget, edit->placeholderText());
        if (const auto *edit = qobject_cast<QTextEdit *>(widget)) {
            add(widget, edit->placeholderText());
            if (edit->isReadOnly())
                add(widget, edit->toPlainText());
        }
        if (const auto *edit = qobject_cast<QPlainTextEdit *>(widget)) {
            add(widget, edit->placeholderText());
            if (edit->isReadOnly())
                add(widget, edit->toPlainText());
        }
        if (const auto *combo = qobject_cast<QComboBox *>(widget))
            for (int i = 0; i < combo->count(); ++i)
                add(widget, combo->itemText(i));
        if (const auto *spin = qobject_cast<QSpinBox *>(widget)) {
            add(widget, spin->prefix());
            add(widget, spin->suffix());
        }
        if (const auto *spin = qobject_cast<QAbstractSpinBox *>(widget))
            add(widget, spin->specialValueText());
        if (const auto *view = qobject_cast<QAbstractItemView *>(widget))
            collectModel(widget, view->model());
        if (const auto *chart = qobject_cast<QChartView *>(widget)) {
            collectChart(chart);
        } else if (const auto *view = qobject_cast<QGraphicsView *>(widget);
                   view && view->scene()) {
            for (const QGraphicsItem *item : view->scene()->items()) {
                if (const auto *text = dynamic_cast<const QGraphicsSimpleTextItem *>(item))
                    add(widget, text->text());
                else if (const auto *rich = dynamic_cast<const QGraphicsTextItem *>(item))
                    add(widget, rich->toPlainText());
                add(widget, item->toolTip());
            }
        }
        for (const QAction *action : widget->actions())
            collectAction(action);
    }

    QStringList m_data;
    QStringList m_findings;
    int m_seen = 0;
};

// What the demo database holds that the console shows as it is, and the language menu's
// names, each in its own language.
QStringList dataOf(const Dsn &dsn)
{
    QStringList data;
    db::Connection connection(dsn, QStringLiteral("data"));
    for (const char *sql :
         {"SELECT name FROM coupon_template", "SELECT reason FROM callback_switch",
          "SELECT id FROM callback_instance", "SELECT DISTINCT point_type FROM point_log"}) {
        QSqlQuery query = db::exec(connection.database(), QString::fromLatin1(sql));
        while (query.next())
            data << query.value(0).toString();
    }
    for (const Language &language : availableLanguages())
        data << language.nativeName;
    data.removeAll(QString());
    return data;
}

// Runs `check` on the modal dialog `trigger` opens, then closes it.
void onModalDialog(QAction *trigger, const std::function<void(QWidget *)> &check)
{
    bool seen = false;
    QTimer::singleShot(0, trigger, [&] {
        QWidget *dialog = QApplication::activeModalWidget();
        if (!dialog)
            return;
        seen = true;
        check(dialog);
        dialog->close();
    });
    trigger->trigger();
    QVERIFY2(seen, qPrintable(trigger->objectName() + QStringLiteral(" opened no dialog")));
}

// One warning per text, since a failure message is cut short; the message counts them.
QString report(const QStringList &findings)
{
    for (const QString &finding : findings)
        qWarning().noquote() << "still English:" << finding;
    return QStringLiteral("%1 texts on screen are still English under zh_CN (the warnings above "
                          "name each widget "
                          "and text): wrap them in tr(), or translate them in the catalogue")
        .arg(findings.size());
}

} // namespace

class TestConsoleChinese final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QCOMPARE(installTranslations(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        m_demo = test::demoDatabase();
    }

    void cleanupTestCase() { installTranslations(QStringLiteral("en")); }

    // The same window in English is caught: its menus and the placeholder are named.
    void englishIsFound()
    {
        installTranslations(QStringLiteral("en"));
        MainWindow window(std::nullopt);
        TextCollector texts({});
        texts.collect(&window);
        installTranslations(QStringLiteral("zh_CN"));
        const QString found = texts.findings().join(QLatin1Char('\n'));
        QVERIFY2(found.contains(QStringLiteral("actionSettings: \"&Settings…\"")),
                 qPrintable(found));
        QVERIFY2(found.contains(QStringLiteral("placeholder: \"Not connected.")),
                 qPrintable(found));
    }

    // Before a database: the window, its menus and the placeholder.
    void windowWithoutDatabaseIsChinese()
    {
        MainWindow window(std::nullopt);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        TextCollector texts(dataOf(m_demo->dsn()));
        texts.collect(&window);
        QVERIFY2(texts.findings().isEmpty(), qPrintable(report(texts.findings())));
    }

    // Every page on the demo database, the playbook, and the dialogs that open without
    // changing anything.
    void everyPageAndDialogIsChinese()
    {
        MainWindow window(m_demo->dsn());
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        TextCollector texts(dataOf(m_demo->dsn()));
        window.playbook()->show();
        for (const PageEntry &entry : pageTable()) {
            window.showPage(entry.id);
            test::waitForData(&window);
            texts.collect(window.page(entry.id));
        }
        texts.collect(&window);

        onModalDialog(window.findChild<QAction *>(QStringLiteral("actionSettings")),
                      [&texts](QWidget *dialog) { texts.collect(dialog); });
        onModalDialog(window.findChild<QAction *>(QStringLiteral("actionConnect")),
                      [&texts](QWidget *dialog) { texts.collect(dialog); });

        window.findChild<QAction *>(QStringLiteral("actionIncidentReport"))->trigger();
        auto *reportDialog = window.findChild<ReportDialog *>();
        QVERIFY(reportDialog);
        test::waitForData(reportDialog);
        texts.collect(reportDialog);
        reportDialog->close();

        SwitchDialog *switchDialog = test::openSwitchDialog(window);
        QVERIFY(switchDialog);
        texts.collect(switchDialog);
        switchDialog->reject();

        CompensationDialog *dialog = test::openCompensationPreview(window);
        QVERIFY(dialog);
        texts.collect(dialog);
        dialog->reject();

        qInfo() << "texts read:" << texts.seen();
        QVERIFY2(texts.seen() > 1000,
                 qPrintable(QStringLiteral("only %1 texts read").arg(texts.seen())));
        QVERIFY2(texts.findings().isEmpty(), qPrintable(report(texts.findings())));
    }

    // The settings offer the language by its own name, store it for the next start, and
    // leave the running console as it is; a stored code payops does not have follows the
    // system.
    void languageIsChosenForTheNextStart()
    {
        const QString before = console::storedLanguage();
        console::storeLanguage(QString());
        SettingsDialog dialog(console::ConsoleSettings::instance());
        auto *language = dialog.findChild<QComboBox *>(QStringLiteral("language"));
        QVERIFY(language);
        QCOMPARE(language->count(), 3);
        QCOMPARE(language->itemText(0), QStringLiteral("跟随系统"));
        QCOMPARE(language->itemText(1), QStringLiteral("English"));
        QCOMPARE(language->itemText(2), QStringLiteral("简体中文"));
        QCOMPARE(language->currentIndex(), 0);
        language->setCurrentIndex(language->findData(QStringLiteral("en")));
        dialog.accept();
        QCOMPARE(console::storedLanguage(), QStringLiteral("en"));
        QCOMPARE(QCoreApplication::translate("payops::SettingsDialog", "Language"),
                 QStringLiteral("语言"));

        SettingsDialog again(console::ConsoleSettings::instance());
        QCOMPARE(again.findChild<QComboBox *>(QStringLiteral("language"))->currentData().toString(),
                 QStringLiteral("en"));
        console::openConsoleSettings()->setValue(QStringLiteral("console/language"),
                                                 QStringLiteral("klingon"));
        QCOMPARE(console::storedLanguage(), QString());
        console::storeLanguage(before);
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_demo;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleChinese test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolechinese.moc"
