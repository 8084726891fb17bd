/* values.h — the values kvio writes, table by table (values.c): each row's
 * types and domains, and the references between tables the readers follow
 * (a track's process and parent, a slice's track, an object's slice, an
 * arg's or a flow's slice or command), checked while valid.c reads the rows
 * for their sums, so that a database whose sums a forger made to match still
 * holds only what kvio writes (docs/database.md, "Trust"). */
#ifndef KVIO_VALUES_H
#define KVIO_VALUES_H
#include <sqlite3.h>
#include <stdint.h>

/* What the checks of one pass found so far: the database's kind (an ingest's
 * or a .pftrace import's), its processes, tracks, chunks and slices, each read
 * from its table when a check first needs it; and the first value that is
 * not kvio's (why). */
struct vcx;

/* A context for the checks of database q (a quoted schema) on db; NULL: no memory. */
struct vcx *vcx_new(sqlite3 *db, const char *q);
void vcx_free(struct vcx *c);
/* Whether a check failed (c NULL: no); the sentence of the first one
 * (KVIO_DAMAGED "TABLE ROW: what", sqlite3_malloc'd; NULL: there was no
 * memory to say it), handed to the caller. */
int vcx_failed(const struct vcx *c);
char *vcx_take_why(struct vcx *c);

/* The statement whose rows c's checks are handed next (its column names name
 * a failed check's column; NULL after its last row). c NULL: nothing. */
void vcx_reading(struct vcx *c, sqlite3_stmt *st);

/* Table name's checks: row() for each row's values v (SELECT * [, rowid] in
 * the sum's order, as sqlite3_column_value gives them; rowid the row's rowid,
 * or -1 for a table without one), end() after the last. Each returns SQLITE_OK
 * (a failed check recorded in c, for vcx_take_why) or the code of a read that
 * failed. NULL: none for that table. */
struct vhooks {
	int (*row)(struct vcx *c, sqlite3_value **v, int64_t rowid);
	int (*end)(struct vcx *c);
};
const struct vhooks *values_of(const char *table);

#endif
