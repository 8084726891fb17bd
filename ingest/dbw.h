/* dbw.h — the database writer shared by the JSONL ingest and the .pftrace
 * import. Call dbw_begin on a database made by db_create, write, dbw_end. */
#ifndef KVIO_DBW_H
#define KVIO_DBW_H
#include "../db/chunk.h"
#include "../lib/util.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

/* A kvio_cmd_kv row, written with its chunk (key_hex copied into the chunk's keys). */
struct kvrow {
	int64_t id, key_len, value_len;
	size_t key_off;
	uint8_t has_key, has_key_len, has_value_len;
};

/* Commands waiting to be written as one chunk (see cmdchunk.h). */
struct chunkbuf {
	struct vec kv;    /* struct kvrow */
	char *keys;       /* the KV rows' key_hex texts, NUL-terminated */
	size_t nkeys, capkeys;
	int64_t first_id;
	uint32_t n;
	int64_t ts[CHUNK_ROWS], dur[CHUNK_ROWS], slba[CHUNK_ROWS];
	uint32_t track[CHUNK_ROWS], data_len[CHUNK_ROWS], trace_id[CHUNK_ROWS], slba_track[CHUNK_ROWS],
		kv_id[CHUNK_ROWS];
	uint16_t name[CHUNK_ROWS];
	uint8_t flags[CHUNK_ROWS];
	unsigned char *blob;
};

#define DBW_NAME_CACHE 16
struct db_sum; /* db/valid.h */
#define DBW_OBJ_COLS 18 /* kvio_obj's columns after id */

/* The big tables whose sums a one-shot ingest takes as it writes them. */
enum { RS_SLICE, RS_OBJ, RS_FLOW, RS_COUNTER, DBW_NRSUM };

struct dbw {
	sqlite3 *db;
	sqlite3_stmt *process, *track, *chunk, *range, *slice, *arg, *counter, *flow, *name, *kv, *obj;
	int64_t obj_id;      /* between dbw_obj_begin and dbw_obj_end: args of this set go to kvio_obj */
	int obj_next;        /* the kvio_obj column after the last one bound (write.c binds them in order) */
	struct chunkbuf *cb;
	/* The chunk writer: a full chunk is encoded and inserted on its own thread
	 * while the stream goes on (the chunks are most of the database's bytes).
	 * While it writes, it alone uses the connection: every other use of db
	 * first waits for it (dbw_sync; dbw.c's functions do). */
	struct chunkbuf *spare;   /* the other buffer: being written, or free */
	pthread_t writer;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunkbuf *job;     /* the chunk being written (under mu) */
	atomic_int pending;       /* job != NULL, read without mu */
	int started, quit, wrc;   /* wrc: the writer's error, taken by dbw_sync */
	int in_place;             /* set by the caller: no writer thread (--follow uses db between chunks) */
	double writer_cpu;        /* its CPU seconds, once stopped (KVIO_TIMING) */
	struct vec names;    /* global command names (char*, owned), index = kvio_cmd_name.id */
	const char *name_ptr[DBW_NAME_CACHE]; /* dbw_name: names by the caller's pointer */
	uint16_t name_id[DBW_NAME_CACHE];
	int64_t next_kv;
	int64_t next_id;     /* slices (and their arg sets) */
	int64_t next_track, next_upid, next_counter, next_flow, next_utid;
	int64_t partial_id;  /* --follow: the trailing partial chunk's row (dbw_flush_partial), -1 none */
	/* --follow --merge (live.c): an arm's writer after the first's */
	struct dbw *names_of; /* the writer whose kvio_cmd_name list this one's commands use (NULL: its own) */
	int64_t track_end;   /* > 0: a track id from here is refused (the next arm's; w->rc SQLITE_FULL) */
	struct vec used;     /* uint8_t per name id: used by this writer's commands */
	size_t nused;        /* names used */
	int names_unordered; /* a name first used by it had not the next id (another writer's came between) */
	struct sumcache *sums; /* --follow: the sums of each commit read what changed (db/valid.h) */
	/* dbw_sum_rows: kvio_slice's, kvio_obj's, flow's and kvio_counter's sums
	 * taken as their rows are written (NULL: read back at the end) */
	struct db_sum *rsum[DBW_NRSUM];
	int64_t rsum_last[DBW_NRSUM];     /* the id of each one's last row */
	struct { uint8_t t; int64_t i; double d; size_t s; } objv[DBW_OBJ_COLS]; /* the kvio_obj row bound */
	char *objtext;                    /* its texts (objv[].s: offsets), NUL-terminated */
	size_t objtext_n, objtext_cap;
	int64_t (*frozen)(void *ctx, const char *table);
	void *frozen_ctx;
	int rc;
};


