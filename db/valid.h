/* valid.h — whether a database is kvio's and unchanged since kvio wrote it
 * (valid.c). Each check returns SQLITE_OK; SQLITE_CORRUPT with *why (one
 * sentence, sqlite3_malloc'd: KVIO_DAMAGED "..." for damage, or what the
 * version says); or SQLite's code of a failed read. q: a schema, quoted. */
#ifndef KVIO_VALID_H
#define KVIO_VALID_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds of tables kvio_sum covers (valid.c lists them): the directory
 * and bookkeeping (small: checked at every open), the capture's tables that
 * kvio-report reads (objects, slices, args, flows), and the others (counters,
 * KV rows: kvio-export's). The bits are memo.h's. */
enum { DB_SMALL = 1, DB_REPORT = 2, DB_OTHER = 4, DB_TABLES = 7 };

/* metadata's kvio_schema_version: an integer, KVIO_DB_VERSION (older and
 * newer versions say which kvio reads them). */
int db_check_version(sqlite3 *db, const char *q, char **why);
/* Every object of ddl.c present with kvio's own statement; no trigger, no
 * index on a kvio table but SQLite's own. Other tables and views: ignored. */
int db_check_schema(sqlite3 *db, const char *q, char **why);
/* The checks a reader makes when it opens a database (schema unquoted:
 * "main", an ATTACHed name): version, schema, the small tables' sums and
 * values (values.h); once per process for a file that does not change (memo.h). */
int db_valid(sqlite3 *db, const char *schema, char **why);
/* The same and the sums and values of the tables of mask (DB_REPORT, DB_OTHER). */
int db_check_tables(sqlite3 *db, const char *schema, int mask, char **why);
/* The tables kvio_sum covers, by index (NULL past the last); table i's sum
 * and values checked (*rows: the rows it holds). For kvio-check's
 * table-by-table lines. */
const char *db_sum_table(size_t i);
int db_check_sum(sqlite3 *db, const char *q, size_t i, int64_t *rows, char **why);
/* KVIO_UNCHECKED=1: a measuring knob (make bench's "with the checks /
 * without"): readers skip the schema, the checksums and the chunks' value
 * checks (the version still counts); db_open_ro says so on stderr. Never for
 * use: kvio-check ignores it. */
int db_unchecked(void);
/* kvio_sum_rows, the aggregate the sums read a table's rows with (valid.c):
 * registered on every connection kvio opens (kvio_register_functions). */
int db_valid_register(sqlite3 *db);
/* At the end of an ingest (main, in its transaction): kvio_sum's rows. */
int db_write_sums(sqlite3 *db);
/* A table's rows hashed as its writer writes them, so that its kvio_sum row
 * need not read them back: each column's value, in the table's column
 * order, as SQLite stores it (the same bytes db_write_sums hashes reading
 * the table; a real in a REAL column: -0.0 is stored as 0; a NaN bound is
 * NULL), rows in the table's order (its rowid's). */
struct db_sum;
struct db_sum *db_sum_new(void);
void db_sum_free(struct db_sum *s);
void db_sum_int(struct db_sum *s, int64_t v);
void db_sum_real(struct db_sum *s, double v, int real_column);
void db_sum_text(struct db_sum *s, const char *t); /* NULL: a NULL */
void db_sum_null(struct db_sum *s);
void db_sum_row(struct db_sum *s); /* a row's values are in: one row more */
/* db_write_sums with the sums of the tables named in given (NULL-terminated
 * pairs of table name and sum) taken as they are, the others read. */
int db_write_sums_given(sqlite3 *db, const char *const *names, struct db_sum *const *sums);
/* kvio-ingest --follow: kvio_sum's rows as db_write_sums writes them, each
 * commit reading only what changed: frozen(ctx, table) gives the key (its
 * first ORDER BY column) below which the table's rows are those of the last
 * call and no row will come (INT64_MIN: the table read whole); c keeps the
 * hash of those rows. */
struct sumcache;
struct sumcache *db_sums_new(void);
void db_sums_free(struct sumcache *c);
int db_write_sums_inc(sqlite3 *db, struct sumcache *c, int64_t (*frozen)(void *ctx, const char *table), void *ctx);

#endif
