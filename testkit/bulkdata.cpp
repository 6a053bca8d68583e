#include "bulkdata.h"

#include "db/connection.h"

#include <QSqlQuery>
#include <QStringList>

namespace payops::bench {

void generateIncidentOrders(const QSqlDatabase &db, qint64 orders)
{
    // Numbers 0-999 cross-joined make the ids; everything else is INSERT ... SELECT, which
    // writes a million orders in seconds where a client's round trips would take minutes.
    const QString digits = QStringLiteral(
        "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
        "UNION ALL "
        "SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)");
    const QString created = QStringLiteral("UTC_TIMESTAMP(3) - INTERVAL i.id SECOND");
    const QStringList statements{
        QStringLiteral("DROP TABLE IF EXISTS bench_seq, bench_ids"),
        QStringLiteral("CREATE TABLE bench_seq (n INT NOT NULL PRIMARY KEY)"),
        QStringLiteral(
            "INSERT INTO bench_seq SELECT a.n + 10 * b.n + 100 * c.n FROM %1 a, %1 b, %1 c")
            .arg(digits),
        QStringLiteral("CREATE TABLE bench_ids (id BIGINT UNSIGNED NOT NULL PRIMARY KEY)"),
        QStringLiteral("INSERT INTO coupon_template (id, name, face_value_fen) VALUES (1, 'ten "
                       "off', 1000), (2, 'five off', 500) "
                       "ON DUPLICATE KEY UPDATE face_value_fen = VALUES(face_value_fen)"),
        QStringLiteral(
            "INSERT INTO orders (id, user_id, amount_fen, status, pay_no, created_at, paid_at) "
            "SELECT i.id, 1 + MOD(i.id, 100000), 1000 + MOD(i.id * 7919, 49000), 'PAID', "
            "CAST(CONCAT('WX', i.id) AS BINARY), %1, %1 FROM bench_ids i")
            .arg(created),
        QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                       "face_value_fen, created_at) "
                       "SELECT 1 + MOD(i.id, 100000), i.id, t.id, t.face_value_fen, %1 "
                       "FROM bench_ids i CROSS JOIN coupon_template t WHERE t.id IN (1, 2)")
            .arg(created),
        QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points, created_at) "
                       "SELECT 1 + MOD(i.id, 100000), i.id, 'PAY_REWARD', 100, %1 FROM bench_ids i")
            .arg(created),
        QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                       "face_value_fen, created_at) "
                       "SELECT 1 + MOD(i.id, 100000), i.id, t.id, t.face_value_fen, %1 "
                       "FROM bench_ids i CROSS JOIN coupon_template t WHERE t.id IN (1, 2) AND "
                       "MOD(i.id, 20) = 7")
            .arg(created),
        QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points, created_at) "
                       "SELECT 1 + MOD(i.id, 100000), i.id, 'PAY_REWARD', 100, %1 FROM bench_ids i "
                       "WHERE MOD(i.id, 20) = 7")
            .arg(created),
        QStringLiteral("DROP TABLE bench_ids, bench_seq"),
        QStringLiteral("ANALYZE TABLE orders, user_coupon, point_log"),
    };
    for (const QString &statement : statements) {
        db::execDirect(db, statement);
        if (!statement.startsWith(QLatin1String("CREATE TABLE bench_ids")))
            continue;
        // A million ids per statement: the cross join of 0-999 with itself, offset.
        for (qint64 block = 0; block * 1000000 < orders; ++block)
            db::execDirect(
                db, QStringLiteral(
                        "INSERT INTO bench_ids SELECT %1 + a.n * 1000 + b.n + 1 FROM bench_seq a "
                        "CROSS JOIN bench_seq b WHERE %1 + a.n * 1000 + b.n < %2")
                        .arg(block * 1000000)
                        .arg(orders));
    }
}

qint64 sessionRowsRead(const QSqlDatabase &db)
{
    QSqlQuery status = db::exec(db, QStringLiteral("SHOW SESSION STATUS LIKE 'Handler_read%'"));
    qint64 sum = 0;
    while (status.next())
        sum += status.value(1).toLongLong();
    return sum;
}

} // namespace payops::bench
