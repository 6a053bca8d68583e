#include "mappingcheck.h"

#include "mappedcompensation.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QCoreApplication>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

namespace payops::mapping {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Check
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::Check)
};

struct Column
{
    QString dataType;   // lower case: "bigint", "decimal", "varchar"...
    QString columnType; // as the DBA wrote it: "decimal(12,2)", "tinyint(4)"
    int scale = -1;
    bool autoIncrement = false;
};

struct Table
{
    qint64 rows = 0;                // information_schema's estimate
    QHash<QString, Column> columns; // by lower-cased name
    QList<TableIndex> indexes;
};

bool isInteger(const Column &column)
{
    static const QSet<QString> types{QStringLiteral("tinyint"), QStringLiteral("smallint"),
                                     QStringLiteral("mediumint"), QStringLiteral("int"),
                                     QStringLiteral("bigint")};
    return types.contains(column.dataType);
}

bool isText(const Column &column)
{
    static const QSet<QString> types{QStringLiteral("char"),       QStringLiteral("varchar"),
                                     QStringLiteral("tinytext"),   QStringLiteral("text"),
                                     QStringLiteral("mediumtext"), QStringLiteral("longtext"),
                                     QStringLiteral("enum")};
    return types.contains(column.dataType);
}

// The first quoted name in a server message ("Unknown column 'x' in 'field list'").
QString quotedName(const QString &serverText)
{
    static const QRegularExpression quoted(QStringLiteral("'([^']*)'"));
    return quoted.match(serverText).captured(1);
}

// Where the parser stopped, from "... near 'xyz' at line 1".
QString nearText(const QString &serverText)
{
    static const QRegularExpression near(QStringLiteral("near '(.*)' at line"),
                                         QRegularExpression::DotMatchesEverythingOption);
    return near.match(serverText).captured(1).simplified();
}

class Checker
{
public:
    Checker(const QSqlDatabase &db, const Mapping &mapping, const std::atomic<bool> *cancel)
        : m_db(db)
        , m_mapping(mapping)
        , m_cancel(cancel)
        , m_schema(mapping.database.isEmpty()
                       ? db::scalar(db, QStringLiteral("SELECT DATABASE()")).toString()
                       : mapping.database)
    {
    }

    MappingCheck run()
    {
        checkOrders();
        if (m_mapping.payments && !cancelled())
            checkPayments(*m_mapping.payments);
        for (const SideEffectMapping &effect : m_mapping.sideEffects) {
            if (cancelled())
                break;
            checkSideEffect(effect);
        }
        m_result.cancelled = cancelled();
        return m_result;
    }

private:
    bool cancelled() const { return m_cancel && m_cancel->load(); }

    void add(Severity severity, const QString &where, const QString &message)
    {
        m_result.problems << MappingProblem{severity, where, message};
    }

    // The table's columns and indexes, or nullptr (and an error at `where`) when it is missing.
    const Table *table(const QString &where, const QString &name)
    {
        if (const auto found = m_tables.find(name); found != m_tables.end())
            return found->second ? &*found->second : nullptr;
        const QVariant rows = db::scalar(
            m_db,
            QStringLiteral("SELECT COALESCE(table_rows, 0) FROM information_schema.tables "
                           "WHERE table_schema = ? AND table_name = ?"),
            {m_schema, name});
        if (!rows.isValid()) {
            add(Severity::Error, where,
                Check::tr("table %1 does not exist in database %2 (or this account may not see "
                          "it)")
                    .arg(name, m_schema));
            m_tables.emplace(name, std::nullopt);
            return nullptr;
        }
        Table facts;
        facts.rows = rows.toLongLong();
        QSqlQuery columns =
            db::exec(m_db,
                     QStringLiteral("SELECT LOWER(column_name), LOWER(data_type), column_type, "
                                    "numeric_scale, extra FROM information_schema.columns "
                                    "WHERE table_schema = ? AND table_name = ?"),
                     {m_schema, name});
        while (columns.next())
            facts.columns.insert(columns.value(0).toString(),
                                 Column{columns.value(1).toString(), columns.value(2).toString(),
                                        columns.value(3).isNull() ? -1 : columns.value(3).toInt(),
                                        columns.value(4).toString().contains(
                                            QLatin1String("auto_increment"), Qt::CaseInsensitive)});
        facts.indexes = tableIndexes(m_db, m_mapping, name);
        return &*m_tables.emplace(name, std::move(facts)).first->second;
    }

