#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>
#include <stdexcept>

namespace payops {

// A payment platform's statement as payops reads it: the values of one format, turned into
// what reconciling compares. The readers (statementreader) produce these, the importer
// (statementimport) stores them, the reconciliation reads them back.

enum class StatementFormat { Auto, Generic, WeChat, Alipay };

// "auto", "generic", "wechat", "alipay"; std::nullopt for anything else.
std::optional<StatementFormat> statementFormatFromName(const QString &name);
QString statementFormatName(StatementFormat format);

// What the file says about itself, known once its first lines are read.
struct StatementHeader
{
    StatementFormat format = StatementFormat::Generic; // never Auto: what was detected or asked for
    bool detected = false; // the format was chosen by looking at the file
    QString channel;       // "wechat", "alipay"; a generic file may name none
    // The period the file declares (Alipay's 起始日期/终止日期), in UTC, half open. Invalid
    // when the file declares none: the reconciliation then uses its first and last paid_at.
    QDateTime periodStart;
    QDateTime periodEnd;
};

// One transaction line. Money is integer fen; times are UTC (the platforms write Beijing time).
struct StatementLine
{
    qint64 lineNo = 0;  // 1-based line of the file, for errors and findings
    QByteArray payNo;   // the platform's transaction id: the pay_no of its callback
    qint64 orderId = 0; // the merchant order number when it is one of our order ids, else 0
    // The merchant order number as the line gives it, when it is 1 to 64 visible ASCII
    // characters (any platform's out_trade_no); else empty.
    QByteArray orderNo;
    qint64 amountFen = 0; // what the platform took; negative on a refund line
    QString status;       // normalised: SUCCESS, REFUND, CLOSED, or the platform's own word
    QDateTime paidAt;     // invalid when the line has none
};

struct StatementLineError
{
    qint64 lineNo = 0;
    QString message;
};

// The one clear error of a file that cannot be read at all: empty, binary, wrongly encoded,
// truncated, or of no format payops knows.
class StatementError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace payops
