/* kvio_ext.c — kvio's SQLite extension: the kvio_cmd virtual table over the
 * columnar command chunks, and extract_arg(arg_set_id, key).
 *
 * Built twice: linked into the kvio commands (SQLITE_CORE) and as the loadable
 * extension build/kvio.so, so that plain sqlite3 runs Perfetto-style queries:
 *     sqlite3 trace.db -cmd '.load build/kvio'
 * extract_arg has trace_processor's semantics: the typed value of the arg (int
 * for int, uint and bool; text; real), or NULL when the arg set lacks the key.
 *
 * No prepared statement outlives the SQL statement that needed it (the sqlite3
 * CLI closes its connection with sqlite3_close, which refuses while any is
 * open): lookups prepare on demand, keep statements as auxdata or cursor state. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include "cmdchunk.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the chunk store: directory, names, a few decoded chunks ----------- */

#define NCACHE 4

struct cached {
	int64_t id;  /* first command id of the chunk; INT64_MIN = empty */
	void *blob;  /* its bytes (cap allocated, kept for the next chunk read here) */
	size_t cap;
	struct chunk_view v;
	unsigned age;
};

#define NOBJCOL 18
static const char *const obj_cols[NOBJCOL] = {"trace_id", "op", "part", "bytes", "slot_offset", "rank", "fmt",
	"chunk", "tp_rank", "tp_world", "tp_chunk", "n_cmds", "op_latency_ms", "error", "instance", "producer_pid",
	"key", "occurrence"};

/* A chunk's extent (kvio_cmd_range): a window that misses it skips the chunk unread. */
struct extent {
	int64_t ts_min, end_max, tid_min, tid_max; /* tid_max 0: no tagged command */
};

struct store {
	sqlite3 *db;
	char *schema;        /* the database the table is in: "main", or an ATTACHed one's name */
	char *qschema;       /* the same, quoted for SQL */
	/* the last kvio_obj row read (objects' args): id, data version, values */
	int64_t obj_id;
	unsigned obj_ver;
	int obj_found;
	sqlite3_value *obj_row[NOBJCOL];
	int loaded;
	unsigned ver;        /* data version the directory was read at */
	int64_t *first;      /* chunk first ids, ascending */
	uint32_t *n;
	size_t nchunks;
	char **names;        /* kvio_cmd_name, by id */
	size_t nnames;
	struct cached cache[NCACHE];
	unsigned clock;      /* LRU age of the cache slots */
	unsigned gen;        /* bumped when a slot is refilled: a cursor's chunk pointer is then stale */
	char ***retired;     /* name tables of earlier data versions, and their sizes */
	size_t *retired_n, nretired;
	int64_t *track_upid; /* kvio_track.upid by track id (-1: none) */
	size_t ntracks;
	int order_known;     /* ordered below was computed at this data version */
	int ordered;         /* id order is (upid, ts) order: ORDER BY upid, ts, id needs no sort */
	int chunk_rc;        /* why the last store_chunk returned NULL (SQLITE_CORRUPT: a bad blob) */
	struct extent *ext;  /* per chunk, from kvio_cmd_range (NULL: no such table) */
};

static unsigned data_version(const struct store *s)
{
	unsigned v = 0;
	sqlite3_file_control(s->db, s->schema, SQLITE_FCNTL_DATA_VERSION, &v);
	return v;
}

/* Prepare fmt, whose one %s is the store's schema (its tables, never the TEMP
 * ones of sql/prelude.sql nor those of another attached database). */
static int store_prep(const struct store *s, const char *fmt, sqlite3_stmt **st)
{
	char *sql = sqlite3_mprintf(fmt, s->qschema);
	if (!sql)
		return SQLITE_NOMEM;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	sqlite3_free(sql);
	return rc;
}

static void store_drop(struct store *s)
{
	s->gen++; /* cursors holding a chunk look it up again */
	for (int i = 0; i < NCACHE; i++) {
		sqlite3_free(s->cache[i].blob);
		s->cache[i].blob = NULL;
		s->cache[i].cap = 0;
		s->cache[i].id = INT64_MIN;
	}
	if (s->names) { /* a value of a running statement may point at a name: freed at store_free */
		char ***r = sqlite3_realloc64(s->retired, (s->nretired + 1) * sizeof *r);
		if (r) {
			s->retired = r;
			r[s->nretired] = s->names;
			s->retired_n = sqlite3_realloc64(s->retired_n, (s->nretired + 1) * sizeof *s->retired_n);
			if (s->retired_n)
				s->retired_n[s->nretired++] = s->nnames;
		}
	}
	sqlite3_free(s->track_upid);
	s->track_upid = NULL;
	s->ntracks = 0;
	s->order_known = 0;
	sqlite3_free(s->first);
	sqlite3_free(s->n);
	sqlite3_free(s->ext);
	s->ext = NULL;
	s->names = NULL;
	s->first = NULL;
	s->n = NULL;
	s->nnames = s->nchunks = 0;
	s->loaded = 0;
}

static void obj_row_clear(struct store *s)
{
	for (int i = 0; i < NOBJCOL; i++) {
		sqlite3_value_free(s->obj_row[i]);
		s->obj_row[i] = NULL;
	}
	s->obj_found = 0;
	s->obj_id = INT64_MIN;
}

static void store_free(void *p)
{
	struct store *s = p;
	store_drop(s);
	for (size_t k = 0; k < s->nretired; k++) {
		for (size_t i = 0; s->retired_n && i < s->retired_n[k]; i++)
			sqlite3_free(s->retired[k][i]);
		sqlite3_free(s->retired[k]);
	}
	sqlite3_free(s->retired);
	sqlite3_free(s->retired_n);
	obj_row_clear(s);
	sqlite3_free(s->schema);
	sqlite3_free(s->qschema);
	sqlite3_free(s);
}

