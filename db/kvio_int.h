/* kvio_int.h — what the files of kvio's SQLite extension share, as SQLite's
 * sqliteInt.h does for its own: the chunk store, the kvio_cmd cursor, the
 * values operators take, the operators' common structures, and the few hot
 * accessors every scan step uses (small static inlines). Not a header for
 * code outside db/: ingest/, report/ and export/ include schema.h and chunk.h.
 *
 * The extension is built twice from the same files: linked into the kvio
 * commands (SQLITE_CORE: SQLite's API called directly) and as the loadable
 * build/kvio.so (the API through sqlite3_api, set in ext.c). */
#ifndef KVIO_INT_H
#define KVIO_INT_H
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#include "chunk.h"
#include "dir.h"
#include "valid.h"
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
	struct dbdir d;      /* the chunks, their extents, names, tracks (dir.h), checked */
	uint8_t *checked;    /* per chunk: its bytes were checked (chunk_check): memo.h's, or own_checked */
	int own_checked;
	struct cached cache[NCACHE];
	unsigned clock;      /* LRU age of the cache slots */
	unsigned gen;        /* bumped when a slot is refilled: a cursor's chunk pointer is then stale */
	char ***retired;     /* name tables of earlier data versions, and their sizes */
	size_t *retired_n, nretired;
	int order_known;     /* ordered below was computed at this data version */
	int ordered;         /* id order is (upid, ts) order: ORDER BY upid, ts, id needs no sort */
	uint8_t *ord;        /* per chunk, at this data version: 0 not known yet, 1 its rows in (upid, ts)
			      * order, 2 not (store_chunk_order) */
	int64_t *ord_key;    /* per chunk: its first row's upid and ts, its last row's (4 values) */
	int64_t *ord_ts;     /* store_chunk_order's scratch: a chunk's ts and track columns */
	uint32_t *ord_track;
	int chunk_rc;        /* why the last store_chunk returned NULL (SQLITE_CORRUPT: damage, said in why) */
	char *why;           /* the last damage found (sqlite3_malloc'd), for the error message */
	int kv_ok;           /* the KV rows were checked (kv_value) at data version kv_ver */
	unsigned kv_ver;
};

/* store.c */
struct store *store_new(sqlite3 *db, const char *schema);
void store_free(void *p);
int store_refresh(struct store *s);
const struct chunk_view *store_chunk(struct store *s, size_t k);
int store_ordered(struct store *s);
/* Chunk k's own order, known after its first read at this data version: 1 its
 * rows are in (upid, ts) order (key: its first row's upid and ts, its last
 * row's), 0 not, -1 it cannot be read. */
int store_chunk_order(struct store *s, size_t k, const int64_t **key);
void obj_row_clear(struct store *s);
int chunk_error(sqlite3_context *ctx, struct store *s, const char *who);
/* The last damage store_refresh or store_chunk found, as one sentence. */
const char *store_why(const struct store *s);

/* A KV column of a command (kvio_cmd_kv checked first: a failed check is ctx's error). */
void kv_value(sqlite3_context *ctx, struct store *s, uint32_t kv_id, int col);

/* The upid of track id, or -1. */
static inline int64_t store_upid(const struct store *s, uint32_t track)
{
	return track < s->d.ntracks ? s->d.track_upid[track] : -1;
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
extern const char *const col_names[NCOL]; /* kvio_cmd's column names, by C_* (cmd_vtab.c) */


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
	int where;    /* kvio_where(cond, column): column's value; a row whose cond is not true is skipped */
	int wcol, wis; /* cond: column wcol, or (wis) kvio_is(wcol, weq) */
	struct key weq; /* its text owned */
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
	/* agg_rows: a batch's integer columns read column by column, then handed out row by row */
	int64_t *bval;
	uint8_t *btype;
	size_t bcap;
	uint8_t *bskip; /* its rows that a kvio_where argument skips (1) */
	size_t bskipcap;
};

struct prow {
	int64_t upid, ts, id;
	uint32_t k, i;
};


