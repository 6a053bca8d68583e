#include "demostatements.h"

#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/money.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QSqlQuery>
#include <QStringEncoder>

#include <algorithm>
#include <stdexcept>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct DemoStatementText
{
    Q_DECLARE_TR_FUNCTIONS(payops::DemoStatements)
};

const QString kMetaName = QStringLiteral("demo_statements");
const QString kWechatFile = QStringLiteral("wechatpay-demo-bill.csv");
const QString kAlipayFile = QStringLiteral("alipay-demo-business-detail.csv");
// Beijing time, as the platforms write it; the database keeps UTC.
const QString kBeijing = QStringLiteral("DATE_FORMAT(%1 + INTERVAL 8 HOUR, '%Y-%m-%d %H:%i:%s')");

// One line of a statement: a payment, or the refund of one.
struct Line
{
    QString time; // Beijing, "yyyy-MM-dd HH:mm:ss"
    QString refundTime;
    QByteArray payNo;
    qint64 order = 0;
    qint64 amountFen = 0;
    bool refund = false;
};

// The statement's day: the Beijing day before the demo was seeded, as UTC text for SQL.
struct Day
{
    QString startUtc, endUtc;
    QDate date; // Beijing
};

QString sqlTime(const QDateTime &utc)
{
    return utc.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

// Our payments of the channel on the day, their refunds, and the planted findings.
QList<Line> demoLines(const QSqlDatabase &db, const Day &day, const QString &channel)
{
    QList<Line> lines;
    QList<qsizetype> paid; // indexes of the payments of PAID orders
    QSqlQuery payments = db::exec(
        db,
        QStringLiteral("SELECT p.pay_no, p.order_id, p.amount_fen, o.status, %1, %2 "
                       "FROM pay_callback_log p JOIN orders o ON o.id = p.order_id "
                       "AND o.pay_no = p.pay_no AND o.status IN ('PAID', 'REFUNDING', 'REFUNDED') "
                       "WHERE p.channel = ? AND p.platform_paid_at >= ? AND p.platform_paid_at < ? "
                       "ORDER BY p.platform_paid_at, p.id")
            .arg(kBeijing.arg(QStringLiteral("p.platform_paid_at")),
                 kBeijing.arg(QStringLiteral("p.platform_paid_at + INTERVAL 3 HOUR"))),
        {channel, day.startUtc, day.endUtc});
    while (payments.next()) {
        Line line{payments.value(4).toString(),    QString(),
                  payments.value(0).toByteArray(), payments.value(1).toLongLong(),
                  payments.value(2).toLongLong(),  false};
        if (payments.value(3).toString() == QLatin1String("PAID"))
            paid << lines.size();
        lines << line;
        if (payments.value(3).toString() != QLatin1String("PAID")) {
            // The platform refunded it (the demo's refunds end 3 hours after the payment). The
            // refund line keeps its payment's time, so that the bill covers just its day.
            line.refund = true;
            line.refundTime = payments.value(5).toString();
            lines << line;
        }
    }
    if (paid.size() < 4)
        return {};
    // Planted: a payment of ours the platform does not list, and one it lists for less.
    lines[paid.at(paid.size() / 3)].amountFen -= 100;
    lines.removeAt(paid.at(paid.size() / 2));

    // Planted: a payment for an order of ours that was closed unpaid (a callback never came).
    QSqlQuery closed =
        db::exec(db,
                 QStringLiteral("SELECT id, amount_fen, %1 FROM orders WHERE status = 'CLOSED' "
                                "AND created_at >= ? AND created_at < ? - INTERVAL 1 HOUR "
                                "ORDER BY id LIMIT 1 OFFSET %2")
                     .arg(kBeijing.arg(QStringLiteral("created_at + INTERVAL 30 SECOND")),
                          QString::number(channel == QLatin1String("alipay") ? 1 : 0)),
                 {day.startUtc, day.endUtc});
    if (closed.next()) {
        const qint64 order = closed.value(0).toLongLong();
        const QString prefix =
            channel == QLatin1String("alipay") ? QStringLiteral("ALI") : QStringLiteral("WX");
        lines << Line{
            closed.value(2).toString(),
            QString(),
            (prefix + QStringLiteral("%1").arg(order, 12, 10, QLatin1Char('0'))).toLatin1(),
            order,
            closed.value(1).toLongLong(),
            false};
    }
    // Planted (Alipay): the customer paid an order a second time; we refused that payment.
    if (channel == QLatin1String("alipay")) {
        QSqlQuery second = db::exec(
            db,
            QStringLiteral("SELECT pay_no, order_id, amount_fen, %1 FROM pay_callback_log "
                           "WHERE reason = 'order_already_paid' AND channel = 'alipay' "
                           "AND created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT 1")
                .arg(kBeijing.arg(QStringLiteral("created_at"))),
            {day.startUtc, day.endUtc});
        if (second.next())
            lines << Line{second.value(3).toString(),    QString(),
                          second.value(0).toByteArray(), second.value(1).toLongLong(),
                          second.value(2).toLongLong(),  false};
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Line &a, const Line &b) { return a.time < b.time; });
    return lines;
}