    const Column *column(const QString &where, const QString &tableName, const Table &facts,
                         const QString &name)
    {
        const auto found = facts.columns.constFind(name.toLower());
        if (found != facts.columns.cend())
            return &*found;
        add(Severity::Error, where, Check::tr("table %1 has no column %2").arg(tableName, name));
        return nullptr;
    }

    void expectInteger(const QString &where, const QString &tableName, const Table &facts,
                       const QString &name)
    {
        const Column *found = column(where, tableName, facts, name);
        if (found && !isInteger(*found))
            add(Severity::Error, where,
                Check::tr("%1.%2 is %3, not an integer column")
                    .arg(tableName, name, found->columnType));
    }

    void expectTime(const QString &where, const QString &tableName, const Table &facts,
                    const QString &name)
    {
        const Column *found = column(where, tableName, facts, name);
        if (found && found->dataType != QLatin1String("datetime") &&
            found->dataType != QLatin1String("timestamp"))
            add(Severity::Error, where,
                Check::tr("%1.%2 is %3, not DATETIME or TIMESTAMP")
                    .arg(tableName, name, found->columnType));
    }

    // yuan is exact only as a DECIMAL with two places; fen and points are counted in integers.
    void expectMoney(const QString &where, const QString &tableName, const Table &facts,
                     const QString &name, Unit unit)
    {
        const Column *found = column(where, tableName, facts, name);
        if (!found)
            return;
        if (unit == Unit::Yuan &&
            (found->dataType != QLatin1String("decimal") || found->scale != 2))
            add(Severity::Error, where,
                Check::tr("%1.%2 is %3, but yuan needs a DECIMAL with 2 decimal places")
                    .arg(tableName, name, found->columnType));
        else if (unit != Unit::Yuan && !isInteger(*found))
            add(Severity::Error, where,
                Check::tr("%1.%2 is %3, but %4 needs an integer column%5")
                    .arg(tableName, name, found->columnType, unitName(unit),
                         found->dataType == QLatin1String("decimal")
                             ? Check::tr(" (a DECIMAL with 2 places is unit \"yuan\")")
                             : QString()));
    }

    // An index whose leading columns are `columns`, or a warning with what a refresh costs
    // without one.
    void expectIndex(const QString &where, const QString &tableName, const Table &facts,
                     const QStringList &columns)
    {
        if (indexLeadingWith(facts.indexes, columns))
            return;
        add(Severity::Warning, where,
            Check::tr("%1 has no index leading with (%2): each refresh would read about %3 "
                      "row(s)")
                .arg(tableName, columns.join(QStringLiteral(", ")), QString::number(facts.rows)));
    }

    // Runs EXPLAIN on a statement built from the mapping's own SQL: the server parses it and
    // resolves its columns, and a WHERE 1 = 0 keeps even the plan from reading a row.
    void tryStatement(const QString &where, const QString &tableName, const QString &explain,
                      const QString &privilege)
    {
        if (cancelled())
            return;
        try {
            db::exec(m_db, QStringLiteral("EXPLAIN ") + explain);
        } catch (const db::Error &error) {
            if (!error.isFromServer() || error.isConnectionFailure())
                throw;
            switch (error.serverCode()) {
            case 1064:
                add(Severity::Error, where,
                    Check::tr("is not valid SQL (the server stops near \"%1\")")
                        .arg(nearText(error.serverText())));
                return;
            case 1054:
                add(Severity::Error, where,
                    Check::tr("names column %1, which %2 has not")
                        .arg(quotedName(error.serverText()), tableName));
                return;
            case 1142:
            case 1143:
                add(Severity::Warning, where,
                    Check::tr("not checked: this account lacks %1 on %2, which the check needs "
                              "(and compensation too)")
                        .arg(privilege, tableName));
                return;
            default:
                add(Severity::Error, where,
                    Check::tr("is refused by the server: %1").arg(db::userMessage(error)));
            }
        }
    }

