/* memo.h — the process's memo of what it checked of each database file
 * (memo.c): two connections to one unchanged file check it once. */
#ifndef KVIO_MEMO_H
#define KVIO_MEMO_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

enum {
	MEMO_SMALL = 1,  /* version, schema, the small tables' sums */
	MEMO_REPORT = 2, /* the big tables kvio-report reads (valid.c) */
	MEMO_ALL = 4,    /* every table's sum */
};

struct memo;

/* The memo of database schema's file on db as it is now; NULL when it is no
 * file (memory, temp) or the process knows too many files already. */
struct memo *memo_of(sqlite3 *db, const char *schema);
/* Whether m records flag (a NULL memo records nothing); record it. Any thread. */
int memo_has(const struct memo *m, int flag);
void memo_set(struct memo *m, int flag);
/* m's chunk flags (nchunks bytes, 1 = that chunk was checked; read and set
 * them with __atomic builtins), shared by every connection to the file; NULL
 * without a memo. */
uint8_t *memo_chunks(struct memo *m, size_t nchunks);

#endif
