/* dir.h — the directory of a kvio database (dir.c): what the command chunks
 * are and what their values index (names, tracks, KV rows, extents), read once
 * and checked before anything uses it. The extension's chunk store and the
 * export both read chunks through it; chunk.c checks a chunk against it.
 *
 * A database is input: every value read here is checked (types, ranges,
 * ids against their neighbours), every allocation is bounded by the rows the
 * file holds, and a failed check is one sentence naming the table and row. */
#ifndef KVIO_DIR_H
#define KVIO_DIR_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Ids (of commands, slices) stay below 2^53: a file cannot hold more rows,
 * and id + n never overflows. */
#define DIR_MAX_ID ((int64_t)1 << 53)
/* Track ids run from 1 up; folding a role's single lane deletes its group
 * track (at most 4 per arm and 64 arms), and kvio-ingest --follow --merge
 * gives each arm but the last a room of track ids while it follows
 * (ingest/live.c): ids above rows + DIR_TRACK_HOLES are damage (the arrays
 * by track id stay within the rows + 4096 entries). */
#define DIR_TRACK_HOLES 4096

/* A chunk's extent (kvio_cmd_range): a window that misses it skips the chunk unread. */
struct extent {
	int64_t ts_min, end_max, tid_min, tid_max; /* tid_max 0: no tagged command */
};

enum { TRK_NONE = 0, TRK_SLICE, TRK_COUNTER };

struct dbdir {
	int64_t *first;      /* chunk first ids, ascending, disjoint */
	uint32_t *n;         /* commands per chunk, 1..CHUNK_ROWS */
	size_t nchunks;
	struct extent *ext;  /* per chunk (kvio_cmd_range, one row each) */
	char **names;        /* kvio_cmd_name by id (NULL: no row), nnames <= 65536 */
	size_t nnames;
	int64_t *track_upid; /* kvio_track.upid by track id (-1: none) */
	uint8_t *track_kind; /* TRK_* by track id */
	size_t ntracks;
	int64_t nkv;         /* kvio_cmd_kv's ids are 1..nkv */
};

/* The start of every message about a database that fails kvio's checks. */
#define KVIO_DAMAGED "database damaged or not written by kvio: "

/* Index of the chunk holding command id, or -1. */
long dir_find(const struct dbdir *d, int64_t id);
/* Read and check the directory of database schema (quoted for SQL in qschema)
 * into *d (zeroed first). SQLITE_OK; SQLITE_CORRUPT with *why (sqlite3_malloc'd,
 * one sentence naming table and row) when a check fails; else SQLite's code. */
int dir_load(sqlite3 *db, const char *qschema, struct dbdir *d, char **why);
/* Read chunk k of d (database schema, unquoted) into *buf (*cap bytes, grown;
 * sqlite3_malloc'd, so 8-byte aligned) and map v over it: every byte checked
 * (chunk_check) when check, else only its header. SQLITE_OK; SQLITE_CORRUPT
 * with why; else the read's code (an interrupt, NOMEM). */
struct chunk_view;
/* chunk_order_cols: chunk k's ts and track columns alone (its first n = d->n[k]
 * of each), read from its row without the rest: bytes not checked (a scan that
 * trusts what they decide reads and checks the whole chunk). SQLITE_OK, or
 * another code (the caller then reads the chunk whole). */
int chunk_order_cols(sqlite3 *db, const char *schema, const struct dbdir *d, size_t k, int64_t *ts, uint32_t *track);
int chunk_read(sqlite3 *db, const char *schema, const struct dbdir *d, size_t k, int check, void **buf,
	       size_t *cap, struct chunk_view *v, char *why, size_t whylen);
/* Free what dir_load allocated; names too unless keep_names (the caller took them). */
void dir_free(struct dbdir *d, int keep_names);

#endif