    void checkCondition(const QString &where, const QString &tableName, const QString &condition)
    {
        tryStatement(where, tableName,
                     QStringLiteral("SELECT 1 FROM %1 WHERE (%2)")
                         .arg(m_mapping.table(tableName), condition),
                     QStringLiteral("SELECT"));
    }

    void checkOrders()
    {
        const OrdersMapping &orders = m_mapping.orders;
        const Table *facts = table(QStringLiteral("orders.table"), orders.table);
        if (!facts)
            return;
        expectInteger(QStringLiteral("orders.id"), orders.table, *facts, orders.id);
        expectInteger(QStringLiteral("orders.user"), orders.table, *facts, orders.user);
        expectMoney(QStringLiteral("orders.amount"), orders.table, *facts, orders.amount,
                    orders.amountUnit);
        expectTime(QStringLiteral("orders.created_at"), orders.table, *facts, orders.createdAt);
        if (!orders.paidAt.isEmpty())
            expectTime(QStringLiteral("orders.paid_at"), orders.table, *facts, orders.paidAt);
        if (facts->columns.contains(orders.createdAt.toLower()))
            expectIndex(QStringLiteral("orders.created_at"), orders.table, *facts,
                        {orders.createdAt});
        checkUpdatedAt(*facts);
        const Column *status =
            column(QStringLiteral("orders.status"), orders.table, *facts, orders.status);
        if (status && statesFit(*status))
            checkStateValues(*status);
    }

    // With updated_at, state counts read what changed since their last read, through an index
    // on it; without, the whole window again on every refresh: said with what that reads.
    void checkUpdatedAt(const Table &facts)
    {
        const OrdersMapping &orders = m_mapping.orders;
        const QString where = QStringLiteral("orders.updated_at");
        if (!orders.updatedAt.isEmpty()) {
            expectTime(where, orders.table, facts, orders.updatedAt);
            if (facts.columns.contains(orders.updatedAt.toLower()))
                expectIndex(where, orders.table, facts, {orders.updatedAt});
            return;
        }
        if (!facts.columns.contains(orders.createdAt.toLower()) || cancelled())
            return;
        const qint64 window =
            indexLeadingWith(facts.indexes, {orders.createdAt})
                ? db::scalar(m_db, QStringLiteral("SELECT COUNT(*) FROM %1 WHERE %2 >= "
                                                  "UTC_TIMESTAMP() - INTERVAL 1 DAY")
                                       .arg(m_mapping.table(orders.table),
                                            db::quoteIdentifier(orders.createdAt)))
                      .toLongLong()
                : facts.rows;
        add(Severity::Warning, where,
            Check::tr("not given: each refresh of the state counts reads every order of its "
                      "window again, %n order(s) for the last 24 hours; name the column %1 keeps "
                      "its last change in (gmt_modified, updated_at) to read only what changed",
                      nullptr, int(std::min<qint64>(window, std::numeric_limits<int>::max())))
                .arg(orders.table));
    }

    // Numbers for a numeric column, strings for a text one: a string compared with a number
    // converts the column's every value, and '1' = 1 would hide a mapping written for another
    // table.
    bool statesFit(const Column &status)
    {
        const OrdersMapping &orders = m_mapping.orders;
        const bool numeric = isInteger(status);
        if (!numeric && !isText(status)) {
            add(Severity::Error, QStringLiteral("orders.status"),
                Check::tr("%1.%2 is %3, neither an integer nor a text column")
                    .arg(orders.table, orders.status, status.columnType));
            return false;
        }
        QStringList wrong;
        for (const StateValue &state : orders.states) {
            const bool isNumber = state.value.typeId() == QMetaType::LongLong;
            if (isNumber != numeric)
                wrong << QStringLiteral("%1 = %2").arg(
                    state.state, isNumber ? state.value.toString()
                                          : QStringLiteral("\"%1\"").arg(state.value.toString()));
        }
        if (wrong.isEmpty())
            return true;
        add(Severity::Error, QStringLiteral("orders.states"),
            (numeric ? Check::tr("%1.%2 is %3, so states are numbers, not strings: %4")
                     : Check::tr("%1.%2 is %3, so states are strings, not numbers: %4"))
                .arg(orders.table, orders.status, status.columnType,
                     wrong.join(QStringLiteral(", "))));
        return false;
    }