// WeChat Pay's service fee, 0.6 %, rounded to the fen.
qint64 feeFen(qint64 amountFen)
{
    return (amountFen * 6 + 500) / 1000;
}

// The trade bill (bill_type ALL): a backtick before every field, CRLF, then the totals.
QByteArray wechatBill(const QList<Line> &lines)
{
    const QString product = QStringLiteral("沙箱订单");
    QStringList rows{QStringLiteral(
        "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
        "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,"
        "充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,"
        "费率备注")};
    qint64 settled = 0, refunded = 0, fees = 0;
    for (const Line &line : lines) {
        const QString yuan = fenToYuan(line.amountFen);
        const qint64 fee = line.refund ? -feeFen(line.amountFen) : feeFen(line.amountFen);
        settled += line.refund ? 0 : line.amountFen;
        refunded += line.refund ? line.amountFen : 0;
        fees += fee;
        const QStringList fields{
            line.time,
            QStringLiteral("wxd678efh567hg6787"),
            QStringLiteral("1900000109"),
            QStringLiteral("0"),
            QString(),
            QString::fromLatin1(line.payNo),
            QString::number(line.order),
            QStringLiteral("oSandbox%1").arg(line.order % 1000, 3, 10, QLatin1Char('0')),
            QStringLiteral("JSAPI"),
            line.refund ? QStringLiteral("REFUND") : QStringLiteral("SUCCESS"),
            QStringLiteral("OTHERS"),
            QStringLiteral("CNY"),
            yuan,
            QStringLiteral("0.00"),
            line.refund ? QStringLiteral("5030%1").arg(line.order) : QStringLiteral("0"),
            line.refund ? QStringLiteral("R%1").arg(line.order) : QStringLiteral("0"),
            line.refund ? yuan : QStringLiteral("0.00"),
            QStringLiteral("0.00"),
            line.refund ? QStringLiteral("ORIGINAL") : QString(),
            line.refund ? QStringLiteral("SUCCESS") : QString(),
            product,
            QString(),
            fenToYuan(fee),
            QStringLiteral("0.60%"),
            yuan,
            line.refund ? yuan : QStringLiteral("0.00"),
            QString()};
        rows << QLatin1Char('`') + fields.join(QStringLiteral(",`"));
    }
    rows << QStringLiteral("总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,"
                           "订单总金额,申请退款总金额");
    rows << QLatin1Char('`') + QStringList{QString::number(lines.size()),
                                           fenToYuan(settled),
                                           fenToYuan(refunded),
                                           QStringLiteral("0.00"),
                                           fenToYuan(fees),
                                           fenToYuan(settled),
                                           fenToYuan(refunded)}
                                   .join(QStringLiteral(",`"));
    return (rows.join(QStringLiteral("\r\n")) + QStringLiteral("\r\n")).toUtf8();
}

// "2026年12月01日 00:00:00"
QString alipayDeclaredTime(const QDate &date)
{
    return date.toString(QStringLiteral("yyyy年MM月dd日 00:00:00"));
}

