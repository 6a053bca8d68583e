#pragma once

#include "domain/inspection/incidentfacts.h"

#include <QCoreApplication>
#include <QImage>
#include <QString>

namespace payops {

// The incident report as a PDF: the window, when the duplicates began, the switch's flips and
// who made them, what was compensated and by whom, the totals in yuan, the reconciliation,
// two charts and the audit chain's head. It only lays out IncidentFacts: nothing here reads
// the database, so `payops report` and the console print the same file from the same facts.
//
// Qt Gui only (QPdfWriter, QTextDocument, QPainter on QImage), no Widgets, and safe on a
// worker thread: the console renders off its UI thread.
class IncidentReport final
{
    Q_DECLARE_TR_FUNCTIONS(payops::IncidentReport)

public:
    explicit IncidentReport(IncidentFacts facts);

    // The document's HTML; the charts are the resources chart:duplicates and chart:deliveries.
    QString html() const;
    // A bar chart of one series over the window with the switch's flips as dashed lines.
    QImage chart(const QList<qint64> &series, const QString &title, const QColor &bars) const;
    // Writes the PDF; the file appears whole or not at all. Throws std::runtime_error
    // ("cannot write PATH: reason").
    void writePdf(const QString &path) const;

    // 123456 fen -> "1,234.56", as finance reads yuan.
    static QString yuan(qint64 fen);

private:
    IncidentFacts m_facts;
};

} // namespace payops
