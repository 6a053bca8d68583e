#pragma once

#include "db/migrator.h"
#include "scratchdatabase.h"

#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace payops::test {

// The shop's tables (tests/data/teamshop/schema.sql) and its seed in a new database `business`,
// on the server `server` reaches as root: the test server's, or a cluster node's.
void createTeamShop(const Dsn &server, const QString &business);
// The test mapping (tests/data/teamshop/teamshop.toml) for the shop in `business`.
QByteArray teamShopMapping(const QString &business);
// What docs/mapping.md has the DBA grant 'user'@'localhost' to compensate the shop's copies:
// SELECT on its database and one write grant per side-effect table.
QStringList teamShopCompensationGrants(const QString &business, const QString &user);

// A team's own shop on the test server (tests/data/teamshop/schema.sql), seeded with planted
// duplicates, beside a scratch database with payops's own tables, and its mapping file written
// out for the database the test got. The business database is dropped with the object.
class TeamShop final
{
public:
    // What the seed plants: open duplicate groups and extra live copies per side effect.
    static constexpr int kOrders = 300;
    static constexpr int kCouponGroups = 8; // one of them with its extra copy USED
    static constexpr int kGiftCardGroups = 3;
    static constexpr int kPointGroups = 5;
    static constexpr qint64 kFirstOrder = 100001;
    static constexpr qint64 kUsedCouponOrder = 100012; // its extra coupon was used
    // plantedStatement()'s differences.
    static constexpr qint64 kLeftOutOrder = kFirstOrder + 100;   // paid, not on the statement
    static constexpr qint64 kLowOrder = kFirstOrder + 102;       // listed 1.00 yuan low
    static constexpr qint64 kClosedPaidOrder = kFirstOrder + 18; // CLOSED, yet paid
    static constexpr auto kUnknownPayNo = "4200999999999999";    // the team has no record of it

    explicit TeamShop(db::SchemaLevel level = db::SchemaLevel::Current);
    ~TeamShop();
    Q_DISABLE_COPY_MOVE(TeamShop)

    const Dsn &dsn() const { return m_payops.dsn(); } // payops's own database
    const QString &business() const { return m_business; }
    const QString &mappingPath() const { return m_mappingPath; }
    // Writes another mapping beside the first (mode 644), @BUSINESS@ replaced; returns its path.
    QString writeMapping(const QString &name, const QByteArray &toml) const;
    // The test mapping's text, @BUSINESS@ replaced.
    QByteArray mappingText() const;
    // CHECKSUM TABLE of every business table, by name: compare before and after.
    QMap<QString, qint64> checksums() const;
    // Runs `sql` as root with the business database selected: the team's own changes.
    void execBusiness(const QString &sql) const;
    // The platform's side, a generic CSV statement written from the team's own records of
    // WeChat Pay payments, with planted differences: kLeftOutOrder missing (多单), kLowOrder
    // 1.00 yuan low, a payment of kClosedPaidOrder (added to t_pay_record here) and one of
    // kUnknownPayNo the team has no order for (漏单 both); refunds listed as the platform does.
    QByteArray plantedStatement() const;
    // What the team's DBA grants an account on the business database, e.g. "SELECT".
    void grantBusiness(const ScratchAccount &account, const QString &privileges) const;
    // What docs/mapping.md has the DBA grant the account compensation runs as: SELECT on the
    // business database and one write grant per side-effect table.
    void grantCompensation(const ScratchAccount &account) const;

private:
    ScratchDatabase m_payops;
    QString m_business;
    QTemporaryDir m_dir;
    QString m_mappingPath;
};

} // namespace payops::test
