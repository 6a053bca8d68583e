#pragma once

#include <QString>
#include <QTest>

namespace payops::test {

// What a person must never read: the statement, the server's wording, its quoting.
inline void verifyNoServerText(const QString &sentence)
{
    for (const char *word : {"SELECT", "INSERT", "UPDATE", "DELETE", "command denied", "Table '",
                             "doesn't exist", "Duplicate entry", "`", "@'"})
        QVERIFY2(!sentence.contains(QLatin1String(word)), qPrintable(sentence));
}

} // namespace payops::test