/* Read kvio_track's upid of every track into s->track_upid. */
static int store_tracks(struct store *s)
{
	sqlite3_stmt *st;
	int rc = store_prep(s, "SELECT id, upid FROM %s.kvio_track WHERE id >= 0 AND id < 16777216 ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t id = (size_t)sqlite3_column_int64(st, 0);
		if (id >= s->ntracks) {
			size_t n = id + 64;
			int64_t *u = sqlite3_realloc64(s->track_upid, n * sizeof *u);
			if (!u) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
			for (size_t i = s->ntracks; i < n; i++)
				u[i] = -1;
			s->track_upid = u;
			s->ntracks = n;
		}
		s->track_upid[id] = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Each chunk's extent from kvio_cmd_range, when the table is there and has
 * a row for every chunk (else s->ext stays NULL: every chunk is read). */
static int store_extents(struct store *s)
{
	sqlite3_stmt *st;
	if (!s->nchunks || sqlite3_table_column_metadata(s->db, s->schema, "kvio_cmd_range", "tid_max", NULL, NULL, NULL,
							 NULL, NULL) != SQLITE_OK)
		return SQLITE_OK;
	int rc = store_prep(s, "SELECT id, ts_min, end_max, coalesce(tid_min, 0), coalesce(tid_max, 0)"
			    " FROM %s.kvio_cmd_range ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	struct extent *e = sqlite3_malloc64(s->nchunks * sizeof *e);
	size_t k = 0;
	while (e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k < s->nchunks && sqlite3_column_int64(st, 0) == s->first[k]) {
			e[k].ts_min = sqlite3_column_int64(st, 1);
			e[k].end_max = sqlite3_column_int64(st, 2);
			e[k].tid_min = sqlite3_column_int64(st, 3);
			e[k].tid_max = sqlite3_column_int64(st, 4);
			k++;
		}
	}
	sqlite3_finalize(st);
	if (!e)
		return SQLITE_NOMEM;
	if (rc != SQLITE_DONE || k != s->nchunks) { /* not one row per chunk: read them all */
		sqlite3_free(e);
		return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
	}
	s->ext = e;
	return SQLITE_OK;
}

/* The upid of track id, or -1. */
static int64_t store_upid(const struct store *s, uint32_t track)
{
	return track < s->ntracks ? s->track_upid[track] : -1;
}

/* Read the chunk directory and the name table if the database changed since.
 * Returns SQLITE_OK, or an error code when the tables are not there. */
static int store_refresh(struct store *s)
{
	unsigned ver = data_version(s);
	if (s->loaded && ver == s->ver)
		return SQLITE_OK;
	store_drop(s);
	sqlite3_stmt *st;
	int rc = store_prep(s, "SELECT id, n FROM %s.kvio_cmd_chunk ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (s->nchunks == cap) {
			cap = cap ? cap * 2 : 64;
			int64_t *f = sqlite3_realloc64(s->first, cap * sizeof *f);
			uint32_t *n = sqlite3_realloc64(s->n, cap * sizeof *n);
			if (f) s->first = f;
			if (n) s->n = n;
			if (!f || !n) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
		}
		s->first[s->nchunks] = sqlite3_column_int64(st, 0);
		s->n[s->nchunks++] = (uint32_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	rc = store_prep(s, "SELECT id, name FROM %s.kvio_cmd_name ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (id < 0 || id > 65535)
			continue;
		if ((size_t)id >= cap) {
			size_t nc = (size_t)id + 16;
			char **nn = sqlite3_realloc64(s->names, nc * sizeof *nn);
			if (!nn) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
			memset(nn + cap, 0, (nc - cap) * sizeof *nn);
			s->names = nn;
			cap = nc;
		}
		const char *t = (const char *)sqlite3_column_text(st, 1);
		s->names[id] = sqlite3_mprintf("%s", t ? t : "");
		if ((size_t)id + 1 > s->nnames)
			s->nnames = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	if ((rc = store_tracks(s)) != SQLITE_OK || (rc = store_extents(s)) != SQLITE_OK)
		return rc;
	s->ver = ver;
	s->loaded = 1;
	return SQLITE_OK;
}

/* Index of the chunk holding command id, or -1. */
static long store_find(const struct store *s, int64_t id)
{
	size_t lo = 0, hi = s->nchunks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->first[mid] <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	return id < s->first[lo] + (int64_t)s->n[lo] ? (long)lo : -1;
}

/* The decoded chunk k, read into the cache if needed; NULL on error. */
static const struct chunk_view *store_chunk(struct store *s, size_t k)
{
	int64_t id = s->first[k];
	struct cached *victim = &s->cache[0];
	s->chunk_rc = SQLITE_OK;
	for (int i = 0; i < NCACHE; i++) {
		if (s->cache[i].id == id) {
			s->cache[i].age = ++s->clock;
			return &s->cache[i].v;
		}
		if (s->cache[i].age < victim->age)
			victim = &s->cache[i];
	}
	s->gen++; /* the victim's chunk changes under the cursors that hold it */
	victim->id = INT64_MIN;
	/* read straight into the slot's buffer (no statement's copy of the blob) */
	sqlite3_blob *b = NULL;
	int rc = sqlite3_blob_open(s->db, s->schema, "kvio_cmd_chunk", "data", id, 0, &b);
	if (rc != SQLITE_OK) {
		/* no such row (the directory names a chunk that is gone) or no blob in
		 * it: corrupt; else the read's own code, SQLITE_INTERRUPT when an early
		 * exit stopped it */
		s->chunk_rc = rc == SQLITE_ERROR ? SQLITE_CORRUPT : rc;
		sqlite3_blob_close(b);
		return NULL;
	}
	size_t len = (size_t)sqlite3_blob_bytes(b);
	if (victim->cap < len || !victim->blob) {
		void *nb = sqlite3_realloc64(victim->blob, len ? len : 1);
		if (!nb) {
			sqlite3_blob_close(b);
			s->chunk_rc = SQLITE_NOMEM;
			return NULL;
		}
		victim->blob = nb;
		victim->cap = len ? len : 1;
	}
	rc = sqlite3_blob_read(b, victim->blob, (int)len, 0);
	sqlite3_blob_close(b);
	if (rc != SQLITE_OK) {
		s->chunk_rc = rc;
		return NULL;
	}
	if (chunk_map(victim->blob, len, &victim->v) != 0 || victim->v.n != s->n[k]) {
		s->chunk_rc = SQLITE_CORRUPT;
		return NULL;
	}
	victim->id = id;
	victim->age = ++s->clock;
	return &victim->v;
}

/* Report the failed store_chunk of s as ctx's error: "unreadable command
 * chunk" (who says who) only for a bad chunk; any other cause (an interrupt,
 * out of memory, a busy or unreadable file) keeps its own SQLite code.
 * Returns the code for an xColumn to return. */
static int chunk_error(sqlite3_context *ctx, struct store *s, const char *who)
{
	int rc = s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
	if (rc == SQLITE_CORRUPT) {
		char msg[96];
		sqlite3_snprintf(sizeof msg, msg, "%s: unreadable command chunk", who);
		sqlite3_result_error(ctx, msg, -1);
		sqlite3_result_error_code(ctx, SQLITE_CORRUPT); /* keeps msg */
	} else {
		sqlite3_result_error_code(ctx, rc);
	}
	return rc;
}

/* ---- one command column as a value ------------------------------------- */

/* A value as the operators (kvio_ops.h) take it: its SQLite type, and the
 * integer, real or text (s, len: not owned) of that type. */
struct key {
	int t; /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT (SQLITE_BLOB: an argument's blob) */
	int64_t i;
	double d;
	char *s;
	int len;
};

/* Whether real d is an integer in int64's range (*out: it), as SQL compares a real
 * with an integer; the range is tested first: converting a real outside it is undefined. */
static inline int real_int64(double d, int64_t *out)
{
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d))
		return 0;
	*out = (int64_t)d;
	return 1;
}

enum { C_ID, C_TS, C_DUR, C_TRACK, C_NAME, C_SLBA, C_DATA_LEN, C_TRACE_ID, C_ROLE, C_REAL,
       C_KEY_HEX, C_KEY_LEN, C_VALUE_LEN, C_SLBA_TRACK, C_UPID, C_NAME_ID, C_TAGGED, C_TS_END,
       C_WLO, C_WHI, C_WTLO, C_WTHI, C_WPOOL, C_BATCH, NCOL };
static const char *const col_names[NCOL] = {"id", "ts", "dur", "track_id", "name", "slba",
	"data_len", "trace_id", "role", "real_dur", "key_hex", "key_len", "value_len", "slba_track", "upid", "name_id",
	"tagged", "ts_end", "win_lo", "win_hi", "win_tlo", "win_thi", "win_pool", "batch"};

static void kv_value(sqlite3_context *ctx, const struct store *s, uint32_t kv_id, int col)
{
	static const char *const q[3] = {"SELECT key_hex FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT key_len FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT value_len FROM %s.kvio_cmd_kv WHERE id = ?"};
	sqlite3_stmt *st;
	if (store_prep(s, q[col - C_KEY_HEX], &st) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, kv_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	sqlite3_finalize(st);
}

/* Column col of row i of chunk v (ids from first), a chunk column (not
 * key_hex, key_len, value_len: kv_value reads those): the one definition of
 * each column's value, for SQL (col_value) and for batches (kvio_ops.h). */
static inline __attribute__((always_inline)) struct key col_key(const struct store *s, const struct chunk_view *v,
								int64_t first, uint32_t i, int col)
{
	struct key k = {.t = SQLITE_INTEGER};
	switch (col) {
	case C_ID: k.i = first + i; break;
	case C_TS: k.i = v->ts[i]; break;
	case C_DUR: k.i = v->dur[i]; break;
	case C_TRACK: k.i = v->track[i]; break;
	case C_NAME:
		if (v->name[i] < s->nnames && s->names[v->name[i]]) {
			k.t = SQLITE_TEXT;
			k.s = s->names[v->name[i]]; /* kept until store_free */
			k.len = (int)strlen(k.s);
		} else
			k.t = SQLITE_NULL;
		break;
	case C_SLBA:
		if (v->flags[i] & CHF_SLBA)
			k.i = v->slba[i];
		else
			k.t = SQLITE_NULL;
		break;
	case C_DATA_LEN: k.i = v->data_len[i]; break;
	case C_TRACE_ID:
		if (v->trace_id[i])
			k.i = v->trace_id[i];
		else
			k.t = SQLITE_NULL;
		break;
	case C_ROLE:
		if (v->flags[i] & CHF_HEADER)
			k = (struct key){.t = SQLITE_TEXT, .s = (char *)"header", .len = 6};
		else if (v->flags[i] & CHF_PAYLOAD)
			k = (struct key){.t = SQLITE_TEXT, .s = (char *)"payload", .len = 7};
		else
			k.t = SQLITE_NULL;
		break;
	case C_REAL: k.i = (v->flags[i] & CHF_REAL) != 0; break;
	case C_SLBA_TRACK:
		if (v->slba_track[i])
			k.i = v->slba_track[i];
		else
			k.t = SQLITE_NULL;
		break;
	case C_UPID:
		if ((k.i = store_upid(s, v->track[i])) < 0)
			k.t = SQLITE_NULL;
		break;
	case C_NAME_ID: /* name's kvio_cmd_name.id (NULL exactly when name is) */
		if (v->name[i] < s->nnames && s->names[v->name[i]])
			k.i = v->name[i];
		else
			k.t = SQLITE_NULL;
		break;
	case C_TAGGED: k.i = v->trace_id[i] != 0; break; /* trace_id IS NOT NULL */
	case C_TS_END: /* ts + dur, as SQL adds them: a real when the integer sum overflows */
		if (__builtin_add_overflow(v->ts[i], v->dur[i], &k.i)) {
			k.t = SQLITE_FLOAT;
			k.d = (double)v->ts[i] + (double)v->dur[i];
		}
		break;
	default: k.t = SQLITE_NULL;
	}
	return k;
}

/* Column col of row i of chunk v as ctx's result. */
static inline __attribute__((always_inline)) void col_value(sqlite3_context *ctx, struct store *s,
							    const struct chunk_view *v, int64_t first, uint32_t i, int col)
{
	if (__builtin_expect(col >= C_KEY_HEX && col <= C_VALUE_LEN, 0)) {
		if (v->flags[i] & CHF_KV)
			kv_value(ctx, s, v->kv_id[i], col);
		return;
	}
	struct key k = col_key(s, v, first, i, col);
	if (k.t == SQLITE_INTEGER)
		sqlite3_result_int64(ctx, k.i);
	else if (k.t == SQLITE_TEXT)
		sqlite3_result_text(ctx, k.s, k.len, SQLITE_STATIC);
	else if (k.t == SQLITE_FLOAT)
		sqlite3_result_double(ctx, k.d);
}

/* ---- the kvio_cmd virtual table ----------------------------------------- */

struct cmd_vtab {
	sqlite3_vtab base;
	struct store *s;
	int own;        /* s is this table's (an ATTACHed database's), freed with it */
};

/* A column of a cursor in batch mode: what its batch = 1 rows hand to the
 * operators (sqlite3_result_pointer, type "kvio_batch"). */
struct bcol {
	struct cmd_cur *c;
	int col;
	int is;       /* kvio_is(column, eq): the value is 1 where the column IS eq, else 0 */
	struct key eq; /* its text owned (kvio_is's copy) */
	unsigned fetched, used; /* this batch: xColumn calls, and arguments of kvio's aggregates read */
};

struct cmd_cur {
	sqlite3_vtab_cursor base;
	size_t k;       /* chunk index */
	uint32_t i;     /* row in chunk */
	int64_t hi;     /* last id wanted (inclusive) */
	int eof;
	int skip;       /* a window bound or a pushed-down filter is set: unwanted rows are skipped */
	int wset[4];    /* win_lo, win_hi, win_tlo, win_thi given (not NULL) */
	int64_t w[4];
	/* constraints SQLite left to the scan (omitted: it does not check them again) */
	unsigned char *names; /* name id -> wanted (nnames entries), or NULL: any name */
	size_t nnames;
	int tagged;     /* 1: trace_id IS NOT NULL, -1: trace_id IS NULL, 0: either */
	int tid_range;  /* win_tlo/win_thi or trace_id compared with integers: keep tagged rows with
			 * tid_lo <= trace_id <= tid_hi (the bounds intersected) */
	int64_t tid_lo, tid_hi;
	int real;       /* -1: any real_dur, 0 or 1: that value, 2: none */
	int role;       /* role = x given: keep rows whose flags have role_flag (0: no row) */
	uint8_t role_flag;
	int upid;       /* upid = x given: keep the rows of upid upid_want (upid 0: no row) */
	int64_t upid_want;
	int pool;       /* win_pool given: keep tagged rows and every row of the upids in pool_upid */
	int64_t *pool_upid;
	size_t npool;
	const struct chunk_view *v; /* chunk k decoded, or NULL: looked up again */
	size_t vk;
	unsigned vgen;              /* the store's gen when v was looked up */
	/* under a filter (skip), the wanted rows of chunk selk from row selfrom on,
	 * found in one pass when the scan enters the chunk: a step is then one
	 * index, not the filter's checks (selok 0: none yet) */
	uint32_t *sel;
	uint32_t nsel, psel, selcap, selfrom;
	size_t selk;
	int selok;
	/* batch mode (batch = 1, 2): a row is a chunk's wanted rows sel[psel .. nsel), or
	 * row i alone when there is no selection; its columns are bcol pointers */
	int batch;
	int batch_req; /* the batch = value given (0 without): what the column reads */
	struct bcol bcol[NCOL];
	unsigned derived_made, derived_used; /* this batch: kvio_is columns made of it, and read */
	/* batch = 2 on commands whose ids are not in (upid, ts, id) order: the wanted
	 * rows in that order (sorted in vt_filter), visited one at a time */
	struct prow *perm;
	size_t nperm, pperm;
	int sorted;
};

struct prow {
	int64_t upid, ts, id;
	uint32_t k, i;
};

/* A store for the commands of database schema on db; NULL when out of memory. */
static struct store *store_new(sqlite3 *db, const char *schema)
{
	struct store *s = sqlite3_malloc(sizeof *s);
	if (!s)
		return NULL;
	memset(s, 0, sizeof *s);
	s->db = db;
	s->obj_id = INT64_MIN;
	for (int i = 0; i < NCACHE; i++)
		s->cache[i].id = INT64_MIN;
	s->schema = sqlite3_mprintf("%s", schema);
	s->qschema = sqlite3_mprintf("\"%w\"", schema);
	if (!s->schema || !s->qschema) {
		store_free(s);
		return NULL;
	}
	return s;
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
		      char **err)
{
	(void)err;
	int rc = sqlite3_declare_vtab(db,
		"CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, track_id INTEGER, name TEXT,"
		" slba INTEGER, data_len INTEGER, trace_id INTEGER, role TEXT, real_dur INTEGER,"
		" key_hex TEXT, key_len INTEGER, value_len INTEGER, slba_track INTEGER, upid INTEGER, name_id INTEGER,"
		" tagged INTEGER, ts_end INTEGER,"
		" win_lo HIDDEN, win_hi HIDDEN, win_tlo HIDDEN, win_thi HIDDEN, win_pool HIDDEN, batch HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	/* read-only and side-effect free: usable from views under trusted_schema=OFF */
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	struct cmd_vtab *v = sqlite3_malloc(sizeof *v);
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof *v);
	v->s = aux; /* main's: the connection's store, which extract_arg shares */
	/* the table of an ATTACHed database reads that one; a TEMP one (no chunks of its own) reads main's */
	if (argc > 1 && sqlite3_stricmp(argv[1], "main") && sqlite3_stricmp(argv[1], "temp")) {
		if (!(v->s = store_new(db, argv[1]))) {
			sqlite3_free(v);
			return SQLITE_NOMEM;
		}
		v->own = 1;
	}
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *t)
{
	struct cmd_vtab *v = (struct cmd_vtab *)t;
	if (v->own)
		store_free(v->s);
	sqlite3_free(v);
	return SQLITE_OK;
}

/* Whether every row is at or after the one before it in (upid, ts) order,
 * ids ascending: computed once per data version (one read of the chunks). */
static int store_ordered(struct store *s)
{
	if (store_refresh(s) != SQLITE_OK)
		return 0;
	if (s->order_known)
		return s->ordered;
	int64_t pu = INT64_MIN, pt = INT64_MIN;
	int ok = 1;
	for (size_t k = 0; ok && k < s->nchunks; k++) {
		const struct chunk_view *v = store_chunk(s, k);
		if (!v) {
			ok = 0;
			break;
		}
		for (uint32_t i = 0; i < v->n; i++) {
			int64_t u = store_upid(s, v->track[i]), t = v->ts[i];
			if (u < pu || (u == pu && t < pt)) {
				ok = 0;
				break;
			}
			pu = u;
			pt = t;
		}
	}
	s->ordered = ok;
	s->order_known = 1;
	return ok;
}

/* Whether the scan's id order satisfies the ORDER BY: id alone, or a prefix
 * of (upid, ts, id) when the data is in that order (a NULL upid, a track
 * without a process, sorts first as -1 does). */
static int order_consumed(struct store *s, const sqlite3_index_info *ii)
{
	static const int seq[3] = {C_UPID, C_TS, C_ID};
	if (ii->nOrderBy < 1 || ii->nOrderBy > 3)
		return 0;
	for (int k = 0; k < ii->nOrderBy; k++)
		if (ii->aOrderBy[k].desc)
			return 0;
	int c0 = ii->aOrderBy[0].iColumn;
	if (ii->nOrderBy == 1 && (c0 == C_ID || c0 == -1))
		return 1;
	for (int k = 0; k < ii->nOrderBy; k++) {
		int c = ii->aOrderBy[k].iColumn == -1 ? C_ID : ii->aOrderBy[k].iColumn;
		if (c != seq[k])
			return 0;
	}
	return store_ordered(s);
}

/* Whether constraint i compares with BINARY collation and a right-hand side
 * SQLite knows now (a literal; an IN list is read in xFilter). */
static int rhs_known(sqlite3_index_info *ii, int i, int in)
{
	sqlite3_value *rv = NULL;
	const char *coll = sqlite3_vtab_collation(ii, i);
	if (coll && sqlite3_stricmp(coll, "BINARY"))
		return 0;
	return in || sqlite3_vtab_rhs_value(ii, i, &rv) == SQLITE_OK;
}

/* Whether constraint i's right-hand side is an integer literal. */
static int int_rhs(sqlite3_index_info *ii, int i)
{
	sqlite3_value *rv = NULL;
	return sqlite3_vtab_rhs_value(ii, i, &rv) == SQLITE_OK && sqlite3_value_type(rv) == SQLITE_INTEGER;
}

/* The plan (idxStr): one letter per argument of xFilter, in order: e id = ?,
 * l id >=/> ?, h id <=/< ? (the range is a superset: SQLite checks those rows
 * again), 0-3 win_lo/win_hi/win_tlo/win_thi IS ?, p win_pool IS ?, n name = ?,
 * N name IN (...), r real_dur = ?, o role = ?, u upid = ?, > ] < [ trace_id >, >=, <, <= ?, b batch = ? (B: the
 * same, where the plan cannot hand out batches); and letters without an argument: T
 * trace_id IS NOT NULL, U trace_id IS NULL. Every constraint but the id ones is
 * omitted: the scan applies it exactly as SQL would.
 *
 * Batches (batch = 1, 2) only where SQLite evaluates nothing on a row itself: no
 * ORDER BY (a batch pointer does not survive a sort or a subquery), no id
 * constraint, LIMIT or other constraint the scan does not omit, usable or not
 * (one that is not usable joins another table on a column). Elsewhere the
 * same query reads rows (B), which the operators take as well. */
static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	char plan[32];
	int np = 0, eq = -1, lo = -1, hi = -1, arg = 1;
	double rows = 1e6;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (!c->usable || (c->iColumn != C_ID && c->iColumn != -1))
			continue;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ: eq = i; break;
		case SQLITE_INDEX_CONSTRAINT_GT: case SQLITE_INDEX_CONSTRAINT_GE: lo = i; break;
		case SQLITE_INDEX_CONSTRAINT_LT: case SQLITE_INDEX_CONSTRAINT_LE: hi = i; break;
		}
	}
	if (eq >= 0) {
		plan[np++] = 'e';
		ii->aConstraintUsage[eq].argvIndex = arg++;
		rows = 1;
		ii->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
	} else {
		if (lo >= 0) {
			plan[np++] = 'l';
			ii->aConstraintUsage[lo].argvIndex = arg++;
			rows /= 4;
		}
		if (hi >= 0) {
			plan[np++] = 'h';
			ii->aConstraintUsage[hi].argvIndex = arg++;
			rows /= 4;
		}
	}
	int seen[NCOL] = {0}, bpos = -1;
	for (int i = 0; i < ii->nConstraint && np < (int)sizeof plan - 1; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		int col = c->iColumn, op = c->op, is = op == SQLITE_INDEX_CONSTRAINT_IS, letter = 0;
		if (!c->usable || col < 0 || seen[col])
			continue;
		if (col == C_BATCH) {
			if ((is || op == SQLITE_INDEX_CONSTRAINT_EQ) && !sqlite3_vtab_in(ii, i, -1)) {
				bpos = np;
				letter = 'b'; /* or B: decided below */
			}
		} else if (col >= C_WLO && is) /* only IS: NULL = no bound (win_x = ... SQLite checks: never true) */
			letter = col == C_WPOOL ? 'p' : '0' + (col - C_WLO);
		else if (col == C_NAME && op == SQLITE_INDEX_CONSTRAINT_EQ) {
			int in = sqlite3_vtab_in(ii, i, -1);
			if (rhs_known(ii, i, in)) {
				letter = in ? 'N' : 'n';
				if (in)
					sqlite3_vtab_in(ii, i, 1); /* the whole list in one xFilter */
			}
		} else if (col == C_REAL && op == SQLITE_INDEX_CONSTRAINT_EQ && !sqlite3_vtab_in(ii, i, -1) &&
			   rhs_known(ii, i, 0))
			letter = 'r';
		else if (col == C_ROLE && op == SQLITE_INDEX_CONSTRAINT_EQ && !sqlite3_vtab_in(ii, i, -1) &&
			 rhs_known(ii, i, 0))
			letter = 'o';
		else if (col == C_UPID && op == SQLITE_INDEX_CONSTRAINT_EQ && !sqlite3_vtab_in(ii, i, -1))
			letter = 'u'; /* a value known at xFilter: a literal, or another table's column (a join) */
		else if (col == C_TRACE_ID && op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL)
			letter = 'T';
		else if (col == C_TRACE_ID && int_rhs(ii, i) &&
			 (letter = op == SQLITE_INDEX_CONSTRAINT_GT ? '>' : op == SQLITE_INDEX_CONSTRAINT_GE ? ']' :
				   op == SQLITE_INDEX_CONSTRAINT_LT ? '<' : op == SQLITE_INDEX_CONSTRAINT_LE ? '[' : 0))
			; /* trace_id >, >=, <, <= an integer literal (tid > 0: tagged, checked here only) */
		else if (col == C_TRACE_ID && op == SQLITE_INDEX_CONSTRAINT_ISNULL)
			letter = 'U';
		if (!letter)
			continue;
		seen[col] = 1;
		plan[np++] = (char)letter;
		if (letter != 'T' && letter != 'U')
			ii->aConstraintUsage[i].argvIndex = arg++;
		ii->aConstraintUsage[i].omit = 1;
		if (col < C_WLO)
			rows /= 2;
	}
	plan[np] = 0;
	if (bpos >= 0) { /* batches only when every constraint is the scan's and nothing is sorted; */
		int all = ii->nOrderBy == 0; /* one not usable here is another table's, joined on a column */
		for (int i = 0; all && i < ii->nConstraint; i++)
			if (!ii->aConstraintUsage[i].omit)
				all = 0;
		if (strchr(plan, 'T') || strchr(plan, 'U'))
			all = 0; /* trace_id IS [NOT] NULL: SQLite checks it again, on the row */
		plan[bpos] = all ? 'b' : 'B';
	}
	ii->estimatedCost = rows;
	ii->estimatedRows = (sqlite3_int64)rows;
	if (order_consumed(((struct cmd_vtab *)tab)->s, ii))
		ii->orderByConsumed = 1;
	ii->idxStr = sqlite3_mprintf("%s", plan);
	if (!ii->idxStr)
		return SQLITE_NOMEM;
	ii->needToFreeIdxStr = 1;
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	struct cmd_cur *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->eof = 1;
	*out = &c->base;
	return SQLITE_OK;
}

static void cur_filters_free(struct cmd_cur *c)
{
	sqlite3_free(c->names);
	sqlite3_free(c->pool_upid);
	c->names = NULL;
	c->pool_upid = NULL;
	c->nnames = c->npool = 0;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	cur_filters_free((struct cmd_cur *)cur);
	sqlite3_free(((struct cmd_cur *)cur)->sel);
	sqlite3_free(((struct cmd_cur *)cur)->perm);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static struct store *cur_store(sqlite3_vtab_cursor *cur)
{
	return ((struct cmd_vtab *)cur->pVtab)->s;
}

/* The cursor's chunk: the one it looked up last, unless the cache refilled
 * a slot since (another cursor's read); NULL on error. Inline: every column
 * fetch asks. */
static inline __attribute__((always_inline)) const struct chunk_view *cur_view(struct cmd_cur *c, struct store *s)
{
	if (c->v && c->vk == c->k && c->vgen == s->gen)
		return c->v;
	c->v = store_chunk(s, c->k);
	c->vk = c->k;
	c->vgen = s->gen;
	return c->v;
}

/* Whether row i of chunk v is wanted: inside the window (ts <= win_hi,
 * ts + dur >= win_lo) and through every pushed-down filter (the trace_id
 * window among them, an untagged command never in it). */
static inline __attribute__((always_inline)) int cur_wanted(const struct cmd_cur *c, const struct store *s,
							   const struct chunk_view *v, uint32_t i)
{
	if (c->wset[1] && v->ts[i] > c->w[1])
		return 0;
	if (c->wset[0] && v->ts[i] + v->dur[i] < c->w[0])
		return 0;
	if (c->tagged && (v->trace_id[i] != 0) != (c->tagged > 0))
		return 0;
	if (c->tid_range && (!v->trace_id[i] || (int64_t)v->trace_id[i] < c->tid_lo || (int64_t)v->trace_id[i] > c->tid_hi))
		return 0;
	if (c->real >= 0 && ((v->flags[i] & CHF_REAL) != 0) != c->real)
		return 0;
	if (c->role && !(v->flags[i] & c->role_flag))
		return 0;
	if (c->names && (v->name[i] >= c->nnames || !c->names[v->name[i]]))
		return 0;
	if (c->upid) {
		int64_t u = store_upid(s, v->track[i]);
		if (c->upid < 0 || u < 0 || u != c->upid_want)
			return 0;
	}
	if (c->pool && !v->trace_id[i]) {
		int64_t u = store_upid(s, v->track[i]);
		size_t k = 0;
		while (k < c->npool && c->pool_upid[k] != u)
			k++;
		if (k == c->npool)
			return 0;
	}
	return 1;
}

/* Whether the window misses every row of a chunk of extent e. */
static int cur_misses(const struct cmd_cur *c, const struct extent *e)
{
	return (c->wset[1] && e->ts_min > c->w[1]) || (c->wset[0] && e->end_max < c->w[0]) ||
	       (c->tid_range && (!e->tid_max || e->tid_max < c->tid_lo || e->tid_min > c->tid_hi));
}

/* The wanted rows of chunk k from row i0 on (ids up to hi) into c->sel; 0, -1
 * when the chunk cannot be read (vt_column then says so), 1 when there is no
 * memory for the selection (the caller checks row by row). */
static int cur_select(struct cmd_cur *c, struct store *s, uint32_t i0)
{
	const struct chunk_view *v = cur_view(c, s);
	if (!v)
		return -1;
	uint32_t n = s->n[c->k];
	if (n && c->hi < s->first[c->k] + (int64_t)n - 1) /* ids past hi are not wanted */
		n = c->hi < s->first[c->k] ? 0 : (uint32_t)(c->hi - s->first[c->k] + 1);
	if (c->selcap < n) {
		uint32_t *p = sqlite3_realloc64(c->sel, (sqlite3_uint64)n * sizeof *p);
		if (!p) {
			c->selok = 0;
			return 1;
		}
		c->sel = p;
		c->selcap = n;
	}
	/* the filter as a local copy: stores into sel cannot alias it, so its fields stay in registers */
	const struct cmd_cur f = *c;
	uint32_t *sel = c->sel, m = 0;
	for (uint32_t i = i0; i < n; i++)
		if (cur_wanted(&f, s, v, i))
			sel[m++] = i;
	c->nsel = m;
	c->psel = 0;
	c->selk = c->k;
	c->selfrom = i0;
	c->selok = 1;
	return 0;
}

/* Move to the first wanted row at or after (k, i), or eof. */
static void cur_settle(struct cmd_cur *c, struct store *s)
{
	for (;;) {
		while (c->k < s->nchunks && c->i >= s->n[c->k]) {
			c->k++;
			c->i = 0;
		}
		c->eof = c->k >= s->nchunks || s->first[c->k] + c->i > c->hi;
		if (c->eof || !c->skip)
			return;
		if (s->ext && cur_misses(c, &s->ext[c->k])) {
			c->k++;
			c->i = 0;
			continue;
		}
		if (!c->selok || c->selk != c->k || c->i < c->selfrom) {
			int r = cur_select(c, s, c->i);
			if (r < 0)
				return; /* an unreadable chunk: vt_column says so */
			if (r > 0) { /* no room for a selection: row by row */
				const struct chunk_view *v = cur_view(c, s);
				uint32_t n = s->n[c->k];
				while (c->i < n && s->first[c->k] + c->i <= c->hi && !cur_wanted(c, s, v, c->i))
					c->i++;
				if (c->i < n) {
					c->eof = s->first[c->k] + c->i > c->hi;
					return;
				}
				continue;
			}
		}
		while (c->psel < c->nsel && c->sel[c->psel] < c->i)
			c->psel++;
		if (c->psel < c->nsel) {
			c->i = c->sel[c->psel]; /* an id <= hi: not eof */
			return;
		}
		c->i = s->n[c->k]; /* no more wanted rows in this chunk */
	}
}

/* Mark name x (as SQL's = on a TEXT column compares it) wanted. */
static void want_name(struct cmd_cur *c, const struct store *s, sqlite3_value *x)
{
	int t = sqlite3_value_type(x);
	if (t == SQLITE_NULL || t == SQLITE_BLOB)
		return; /* equal to no name */
	const char *want = (const char *)sqlite3_value_text(x);
	int len = sqlite3_value_bytes(x);
	for (size_t k = 0; want && k < s->nnames && k < c->nnames; k++)
		if (s->names[k] && (int)strlen(s->names[k]) == len && !memcmp(s->names[k], want, (size_t)len))
			c->names[k] = 1;
}

/* win_pool's value: NULL no bound, else text of upids separated by commas
 * ('' none; digits only, an optional '-', no blanks). */
static int want_pool(struct cmd_cur *c, sqlite3_value *x)
{
	if (sqlite3_value_type(x) == SQLITE_NULL)
		return SQLITE_OK;
	if (sqlite3_value_type(x) != SQLITE_TEXT)
		return SQLITE_MISMATCH;
	const char *p = (const char *)sqlite3_value_text(x);
	c->pool = 1;
	while (p && *p) {
		const char *d = p + (*p == '-');
		if (*d < '0' || *d > '9')
			return SQLITE_MISMATCH;
		char *end;
		long long u = strtoll(p, &end, 10);
		if (*end && (*end != ',' || !end[1]))
			return SQLITE_MISMATCH; /* a blank, a dot, a trailing comma */
		int64_t *np = sqlite3_realloc64(c->pool_upid, (c->npool + 1) * sizeof *np);
		if (!np)
			return SQLITE_NOMEM;
		c->pool_upid = np;
		np[c->npool++] = u;
		p = *end ? end + 1 : end;
	}
	return SQLITE_OK;
}

/* real_dur = x: the value 0 or 1 it names (2: none; x as SQL compares it
 * with an INTEGER column). */
static int want_real(sqlite3_value *x)
{
	int t = sqlite3_value_numeric_type(x);
	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return 2;
	double d = sqlite3_value_double(x);
	return d == 0 ? 0 : d == 1 ? 1 : 2;
}

/* role = x: the flag of the role x names (as SQL compares x with a TEXT column,
 * BINARY: only the texts 'header' and 'payload' match a role; 0: no row). */
static uint8_t want_role(sqlite3_value *x)
{
	int t = sqlite3_value_type(x);
	if (t == SQLITE_NULL || t == SQLITE_BLOB)
		return 0; /* equal to no role */
	const char *r = (const char *)sqlite3_value_text(x);
	int len = sqlite3_value_bytes(x);
	if (r && len == 6 && !memcmp(r, "header", 6))
		return CHF_HEADER;
	if (r && len == 7 && !memcmp(r, "payload", 7))
		return CHF_PAYLOAD;
	return 0;
}

/* Keep only tagged rows with lo <= trace_id <= hi, within any bounds set before. */
static void tid_clip(struct cmd_cur *c, int64_t lo, int64_t hi)
{
	if (!c->tid_range)
		c->tid_range = 1, c->tid_lo = INT64_MIN, c->tid_hi = INT64_MAX;
	if (lo > c->tid_lo)
		c->tid_lo = lo;
	if (hi < c->tid_hi)
		c->tid_hi = hi;
	c->skip = 1;
}

/* Apply plan letter p with argument x (NULL for T, U). */
static int cur_constrain(struct cmd_cur *c, struct store *s, char p, sqlite3_value *x, int64_t *lo)
{
	switch (p) {
	case 'e': *lo = c->hi = sqlite3_value_int64(x); break;
	case 'l': *lo = sqlite3_value_int64(x); break;
	case 'h': c->hi = sqlite3_value_int64(x); break;
	case '0': case '1': case '2': case '3':
		if (sqlite3_value_type(x) == SQLITE_NULL)
			break;
		if (sqlite3_value_type(x) != SQLITE_INTEGER)
			return SQLITE_RANGE; /* said by vt_filter */
		c->wset[p - '0'] = 1;
		c->w[p - '0'] = sqlite3_value_int64(x);
		c->skip = 1;
		if (p == '2' || p == '3') /* win_tlo, win_thi: the trace_id window */
			tid_clip(c, p == '2' ? c->w[2] : INT64_MIN, p == '3' ? c->w[3] : INT64_MAX);
		break;
	case 'p': {
		int rc = want_pool(c, x);
		if (rc != SQLITE_OK)
			return rc;
		c->skip |= c->pool;
		break;
	}
	case 'T': c->tagged = 1; c->skip = 1; break;
	case '>': case ']': case '<': case '[': { /* > INT64_MAX and < INT64_MIN: an empty range */
		int64_t v = sqlite3_value_int64(x);
		if (p == '>')
			tid_clip(c, v == INT64_MAX ? INT64_MAX : v + 1, v == INT64_MAX ? INT64_MIN : INT64_MAX);
		else if (p == ']')
			tid_clip(c, v, INT64_MAX);
		else if (p == '<')
			tid_clip(c, v == INT64_MIN ? INT64_MAX : INT64_MIN, v == INT64_MIN ? INT64_MIN : v - 1);
		else
			tid_clip(c, INT64_MIN, v);
		break;
	}
	case 'U': c->tagged = -1; c->skip = 1; break;
	case 'r': c->real = want_real(x); c->skip = 1; break;
	case 'o': c->role = 1; c->role_flag = want_role(x); c->skip = 1; break;
	case 'u': { /* as SQL compares x with an INTEGER column: a number, or text that reads as one */
		int t = sqlite3_value_numeric_type(x);
		c->upid = -1; /* no row */
		if (t == SQLITE_INTEGER)
			c->upid = 1, c->upid_want = sqlite3_value_int64(x);
		else if (t == SQLITE_FLOAT && real_int64(sqlite3_value_double(x), &c->upid_want))
			c->upid = 1;
		c->skip = 1;
		break;
	}
	case 'b': case 'B': {
		int t = sqlite3_value_type(x);
		int64_t b = t == SQLITE_INTEGER ? sqlite3_value_int64(x) : -1;
		if (t == SQLITE_NULL) { /* = NULL, IS NULL: the column is never NULL */
			c->hi = INT64_MIN; /* no row */
			break;
		}
		if (b < 0 || b > 2)
			return SQLITE_TOOBIG; /* said by vt_filter */
		c->batch_req = (int)b;
		c->sorted = b == 2; /* (upid, ts, id) order wanted, batches or rows */
		if (b >= 1 && p == 'b') {
			c->batch = (int)b;
			c->skip = 1; /* a batch is a selection */
		}
		break;
	}
	case 'n': case 'N':
		if (!c->names) {
			c->nnames = s->nnames;
			c->names = sqlite3_malloc64(c->nnames ? c->nnames : 1);
			if (!c->names)
				return SQLITE_NOMEM;
			memset(c->names, 0, c->nnames ? c->nnames : 1);
		}
		c->skip = 1;
		if (p == 'n') {
			want_name(c, s, x);
		} else {
			sqlite3_value *e;
			int rc;
			for (rc = sqlite3_vtab_in_first(x, &e); rc == SQLITE_OK && e; rc = sqlite3_vtab_in_next(x, &e))
				want_name(c, s, e);
			if (rc != SQLITE_OK && rc != SQLITE_DONE)
				return rc;
		}
		break;
	}
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur);

/* Whether SQL read a column of the batch the cursor hands out other than as an
 * argument of kvio's aggregates (a WHERE term the scan leaves to SQLite, an
 * expression, a row stored by a subquery): it saw NULL there, so the result
 * would be wrong; the cursor's error says so. The counts start over. */
static int batch_misread(struct cmd_cur *c)
{
	int bad = -1;
	for (int k = 0; k < NCOL; k++) {
		if (bad < 0 && c->bcol[k].fetched > c->bcol[k].used)
			bad = k;
		c->bcol[k].fetched = c->bcol[k].used = 0;
	}
	int derived = c->derived_made > c->derived_used;
	c->derived_made = c->derived_used = 0;
	if (bad < 0 && !derived)
		return 0;
	sqlite3_free(c->base.pVtab->zErrMsg);
	c->base.pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: a batch's %s was read outside the arguments of kvio's"
		" aggregates (there it reads NULL: a WHERE term the scan does not apply, an expression, a stored"
		" subquery or a join); read kvio_command or kvio_pool (rows) for that (docs/database.md, Batches)",
		bad >= 0 ? col_names[bad] : "kvio_is(...)");
	return 1;
}

static int prow_cmp(const void *x, const void *y)
{
	const struct prow *a = x, *b = y;
	if (a->upid != b->upid)
		return a->upid < b->upid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* batch = 2 (sorted), on a cursor at its first wanted row: if the ids are not
 * in (upid, ts, id) order, every wanted row from here into perm, sorted, and
 * the cursor at the first (a NULL upid sorts first, as -1). */
static int cur_sort(struct cmd_cur *c, struct store *s)
{
	if (!c->sorted || store_ordered(s)) {
		c->sorted = 0; /* id order is that order */
		return SQLITE_OK;
	}
	size_t cap = 0;
	int batch = c->batch;
	c->batch = c->sorted = 0; /* step row by row, in id order, while collecting */
	while (!c->eof) {
		const struct chunk_view *v = cur_view(c, s);
		if (!v)
			return s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
		if (c->nperm == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			struct prow *np = sqlite3_realloc64(c->perm, nc * sizeof *np);
			if (!np)
				return SQLITE_NOMEM;
			c->perm = np;
			cap = nc;
		}
		c->perm[c->nperm++] = (struct prow){store_upid(s, v->track[c->i]), v->ts[c->i], s->first[c->k] + c->i,
						    (uint32_t)c->k, c->i};
		vt_next(&c->base);
	}
	qsort(c->perm, c->nperm, sizeof *c->perm, prow_cmp);
	c->batch = batch;
	c->sorted = 1;
	c->selok = 0; /* a batch is the one row */
	c->pperm = 0;
	c->eof = c->nperm == 0;
	if (!c->eof) {
		c->k = c->perm[0].k;
		c->i = c->perm[0].i;
	}
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx;
	struct cmd_cur *c = (struct cmd_cur *)cur;
	struct store *s = cur_store(cur);
	if (c->batch && batch_misread(c)) /* the last batch of the scan before (a subquery run again) */
		return SQLITE_ERROR;
	int rc = store_refresh(s);
	if (rc != SQLITE_OK) { /* an interrupt is no failure to read: SQLite says "interrupted" */
		if (rc != SQLITE_INTERRUPT)
			cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: cannot read kvio_cmd_chunk/kvio_cmd_name");
		return rc;
	}
	int64_t lo = INT64_MIN;
	c->hi = INT64_MAX;
	c->skip = c->tagged = c->pool = c->tid_range = c->selok = c->role = c->batch = c->sorted = c->upid = 0;
	c->batch_req = 0;
	c->nperm = c->pperm = 0;
	for (int k = 0; k < NCOL; k++)
		c->bcol[k].fetched = c->bcol[k].used = 0;
	c->derived_made = c->derived_used = 0;
	c->real = -1;
	cur_filters_free(c);
	memset(c->wset, 0, sizeof c->wset);
	int a = 0;
	for (const char *p = idxStr ? idxStr : ""; *p; p++) {
		sqlite3_value *x = NULL;
		if (*p != 'T' && *p != 'U') {
			if (a >= argc)
				return SQLITE_ERROR;
			x = argv[a++];
			if (strchr("elh", *p) && sqlite3_value_type(x) == SQLITE_NULL) {
				c->eof = 1; /* id compared with NULL: no row */
				return SQLITE_OK;
			}
		}
		if ((rc = cur_constrain(c, s, *p, x, &lo)) != SQLITE_OK) {
			if (rc == SQLITE_MISMATCH)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: win_pool is a list of upids (1,2,...)");
			else if (rc == SQLITE_TOOBIG)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: batch takes the integer 0 (rows), 1 or 2 (batches)");
			else if (rc == SQLITE_RANGE)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: %s is an integer or NULL",
								      col_names[C_WLO + (*p - '0')]);
			return rc == SQLITE_RANGE || rc == SQLITE_TOOBIG ? SQLITE_MISMATCH : rc;
		}
	}
	/* first chunk that can hold lo */
	size_t k = 0;
	if (lo != INT64_MIN) {
		long f = store_find(s, lo);
		if (f >= 0) {
			c->k = (size_t)f;
			c->i = (uint32_t)(lo - s->first[f]);
			cur_settle(c, s);
			return cur_sort(c, s);
		}
		while (k < s->nchunks && s->first[k] + (int64_t)s->n[k] <= lo)
			k++;
	}
	c->k = k;
	c->i = 0;
	if (k < s->nchunks && s->first[k] < lo)
		c->i = (uint32_t)(lo - s->first[k]);
	cur_settle(c, s);
	return cur_sort(c, s);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	if (c->batch && batch_misread(c)) /* a column SQL read itself saw NULL: not a silent result */
		return SQLITE_ERROR;
	if (c->sorted) { /* the next of the sorted rows */
		if (++c->pperm >= c->nperm) {
			c->eof = 1;
		} else {
			c->k = c->perm[c->pperm].k;
			c->i = c->perm[c->pperm].i;
		}
		return SQLITE_OK;
	}
	if (c->batch) { /* past the batch: the chunk's selection, or the one row */
		c->i = c->selok && c->selk == c->k ? cur_store(cur)->n[c->k] : c->i + 1;
		cur_settle(c, cur_store(cur));
		return SQLITE_OK;
	}
	if (c->selok && c->selk == c->k && c->psel + 1 < c->nsel && c->sel[c->psel] == c->i) {
		c->i = c->sel[++c->psel]; /* the chunk's next wanted row */
		return SQLITE_OK;
	}
	c->i++;
	cur_settle(c, cur_store(cur));
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cmd_cur *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	struct store *s = cur_store(cur);
	const struct chunk_view *v = c->v;
	/* the usual case first: a chunk column of the chunk the cursor holds */
	if (__builtin_expect(!v || c->vk != c->k || c->vgen != s->gen || col == C_ID || col >= C_WLO || c->batch, 0)) {
		if (c->batch && col < C_WLO) {
			if (col >= C_KEY_HEX && col <= C_VALUE_LEN) {
				sqlite3_result_error(ctx, "kvio_cmd: key_hex, key_len and value_len are not in batches", -1);
				return SQLITE_ERROR;
			}
			c->bcol[col].c = c;
			c->bcol[col].col = col;
			c->bcol[col].fetched++; /* vt_next checks that an aggregate read each one */
			sqlite3_result_pointer(ctx, &c->bcol[col], "kvio_batch", NULL);
			return SQLITE_OK;
		}
		if (col == C_ID) {
			sqlite3_result_int64(ctx, s->first[c->k] + c->i);
			return SQLITE_OK;
		}
		if (col >= C_WLO) { /* the window's bound, as given (win_pool: NULL); batch: 1 in batches */
			if (col < C_WPOOL && c->wset[col - C_WLO])
				sqlite3_result_int64(ctx, c->w[col - C_WLO]);
			else if (col == C_BATCH)
				sqlite3_result_int(ctx, c->batch_req);
			return SQLITE_OK;
		}
		if (!(v = cur_view(c, s)))
			return chunk_error(ctx, s, "kvio_cmd");
	}
	col_value(ctx, s, v, s->first[c->k], c->i, col);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	*rowid = cur_store(cur)->first[c->k] + c->i;
	return SQLITE_OK;
}

static sqlite3_module cmd_module = {
	.iVersion = 0,
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

#include "kvio_ops.h" /* the operators: static functions, part of this file */

/* ---- extract_arg ----------------------------------------------------------- */

/* Per statement (auxdata of the key argument): the kvio_arg lookup. Creating
 * it also refreshes the chunk directory, once per statement. */
struct argq {
	sqlite3_stmt *arg, *obj;
};

static void argq_free(void *p)
{
	struct argq *q = p;
	sqlite3_finalize(q->arg);
	sqlite3_finalize(q->obj);
	sqlite3_free(q);
}

static const char obj_sql[] =
	"SELECT trace_id, op, part, bytes, slot_offset, rank, fmt, chunk, tp_rank, tp_world, tp_chunk, n_cmds,"
	" op_latency_ms, error, instance, producer_pid, key, occurrence FROM main.kvio_obj WHERE id = ?1";

/* Look id up in kvio_obj (one row read serves every key of the set).
 * 1 when id is an object's arg set (result set or left NULL), 0 if not, -1 on error. */
static int obj_lookup(sqlite3_context *ctx, struct store *s, sqlite3_stmt *st, int64_t id,
		      const unsigned char *key, int klen)
{
	if (s->obj_id != id || s->obj_ver != s->ver) {
		obj_row_clear(s);
		s->obj_id = id;
		s->obj_ver = s->ver;
		sqlite3_bind_int64(st, 1, id);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			s->obj_found = 1;
			for (int i = 0; i < NOBJCOL; i++)
				s->obj_row[i] = sqlite3_value_dup(sqlite3_column_value(st, i));
		}
		sqlite3_reset(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			s->obj_id = INT64_MIN;
			return -1;
		}
	}
	if (!s->obj_found)
		return 0;
	if (klen > 6 && !memcmp(key, "debug.", 6))
		for (int i = 0; i < NOBJCOL; i++)
			if ((int)strlen(obj_cols[i]) == klen - 6 && !memcmp(key + 6, obj_cols[i], klen - 6)) {
				sqlite3_result_value(ctx, s->obj_row[i]);
				return 1;
			}
	return 0; /* not a column: the key may still be in kvio_arg */
}

static int cmd_arg_col(const unsigned char *key, int n)
{
	static const int cols[] = {C_SLBA, C_DATA_LEN, C_TRACE_ID, C_ROLE, C_REAL, C_KEY_HEX, C_KEY_LEN,
				   C_VALUE_LEN};
	if (n < 7 || memcmp(key, "debug.", 6))
		return -1;
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		const char *c = col_names[cols[i]];
		if ((int)strlen(c) == n - 6 && !memcmp(key + 6, c, n - 6))
			return cols[i];
	}
	return -1;
}

