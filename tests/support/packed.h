#pragma once

#include <QByteArray>

namespace payops::test {

// `text` as one gzip member, as `gzip` and WeChat Pay's bill download (tar_type=GZIP) write it.
QByteArray gzipped(const QByteArray &text);

} // namespace payops::test
