// The statement importer, for the format PAYOPS_FUZZ_FORMAT names (auto, generic, wechat,
// alipay): the bytes are read the way `payops reconcile --statement FILE` reads the file,
// through a QIODevice, unpacked first when they are a ZIP or a gzip, line by line, to the end
// or the error that stops the file.
#include "fuzzinput.h"

#include "domain/statement/statementarchive.h"
#include "domain/statement/statementreader.h"

#include <QBuffer>

using namespace payops;

namespace {

StatementFormat fuzzedFormat()
{
    static const auto format = statementFormatFromName(QStringLiteral(PAYOPS_FUZZ_FORMAT));
    if (!format)
        fuzz::broken("PAYOPS_FUZZ_FORMAT names a format");
    return *format;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::quietLogs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QByteArray input = fuzz::bytes(data, size);
    QBuffer file(&input);
    file.open(QIODevice::ReadOnly);
    try {
        const StatementContent content = openStatementContent(file);
        StatementReader reader(content.unpacked ? *content.unpacked : file, fuzzedFormat());
        if (reader.header().format == StatementFormat::Auto)
            fuzz::broken("the header names the format it read");
        StatementLine line;
        QList<StatementLineError> errors;
        while (reader.next(line, errors)) {
            if (line.lineNo < 1 || line.lineNo > reader.linesRead())
                fuzz::broken("a line's number is one the reader has read");
        }
        for (const StatementLineError &error : errors) {
            if (error.lineNo < 1 || error.message.isEmpty())
                fuzz::broken("a line's error names its line and the fault");
        }
    } catch (const StatementError &error) {
        if (!*error.what())
            fuzz::broken("a file refused whole says why");
    }
    return 0;
}
