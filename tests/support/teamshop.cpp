#include "teamshop.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/sqlscript.h"
#include "domain/money/duplicates/duplicatecount.h"

#include <QFile>
#include <QSqlQuery>
#include <QStringList>
#include <QTest>

namespace payops::test {
namespace {

QByteArray readData(const QString &name)
{
    QFile file(QStringLiteral(PAYOPS_TEST_SOURCE_DIR "/data/teamshop/") + name);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

enum TeamState { Pending = 0, Paid = 1, Closed = 2, Refunding = 3, Refunded = 4 };

int stateOf(int i)
{
    if (i == 50 || i == 51)
        return Refunding;
    if (i == 60 || i == 61)
        return Refunded;
    if (i % 10 == 9)
        return Pending;
    if (i % 10 == 8)
        return Closed;
    return Paid;
}

QString at(int minutes)
{
    return QStringLiteral("'2026-11-01 00:00:00' + INTERVAL %1 MINUTE").arg(minutes);
}

// The shop's history: every paid order has its payment, a coupon, points and every third a
// gift card; then the incident's second copies, written later as a racing handler does.
QStringList seedStatements()
{
    QStringList orders, payments, coupons, cards, points, members;
    for (int uid = 7000; uid < 7040; ++uid)
        members << QStringLiteral("(%1, 'member %1')").arg(uid);
    for (int i = 0; i < TeamShop::kOrders; ++i) {
        const qint64 order = TeamShop::kFirstOrder + i;
        const int uid = 7000 + i % 40;
        const int yuan = 9 + i % 50;
        const int state = stateOf(i);
        const bool paid = state == Paid || state == Refunding || state == Refunded;
        orders << QStringLiteral("(%1, %2, %3.90, %4, %5, %6, %7)")
                      .arg(order)
                      .arg(uid)
                      .arg(yuan)
                      .arg(state)
                      .arg(at(i), paid ? at(i + 1) : QStringLiteral("NULL"),
                           paid ? at(i + 1) : at(i)); // last changed when paid
        if (!paid)
            continue;
        payments << QStringLiteral("('42000%1', %1, %2, '%3', %4)")
                        .arg(order)
                        .arg(yuan * 100 + 90)
                        .arg(i % 2 ? QStringLiteral("alipay") : QStringLiteral("wechatpay"),
                             at(i + 1));
        coupons << QStringLiteral("(%1, %2, 'NEWUSER5', 5.00, 'ISSUED', %3)")
                       .arg(order)
                       .arg(uid)
                       .arg(at(i + 1));
        points << QStringLiteral("(%1, %2, 'PAY_REWARD', %3, '', %4)")
                      .arg(order)
                      .arg(uid)
                      .arg(yuan)
                      .arg(at(i + 1));
        if (i % 3 == 0)
            cards << QStringLiteral("(%1, %2, 'GIFT', 7, 1000, 0, %3)")
                         .arg(order)
                         .arg(uid)
                         .arg(at(i + 1));
    }
    for (int i = 10; i < 10 + TeamShop::kCouponGroups; ++i)
        coupons << QStringLiteral("(%1, %2, 'NEWUSER5', 5.00, '%3', %4)")
                       .arg(TeamShop::kFirstOrder + i)
                       .arg(7000 + i % 40)
                       .arg(TeamShop::kFirstOrder + i == TeamShop::kUsedCouponOrder
                                ? QStringLiteral("USED")
                                : QStringLiteral("ISSUED"),
                            at(i + 2));
    // A duplicate the team voided themselves: not live, so not a finding.
    coupons << QStringLiteral("(%1, 7020, 'NEWUSER5', 5.00, 'VOID', %2)")
                   .arg(TeamShop::kFirstOrder + 20)
                   .arg(at(22));
    for (int i : {30, 33, 36})
        cards << QStringLiteral("(%1, %2, 'GIFT', 7, 1000, 0, %3)")
                     .arg(TeamShop::kFirstOrder + i)
                     .arg(7000 + i % 40)
                     .arg(at(i + 2));
    for (int i = 40; i < 40 + TeamShop::kPointGroups; ++i)
        points << QStringLiteral("(%1, %2, 'PAY_REWARD', %3, '', %4)")
                      .arg(TeamShop::kFirstOrder + i)
                      .arg(7000 + i % 40)
                      .arg(9 + i % 50)
                      .arg(at(i + 2));
    const QString sep = QStringLiteral(", ");
    return {
        QStringLiteral("INSERT INTO t_member (uid, nick) VALUES ") + members.join(sep),
        QStringLiteral("INSERT INTO t_order (order_no, uid, total, state, gmt_create, pay_time, "
                       "gmt_modified) VALUES ") +
            orders.join(sep),
        QStringLiteral("INSERT INTO t_pay_record (trade_no, order_no, amount, channel, paid_time) "
                       "VALUES ") +
            payments.join(sep),
        QStringLiteral("INSERT INTO t_coupon_grant (order_no, uid, tpl_code, face, status, "
                       "gmt_create) VALUES ") +
            coupons.join(sep),
        QStringLiteral("INSERT INTO t_gift_card (order_ref, member_id, card_type, batch, "
                       "amount_fen, status, issued_at) VALUES ") +
            cards.join(sep),
        QStringLiteral("INSERT INTO t_point_flow (biz_no, uid, biz_type, delta, remark, "
                       "gmt_create) VALUES ") +
            points.join(sep),
    };
}

} // namespace

void createTeamShop(const Dsn &server, const QString &business)
{
    db::Connection admin(server, QStringLiteral("test-admin"));
    db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") +
                                         db::quoteIdentifier(business) +
                                         QStringLiteral(" CHARACTER SET utf8mb4"));
    db::execDirect(admin.database(), QStringLiteral("USE ") + db::quoteIdentifier(business));
    const QString schema = QString::fromUtf8(readData(QStringLiteral("schema.sql")));
    for (const QString &statement : db::splitSqlScript(schema))
        db::execDirect(admin.database(), statement);
    for (const QString &statement : seedStatements())
        db::execDirect(admin.database(), statement);
}

QByteArray teamShopMapping(const QString &business)
{
    QByteArray text = readData(QStringLiteral("teamshop.toml"));
    text.replace("@BUSINESS@", business.toUtf8());
    return text;
}

QStringList teamShopCompensationGrants(const QString &business, const QString &user)
{
    const QString to = QStringLiteral(" TO '%1'@'localhost'").arg(user);
    const QString shop = db::quoteIdentifier(business);
    return {QStringLiteral("GRANT SELECT ON %1.*").arg(shop) + to,
            QStringLiteral("GRANT UPDATE ON %1.t_coupon_grant").arg(shop) + to,
            QStringLiteral("GRANT UPDATE ON %1.t_gift_card").arg(shop) + to,
            QStringLiteral("GRANT INSERT ON %1.t_point_flow").arg(shop) + to};
}

TeamShop::TeamShop(db::SchemaLevel level)
    : m_payops(QStringLiteral("tp"))
    , m_business(m_payops.name() + QStringLiteral("_shop"))
{
    {
        db::Connection connection(m_payops.dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement).migrate(level, true);
    }
    createTeamShop(serverDsn(), m_business);
    m_mappingPath = writeMapping(QStringLiteral("teamshop.toml"), mappingText());
}

TeamShop::~TeamShop()
{
    try {
        db::Connection admin(serverDsn(), QStringLiteral("test-admin"));
        db::execDirect(admin.database(), QStringLiteral("DROP DATABASE IF EXISTS ") +
                                             db::quoteIdentifier(m_business));
    } catch (const db::Error &error) {
        qWarning("could not drop %s: %s", qPrintable(m_business), error.what());
    }
}

QByteArray TeamShop::mappingText() const
{
    return teamShopMapping(m_business);
}

QString TeamShop::writeMapping(const QString &name, const QByteArray &toml) const
{
    const QString path = m_dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    QByteArray text = toml;
    text.replace("@BUSINESS@", m_business.toUtf8());
    file.write(text);
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
    return path;
}

QMap<QString, qint64> TeamShop::checksums() const
{
    db::Connection admin(serverDsn(), QStringLiteral("test-admin"));
    QMap<QString, qint64> sums;
    for (const char *table :
         {"t_order", "t_pay_record", "t_coupon_grant", "t_gift_card", "t_point_flow", "t_member"}) {
        QSqlQuery query = db::exec(admin.database(), QStringLiteral("CHECKSUM TABLE %1.%2")
                                                         .arg(db::quoteIdentifier(m_business),
                                                              QString::fromLatin1(table)));
        query.next();
        sums.insert(QString::fromLatin1(table), query.value(1).toLongLong());
    }
    return sums;
}

void TeamShop::execBusiness(const QString &sql) const
{
    db::Connection admin(serverDsn().withDatabase(m_business), QStringLiteral("test-admin"));
    db::execDirect(admin.database(), sql);
}

void TeamShop::grantBusiness(const ScratchAccount &account, const QString &privileges) const
{
    execBusiness(QStringLiteral("GRANT %1 ON %2.* TO '%3'@'localhost'")
                     .arg(privileges, db::quoteIdentifier(m_business), account.user()));
}

void TeamShop::grantCompensation(const ScratchAccount &account) const
{
    for (const QString &grant : teamShopCompensationGrants(m_business, account.user()))
        execBusiness(grant);
}

QByteArray TeamShop::plantedStatement() const
{
    const QString business = db::quoteIdentifier(m_business);
    execBusiness(QStringLiteral("INSERT INTO t_pay_record (trade_no, order_no, amount, channel, "
                                "paid_time) VALUES ('42000%1', %1, 2790, 'wechatpay', "
                                "'2026-11-01 00:19:30')")
                     .arg(kClosedPaidOrder));
    db::Connection admin(serverDsn(), QStringLiteral("test-admin"));
    QSqlQuery query = db::exec(
        admin.database(),
        QStringLiteral("SELECT p.trade_no, p.order_no, p.amount, "
                       "DATE_FORMAT(p.paid_time, '%Y-%m-%dT%H:%i:%sZ'), o.state "
                       "FROM %1.t_pay_record p JOIN %1.t_order o ON o.order_no = p.order_no "
                       "WHERE p.channel = 'wechatpay' ORDER BY p.paid_time")
            .arg(business));
    QByteArray csv = "pay_no,order_id,amount_fen,status,paid_at,channel\n";
    const auto line = [&csv](const QByteArray &payNo, qint64 order, qint64 fen, const char *status,
                             const QByteArray &paidAt) {
        csv += payNo + ',' + QByteArray::number(order) + ',' + QByteArray::number(fen) + ',' +
               status + ',' + paidAt + ",wechatpay\n";
    };
    while (query.next()) {
        const qint64 order = query.value(1).toLongLong();
        const qint64 fen = query.value(2).toLongLong();
        const QByteArray payNo = query.value(0).toByteArray();
        const QByteArray paidAt = query.value(3).toByteArray();
        if (order == kLeftOutOrder)
            continue;
        line(payNo, order, order == kLowOrder ? fen - 100 : fen, "SUCCESS", paidAt);
        if (query.value(4).toInt() == 3 || query.value(4).toInt() == 4) // REFUNDING, REFUNDED
            line(payNo, order, -fen, "REFUND", paidAt);
        if (order == kFirstOrder + 150)
            line(kUnknownPayNo, 0, 1990, "SUCCESS", paidAt);
    }
    return csv;
}

} // namespace payops::test