    // One GROUP BY over the state column (an index on it makes it an index scan).
    void checkStateValues(const Column &status)
    {
        if (cancelled())
            return;
        const OrdersMapping &orders = m_mapping.orders;
        QSet<QString> named;
        for (const StateValue &state : orders.states)
            named << state.value.toString();
        QSqlQuery values = db::exec(
            m_db, QStringLiteral("SELECT %1, COUNT(*) FROM %2 GROUP BY %1 "
                                 "ORDER BY %1")
                      .arg(db::quoteIdentifier(orders.status), m_mapping.table(orders.table)));
        QStringList unknown;
        while (values.next()) {
            if (values.value(0).isNull() || named.contains(values.value(0).toString()))
                continue;
            const QString value = isInteger(status)
                                      ? values.value(0).toString()
                                      : QStringLiteral("\"%1\"").arg(values.value(0).toString());
            unknown << Check::tr("%1 (%n order(s))", nullptr, values.value(1).toInt()).arg(value);
        }
        if (!unknown.isEmpty())
            add(Severity::Warning, QStringLiteral("orders.states"),
                Check::tr("values in %1.%2 that no state names, shown as themselves: %3")
                    .arg(orders.table, orders.status, unknown.join(QStringLiteral(", "))));
    }

    void checkPayments(const PaymentsMapping &payments)
    {
        const Table *facts = table(QStringLiteral("payments.table"), payments.table);
        if (!facts)
            return;
        column(QStringLiteral("payments.pay_no"), payments.table, *facts, payments.payNo);
        expectInteger(QStringLiteral("payments.order"), payments.table, *facts, payments.order);
        expectMoney(QStringLiteral("payments.amount"), payments.table, *facts, payments.amount,
                    payments.amountUnit);
        if (!payments.channel.isEmpty() &&
            column(QStringLiteral("payments.channel"), payments.table, *facts, payments.channel))
            checkChannelValues(payments);
        if (!payments.paidAt.isEmpty())
            expectTime(QStringLiteral("payments.paid_at"), payments.table, *facts, payments.paidAt);
    }

    // A statement is of "wechat" or "alipay": the payments under a value no channel names are
    // never among those it left out (多单). One GROUP BY over the channel column.
    void checkChannelValues(const PaymentsMapping &payments)
    {
        if (cancelled())
            return;
        QSet<QString> named;
        for (const QString &channel : payopsChannels())
            for (const QString &value : payments.channelValues(channel))
                named << value;
        QSqlQuery values = db::exec(
            m_db, QStringLiteral("SELECT %1, COUNT(*) FROM %2 GROUP BY %1 ORDER BY %1")
                      .arg(db::quoteIdentifier(payments.channel), m_mapping.table(payments.table)));
        QStringList unknown;
        while (values.next())
            if (!values.value(0).isNull() && !named.contains(values.value(0).toString()))
                unknown << Check::tr("\"%1\" (%n payment(s))", nullptr, values.value(1).toInt())
                               .arg(values.value(0).toString());
        if (!unknown.isEmpty())
            add(Severity::Warning, QStringLiteral("payments.channels"),
                Check::tr("values in %1.%2 that no channel names, so no WeChat Pay or Alipay "
                          "statement finds their payments left out: %3 (name them in "
                          "[payments.channels])")
                    .arg(payments.table, payments.channel, unknown.join(QStringLiteral(", "))));
    }

