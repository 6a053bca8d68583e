#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "dialogs/compensationdialog.h"
#include "mainwindow.h"
#include "models/instancemodel.h"
#include "pages/compensationpage.h"
#include "pages/instancespage.h"
#include "testmain.h"
#include "widgets/tile.h"

#include <QAction>
#include <QApplication>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>

using namespace payops;
using console::ConsoleSettings;

namespace {

struct Field
{
    int value = 0;
    int minimum = 0;
    int maximum = 0;
};

// Opens File → Settings, sets the fields named in `values` (each named after its key) and
// presses `button`. The dialog is modal, so it is answered from the event loop it runs.
// Returns every field as it was when the dialog opened, by name.
QMap<QString, Field> answerSettings(MainWindow &window, const QMap<QString, int> &values,
                                    QDialogButtonBox::StandardButton button = QDialogButtonBox::Ok)
{
    QMap<QString, Field> shown;
    QTimer::singleShot(0, &window, [&window, &values, &shown, button] {
        auto *dialog = window.findChild<QDialog *>(QStringLiteral("settingsDialog"));
        for (const QSpinBox *field : dialog->findChildren<QSpinBox *>())
            shown.insert(field->objectName(), {field->value(), field->minimum(), field->maximum()});
        for (auto it = values.cbegin(); it != values.cend(); ++it)
            if (auto *field = dialog->findChild<QSpinBox *>(it.key()))
                field->setValue(it.value());
        auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
        QTest::mouseClick(buttons->button(button), Qt::LeftButton);
    });
    window.findChild<QAction *>(QStringLiteral("actionSettings"))->trigger();
    return shown;
}

QTimer *refreshTimerOf(const MainWindow &window, Page::Id id)
{
    return window.page(id)->findChild<QTimer *>(QStringLiteral("refreshTimer"));
}

QString labelText(const QWidget *parent, const QString &name)
{
    const auto *label = parent->findChild<QLabel *>(name);
    return label ? label->text() : QStringLiteral("<no %1>").arg(name);
}

// The row of one instance on the instances page, -1 while it is not listed.
int instanceRow(const InstanceModel *model, const QString &id)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, InstanceModel::IdColumn).data().toString() == id)
            return row;
    return -1;
}

} // namespace