static void lookup(sqlite3_context *ctx, struct store *s, sqlite3_stmt *argst, sqlite3_stmt *objst, int64_t id,
		   const unsigned char *key, int klen)
{
	long k = store_find(s, id);
	if (k >= 0) {
		int col = cmd_arg_col(key, klen);
		if (col < 0)
			return; /* a command's arg set has only these keys */
		const struct chunk_view *v = store_chunk(s, (size_t)k);
		if (!v) {
			chunk_error(ctx, s, "extract_arg");
			return;
		}
		col_value(ctx, s, v, s->first[k], (uint32_t)(id - s->first[k]), col);
		return;
	}
	int o = obj_lookup(ctx, s, objst, id, key, klen);
	if (o < 0) {
		sqlite3_result_error(ctx, sqlite3_errmsg(s->db), -1);
		return;
	}
	if (o > 0)
		return;
	sqlite3_bind_int64(argst, 1, id);
	sqlite3_bind_text(argst, 2, (const char *)key, klen, SQLITE_STATIC);
	int rc = sqlite3_step(argst);
	if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(argst, 0));
	else if (rc != SQLITE_DONE)
		sqlite3_result_error(ctx, sqlite3_errmsg(s->db), -1);
	sqlite3_reset(argst);
}

static const char arg_sql[] =
	"SELECT CASE WHEN value_type = 'string' THEN string_value"
	" WHEN value_type = 'real' THEN real_value ELSE int_value END"
	" FROM main.kvio_arg WHERE arg_set_id = ?1 AND key = ?2";

