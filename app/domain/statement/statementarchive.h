#pragma once

#include <QString>

#include <memory>

class QIODevice;

namespace payops {

// A statement as the platforms' download APIs hand it over, packed: Alipay's bill download is a
// ZIP holding the business detail (…_业务明细.csv) beside its summary (…_业务明细(汇总).csv);
// WeChat Pay's, asked for with tar_type=GZIP, is the bill gzipped. The text inside is unpacked
// as it is read, never whole, so a packed statement of a million lines costs what the plain
// one does.
struct StatementContent
{
    // The statement's text, unpacked as it is read: sequential, and at its end only once its
    // checksum matched. A damaged archive makes a read fail with errorString() saying so, and
    // atEnd() stay false. Null when the file is not packed: read the file itself.
    std::unique_ptr<QIODevice> unpacked;
    QString entryName; // the ZIP entry read, as the archive names it; empty for gzip
};

// Opens the statement in `file`, a seekable device, from its start; it is read from as
// `unpacked` is, so file.pos() still tells how far the reading got. Throws StatementError for an
// archive that holds no single CSV statement (an Excel workbook, several CSV files, none), that
// payops cannot unpack (encrypted, ZIP64, a method other than deflate or stored) or whose
// directory is damaged.
StatementContent openStatementContent(QIODevice &file);

} // namespace payops
