// The migration reader: how a file of sql/migrations becomes a version, a level, a
// requirement and the checksum that schema_migrations keeps, and how its script is split into
// statements. Input: "<file name>\n<script>".
#include "fuzzinput.h"

#include "db/migrator.h"
#include "db/sqlscript.h"

using namespace payops;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto [name, script] = fuzz::splitFirstLine(fuzz::bytes(data, size));
    const QString fileName = QString::fromUtf8(name);
    for (const bool mariaDb : {true, false}) {
        const auto migration = db::migrationFromFile(fileName, script, mariaDb);
        if (!migration)
            continue;
        if (migration->version < 0 || migration->version > 9999 ||
            migration->checksum.size() != 64 || migration->script != script)
            fuzz::broken("a migration has a four-digit version, its script and a SHA-256 checksum");
    }
    for (const QString &statement : db::splitSqlScript(QString::fromUtf8(script))) {
        if (statement.trimmed().isEmpty())
            fuzz::broken("no statement is empty");
    }
    return 0;
}
