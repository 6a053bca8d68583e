#include "mapping.h"

#include "db/connection.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/stat.h>

#include <toml++/toml.h>

namespace payops::mapping {
namespace {

constexpr qint64 kLargestFile = 1024 * 1024;

const QStringList &payopsStates()
{
    static const QStringList states{QStringLiteral("PENDING"), QStringLiteral("PAID"),
                                    QStringLiteral("CLOSED"), QStringLiteral("REFUNDING"),
                                    QStringLiteral("REFUNDED")};
    return states;
}

QString fromStd(std::string_view text)
{
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// One TOML table of the file, read key by key: every key it holds must be one the format
// knows, so that a misspelt key is an error rather than a setting silently left out.
class Section
{
public:
    Section(const toml::table &table, QString name, QString source)
        : m_table(table)
        , m_name(std::move(name))
        , m_source(std::move(source))
    {
    }

    [[noreturn]] void fail(const QString &message, const toml::node *node = nullptr) const
    {
        const toml::source_region where = node ? node->source() : m_table.source();
        if (where.begin.line > 0)
            throw MappingError(
                Mapping::tr("%1:%2: [%3] %4")
                    .arg(m_source, QString::number(where.begin.line), m_name, message));
        throw MappingError(Mapping::tr("%1: [%2] %3").arg(m_source, m_name, message));
    }

    const toml::node *node(const char *key)
    {
        m_known.insert(QString::fromLatin1(key));
        return m_table.get(key);
    }

    QString text(const char *key, bool required = true)
    {
        const toml::node *value = node(key);
        if (!value) {
            if (required)
                fail(Mapping::tr("'%1' is missing").arg(QString::fromLatin1(key)));
            return {};
        }
        const auto *string = value->as_string();
        if (!string || string->get().empty())
            fail(Mapping::tr("'%1' must be a non-empty string").arg(QString::fromLatin1(key)),
                 value);
        return fromStd(string->get());
    }

    // A column or table name: a string MariaDB accepts as an identifier.
    QString name(const char *key, bool required = true)
    {
        const QString value = text(key, required);
        if (!value.isEmpty())
            checkName(QString::fromLatin1(key), value, node(key));
        return value;
    }

    // Names reach SQL quoted by db::quoteIdentifier, which makes every other character,
    // backticks included, part of the name; what is refused here is what the server refuses in
    // a quoted name, and control characters, which would write false lines into the messages,
    // logs and tables that show the name.
    void checkName(const QString &key, const QString &value, const toml::node *where) const
    {
        QString why;
        if (value.isEmpty())
            why = Mapping::tr("it is empty");
        else if (value.size() > 64)
            why = Mapping::tr("it is longer than 64 characters");
        else if (value.endsWith(QLatin1Char(' ')))
            why = Mapping::tr("it ends with a space");
        else if (std::any_of(value.cbegin(), value.cend(),
                             [](QChar c) { return c.category() == QChar::Other_Control; }))
            why = Mapping::tr("it holds a control character");
        else if (std::any_of(value.cbegin(), value.cend(), [](QChar c) { return c.isSurrogate(); }))
            why = Mapping::tr("it holds a character outside Unicode's Basic Multilingual Plane");
        if (!why.isEmpty())
            fail(Mapping::tr("'%1' cannot be a MariaDB name: %2").arg(key, why), where);
    }

    Unit unit(const char *key, bool pointsAllowed)
    {
        const QString value = text(key);
        if (value == QLatin1String("yuan"))
            return Unit::Yuan;
        if (value == QLatin1String("fen"))
            return Unit::Fen;
        if (value == QLatin1String("points") && pointsAllowed)
            return Unit::Points;
        fail(pointsAllowed ? Mapping::tr("'%1' must be \"yuan\", \"fen\" or \"points\", not \"%2\"")
                                 .arg(QString::fromLatin1(key), value)
                           : Mapping::tr("'%1' must be \"yuan\" or \"fen\", not \"%2\"")
                                 .arg(QString::fromLatin1(key), value),
             node(key));
    }

    // Called once every known key was read: what is left is a key the format does not have.
    void rejectUnknownKeys() const
    {
        for (const auto &[key, value] : m_table) {
            const QString name = fromStd(key.str());
            if (!m_known.contains(name))
                fail(Mapping::tr("unknown key '%1'").arg(name), &value);
        }
    }

    // A table inside this one, which must be there.
    const toml::table &child(const char *key, const QString &name)
    {
        const toml::node *value = node(key);
        if (!value)
            fail(Mapping::tr("[%1] is missing").arg(name));
        if (!value->as_table())
            fail(Mapping::tr("'%1' must be a table").arg(QString::fromLatin1(key)), value);
        return *value->as_table();
    }

    const toml::table &table() const { return m_table; }
    const QString &source() const { return m_source; }

private:
    const toml::table &m_table;
    QString m_name;
    QString m_source;
    QSet<QString> m_known;
};

QList<StateValue> readStates(Section &orders)
{
    const QString name = QStringLiteral("orders.states");
    Section states(orders.child("states", name), name, orders.source());
    QList<StateValue> values;
    for (const auto &[key, node] : states.table()) {
        const QString state = fromStd(key.str());
        if (!payopsStates().contains(state))
            states.fail(Mapping::tr("'%1' is not a payops state (%2)")
                            .arg(state, payopsStates().join(QStringLiteral(", "))),
                        &node);
        QVariant value;
        if (const auto *number = node.as_integer())
            value = qlonglong(number->get());
        else if (const auto *text = node.as_string())
            value = fromStd(text->get());
        else
            states.fail(Mapping::tr("the value of %1 must be a number or a string").arg(state),
                        &node);
        for (const StateValue &other : std::as_const(values))
            if (other.value == value)
                states.fail(Mapping::tr("%1 and %2 have the same value %3")
                                .arg(other.state, state, value.toString()),
                            &node);
        values << StateValue{state, value};
    }
    if (std::none_of(values.cbegin(), values.cend(),
                     [](const StateValue &v) { return v.state == QLatin1String("PAID"); }))
        states.fail(Mapping::tr("PAID must be named: it is the state a payment leads to"));
    return values;
}

OrdersMapping readOrders(Section &file)
{
    Section section(file.child("orders", QStringLiteral("orders")), QStringLiteral("orders"),
                    file.source());
    OrdersMapping orders;
    orders.table = section.name("table");
    orders.id = section.name("id");
    orders.user = section.name("user");
    orders.amount = section.name("amount");
    orders.amountUnit = section.unit("amount_unit", false);
    orders.status = section.name("status");
    orders.createdAt = section.name("created_at");
    orders.paidAt = section.name("paid_at", false);
    orders.updatedAt = section.name("updated_at", false);
    orders.states = readStates(section);
    section.rejectUnknownKeys();
    return orders;
}

// [payments.channels]: wechat = "wechatpay", or a list of values when the team stores several.
QList<QPair<QString, QStringList>> readChannels(Section &payments)
{
    QList<QPair<QString, QStringList>> channels;
    if (!payments.table().contains("channels")) {
        payments.node("channels");
        return channels;
    }
    const QString name = QStringLiteral("payments.channels");
    Section section(payments.child("channels", name), name, payments.source());
    QSet<QString> taken;
    for (const auto &[key, node] : section.table()) {
        const QString channel = fromStd(key.str());
        if (!payopsChannels().contains(channel))
            section.fail(Mapping::tr("'%1' is not a payops channel (%2)")
                             .arg(channel, payopsChannels().join(QStringLiteral(", "))),
                         &node);
        const auto notValues = [&](const toml::node &where) {
            section.fail(Mapping::tr("the value of %1 must be a non-empty string or a list of them")
                             .arg(channel),
                         &where);
        };
        QStringList values;
        const auto addValue = [&](const toml::node &element) {
            const auto *text = element.as_string();
            if (!text || text->get().empty())
                return notValues(element); // throws
            const QString value = fromStd(text->get());
            if (taken.contains(value))
                section.fail(
                    Mapping::tr("\"%1\" is named twice: a payment is of one channel").arg(value),
                    &element);
            taken.insert(value);
            values << value;
        };
        if (const auto *array = node.as_array()) {
            for (const toml::node &element : *array)
                addValue(element);
            if (values.isEmpty())
                notValues(node);
        } else {
            addValue(node);
        }
        channels << qMakePair(channel, values);
    }
    return channels;
}

std::optional<PaymentsMapping> readPayments(Section &file)
{
    if (!file.table().contains("payments")) {
        file.node("payments");
        return std::nullopt;
    }
    Section section(file.child("payments", QStringLiteral("payments")), QStringLiteral("payments"),
                    file.source());
    PaymentsMapping payments;
    payments.table = section.name("table");
    payments.payNo = section.name("pay_no");
    payments.order = section.name("order");
    payments.amount = section.name("amount");
    payments.amountUnit = section.unit("amount_unit", false);
    payments.channel = section.name("channel", false);
    payments.paidAt = section.name("paid_at", false);
    payments.channels = readChannels(section);
    if (!payments.channels.isEmpty() && payments.channel.isEmpty())
        section.fail(Mapping::tr("[payments.channels] needs 'channel': the column they are in"),
                     section.node("channels"));
    section.rejectUnknownKeys();
    return payments;
}

QStringList readKey(Section &section)
{
    const toml::node *node = section.node("key");
    if (!node)
        section.fail(Mapping::tr("'key' is missing (use key = [] when an order has one row)"));
    const auto *array = node->as_array();
    if (!array)
        section.fail(Mapping::tr("'key' must be an array of column names"), node);
    QStringList columns;
    for (const toml::node &element : *array) {
        const auto *column = element.as_string();
        if (!column || column->get().empty())
            section.fail(Mapping::tr("'key' must be an array of column names"), &element);
        columns << fromStd(column->get());
        section.checkName(QStringLiteral("key"), columns.last(), &element);
    }
    return columns;
}

QList<QPair<QString, QString>> readReverseSet(Section &section)
{
    QList<QPair<QString, QString>> columns;
    const toml::node *node = section.node("reverse_set");
    if (!node)
        return columns;
    const auto *table = node->as_table();
    if (!table)
        section.fail(Mapping::tr("'reverse_set' must be a table of column = SQL expression"), node);
    for (const auto &[key, value] : *table) {
        const auto *expression = value.as_string();
        if (!expression || expression->get().empty())
            section.fail(Mapping::tr("reverse_set.%1 must be a non-empty SQL expression")
                             .arg(fromStd(key.str())),
                         &value);
        section.checkName(QStringLiteral("reverse_set.") + fromStd(key.str()), fromStd(key.str()),
                          &value);
        columns << qMakePair(fromStd(key.str()), fromStd(expression->get()));
    }
    return columns;
}

SideEffectMapping readSideEffect(const toml::table &table, int index, const QString &source)
{
    Section section(table, QStringLiteral("side_effects #%1").arg(index + 1), source);
    SideEffectMapping effect;
    effect.name = section.text("name");
    static const QRegularExpression plainName(QStringLiteral("^[a-z][a-z0-9_]{0,31}$"));
    if (!plainName.match(effect.name).hasMatch())
        section.fail(Mapping::tr("name \"%1\" must be lowercase letters, digits and _, at most 32, "
                                 "starting with a letter")
                         .arg(effect.name),
                     section.node("name"));
    effect.table = section.name("table");
    effect.id = section.name("id");
    effect.order = section.name("order");
    effect.user = section.name("user");
    effect.key = readKey(section);
    effect.createdAt = section.name("created_at");
    effect.live = section.text("live", false);
    if (effect.live.isEmpty())
        effect.live = QStringLiteral("1 = 1");
    effect.value = section.name("value");
    effect.valueUnit = section.unit("value_unit", true);
    const QString compensate = section.text("compensate");
    if (compensate == QLatin1String("freeze"))
        effect.compensate = Compensate::Freeze;
    else if (compensate == QLatin1String("reverse"))
        effect.compensate = Compensate::Reverse;
    else
        section.fail(Mapping::tr("'compensate' must be \"freeze\" or \"reverse\", not \"%1\"")
                         .arg(compensate),
                     section.node("compensate"));
    effect.freeze = section.text("freeze", effect.compensate == Compensate::Freeze);
    if (!effect.freeze.isEmpty() && effect.compensate != Compensate::Freeze)
        section.fail(Mapping::tr("'freeze' is for compensate = \"freeze\""),
                     section.node("freeze"));
    effect.used = section.text("used", false);
    effect.reverseSet = readReverseSet(section);
    if (!effect.reverseSet.isEmpty() && effect.compensate != Compensate::Reverse)
        section.fail(Mapping::tr("'reverse_set' is for compensate = \"reverse\""),
                     section.node("reverse_set"));
    section.rejectUnknownKeys();
    return effect;
}

QList<SideEffectMapping> readSideEffects(Section &file)
{
    QList<SideEffectMapping> effects;
    const toml::node *node = file.node("side_effects");
    if (!node)
        return effects;
    const auto *array = node->as_array();
    if (!array || !array->is_array_of_tables())
        file.fail(Mapping::tr("side_effects must be written as [[side_effects]] tables"), node);
    for (qsizetype i = 0; i < qsizetype(array->size()); ++i) {
        const SideEffectMapping effect =
            readSideEffect(*array->get(size_t(i))->as_table(), int(i), file.source());
        for (const SideEffectMapping &other : std::as_const(effects))
            if (other.name == effect.name)
                file.fail(Mapping::tr("two side effects are named \"%1\"").arg(effect.name),
                          array->get(size_t(i)));
        effects << effect;
    }
    return effects;
}

} // namespace

MappingError::MappingError(const QString &message)
    : std::runtime_error(message.toStdString())
{
}

QString unitName(Unit unit)
{
    switch (unit) {
    case Unit::Yuan:
        return QStringLiteral("yuan");
    case Unit::Fen:
        return QStringLiteral("fen");
    case Unit::Points:
        return QStringLiteral("points");
    }
    return {};
}

const QStringList &payopsChannels()
{
    static const QStringList channels{QStringLiteral("wechat"), QStringLiteral("alipay")};
    return channels;
}

QStringList PaymentsMapping::channelValues(const QString &payopsChannel) const
{
    for (const auto &[channel, values] : channels)
        if (channel == payopsChannel)
            return values;
    return {payopsChannel};
}

QVariant OrdersMapping::valueOf(const QString &state) const
{
    for (const StateValue &value : states)
        if (value.state == state)
            return value.value;
    return {};
}

QString Mapping::table(const QString &name) const
{
    if (database.isEmpty())
        return db::quoteIdentifier(name);
    return db::quoteIdentifier(database) + QLatin1Char('.') + db::quoteIdentifier(name);
}

const SideEffectMapping *Mapping::sideEffect(const QString &name) const
{
    for (const SideEffectMapping &effect : sideEffects)
        if (effect.name == name)
            return &effect;
    return nullptr;
}

QString businessTable(const QSqlDatabase &db, const Mapping &mapping,
                      const SideEffectMapping &sideEffect)
{
    return (mapping.database.isEmpty() ? db.databaseName() : mapping.database) + QLatin1Char('.') +
           sideEffect.table;
}

Mapping parseMapping(const QByteArray &text, const QString &source)
{
    toml::table root;
    try {
        root = toml::parse(std::string_view(text.constData(), size_t(text.size())),
                           source.toStdString());
    } catch (const toml::parse_error &error) {
        throw MappingError(Mapping::tr("%1:%2: not TOML: %3")
                               .arg(source, QString::number(error.source().begin.line),
                                    fromStd(error.description())));
    }
    Section file(root, QStringLiteral("file"), source);
    // The file's own keys first: a misspelt [payment] is named as such, even when a
    // [payments.channels] below it makes a [payments] of its own.
    for (const char *key : {"business", "orders", "payments", "side_effects"})
        file.node(key);
    file.rejectUnknownKeys();
    Mapping mapping;
    mapping.sha256 = QCryptographicHash::hash(text, QCryptographicHash::Sha256).toHex();
    if (root.contains("business")) {
        Section business(file.child("business", QStringLiteral("business")),
                         QStringLiteral("business"), source);
        mapping.database = business.name("database", false);
        business.rejectUnknownKeys();
    } else {
        file.node("business");
    }
    mapping.orders = readOrders(file);
    mapping.payments = readPayments(file);
    mapping.sideEffects = readSideEffects(file);
    return mapping;
}

Mapping loadMapping(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw MappingError(
            Mapping::tr("cannot read the mapping file %1: %2").arg(path, file.errorString()));
    // Its conditions and SET clauses are SQL that compensation runs on the business tables:
    // whoever may change the file may change what is written. Checked on the open file.
    struct stat info
    {
    };
    if (::fstat(file.handle(), &info) != 0)
        throw MappingError(Mapping::tr("cannot read the mapping file %1: %2")
                               .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        throw MappingError(
            Mapping::tr("the mapping file %1 may be changed by other users (mode %2): its "
                        "conditions are SQL that compensation runs, so make it writable by its "
                        "owner only (chmod 644 %1)")
                .arg(path,
                     QString::number(info.st_mode & 07777, 8).rightJustified(4, QLatin1Char('0'))));
    const QByteArray text = file.read(kLargestFile + 1);
    if (text.size() > kLargestFile)
        throw MappingError(
            Mapping::tr("the mapping file %1 is larger than 1 MiB: is it the right file?")
                .arg(path));
    Mapping mapping = parseMapping(text, path);
    mapping.path = path;
    return mapping;
}

QString mappingPathFrom(const QString &option)
{
    if (!option.isEmpty())
        return option;
    return qEnvironmentVariable("PAYOPS_MAPPING");
}

} // namespace payops::mapping
