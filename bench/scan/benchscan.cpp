// Times the console's duplicate scan the way the console runs it: on a DbWorker thread,
// walking the duplicates list page by page with the keyset cursor until its end, and the
// totals the page and the overview show. Prints one line per measure: name, milliseconds,
// groups found. bench/scan/run compares these with the mariadb client in the same run.
#include "bulkdata.h"
#include "console/duplicatescan.h"
#include "db/connection.h"
#include "db/dbworker.h"
#include "db/dsn.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <cstdio>

using namespace payops;

namespace {

template <typename Result>
Result runOnWorker(db::DbWorker &worker, std::function<Result(const QSqlDatabase &)> job)
{
    QEventLoop loop;
    QObject receiver;
    Result result{};
    worker.submit<Result>(
        QStringLiteral("bench"), std::move(job), &receiver,
        [&](const Result &r) {
            result = r;
            loop.quit();
        },
        [&](const db::Error &error) {
            std::fprintf(stderr, "bench: %s\n", error.what());
            std::exit(1);
        });
    loop.exec();
    return result;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: payops-bench-scan DSN [page-size] | payops-bench-scan --totals-sql\n"
                     "       payops-bench-scan --generate DSN ORDERS\n");
        return 2;
    }
    if (QByteArray(argv[1]) == "--generate" && argc == 4) {
        QString error;
        const auto dsn = Dsn::parse(QString::fromLocal8Bit(argv[2]), &error);
        if (!dsn) {
            std::fprintf(stderr, "%s\n", qPrintable(error));
            return 2;
        }
        try {
            db::Connection connection(*dsn, QStringLiteral("generate"));
            bench::generateIncidentOrders(connection.database(), QByteArray(argv[3]).toLongLong());
        } catch (const db::Error &failure) {
            std::fprintf(stderr, "bench: %s\n", failure.what());
            return 1;
        }
        return 0;
    }
    if (QByteArray(argv[1]) == "--totals-sql") {
        std::printf("%s;\n", qPrintable(console::duplicateTotalsSql(console::DuplicateFilter{})));
        return 0;
    }
    QString error;
    const auto dsn = Dsn::parse(QString::fromLocal8Bit(argv[1]), &error);
    if (!dsn) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 2;
    }
    const int pageSize = argc > 2 ? std::atoi(argv[2]) : 500;
    db::DbWorker worker(*dsn);
    runOnWorker<int>(worker, [](const QSqlDatabase &) { return 0; }); // connect outside the clock

    QElapsedTimer clock;
    clock.start();
    qint64 groups = 0;
    qint64 from = 0;
    int pages = 0;
    for (;;) {
        const console::DuplicatePage page =
            runOnWorker<console::DuplicatePage>(worker, [from, pageSize](const QSqlDatabase &db) {
                return console::loadDuplicatePage(db, console::DuplicateFilter{}, from, pageSize);
            });
        groups += page.groups.size();
        ++pages;
        if (page.atEnd)
            break;
        from = page.nextOrderId;
    }
    std::printf("list %lld %lld %d\n", static_cast<long long>(clock.elapsed()),
                static_cast<long long>(groups), pages);

    clock.restart();
    const console::DuplicateTotals totals =
        runOnWorker<console::DuplicateTotals>(worker, [](const QSqlDatabase &db) {
            return console::loadDuplicateTotals(db, console::DuplicateFilter{});
        });
    std::printf("totals %lld %lld\n", static_cast<long long>(clock.elapsed()),
                static_cast<long long>(totals.couponGroups + totals.pointGroups));
    return 0;
}