// The business detail (业务明细): '#' comments around the table, a tab after most fields, GBK.
QByteArray alipayDetail(const QList<Line> &lines, const Day &day)
{
    QStringList rows{
        QStringLiteral("#支付宝业务明细查询"), QStringLiteral("#账号：[20880000000000000156]"),
        QStringLiteral("#起始日期：[%1]   终止日期：[%2]")
            .arg(alipayDeclaredTime(day.date), alipayDeclaredTime(day.date.addDays(1))),
        QStringLiteral("#-----------------------------------------业务明细列表"
                       "----------------------------------------"),
        QStringLiteral("支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,"
                       "门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,"
                       "商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,"
                       "商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,"
                       "卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注")};
    qint64 payments = 0, refunds = 0, received = 0, returned = 0;
    for (const Line &line : lines) {
        const qint64 signedFen = line.refund ? -line.amountFen : line.amountFen;
        const qint64 fee = line.refund ? feeFen(line.amountFen) : -feeFen(line.amountFen);
        (line.refund ? refunds : payments) += 1;
        (line.refund ? returned : received) += signedFen;
        const QString tab = QStringLiteral("\t");
        const QStringList fields{
            QString::fromLatin1(line.payNo) + tab,
            QString::number(line.order) + tab,
            (line.refund ? QStringLiteral("退款") : QStringLiteral("交易")) + tab,
            QStringLiteral("沙箱订单") + tab,
            line.time,
            line.refund ? line.refundTime : line.time,
            tab,
            tab,
            tab,
            tab,
            QStringLiteral("*沙(sandbox***@example.com)") + tab,
            fenToYuan(signedFen),
            fenToYuan(signedFen),
            QStringLiteral("0.00"),
            QStringLiteral("0.00"),
            QStringLiteral("0.00"),
            QStringLiteral("0.00"),
            QStringLiteral("0.00"),
            QString(),
            QStringLiteral("0.00") + tab,
            QStringLiteral("0.00"),
            (line.refund ? QStringLiteral("R%1").arg(line.order) : QString()) + tab,
            fenToYuan(fee),
            QStringLiteral("0.00"),
            QString()};
        rows << fields.join(QLatin1Char(','));
    }
    rows << QStringLiteral("#-----------------------------------------业务明细列表结束"
                           "------------------------------------")
         << QStringLiteral("#交易合计：%1笔，商家实收共%2元，商家优惠共0.00元")
                .arg(QString::number(payments), fenToYuan(received))
         << QStringLiteral("#退款合计：%1笔，商家实收退款共%2元，商家优惠退款共0.00元")
                .arg(QString::number(refunds), fenToYuan(returned))
         << QStringLiteral("#导出时间：[%1]").arg(alipayDeclaredTime(day.date.addDays(1)));
    const QString text = rows.join(QStringLiteral("\r\n")) + QStringLiteral("\r\n");
    QStringEncoder gbk("GB18030");
    // Without GB18030 in this Qt, the UTF-8 copy, which payops reads the same.
    return gbk.isValid() ? QByteArray(gbk(text)) : text.toUtf8();
}

void writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(content) != content.size() || !file.flush())
        throw std::runtime_error(DemoStatementText::tr("cannot write %1: %2")
                                     .arg(path, file.errorString())
                                     .toStdString());
}

} // namespace

QString demoStatementsDirectory(const QString &sandboxDirectory)
{
    return sandboxDirectory + QStringLiteral("/statements");
}

DemoStatements ensureDemoStatements(const QSqlDatabase &db, const QString &sandboxDirectory,
                                    bool rewrite)
{
    const QDateTime seeded =
        QDateTime::fromString(db::readMeta(db, QStringLiteral("demo_seeded")), Qt::ISODate);
    if (!seeded.isValid())
        return {};
    const QString folder = demoStatementsDirectory(sandboxDirectory);
    const DemoStatements files{folder + QLatin1Char('/') + kWechatFile,
                               folder + QLatin1Char('/') + kAlipayFile};
    if (rewrite || !QFile::exists(files.wechatBill) || !QFile::exists(files.alipayDetail)) {
        if (!QDir().mkpath(folder))
            throw std::runtime_error(
                DemoStatementText::tr("cannot create %1").arg(folder).toStdString());
        Day day;
        day.date = seeded.toOffsetFromUtc(8 * 3600).date().addDays(-1);
        const QDateTime start = QDateTime(day.date, QTime(0, 0), Qt::UTC).addSecs(-8 * 3600);
        day.startUtc = sqlTime(start);
        day.endUtc = sqlTime(start.addDays(1));
        writeFile(files.wechatBill, wechatBill(demoLines(db, day, QStringLiteral("wechat"))));
        writeFile(files.alipayDetail,
                  alipayDetail(demoLines(db, day, QStringLiteral("alipay")), day));
    }
    // payops_meta's value holds 255 characters: a longer folder is not offered by the console.
    if (folder.size() <= 255)
        db::exec(db,
                 QStringLiteral("INSERT INTO payops_meta (name, value) VALUES (?, ?) "
                                "ON DUPLICATE KEY UPDATE value = VALUES(value)"),
                 {kMetaName, folder});
    return files;
}

QStringList demoStatementFiles(const QSqlDatabase &db)
{
    if (!db::isSandboxDatabase(db))
        return {};
    const QString folder = db::readMeta(db, kMetaName);
    if (folder.isEmpty())
        return {};
    QStringList files;
    for (const QString &name : {kWechatFile, kAlipayFile})
        if (QFile::exists(folder + QLatin1Char('/') + name))
            files << folder + QLatin1Char('/') + name;
    return files;
}

} // namespace payops