static void extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct store *s = sqlite3_user_data(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	int64_t id = sqlite3_value_int64(argv[0]);
	const unsigned char *key = sqlite3_value_text(argv[1]);
	int klen = sqlite3_value_bytes(argv[1]);
	struct argq *q = sqlite3_get_auxdata(ctx, 1);
	if (!q) {
		if (store_refresh(s) != SQLITE_OK) {
			sqlite3_result_error(ctx, "extract_arg: not a kvio database", -1);
			return;
		}
		q = sqlite3_malloc(sizeof *q);
		if (!q) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		memset(q, 0, sizeof *q);
		if (sqlite3_prepare_v3(s->db, arg_sql, -1, SQLITE_PREPARE_PERSISTENT, &q->arg, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v3(s->db, obj_sql, -1, SQLITE_PREPARE_PERSISTENT, &q->obj, NULL) != SQLITE_OK) {
			argq_free(q);
			sqlite3_result_error(ctx, "extract_arg: not a kvio database", -1);
			return;
		}
		sqlite3_set_auxdata(ctx, 1, q, argq_free);
		q = sqlite3_get_auxdata(ctx, 1);
		if (!q) { /* the key is not a constant: nothing is kept between calls */
			sqlite3_stmt *st = NULL, *ob = NULL;
			if (sqlite3_prepare_v2(s->db, arg_sql, -1, &st, NULL) == SQLITE_OK &&
			    sqlite3_prepare_v2(s->db, obj_sql, -1, &ob, NULL) == SQLITE_OK)
				lookup(ctx, s, st, ob, id, key, klen);
			sqlite3_finalize(st);
			sqlite3_finalize(ob);
			return;
		}
	}
	lookup(ctx, s, q->arg, q->obj, id, key, klen);
}

/* kvio_uint_text(x): an integer arg of value_type 'uint' as text, unsigned
 * (the args view's display_value: a slba above 2^63 prints as itself). */
static void uint_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	char buf[24];
	sqlite3_snprintf(sizeof buf, buf, "%llu", (unsigned long long)sqlite3_value_int64(argv[0]));
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

int kvio_register_functions(sqlite3 *db)
{
	struct store *s = store_new(db, "main");
	if (!s)
		return SQLITE_NOMEM;
	/* the module owns main's store; extract_arg borrows it */
	int rc = sqlite3_create_module_v2(db, "kvio_cmds", &cmd_module, s, store_free);
	if (rc != SQLITE_OK)
		return rc;
	rc = kvio_register_ops(db);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_create_function_v2(db, "kvio_uint_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					uint_text, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	return sqlite3_create_function_v2(db, "extract_arg", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, s, extract_arg,
					  NULL, NULL, NULL);
}

#ifndef SQLITE_CORE
#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_kvio_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	(void)err;
	SQLITE_EXTENSION_INIT2(api);
	return kvio_register_functions(db);
}
#endif