    void checkSideEffect(const SideEffectMapping &effect)
    {
        const QString prefix = QStringLiteral("side_effects.%1.").arg(effect.name);
        const auto at = [&prefix](const char *key) { return prefix + QLatin1String(key); };
        const Table *facts = table(at("table"), effect.table);
        if (!facts)
            return;
        const Column *id = column(at("id"), effect.table, *facts, effect.id);
        if (id && !isInteger(*id))
            add(Severity::Error, at("id"),
                Check::tr("%1.%2 is %3, not an integer column")
                    .arg(effect.table, effect.id, id->columnType));
        else if (id && !id->autoIncrement)
            add(Severity::Error, at("id"),
                Check::tr("%1.%2 is not AUTO_INCREMENT: the watch reads past the last id seen "
                          "and would miss rows written below it")
                    .arg(effect.table, effect.id));
        expectInteger(at("order"), effect.table, *facts, effect.order);
        expectInteger(at("user"), effect.table, *facts, effect.user);
        bool keyComplete = facts->columns.contains(effect.order.toLower());
        for (const QString &key : effect.key)
            keyComplete = column(at("key"), effect.table, *facts, key) && keyComplete;
        expectTime(at("created_at"), effect.table, *facts, effect.createdAt);
        expectMoney(at("value"), effect.table, *facts, effect.value, effect.valueUnit);
        if (keyComplete)
            expectIndex(at("key"), effect.table, *facts, QStringList{effect.order} + effect.key);
        if (facts->columns.contains(effect.createdAt.toLower()))
            expectIndex(at("created_at"), effect.table, *facts, {effect.createdAt});

        checkCondition(at("live"), effect.table, effect.live);
        if (!effect.used.isEmpty())
            checkCondition(at("used"), effect.table, effect.used);
        // The very statement compensation runs, with an id that matches no row.
        const QString statement = mappedStatement(m_mapping, effect, QStringLiteral("NULL"));
        if (effect.compensate == Compensate::Freeze)
            tryStatement(at("freeze"), effect.table, statement, QStringLiteral("UPDATE"));
        else
            tryStatement(at("reverse_set"), effect.table, statement, QStringLiteral("INSERT"));
    }

    QSqlDatabase m_db;
    const Mapping &m_mapping;
    const std::atomic<bool> *m_cancel;
    QString m_schema;
    // By name; a std::map, so that the pointers table() hands out stay valid as it grows.
    std::map<QString, std::optional<Table>> m_tables;
    MappingCheck m_result;
};

} // namespace

QString severityName(Severity severity)
{
    return severity == Severity::Error ? QStringLiteral("error") : QStringLiteral("warning");
}

bool MappingCheck::hasErrors() const
{
    return std::any_of(problems.cbegin(), problems.cend(), [](const MappingProblem &problem) {
        return problem.severity == Severity::Error;
    });
}

MappingCheck checkMapping(const QSqlDatabase &db, const Mapping &mapping,
                          const std::atomic<bool> *cancel)
{
    return Checker(db, mapping, cancel).run();
}

QList<TableIndex> tableIndexes(const QSqlDatabase &db, const Mapping &mapping, const QString &table)
{
    QSqlQuery rows = db::exec(
        db,
        QStringLiteral("SELECT index_name, non_unique = 0, GROUP_CONCAT(LOWER(column_name) "
                       "ORDER BY seq_in_index SEPARATOR ',') FROM information_schema.statistics "
                       "WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND "
                       "table_name = ? GROUP BY index_name, non_unique ORDER BY index_name"),
        {mapping.database, table});
    QList<TableIndex> indexes;
    while (rows.next())
        indexes << TableIndex{rows.value(0).toString(), rows.value(1).toBool(),
                              rows.value(2).toString().split(QLatin1Char(','))};
    return indexes;
}

const TableIndex *indexLeadingWith(const QList<TableIndex> &indexes, const QStringList &columns,
                                   bool uniqueExactly)
{
    QStringList wanted;
    for (const QString &column : columns)
        wanted << column.toLower();
    std::sort(wanted.begin(), wanted.end());
    for (const TableIndex &index : indexes) {
        if (uniqueExactly && (!index.unique || index.columns.size() != wanted.size()))
            continue;
        QStringList leading = index.columns.mid(0, wanted.size());
        std::sort(leading.begin(), leading.end());
        if (leading == wanted)
            return &index;
    }
    return nullptr;
}

} // namespace payops::mapping
