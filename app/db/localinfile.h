#pragma once

#include <QSqlDatabase>
#include <QString>

#include <functional>

namespace payops::db {

// Fills `buffer` with up to `capacity` bytes of the data a LOAD DATA LOCAL INFILE reads;
// returns how many, 0 at the end of the data.
using LocalInfileSource = std::function<qsizetype(char *buffer, qsizetype capacity)>;

enum class LocalLoad {
    Loaded,
    // The server or the client library does not allow LOAD DATA LOCAL (local_infile=OFF, a
    // driver other than MariaDB's or MySQL's): nothing was read from `source`, nothing loaded.
    NotAllowed,
};

// Runs `sql`, a LOAD DATA LOCAL INFILE statement, with `source` as its file: the rows stream
// from the caller to the server, with no file on disk and no SQL literals to parse, which for
// a million rows is several times faster than multi-row INSERTs. Whatever file name the server
// asks for, only `source` is read, so a server cannot use the request to read a client's files.
// Throws db::Error when the load fails after it began.
LocalLoad loadDataLocal(const QSqlDatabase &db, const QString &sql,
                        const LocalInfileSource &source);

// Makes the connection refuse every request for a local file: a hostile server may ask for one
// in answer to any query. Every db::Connection does this when it opens; loadDataLocal() lifts
// it for its one statement.
void refuseLocalFiles(const QSqlDatabase &db);

} // namespace payops::db
