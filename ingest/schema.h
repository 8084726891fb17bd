/* schema.h — the Perfetto-shaped database kvio writes (see docs/database.md). */
#ifndef KVIO_SCHEMA_H
#define KVIO_SCHEMA_H
#include <sqlite3.h>

/* Physical tables, then the trace_processor-named views over them. */
extern const char kvio_schema_sql[];
/* Schema version stored in metadata('kvio_schema_version'). */
#define KVIO_DB_VERSION 2

/* Open path for writing a fresh database: page size, journal off, schema. */
int db_create(const char *path, sqlite3 **out);
/* Open an existing kvio database read-only; checks it is one. One-line error and NULL on failure. */
sqlite3 *db_open_ro(const char *path);
/* Execute SQL, printing "what: error" on failure. Returns SQLITE_OK or the error code. */
int db_exec(sqlite3 *db, const char *sql, const char *what);

/* extract_arg() and friends (kvio_ext.c), registered on db. */
int kvio_register_functions(sqlite3 *db);

#endif
