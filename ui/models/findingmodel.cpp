#include "findingmodel.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"

namespace payops {

FindingModel::FindingModel(console::Worker *worker, QObject *parent)
    : RowTableModel(NUM_COLUMNS, parent)
    , m_worker(worker)
{
}

QString FindingModel::kindText(FindingKind kind)
{
    switch (kind) {
    case FindingKind::MissingOurs:
        return tr("漏单 · not with us");
    case FindingKind::MissingPlatform:
        return tr("多单 · not on the platform");
    case FindingKind::AmountMismatch:
        return tr("Amount differs");
    case FindingKind::StatusMismatch:
        return tr("Status differs");
    case FindingKind::DuplicatePlatform:
        return tr("Listed twice");
    case FindingKind::DoublePayment:
        return tr("Paid twice · refund owed");
    }
    return {};
}

QString FindingModel::kindAdvice(FindingKind kind)
{
    switch (kind) {
    case FindingKind::MissingOurs:
        return tr("The platform took the money and we never applied it: check the order's "
                  "evidence, then draft "
                  "the payment for an operator to confirm.");
    case FindingKind::MissingPlatform:
        return tr("We applied a payment the platform does not list for this period: ask the "
                  "platform before "
                  "shipping anything more on it.");
    case FindingKind::AmountMismatch:
        return tr("The platform took another amount than the order's: the difference is owed one "
                  "way or the other.");
    case FindingKind::StatusMismatch:
        return tr("The platform refunded or closed what we hold as paid, or the other way round: "
                  "bring the order "
                  "in line.");
    case FindingKind::DuplicatePlatform:
        return tr(
            "The platform lists one payment twice: raise it with the platform before settling.");
    case FindingKind::DoublePayment:
        return tr("The order was paid by two payments and the second was refused: refund it to the "
                  "customer.");
    }
    return {};
}

QVariant FindingModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ReconciliationFinding &f = rowAt(index.row());
    switch (role) {
    case OrderIdRole:
        return f.orderId.value_or(0);
    case KindRole:
        return static_cast<int>(f.kind);
    case LineRole:
        return f.lineNo.value_or(0);
    case OrderNoRole:
        return f.orderNo;
    case Qt::ToolTipRole:
        return kindAdvice(f.kind);
    case Qt::TextAlignmentRole:
        return index.column() == PlatformAmountColumn || index.column() == OurAmountColumn ||
                       index.column() == LineColumn || index.column() == OrderColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    case Qt::DisplayRole:
        return displayText(f, index.column());
    default:
        return {};
    }
}

QString FindingModel::displayText(const ReconciliationFinding &f, int column)
{
    const auto amount = [](const std::optional<qint64> &fen) {
        return fen ? console::formatYuan(*fen) : QString();
    };
    switch (column) {
    case KindColumn:
        return f.listed ? tr("Listed %1 times").arg(*f.listed) : kindText(f.kind);
    case PayNoColumn:
        return QString::fromUtf8(f.payNo);
    case OrderColumn:
        // A gateway's team's own order number, when it is no payops order id.
        return f.orderId && *f.orderId > 0 ? QString::number(*f.orderId)
                                           : QString::fromLatin1(f.orderNo);
    case PlatformAmountColumn:
        return amount(f.platformAmountFen);
    case OurAmountColumn:
        return amount(f.ourAmountFen);
    case LineColumn:
        return f.lineNo ? QString::number(*f.lineNo) : QString();
    case PlatformStatusColumn:
        return f.platformStatus;
    case OurStatusColumn:
        return f.orderStatus;
    }
    return {};
}

StreamedCsvSource::Job FindingModel::csvJob() const
{
    return console::findingCsvRows(
        m_runId,
        [](const ReconciliationFinding &finding) {
            QStringList cells;
            for (int column = 0; column < NUM_COLUMNS; ++column)
                cells << displayText(finding, column);
            return cells;
        },
        m_mapping);
}

QVariant FindingModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KindColumn:
        return tr("Finding");
    case PayNoColumn:
        return tr("pay_no");
    case OrderColumn:
        return tr("Order");
    case PlatformAmountColumn:
        return tr("Platform amount");
    case OurAmountColumn:
        return tr("Our amount");
    case LineColumn:
        return tr("Line");
    case PlatformStatusColumn:
        return tr("Platform status");
    case OurStatusColumn:
        return tr("Order status");
    }
    return {};
}

} // namespace payops
