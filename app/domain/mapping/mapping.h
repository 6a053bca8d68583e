#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QList>
#include <QPair>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>
#include <stdexcept>

namespace payops::mapping {

// A mapping file that cannot be used: unreadable, open to other writers, not TOML, or naming
// something wrong. what() is one line for the operator, with the file's line where it has one.
class MappingError : public std::runtime_error
{
public:
    explicit MappingError(const QString &message);
    QString message() const { return QString::fromUtf8(what()); }
};

// How a mapped column holds money: yuan as DECIMAL with two places, fen as an integer, or
// points (valued at the console's points rate).
enum class Unit { Yuan, Fen, Points };
QString unitName(Unit unit);

// A payops order state and the team's value for it: a number or a string, as their column is.
struct StateValue
{
    QString state;  // PENDING, PAID, CLOSED, REFUNDING or REFUNDED
    QVariant value; // qlonglong or QString
};

struct OrdersMapping
{
    QString table;
    QString id; // integer
    QString user;
    QString amount;
    Unit amountUnit = Unit::Fen; // Yuan or Fen
    QString status;
    QString createdAt;
    QString paidAt; // optional
    // Optional: the time a row was last changed (gmt_modified, updated_at), so that state
    // counts read only the orders changed since their last read (MappedStateTally).
    QString updatedAt;
    QList<StateValue> states;

    // The team's value of a payops state, or an invalid QVariant when the mapping names none.
    QVariant valueOf(const QString &state) const;
};

// One row per platform payment.
struct PaymentsMapping
{
    QString table;
    QString payNo;
    QString order;
    QString amount;
    Unit amountUnit = Unit::Fen; // Yuan or Fen
    QString channel;             // optional
    QString paidAt;              // optional
    // [payments.channels]: payops's channel name ("wechat", "alipay") and the team's values
    // for it in `channel`. A channel not named here is stored under payops's own name.
    QList<QPair<QString, QStringList>> channels;

    // The team's values of a payops channel: those [payments.channels] names, or the name itself.
    QStringList channelValues(const QString &payopsChannel) const;
};

// The channels a platform statement is of: "wechat", "alipay".
const QStringList &payopsChannels();

enum class Compensate { Freeze, Reverse };

// One table of side effects a paid order issues (coupons, points...), and how compensation
// takes a duplicate copy back.
struct SideEffectMapping
{
    QString name; // shown to operators and used as its key in payops's own tables
    QString table;
    QString id; // auto-increment: the watch reads past it
    QString order;
    QString user;
    QStringList key; // at most one live row per (order, key...)
    QString createdAt;
    QString live; // SQL condition on this table's columns; "1 = 1" when the file names none
    QString value;
    Unit valueUnit = Unit::Fen;
    Compensate compensate = Compensate::Freeze;
    QString freeze;                            // SET clause, for Freeze
    QString used;                              // optional condition: never frozen, goes to finance
    QList<QPair<QString, QString>> reverseSet; // column = SQL expression, for Reverse
};

// A team's own tables, described by a TOML mapping file (docs/mapping.md). Names are kept as
// the file writes them; quote them with db::quoteIdentifier() or Mapping::table() before they meet
// SQL.
struct Mapping
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::Mapping)

public:
    QString path;      // the file it was read from; empty for text parsed directly
    QByteArray sha256; // of the file's bytes, lowercase hex: goes into every compensation's audit
    QString database;  // the business database; empty: the DSN's own
    OrdersMapping orders;
    std::optional<PaymentsMapping> payments;
    QList<SideEffectMapping> sideEffects;

    // `database`.`table`, quoted, or just `table` when the mapping names no database.
    QString table(const QString &name) const;
    const SideEffectMapping *sideEffect(const QString &name) const;
};

// `database.table` of a side effect as payops's own records name it (mapped_compensation's
// unique key is this and the row's id): the mapping's database, or else the connection's.
QString businessTable(const QSqlDatabase &db, const Mapping &mapping,
                      const SideEffectMapping &sideEffect);

// Reads and checks a mapping file. Refused when the group or others may write it: its
// conditions are SQL that compensation runs. Throws MappingError.
Mapping loadMapping(const QString &path);
// The same checks on text already read; `source` names it in messages. Throws MappingError.
Mapping parseMapping(const QByteArray &text, const QString &source);

// The file named by --mapping, or else by PAYOPS_MAPPING; empty when neither names one.
QString mappingPathFrom(const QString &option);

} // namespace payops::mapping
