#include "statementarchive.h"

#include "domain/statement/statement.h"
#include "domain/statement/statementtext.h"

#include <QIODevice>
#include <QStringDecoder>
#include <QStringList>

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace payops {

namespace {

QString notWhole()
{
    return StatementText::tr(
        "the archive ends before the statement in it does: the file was damaged or not "
        "downloaded whole");
}

quint16 le16(const char *bytes)
{
    const auto *b = reinterpret_cast<const uchar *>(bytes);
    return quint16(b[0] | b[1] << 8);
}

quint32 le32(const char *bytes)
{
    const auto *b = reinterpret_cast<const uchar *>(bytes);
    return quint32(b[0]) | quint32(b[1]) << 8 | quint32(b[2]) << 16 | quint32(b[3]) << 24;
}

// The text of one packed stream, inflated as it is read from the file beneath. A ZIP entry's
// size and CRC-32 come from the archive's directory and are checked at its end; a gzip stream
// carries its own, which zlib checks. Concatenated gzip members read as one text, as gunzip
// reads them.
class Unpacker : public QIODevice
{
public:
    enum class Packing { Gzip, Deflate, Stored };

    // `compressed`: the bytes of the stream from the file's position; -1 for all of the rest.
    Unpacker(QIODevice &file, Packing packing, qint64 compressed, quint32 crc, qint64 size)
        : m_file(file)
        , m_packing(packing)
        , m_compressedLeft(compressed)
        , m_expectedCrc(crc)
        , m_expectedSize(size)
        , m_ended(packing == Packing::Stored && compressed == 0) // an empty file, stored
    {
        if (m_packing != Packing::Stored &&
            inflateInit2(&m_stream, m_packing == Packing::Gzip ? 16 + MAX_WBITS : -MAX_WBITS) !=
                Z_OK)
            throw std::bad_alloc();
        m_input.resize(64 * 1024);
    }
    ~Unpacker() override
    {
        if (m_packing != Packing::Stored)
            inflateEnd(&m_stream);
    }
    Unpacker(const Unpacker &) = delete;
    Unpacker &operator=(const Unpacker &) = delete;

    bool isSequential() const override { return true; }
    // At the end only once the whole stream was read and checked: a damaged archive is not
    // taken for a statement that ends early.
    bool atEnd() const override { return m_ended && !m_failed && QIODevice::atEnd(); }

protected:
    qint64 readData(char *data, qint64 maxSize) override
    {
        if (m_failed || m_ended)
            return -1;
        if (maxSize <= 0) // QIODevice::readLine asks for nothing at times
            return 0;
        const qint64 produced =
            m_packing == Packing::Stored ? copyStored(data, maxSize) : inflateInto(data, maxSize);
        if (produced < 0)
            return -1;
        if (m_packing != Packing::Gzip) {
            m_crc = crc32(m_crc, reinterpret_cast<const Bytef *>(data), uInt(produced));
            m_produced += produced;
        }
        if (m_ended && m_packing != Packing::Gzip &&
            (m_produced != m_expectedSize || m_crc != m_expectedCrc))
            return fail(StatementText::tr(
                "the archive is damaged: the statement in it does not match its checksum"));
        return produced > 0 ? produced : -1;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    qint64 fail(const QString &why)
    {
        setErrorString(why);
        m_failed = true;
        return -1;
    }

    // More compressed bytes into m_input; false when the stream's bytes are all read.
    bool fill()
    {
        qint64 wanted = m_input.size();
        if (m_compressedLeft >= 0)
            wanted = std::min(wanted, m_compressedLeft);
        const qint64 read = wanted > 0 ? m_file.read(m_input.data(), wanted) : 0;
        if (read <= 0)
            return false;
        if (m_compressedLeft >= 0)
            m_compressedLeft -= read;
        m_stream.next_in = reinterpret_cast<Bytef *>(m_input.data());
        m_stream.avail_in = uInt(read);
        return true;
    }

    qint64 copyStored(char *data, qint64 maxSize)
    {
        const qint64 read = m_file.read(data, std::min(maxSize, m_compressedLeft));
        if (read <= 0)
            return fail(notWhole());
        m_compressedLeft -= read;
        m_ended = m_compressedLeft == 0;
        return read;
    }

    // After a gzip member: another member follows (gzip -c a b > c writes two), or the end.
    bool anotherMember()
    {
        if (m_packing != Packing::Gzip || (m_stream.avail_in == 0 && !fill()))
            return false;
        if (m_stream.next_in[0] != 0x1F)
            return false; // trailing bytes that are no member: gunzip ignores them too
        inflateReset(&m_stream);
        return true;
    }

    qint64 inflateInto(char *data, qint64 maxSize)
    {
        const uInt room = uInt(std::min<qint64>(maxSize, UINT_MAX));
        m_stream.next_out = reinterpret_cast<Bytef *>(data);
        m_stream.avail_out = room;
        while (m_stream.avail_out == room) {
            if (m_stream.avail_in == 0 && !fill())
                return fail(notWhole());
            const int status = inflate(&m_stream, Z_NO_FLUSH);
            if (status == Z_STREAM_END) {
                if (!anotherMember()) {
                    m_ended = true;
                    break;
                }
            } else if (status != Z_OK && status != Z_BUF_ERROR) {
                return fail(StatementText::tr("the archive is damaged: %1")
                                .arg(QString::fromLatin1(m_stream.msg ? m_stream.msg
                                                                      : "it cannot be unpacked")));
            }
        }
        return room - m_stream.avail_out;
    }

    QIODevice &m_file;
    const Packing m_packing;
    qint64 m_compressedLeft;
    const quint32 m_expectedCrc;
    const qint64 m_expectedSize;
    z_stream m_stream{};
    QByteArray m_input;
    quint32 m_crc = 0; // crc32(0, nullptr, 0) is 0
    qint64 m_produced = 0;
    bool m_ended;
    bool m_failed = false;
};

// One file of a ZIP archive, as its central directory describes it.
struct ZipEntry
{
    QString name;
    quint16 flags = 0;
    quint16 method = 0;
    quint32 crc = 0;
    qint64 compressed = 0;
    qint64 size = 0;
    qint64 localHeader = 0;
};

QString damagedDirectory()
{
    return StatementText::tr(
        "the ZIP archive's directory is missing or damaged: the file was damaged or not "
        "downloaded whole");
}

[[noreturn]] void refuseZip64()
{
    refuseStatement(
        StatementText::tr("the ZIP archive is in the ZIP64 format, which payops does not "
                          "read: unzip it and import the CSV file"));
}

// The names of ZIP entries are GBK in Alipay's archives (no flag says so), UTF-8 where the
// archive sets bit 11; ASCII names read the same either way.
QString entryName(QByteArrayView bytes, quint16 flags)
{
    if (flags & 0x0800)
        return QString::fromUtf8(bytes);
    QStringDecoder gbk("GB18030");
    return gbk.decode(bytes);
}

// The archive's central directory, read from its end: a ZIP is only whole with it.
QList<ZipEntry> readZipDirectory(QIODevice &file)
{
    constexpr qint64 kEndRecord = 22;
    constexpr qint64 kDirectoryLimit = 16 * 1024 * 1024; // a statement's archive holds a few files
    const qint64 fileSize = file.size();
    const qint64 tailSize = std::min<qint64>(fileSize, kEndRecord + 65535);
    if (!file.seek(fileSize - tailSize))
        refuseStatement(damagedDirectory());
    const QByteArray tail = file.read(tailSize);
    const qsizetype end = tail.lastIndexOf(QByteArrayView("PK\x05\x06", 4));
    if (end < 0 || tail.size() - end < kEndRecord)
        refuseStatement(damagedDirectory());
    const char *record = tail.constData() + end;
    const quint16 count = le16(record + 10);
    const quint32 directorySize = le32(record + 12);
    const quint32 directoryOffset = le32(record + 16);
    if (count == 0xFFFF || directorySize == 0xFFFFFFFF || directoryOffset == 0xFFFFFFFF)
        refuseZip64();
    if (directorySize > kDirectoryLimit || qint64(directoryOffset) + directorySize > fileSize ||
        !file.seek(directoryOffset))
        refuseStatement(damagedDirectory());
    const QByteArray directory = file.read(directorySize);
    if (directory.size() != qsizetype(directorySize))
        refuseStatement(damagedDirectory());

    QList<ZipEntry> entries;
    constexpr qsizetype kHeader = 46;
    for (qsizetype at = 0; entries.size() < count;) {
        if (directory.size() - at < kHeader ||
            !QByteArrayView(directory).sliced(at).startsWith("PK\x01\x02"))
            refuseStatement(damagedDirectory());
        const char *header = directory.constData() + at;
        const qsizetype nameLength = le16(header + 28);
        const qsizetype next = at + kHeader + nameLength + le16(header + 30) + le16(header + 32);
        if (next > directory.size())
            refuseStatement(damagedDirectory());
        ZipEntry entry;
        entry.flags = le16(header + 8);
        entry.method = le16(header + 10);
        entry.crc = le32(header + 16);
        const quint32 compressed = le32(header + 20);
        const quint32 size = le32(header + 24);
        const quint32 localHeader = le32(header + 42);
        entry.name = entryName(QByteArrayView(header + kHeader, nameLength), entry.flags);
        if (compressed == 0xFFFFFFFF || size == 0xFFFFFFFF || localHeader == 0xFFFFFFFF)
            refuseZip64();
        entry.compressed = compressed;
        entry.size = size;
        entry.localHeader = localHeader;
        entries << entry;
        at = next;
    }
    return entries;
}

QString listed(const QStringList &names)
{
    constexpr qsizetype kShown = 5;
    QString list = names.first(std::min(names.size(), kShown)).join(QStringLiteral(", "));
    if (names.size() > kShown)
        list += QStringLiteral(", …");
    return list;
}

// The entry that is the statement: the one CSV file, or of Alipay's two the detail, not its
// summary (汇总).
ZipEntry statementEntry(const QList<ZipEntry> &entries)
{
    QList<ZipEntry> csv;
    QStringList names;
    for (const ZipEntry &entry : entries) {
        names << entry.name;
        const bool macResourceFork = entry.name.startsWith(QLatin1String("__MACOSX/"));
        if (entry.name.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) && !macResourceFork)
            csv << entry;
    }
    if (csv.size() > 1)
        csv.removeIf([](const ZipEntry &entry) { return entry.name.contains(u"汇总"); });
    if (csv.size() == 1)
        return csv.first();
    if (names.contains(QLatin1String("[Content_Types].xml")))
        refuseStatement(
            StatementText::tr("the file is an Excel workbook, not a CSV statement: download "
                              "the statement as CSV, or save the workbook as CSV"));
    if (csv.isEmpty())
        refuseStatement(
            names.isEmpty()
                ? StatementText::tr("the ZIP archive is empty: it holds no statement")
                : StatementText::tr("the ZIP archive holds no CSV statement (it holds %1)")
                      .arg(listed(names)));
    QStringList csvNames;
    for (const ZipEntry &entry : std::as_const(csv))
        csvNames << entry.name;
    refuseStatement(
        StatementText::tr("the ZIP archive holds several CSV statements (%1): unzip it and "
                          "import each on its own")
            .arg(listed(csvNames)));
}

std::unique_ptr<QIODevice> openZipEntry(QIODevice &file, const ZipEntry &entry)
{
    if (entry.flags & 0x0001)
        refuseStatement(
            StatementText::tr("%1 in the ZIP archive is encrypted: unzip it with its password "
                              "and import the CSV file")
                .arg(entry.name));
    if (entry.method != 0 && entry.method != 8)
        refuseStatement(
            StatementText::tr("%1 in the ZIP archive is compressed with method %2, which "
                              "payops does not read: unzip it and import the CSV file")
                .arg(entry.name, QString::number(entry.method)));
    constexpr qint64 kLocalHeader = 30;
    if (!file.seek(entry.localHeader))
        refuseStatement(damagedDirectory());
    const QByteArray local = file.read(kLocalHeader);
    if (local.size() != kLocalHeader || !local.startsWith("PK\x03\x04"))
        refuseStatement(damagedDirectory());
    const qint64 dataStart = entry.localHeader + kLocalHeader + le16(local.constData() + 26) +
                             le16(local.constData() + 28);
    if (dataStart + entry.compressed > file.size())
        refuseStatement(notWhole());
    file.seek(dataStart);
    const auto packing = entry.method == 8 ? Unpacker::Packing::Deflate : Unpacker::Packing::Stored;
    return std::make_unique<Unpacker>(file, packing, entry.compressed, entry.crc, entry.size);
}

} // namespace

StatementContent openStatementContent(QIODevice &file)
{
    StatementContent content;
    // A pipe cannot be searched for a ZIP's directory: the reader then names what it sees.
    if (file.isSequential() || !file.seek(0))
        return content;
    const QByteArray magic = file.peek(4);
    if (magic.startsWith("PK\x03\x04") || magic.startsWith("PK\x05\x06")) {
        const ZipEntry entry = statementEntry(readZipDirectory(file));
        content.unpacked = openZipEntry(file, entry);
        content.entryName = entry.name;
    } else if (magic.startsWith("\x1F\x8B")) {
        content.unpacked = std::make_unique<Unpacker>(file, Unpacker::Packing::Gzip, -1, 0, 0);
    } else {
        return content;
    }
    content.unpacked->open(QIODevice::ReadOnly);
    return content;
}

} // namespace payops
