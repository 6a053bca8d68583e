#include "demodatabase.h"
#include "models/posturemodel.h"
#include "pages/posturepage.h"
#include "palette.h"
#include "testmain.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLabel>
#include <QTableView>

using namespace payops;

namespace {

int rowOf(const QAbstractItemModel *model, const QString &name)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, 0).data(PostureModel::NameRole).toString() == name)
            return row;
    return -1;
}

} // namespace

class TestPosturePage final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The demo sandbox is at level legacy: the side-effect keys are missing, in the danger colour.
    void showsTheDemoSandboxesMissingKeys()
    {
        const auto demo = test::demoDatabase();
        PosturePage page(demo->dsn());
        new QAbstractItemModelTester(page.model(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, &page);
        page.resize(1400, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QTRY_COMPARE_WITH_TIMEOUT(page.model()->rowCount(), 8, 20000);

        const PostureModel *model = page.model();
        const int keyRow = rowOf(model, QStringLiteral("uk_order_tpl"));
        QVERIFY(keyRow >= 0);
        const QModelIndex state = model->index(keyRow, PostureModel::StateColumn);
        QCOMPARE(state.data(PostureModel::StateRole).toString(), QStringLiteral("missing"));
        QCOMPARE(state.data().toString(), QStringLiteral("Missing"));
        QCOMPARE(state.data(Qt::ForegroundRole).value<QColor>(), palette::danger());
        QVERIFY(model->index(keyRow, PostureModel::LetsThroughColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("coupon")));
        const int payNoRow = rowOf(model, QStringLiteral("uk_pay_no"));
        QCOMPARE(model->index(payNoRow, PostureModel::StateColumn)
                     .data(Qt::ForegroundRole)
                     .value<QColor>(),
                 palette::ok());

        auto *summary = page.findChild<QLabel *>(QStringLiteral("postureSummary"));
        QVERIFY2(summary->text().contains(QStringLiteral("missing")), qPrintable(summary->text()));
        // Wrapped sentences: every row is taller than one line of text.
        auto *table = page.findChild<QTableView *>(QStringLiteral("postureTable"));
        QVERIFY(table->rowHeight(keyRow) > table->fontMetrics().height() + 4);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestPosturePage test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_posturepage.moc"
