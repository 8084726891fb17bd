/* schema.h — the Perfetto-shaped database kvio writes (see docs/database.md). */
#ifndef KVIO_SCHEMA_H
#define KVIO_SCHEMA_H
#include <sqlite3.h>

/* Physical tables, then the trace_processor-named views over them. */
extern const char kvio_schema_sql[];
/* Schema version stored in metadata('kvio_schema_version'). */
#define KVIO_DB_VERSION 3
/* A label (--label, --merge L=) and the device (--device) are at most this many
 * bytes: they name processes and repeat in every report and page (db/values.c
 * refuses a longer process name: no kvio writes it). */
#define KVIO_LABEL_MAX 128
/* The widest rate counter bucket (ingest/write.h's CTR_*_MS): a rate counter's
 * closing point lies at most this far past the capture's last end (db/values.c). */
#define KVIO_CTR_BUCKET_MAX_NS 10000000

/* Open path for writing a fresh database: page size, journal off, schema. */
int db_create(const char *path, sqlite3 **out);
/* Open a database read-only as input (defensive, no trusted schema, no
 * triggers; kvio's functions registered), nothing checked yet. One-line error
 * and NULL on failure. */
sqlite3 *db_open_input(const char *path);
/* db_open_input, then the checks every reader makes (db/valid.h: version,
 * schema, the small tables' sums). One-line error and NULL on failure. */
sqlite3 *db_open_ro(const char *path);
/* Execute SQL, printing "what: error" on failure ("writing FILE: reason" for a
 * full disk or an I/O error while writing). Returns SQLITE_OK or the error code. */
int db_exec(sqlite3 *db, const char *sql, const char *what);

/* The database's file as messages name it: the user's output path while db is
 * a temp file being written (lib/outfile.h), else its file name. */
const char *db_name(sqlite3 *db);
/* Why rc happened, in the system's words where there are some (a full disk:
 * strerror(ENOSPC); an I/O error: its errno), else SQLite's message. */
const char *db_reason(sqlite3 *db, int rc);
/* What identifies the data a connection's read transaction sees (kvio_sum's
 * sums, the chunk directory's and the slices' extents): equal on two
 * connections that read the same snapshot (kvio-report's, kvio-export's
 * connections on a database kvio-ingest --follow writes). sqlite3_malloc'd,
 * NULL on an error (said in one line when say). */
char *db_snapshot_id(sqlite3 *db, int say);

/* extract_arg() and friends (kvio_ext.c), registered on db. */
int kvio_register_functions(sqlite3 *db);

#endif
