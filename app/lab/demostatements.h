#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace payops {

// The sandbox's demo statements: a WeChat Pay trade bill and an Alipay business detail of the
// demo data's payments on the Beijing day before the demo was seeded, in the formats payops
// reads (docs/operations.md, "Platform statements"), so that a newcomer has statements to
// reconcile. Each has three findings planted (four for Alipay), nothing else:
// - missing_platform: one of our payments left out;
// - amount_mismatch: one payment listed 1.00 yuan below ours;
// - missing_ours: a payment the platform took for a CLOSED order of ours;
// - double_payment (Alipay): the second payment of an order paid twice, which we refused.
struct DemoStatements
{
    QString wechatBill;
    QString alipayDetail;
};

// <sandboxDirectory>/statements
QString demoStatementsDirectory(const QString &sandboxDirectory);

// Writes the files unless they are there (or always, after a fresh seed: `rewrite`), records
// their folder in payops_meta (demo_statements) and returns their paths; empty paths on a
// database without demo data. Throws db::Error, or std::runtime_error when a file cannot be
// written.
DemoStatements ensureDemoStatements(const QSqlDatabase &db, const QString &sandboxDirectory,
                                    bool rewrite = false);

// The demo statements a sandbox database recorded, those that exist; none on a database that
// is not a sandbox. Throws db::Error.
QStringList demoStatementFiles(const QSqlDatabase &db);

} // namespace payops
