#include "localinfile.h"

#include "connection.h"
#include "dberror.h"

#include <QSqlDriver>

#include <errmsg.h>
#include <mysql.h>

#include <cstring>
#include <exception>

namespace payops::db {
namespace {

// What the client library's callbacks share for one statement.
struct Stream
{
    const LocalInfileSource *source = nullptr;
    bool started = false;       // the server asked for the data
    std::exception_ptr failure; // thrown by the source; rethrown once the statement ended
};

int streamInit(void **state, const char * /*requested file: never opened*/, void *userdata)
{
    *state = userdata;
    static_cast<Stream *>(userdata)->started = true;
    return 0;
}

int streamRead(void *state, char *buffer, unsigned int capacity)
{
    auto *stream = static_cast<Stream *>(state);
    try {
        return static_cast<int>((*stream->source)(buffer, capacity));
    } catch (...) {
        // The exception cannot cross the C library; the load ends with an error and the
        // caller gets this one instead.
        stream->failure = std::current_exception();
        return -1;
    }
}

void streamEnd(void *)
{
}

// Between loads, a request for a file is refused.
int refuseInit(void **state, const char *, void *)
{
    *state = nullptr;
    return 1;
}

int refuseRead(void *, char *, unsigned int)
{
    return -1;
}

// The library's error text of a refused or failed load, cut to its buffer.
int libraryError(char *message, unsigned int capacity, const char *text)
{
    if (capacity > 0) {
        std::strncpy(message, text, capacity);
        message[capacity - 1] = '\0';
    }
    return CR_UNKNOWN_ERROR;
}

int refuseError(void *, char *message, unsigned int capacity)
{
    return libraryError(message, capacity, "this client sends no local files");
}

int streamError(void *, char *message, unsigned int capacity)
{
    return libraryError(message, capacity, "the data to load could not be produced");
}

MYSQL *nativeHandle(const QSqlDatabase &db)
{
    const QVariant handle = db.driver()->handle();
    // Qt names the type by the struct behind the MYSQL typedef.
    if (!handle.isValid() ||
        (qstrcmp(handle.typeName(), "st_mysql*") != 0 && qstrcmp(handle.typeName(), "MYSQL*") != 0))
        return nullptr;
    return *static_cast<MYSQL *const *>(handle.constData());
}

} // namespace

void refuseLocalFiles(const QSqlDatabase &db)
{
    if (MYSQL *mysql = nativeHandle(db))
        mysql_set_local_infile_handler(mysql, refuseInit, refuseRead, streamEnd, refuseError,
                                       nullptr);
}

LocalLoad loadDataLocal(const QSqlDatabase &db, const QString &sql, const LocalInfileSource &source)
{
    MYSQL *mysql = nativeHandle(db);
    if (!mysql)
        return LocalLoad::NotAllowed;
    Stream stream;
    stream.source = &source;
    mysql_set_local_infile_handler(mysql, streamInit, streamRead, streamEnd, streamError, &stream);
    // Refusing again afterwards, never the library's own handler, which opens whatever file the
    // server names.
    struct Restore
    {
        const QSqlDatabase &db;
        ~Restore() { refuseLocalFiles(db); }
    } restore{db};
    try {
        execDirect(db, sql);
    } catch (const Error &) {
        if (stream.failure)
            std::rethrow_exception(stream.failure);
        if (!stream.started)
            return LocalLoad::NotAllowed;
        throw;
    }
    return LocalLoad::Loaded;
}

} // namespace payops::db