static inline struct store *cur_store(sqlite3_vtab_cursor *cur)
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

/* The name column's value of name id id: its text, NULL without a kvio_cmd_name row. */
static inline struct key col_key_name(const struct store *s, uint16_t id)
{
	struct key k = {.t = SQLITE_NULL};
	if (id < s->d.nnames && s->d.names[id]) {
		k.t = SQLITE_TEXT;
		k.s = s->d.names[id]; /* kept until store_free */
		k.len = (int)strlen(k.s);
	}
	return k;
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
	case C_NAME: k = col_key_name(s, v->name[i]); break;
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
		if (v->name[i] < s->d.nnames && s->d.names[v->name[i]])
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


/* cmd_scan.c: move the cursor to its first wanted row at or after (k, i), or
 * eof; apply plan letter p with its value x (NULL for T, U; *lo gets an id's
 * lower bound). cmd_vtab.c: the module. */
int cur_settle(struct cmd_cur *c, struct store *s);
/* Whether the chunks the cursor can still visit (from its chunk on, those its
 * window does not miss, ids up to hi) hold their rows in (upid, ts, id) order
 * read one after the other: batch = 2 then needs no sort. Reads only those
 * chunks (a window's report does not read the whole capture). */
int cur_ordered(struct cmd_cur *c, struct store *s);
int cur_constrain(struct cmd_cur *c, struct store *s, char p, sqlite3_value *x, int64_t *lo);
extern const sqlite3_module kvio_cmd_module;

/* ---- values as the operators take them (op_key.c) ------------------------ */

/* v as it is: its type kept (a blob as SQLITE_BLOB, with the text of its
 * bytes); text points into v (valid while v is). */
static inline struct key key_raw_t(sqlite3_value *v, int t)
{
	struct key k = {.t = t};
	if (k.t == SQLITE_INTEGER) {
		k.i = sqlite3_value_int64(v);
	} else if (k.t == SQLITE_FLOAT) {
		k.d = sqlite3_value_double(v);
	} else if (k.t == SQLITE_TEXT || k.t == SQLITE_BLOB) {
		const unsigned char *s = sqlite3_value_text(v);
		k.s = (char *)(s ? s : (const unsigned char *)"");
		k.len = sqlite3_value_bytes(v);
	}
	return k;
}

static inline struct key key_raw(sqlite3_value *v)
{
	return key_raw_t(v, sqlite3_value_type(v));
}

/* Value k as a group key: a real with an integral value is the integer (5.0
 * groups with 5, as SQL compares), a blob the text of its bytes. */
static inline struct key key_norm(struct key k)
{
	if (k.t == SQLITE_FLOAT && real_int64(k.d, &k.i)) /* an integral real: that integer */
		k.t = SQLITE_INTEGER;
	else if (k.t == SQLITE_BLOB)
		k.t = SQLITE_TEXT;
	return k;
}

/* key_copy: *out = k with its text or blob bytes copied (SQLITE_OK or NOMEM);
 * key_hash: k's hash chained on h; key_same: the same group; key_cmp: SQLite's
 * order (NULL, numbers, text); key_result: k as ctx's result. */
int key_copy(struct key *out, const struct key *k);
uint64_t key_hash(const struct key *k, uint64_t h);
int key_same(const struct key *a, const struct key *b);
int key_cmp(const struct key *a, const struct key *b);
void key_result(sqlite3_context *ctx, const struct key *k);

/* ---- the groups of an operator: a hash table keyed by up to two values (op_key.c) ---- */

/* Every operator's group starts with this head. */
struct ghead {
	struct key k[2];
	uint64_t h;
};

struct gtab {
	struct ghead **slot; /* open addressing, cap a power of two */
	size_t cap, n;
	size_t gsize;        /* bytes of one group, head included */
	struct ghead **list; /* the groups in insertion order, then sorted by key */
	size_t nlist, caplist;
	unsigned nkeys;      /* 1 or 2 */
	struct ghead *mru[4]; /* the groups found last, newest first: rows of one group come in runs */
};

/* gtab_init: an empty table of groups of gsize bytes (a struct ghead first),
 * nkeys 1 or 2; gtab_free: free every group (fini(g) first, when given);
 * gtab_get_k: the group of normalized keys k, created zeroed if new, NULL when
 * out of memory; gtab_sort: the groups in key order (list[]). */
void gtab_init(struct gtab *t, size_t gsize, unsigned nkeys);
void gtab_free(struct gtab *t, void (*fini)(struct ghead *));
struct ghead *gtab_get_k(struct gtab *t, const struct key *k);
void gtab_sort(struct gtab *t);

/* The group of values a[0] (and a[1] when nkeys is 2), as key_raw gives them. */
static inline struct ghead *gtab_get(struct gtab *t, const struct key *a)
{
	struct key k[2] = {key_norm(a[0]), {.t = SQLITE_NULL}};
	if (t->nkeys > 1)
		k[1] = key_norm(a[1]);
	struct ghead *g = t->mru[0]; /* the last row's group, compared inline for integer keys */
	if (g && k[0].t == SQLITE_INTEGER && g->k[0].t == SQLITE_INTEGER && g->k[0].i == k[0].i &&
	    (t->nkeys < 2 || (k[1].t == SQLITE_INTEGER && g->k[1].t == SQLITE_INTEGER && g->k[1].i == k[1].i)))
		return g;
	return gtab_get_k(t, k);
}

/* ---- value sets (op_pct.c), read by kvio_pct, kvio_quantiles, kvio_log_bins, kvio_values ---- */

/* Values are kept as int32 while every one fits, as int64 after, and as
 * (double, is-int) pairs once a real arrives; NULLs only counted. */
enum { VM_I32, VM_I64, VM_MIXED };
struct mval {
	double d;
	int64_t i;
	int isint;
};

struct vgroup {
	struct ghead h;
	int mode;
	size_t n, cap;
	void *v;
	int64_t nnull;
	int64_t members; /* sequences behind the values (kvio_gaps_gather), else 0 */
	struct vgroup *pool; /* a sequence's own group (kvio_gaps_gather's six-argument form): the group it counts in */
	/* a class group of a six-argument kvio_gaps_gather whose values stay in
	 * its sequences' groups (vset.virt): their count and the values at
	 * kvio_gaps' ranks (p50, p95), selected across them */
	int64_t sel_n, sel[2];
	struct vrun *runs; /* kvio_runs_gather with end and tag: the group's runs, in t order */
	size_t nruns, capruns;
};

/* One run of kvio_runs_gather(k, t, max_gap, end, tag), for kvio_runs. */
struct vrun {
	int64_t start, end, n; /* its first t, the largest end of its rows, its rows */
	int64_t tag;           /* the tag of its first row (has_tag 0: NULL) */
	int has_tag;
};

struct vset {
	struct gtab t;
	int sorted;
	struct vset *each; /* kvio_gaps_gather(..., each = 1): each counted sequence's differences, by (k, seq) */
	int virt;          /* t's groups hold no values: each's groups do (their sel_n, sel for kvio_gaps);
			      vset_prepare copies them in for the other readers */
};

/* vset_new: an empty set keyed by nkeys values (NULL: no memory); vset_free:
 * free it (NULL is fine); vset_prepare: groups and each group's values sorted
 * (SQLITE_OK or NOMEM); vgroup_result_at: the value at rank r, NULLs first, as
 * ctx's result (NULL outside the group). */
struct vset *vset_new(unsigned nkeys);
void vset_free(void *p);
int vset_prepare(struct vset *s);
/* vset_prepare for kvio_gaps: a virt set's class groups are left as they are. */
int vset_prepare_gaps(struct vset *s);
void vgroup_result_at(sqlite3_context *ctx, const struct vgroup *g, int64_t r);

/* ---- the gathering aggregates' state and rows (op_batch.c) ---------------- */

/* The state of one gathering aggregate: its structure, created on first use. */
struct agg {
	void *p;
	void (*free)(void *); /* frees p */
	int failed;
};

/* One row of an aggregate: its arguments as key_raw gives them. SQLITE_OK, or
 * another code after agg_fail. */
typedef int (*row_fn)(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k);

#define ROW_MAXARG 16

/* agg_state: the aggregate's state, or NULL after an error was set on ctx;
 * agg_fail: mark it failed with rc (msg unless NOMEM); agg_done_failed: in a
 * final, whether it failed (its state freed); agg_rows: step the aggregate, f
 * once per row (once, or once per row of a kvio_cmd batch argument). */
struct agg *agg_state(sqlite3_context *ctx);
void agg_fail(sqlite3_context *ctx, struct agg *a, int rc, const char *msg);
int agg_done_failed(struct agg *a);
void agg_rows(sqlite3_context *ctx, int argc, sqlite3_value **argv, row_fn f);

/* An aggregate function of an operator family, as op_register_aggs registers it. */
struct op_agg {
	const char *name;
	int nargs;
	void (*step)(sqlite3_context *, int, sqlite3_value **);
	void (*final)(sqlite3_context *);
};
int op_register_aggs(sqlite3 *db, const struct op_agg *a, size_t n);

/* ---- the sets kvio_depth and kvio_groups read (op_depth.c, op_group.c) ---- */

/* Per group: the ends of the open intervals (a min-heap), the sweep's time
 * and depth, and the time spent at each depth. */
struct dgroup {
	struct ghead h;
	int64_t *heap;
	size_t nheap, capheap;
	int64_t t, depth, last_start;
	int started;
	int64_t *at; /* at[d]: time at depth d */
	size_t nat;
	/* kvio_depth_gather(k, ts, dur, max_depth, min_len): the low spans, for kvio_depth_spans */
	int spans_on, high;     /* spans kept; the depth is above max_depth */
	int64_t max_depth, min_len;
	int64_t lo_from, hi_from; /* where the current low span began; where the depth went above */
	int64_t *spans;         /* (start, end) pairs, in time order */
	size_t nspans, capspans;
};

struct dset {
	struct gtab t;
	int sorted;
};
void dset_free(void *p); /* (NULL is fine) */

/* count/min/max/sum of one value column within a group */
struct vsum {
	int64_t nv;      /* non-NULL values */
	struct key min, max;
	int64_t isum;
	double dsum;
	int real, overflow;
};

struct sgroup {
	struct ghead h;
	int64_t n;       /* rows */
	struct vsum v[]; /* one per value column (sset.nvals) */
};

struct sset {
	struct gtab t;
	int sorted;
	int nvals;       /* value columns: kvio_group_gather's arguments after k1, k2; 1 for kvio_step_gather */
};

/* ---- table-valued functions: shared methods (op_tvf.c, op_grid.c) -------- */

/* tv_disconnect, tv_close: free a table or cursor of any of the operators'
 * TVFs; grid_tab_new: declare schema and make a table; grid_hidden_args: the
 * plan of a TVF whose n hidden arguments start at column first (msg: what a
 * missing one says); grid_cur_new: a zeroed cursor of size bytes. */
int tv_disconnect(sqlite3_vtab *v);
int tv_close(sqlite3_vtab_cursor *cur);
int grid_tab_new(sqlite3 *db, const char *schema, sqlite3_vtab **out);
int grid_hidden_args(sqlite3_vtab *tab, sqlite3_index_info *ii, int first, int n, double rows, const char *msg);
int grid_cur_new(size_t size, sqlite3_vtab_cursor **out);

/* ---- registration (ext.c calls each family's) ------------------------------ */

int op_batch_register(sqlite3 *db);
int op_tvf_register(sqlite3 *db);
int op_pct_register(sqlite3 *db);
int op_depth_register(sqlite3 *db);
int op_group_register(sqlite3 *db);
int op_grid_register(sqlite3 *db);
int op_sign_register(sqlite3 *db);
int op_keep_register(sqlite3 *db);
int args_register(sqlite3 *db, struct store *s);

#endif