/* One command row for dbw_cmd (the kvio_cmd columns). */
struct cmd_row {
	int64_t ts, dur, slba, track, slba_track;
	uint32_t data_len, trace_id; /* trace_id 0 = NULL */
	const char *name;            /* interned by dbw_name */
	uint8_t flags;               /* CHF_* */
	const char *key_hex;         /* with CHF_KV */
	int has_key_len, has_value_len;
	int64_t key_len, value_len;
};

/* Start: BEGIN (unless the caller has a transaction open), prepared statements, the placeholder process/thread rows.
 * Returns SQLITE_OK or the error (reported). */
int dbw_begin(struct dbw *w, sqlite3 *db);
/* The same without the placeholder rows (--follow --merge: an arm's writer
 * after the first's, its command names in names_of's list; NULL: its own). */
int dbw_begin_more(struct dbw *w, sqlite3 *db, struct dbw *names_of);
/* Take the sums of kvio_slice, kvio_obj, flow and kvio_counter as dbw writes
 * their rows (db/valid.h's db_sum; the end then does not read them back),
 * each one empty now; one whose rows do not all come through dbw in id order
 * is read back. The caller writes those tables through dbw only. */
void dbw_sum_rows(struct dbw *w);
/* Flush, metadata (n arms), finalize, COMMIT (or just finalize after an error). */
int dbw_end(struct dbw *w, int narms);

void dbw_step(struct dbw *w, sqlite3_stmt *st);
/* Wait until the chunk writer is idle (its error, if any, becomes w->rc):
 * call it before using w->db or a statement directly outside dbw.c. */
void dbw_sync(struct dbw *w);
int64_t dbw_process(struct dbw *w, int64_t pid, const char *name);
/* A thread row (utid assigned here; no process). */
int64_t dbw_thread(struct dbw *w, int64_t tid, const char *name);
/* A track; parent < 0 for none, upid < 0 for none; unit != NULL makes it a
 * counter track; order < 0: no sibling_order_rank. */
int64_t dbw_track(struct dbw *w, const char *name, int64_t parent, int64_t upid, const char *unit,
		  int order, int explicit_order);
/* A generic slice with a fresh id (also its arg_set_id). */
int64_t dbw_slice(struct dbw *w, int64_t ts, int64_t dur, int64_t track, const char *name);
/* A generic slice with a reserved id. */
void dbw_slice_id(struct dbw *w, int64_t id, int64_t ts, int64_t dur, int64_t track, const char *name);
/* Reserve n consecutive slice ids; returns the first. */
int64_t dbw_reserve(struct dbw *w, int64_t n);
/* Args of generic slices: vt 0 int, 1 uint, 2 bool, 3 real, 4 string. */
void dbw_arg_row(struct dbw *w, int64_t set, const char *key, int vt_kind, int64_t i, const char *s,
		 double d, const char *display);
void dbw_arg_i(struct dbw *w, int64_t set, const char *key, int64_t v);
void dbw_arg_b(struct dbw *w, int64_t set, const char *key, int v);
void dbw_arg_d(struct dbw *w, int64_t set, const char *key, double v);
void dbw_arg_s(struct dbw *w, int64_t set, const char *key, const char *v);
/* Rare: a nested slice's depth (kvio's own slices are all depth 0). */
void dbw_set_depth(struct dbw *w, int64_t id, int depth);
/* A kvio_stats row. */
void dbw_stat(struct dbw *w, const char *label, const char *name, int64_t value);
/* Object args: between these, dbw_arg_* of set `id` whose key is a kvio_obj
 * column fill that row (others still go to kvio_arg). */
void dbw_obj_begin(struct dbw *w, int64_t id);
void dbw_obj_end(struct dbw *w);
void dbw_counter(struct dbw *w, int64_t ts, int64_t track, double v);
void dbw_flow(struct dbw *w, int64_t out, int64_t in, int64_t flow_id);
/* Command name id (kvio_cmd_name), written on first use. */
uint16_t dbw_name(struct dbw *w, const char *name);
/* One command with slice id `id`; ids of a chunk must be consecutive. */
void dbw_cmd(struct dbw *w, int64_t id, const struct cmd_row *r);
void dbw_flush_chunk(struct dbw *w);

/* --follow (live.c): the writer kept across commits. */
/* The buffered commands written as their chunk's row, kept in the buffer: the
 * next commit drops the row (dbw_drop_partial) and the chunk goes on filling. */
void dbw_flush_partial(struct dbw *w);
void dbw_drop_partial(struct dbw *w);
/* The metadata rows and the sums, COMMIT; the writer stays (BEGIN the next). */
int dbw_commit(struct dbw *w, int narms);
/* The statements finalized (the connection to be closed), prepared on db. */
void dbw_detach(struct dbw *w);
int dbw_attach(struct dbw *w, sqlite3 *db);

#endif