class TestConsoleSettings final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_demo = test::demoDatabase();
        m_window = std::make_unique<MainWindow>(m_demo->dsn());
        QSignalSpy known(m_window.get(), &MainWindow::privilegesKnown);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QTRY_VERIFY_WITH_TIMEOUT(!known.isEmpty(), 20000);
    }
    void cleanupTestCase()
    {
        m_window.reset();
        m_demo.reset();
    }

    // The dialog has one field per setting, named after its key, with the table's default
    // and range; Cancel changes nothing and tells no page.
    void theDialogShowsEverySettingAndCancelKeepsThem()
    {
        QSignalSpy changed(&ConsoleSettings::instance(), &ConsoleSettings::changed);
        const QMap<QString, Field> shown = answerSettings(
            *m_window, {{QStringLiteral("refreshSeconds"), 60}}, QDialogButtonBox::Cancel);
        QCOMPARE(shown.size(), qsizetype(ConsoleSettings::NUM_KEYS));
        for (int i = 0; i < ConsoleSettings::NUM_KEYS; ++i) {
            const ConsoleSettings::Spec &spec = ConsoleSettings::spec(ConsoleSettings::Key(i));
            const Field field = shown.value(QString::fromLatin1(spec.name));
            QCOMPARE(field.value, spec.defaultValue);
            QCOMPARE(field.minimum, spec.minimum);
            QCOMPARE(field.maximum, spec.maximum);
        }
        QCOMPARE(ConsoleSettings::instance().refreshSeconds(), 5);
        QVERIFY(changed.isEmpty());
        QVERIFY(!console::openConsoleSettings()->contains(
            ConsoleSettings::fileKey(ConsoleSettings::RefreshSeconds)));
    }

    // The overview, the instances page and the backlog's summary refresh on the new period at
    // once, without reconnecting; the value is saved.
    void refreshTimersRestartWithTheNewPeriod()
    {
        for (Page::Id id : {Page::OverviewId, Page::InstancesId, Page::BacklogId}) {
            QVERIFY2(refreshTimerOf(*m_window, id), qPrintable(m_window->page(id)->objectName()));
            QCOMPARE(refreshTimerOf(*m_window, id)->interval(), 5000);
        }
        auto *updated = m_window->findChild<QLabel *>(QStringLiteral("updatedLabel"));
        QTRY_VERIFY_WITH_TIMEOUT(updated->text().contains(QStringLiteral("every 5 s")), 20000);

        answerSettings(*m_window, {{QStringLiteral("refreshSeconds"), 2}});
        for (Page::Id id : {Page::OverviewId, Page::InstancesId, Page::BacklogId}) {
            QTimer *timer = refreshTimerOf(*m_window, id);
            QCOMPARE(timer->interval(), 2000);
            QVERIFY(timer->isActive());
        }
        QTRY_VERIFY_WITH_TIMEOUT(updated->text().contains(QStringLiteral("every 2 s")), 20000);
        QCOMPARE(
            console::openConsoleSettings()->value(QStringLiteral("console/refreshSeconds")).toInt(),
            2);
    }

    // A new cash value of points: the overview's money at risk, the duplicates page's totals
    // and a compensation preview opened from the compensation page all count with it.
    void moneyFollowsThePointsValue()
    {
        const Dsn &dsn = m_demo->dsn();
        // By plain SQL: every live copy after the first of its group.
        const qint64 couponFen = test::count(
            dsn,
            QStringLiteral("SELECT COALESCE(SUM(c.face_value_fen), 0) FROM user_coupon c WHERE "
                           "c.superseded_by IS NULL AND c.id > "
                           "(SELECT MIN(d.id) FROM user_coupon d WHERE d.order_id = c.order_id "
                           "AND d.coupon_template_id = c.coupon_template_id)"));
        const qint64 points = test::count(
            dsn,
            QStringLiteral(
                "SELECT COALESCE(SUM(p.points), 0) FROM point_log p WHERE p.superseded_by IS NULL "
                "AND p.reverses_id IS NULL AND p.id > (SELECT MIN(q.id) FROM point_log q WHERE "
                "q.order_id = p.order_id "
                "AND q.point_type = p.point_type)"));
        QVERIFY(couponFen > 0 && points > 0);
        auto *money = m_window->findChild<Tile *>(QStringLiteral("tileMoney"));
        const auto tile = [](qint64 fen) { return console::formatMoney(fen); };
        QTRY_COMPARE_WITH_TIMEOUT(money->value(), tile(couponFen + points),
                                  20000); // 100 points = ¥1

        answerSettings(*m_window, {{QStringLiteral("pointsPerYuan"), 50}});
        const qint64 fen = couponFen + points * 100 / 50; // 50 points = ¥1: two fen a point
        QTRY_COMPARE_WITH_TIMEOUT(money->value(), tile(fen), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(
            labelText(m_window->page(Page::DuplicatesId), QStringLiteral("totalsLabel"))
                .contains(QStringLiteral("Money at risk ¥%1.").arg(console::formatYuan(fen))),
            20000);

        auto *compensation = static_cast<CompensationPage *>(m_window->page(Page::CompensationId));
        QPointer<CompensationDialog> dialog = compensation->compensateEverything();
        QVERIFY(dialog);
        QTRY_COMPARE_WITH_TIMEOUT(labelText(dialog, QStringLiteral("totalMoney")),
                                  console::formatMoney(fen), 20000);
        dialog->reject();
        QTRY_VERIFY(!dialog);
    }

    // An instance whose last heartbeat is 30 s old is stale on the instances page and in the
    // overview's count alike, and the page names the one threshold (tst_liveness holds every
    // reader to it).
    void aStaleInstanceIsStaleOnBothPages()
    {
        {
            db::Connection connection(m_demo->dsn(), QStringLiteral("t"));
            db::exec(connection.database(),
                     QStringLiteral("INSERT INTO callback_instance (id, host, listen, handler, "
                                    "last_seen_at, switch_version_applied, "
                                    "mode_applied) VALUES ('quiet-c', 'here', '127.0.0.1:9', "
                                    "'safe', UTC_TIMESTAMP(3) - INTERVAL 30 SECOND, "
                                    "1, 'NORMAL')"));
        }
        const qint64 known =
            test::count(m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM callback_instance"));
        auto *page = static_cast<InstancesPage *>(m_window->page(Page::InstancesId));
        InstanceModel *model = page->model();
        auto *tile = m_window->findChild<Tile *>(QStringLiteral("tileInstances"));
        const auto alive = [model] {
            const int row = instanceRow(model, QStringLiteral("quiet-c"));
            return row < 0 ? QVariant() : model->index(row, 0).data(InstanceModel::AliveRole);
        };
        page->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(alive(), QVariant(false), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(tile->value(), QStringLiteral("0 / %1").arg(known), 20000);

        QVERIFY(labelText(page, QStringLiteral("instancesNote"))
                    .contains(QStringLiteral("within 5 s")));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_demo;
    std::unique_ptr<MainWindow> m_window;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleSettings test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolesettings.moc"
