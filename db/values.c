/* values.c — the values kvio writes, table by table (values.h), checked row by
 * row while valid.c reads the rows for their sums: each column's type as kvio
 * binds it (ingest/dbw.c, ingest/write.c; the .pftrace import, ingest/pftrace.c,
 * writes a few more: NULL upids, unended slices), its domain (counts >= 0, spans
 * that are spans, ids kvio numbers), and the references the readers follow.
 *
 * Two kinds of database: an ingest's (metadata arms >= 1: every track has a
 * process, slices are spans from 0 on, every object span has its kvio_obj row)
 * and a .pftrace import's (arms 0: the trace's own tracks, processes and
 * slices, objects' args in kvio_arg). What a check needs of another table
 * (the kind, the processes, the tracks, the chunks' id spans, the slices) is
 * read when it first needs it, or gathered while that table is checked. */
#include "kvio_int.h"
#include "values.h"
#include "schema.h"
#include "../lib/util.h"
#include <stdarg.h>
#include <stdio.h>

/* type masks: 1 << SQLite's type code */
enum { TI = 1 << SQLITE_INTEGER, TR = 1 << SQLITE_FLOAT, TT = 1 << SQLITE_TEXT, TN = 1 << SQLITE_NULL,
       TANY = TI | TR | TT | TN /* a JSON value: never a blob */ };

struct vtrack {
	int64_t id, upid; /* upid -1: none */
	uint8_t counter, objects; /* objects: a slice track named objects* (the report's object spans) */
};

struct span {
	int64_t first, n; /* a chunk's command ids: first .. first + n - 1 */
};

#define MAX_LABELS 256

struct vcx {
	sqlite3 *db;
	const char *q;
	sqlite3_stmt *st;    /* the rows being checked (their column names) */
	char *why;           /* the first failed check */
	int failed;          /* a check failed (why NULL: no memory to say it) */
	const char *table;   /* the row being checked, for the sentence */
	int64_t row;         /* its rowid or id (-1: the table as a whole) */
	const char *rowkey;  /* its key beside it (kvio_arg's, a metadata or kvio_stats name) */
	int have_kind, import;
	unsigned meta_seen;  /* metadata names seen (bits of meta_names) */
	int have_procs;
	int64_t *upids;      /* process upids, ascending */
	size_t nupids;
	char *labels[MAX_LABELS]; /* the captures: "LMCache <label>" processes */
	uint32_t stat_seen[MAX_LABELS];
	size_t nlabels;
	int have_tracks;
	struct vtrack *tracks; /* ascending ids */
	size_t ntracks;
	int have_ranges;
	struct span *ranges; /* ascending */
	size_t nranges;
	int have_slices;
	int64_t *slices, *objs; /* slice ids; those of object spans (ingests) */
	size_t nslices, cslices, nobjs, cobjs, objpos, argpos;
	struct vflow { int64_t key, in; int n; } flow[MAX_LABELS]; /* per arm: its last flow's, rows of that key (0: none) */
	int have_ext;
	int64_t ext_hi; /* the latest end of a command or slice (counters: at most a bucket past it) */
};

struct vcx *vcx_new(sqlite3 *db, const char *q)
{
	struct vcx *c = sqlite3_malloc(sizeof *c);
	if (c) {
		memset(c, 0, sizeof *c);
		c->db = db;
		c->q = q;
	}
	return c;
}

void vcx_free(struct vcx *c)
{
	if (!c)
		return;
	sqlite3_free(c->why);
	sqlite3_free(c->upids);
	for (size_t i = 0; i < c->nlabels; i++)
		sqlite3_free(c->labels[i]);
	sqlite3_free(c->tracks);
	sqlite3_free(c->ranges);
	sqlite3_free(c->slices);
	sqlite3_free(c->objs);
	sqlite3_free(c);
}

char *vcx_take_why(struct vcx *c)
{
	char *w = c->why;
	c->why = NULL;
	return w;
}

void vcx_reading(struct vcx *c, sqlite3_stmt *st)
{
	if (c)
		c->st = st;
}

int vcx_failed(const struct vcx *c)
{
	return c && c->failed;
}

/* The first failed check: "TABLE ROW: what" (the row as c holds it). */
static void bad(struct vcx *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	char *what = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (c->row < 0 && c->rowkey)
		c->why = sqlite3_mprintf(KVIO_DAMAGED "%s '%s': %s", c->table, c->rowkey, what ? what : "");
	else if (c->row < 0)
		c->why = sqlite3_mprintf(KVIO_DAMAGED "%s: %s", c->table, what ? what : "");
	else if (c->rowkey)
		c->why = sqlite3_mprintf(KVIO_DAMAGED "%s %lld '%s': %s", c->table, (long long)c->row, c->rowkey,
					 what ? what : "");
	else
		c->why = sqlite3_mprintf(KVIO_DAMAGED "%s %lld: %s", c->table, (long long)c->row, what ? what : "");
	sqlite3_free(what);
}

static void at(struct vcx *c, const char *table, int64_t row, const char *rowkey)
{
	c->table = table;
	c->row = row;
	c->rowkey = rowkey;
}

static const char *type_name(int t)
{
	return t == SQLITE_INTEGER ? "an integer" : t == SQLITE_FLOAT ? "a real" : t == SQLITE_TEXT ? "text"
	       : t == SQLITE_BLOB ? "a blob" : "NULL";
}

/* Column col of the row v has a type of mask; else the failure said. Returns whether it has. */
static int type_ok(struct vcx *c, sqlite3_value **v, int col, unsigned mask)
{
	int t = sqlite3_value_type(v[col]);
	if (mask & (1u << t))
		return 1;
	char want[64] = "";
	size_t n = 0;
	for (int k = SQLITE_INTEGER; k <= SQLITE_NULL; k++)
		if (mask & (1u << k))
			n += (size_t)snprintf(want + n, sizeof want - n, "%s%s", n ? " or " : "", type_name(k));
	bad(c, "%s is %s where kvio writes %s", sqlite3_column_name(c->st, col), type_name(t), want);
	return 0;
}

/* Every column of the row v against its mask in types (n columns). */
static int types_ok(struct vcx *c, sqlite3_value **v, const unsigned *types, int n)
{
	for (int col = 0; col < n; col++)
		if (!type_ok(c, v, col, types[col]))
			return 0;
	return 1;
}

static int64_t ival(sqlite3_value **v, int col)
{
	return sqlite3_value_int64(v[col]);
}

static const char *tval(sqlite3_value **v, int col)
{
	const char *s = (const char *)sqlite3_value_text(v[col]);
	return s ? s : "";
}

/* An integer column >= lo (its type checked before); else said. */
static int at_least(struct vcx *c, sqlite3_value **v, int col, int64_t lo)
{
	if (sqlite3_value_type(v[col]) != SQLITE_INTEGER || ival(v, col) >= lo)
		return 1;
	bad(c, "%s %lld is below %lld, the least kvio writes", sqlite3_column_name(c->st, col), (long long)ival(v, col),
	    (long long)lo);
	return 0;
}

/* v[col] (when an integer) within lo..hi, what kvio writes there. */
static int within(struct vcx *c, sqlite3_value **v, int col, int64_t lo, int64_t hi)
{
	if (!at_least(c, v, col, lo))
		return 0;
	if (sqlite3_value_type(v[col]) != SQLITE_INTEGER || ival(v, col) <= hi)
		return 1;
	bad(c, "%s %lld is above %lld, the most kvio writes", sqlite3_column_name(c->st, col), (long long)ival(v, col),
	    (long long)hi);
	return 0;
}

/* Grow *p (*cap items of sz bytes) to hold need. SQLITE_OK or NOMEM. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return SQLITE_OK;
	size_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *q = sqlite3_realloc64(*p, (sqlite3_uint64)nc * sz);
	if (!q)
		return SQLITE_NOMEM;
	*p = q;
	*cap = nc;
	return SQLITE_OK;
}

/* Run fmt (naming c->q where it says %s) and hand each row's values to fn
 * (at most 8 columns). */
static int each_row(struct vcx *c, const char *fmt, int (*fn)(struct vcx *, sqlite3_value **))
{
	char *sql = sqlite3_mprintf(fmt, c->q);
	sqlite3_stmt *st = NULL;
	sqlite3_value *v[8];
	int rc = sql ? sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	int n = rc == SQLITE_OK ? sqlite3_column_count(st) : 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int k = 0; k < n && k < 8; k++)
			v[k] = sqlite3_column_value(st, k);
		rc = fn(c, v);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- what the checks read of other tables --------------------------------- */

static int kind_row(struct vcx *c, sqlite3_value **v)
{
	c->import = sqlite3_value_type(v[0]) == SQLITE_INTEGER && ival(v, 0) == 0;
	return SQLITE_OK;
}

/* The database's kind: a .pftrace import writes arms 0 (metadata's own check
 * says whether arms is there and an integer). */
static int need_kind(struct vcx *c)
{
	if (c->have_kind)
		return SQLITE_OK;
	c->import = 0;
	c->have_kind = 1;
	return each_row(c, "SELECT int_value FROM %s.metadata WHERE name = 'arms'", kind_row);
}

static int proc_row(struct vcx *c, sqlite3_value **v)
{
	if (sqlite3_value_type(v[0]) != SQLITE_INTEGER)
		return SQLITE_OK; /* process's own check says so */
	size_t cap = c->nupids;
	int rc = grow((void **)&c->upids, &cap, c->nupids + 1, sizeof *c->upids);
	if (rc != SQLITE_OK)
		return rc;
	c->upids[c->nupids++] = ival(v, 0);
	const char *nm = (const char *)sqlite3_value_text(v[1]);
	if (sqlite3_value_type(v[1]) == SQLITE_TEXT && nm && !strncmp(nm, "LMCache ", 8) && c->nlabels < MAX_LABELS &&
	    !(c->labels[c->nlabels++] = sqlite3_mprintf("%s", nm + 8)))
		return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* The processes' upids (ascending) and the captures' labels. */
static int need_procs(struct vcx *c)
{
	if (c->have_procs)
		return SQLITE_OK;
	c->have_procs = 1;
	return each_row(c, "SELECT upid, name FROM %s.process ORDER BY upid", proc_row);
}

static int has_id(const int64_t *v, size_t n, int64_t id)
{
	size_t lo = i64_lower_bound(v, n, id);
	return lo < n && v[lo] == id;
}

static int track_row(struct vcx *c, sqlite3_value **v)
{
	if (sqlite3_value_type(v[0]) != SQLITE_INTEGER)
		return SQLITE_OK;
	size_t cap = c->ntracks;
	int rc = grow((void **)&c->tracks, &cap, c->ntracks + 1, sizeof *c->tracks);
	if (rc != SQLITE_OK)
		return rc;
	struct vtrack *t = &c->tracks[c->ntracks++];
	const char *nm = (const char *)sqlite3_value_text(v[3]);
	t->id = ival(v, 0);
	t->upid = sqlite3_value_type(v[1]) == SQLITE_INTEGER ? ival(v, 1) : -1;
	t->counter = sqlite3_value_type(v[2]) == SQLITE_INTEGER && ival(v, 2) == 1;
	/* as the report's pt.name LIKE 'objects%' selects them (ASCII case folded) */
	t->objects = !t->counter && t->upid >= 0 && sqlite3_value_type(v[3]) == SQLITE_TEXT && nm &&
		     !sqlite3_strnicmp(nm, "objects", 7);
	return SQLITE_OK;
}

static int need_tracks(struct vcx *c)
{
	if (c->have_tracks)
		return SQLITE_OK;
	c->have_tracks = 1;
	return each_row(c, "SELECT id, upid, is_counter, name FROM %s.kvio_track ORDER BY id", track_row);
}

static const struct vtrack *track_of(const struct vcx *c, int64_t id)
{
	size_t lo = 0, hi = c->ntracks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->tracks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ntracks && c->tracks[lo].id == id ? &c->tracks[lo] : NULL;
}

static int range_row(struct vcx *c, sqlite3_value **v)
{
	if (sqlite3_value_type(v[0]) != SQLITE_INTEGER || sqlite3_value_type(v[1]) != SQLITE_INTEGER ||
	    ival(v, 1) < 1 || ival(v, 1) > CHUNK_ROWS || ival(v, 0) < 1 || ival(v, 0) > DIR_MAX_ID)
		return SQLITE_OK; /* dir.c refuses it (and cmd_chunk's id - first stays in int64) */
	size_t cap = c->nranges;
	int rc = grow((void **)&c->ranges, &cap, c->nranges + 1, sizeof *c->ranges);
	if (rc == SQLITE_OK)
		c->ranges[c->nranges++] = (struct span){ival(v, 0), ival(v, 1)};
	return rc;
}

/* The chunks' command ids, from their directory (dir.c checks it is ascending and disjoint). */
static int need_ranges(struct vcx *c)
{
	if (c->have_ranges)
		return SQLITE_OK;
	c->have_ranges = 1;
	return each_row(c, "SELECT id, n FROM %s.kvio_cmd_range ORDER BY id", range_row);
}

/* The chunk holding command id, or NULL. */
static const struct span *cmd_chunk(const struct vcx *c, int64_t id)
{
	size_t lo = 0, hi = c->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->ranges[mid].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && id - c->ranges[lo - 1].first < c->ranges[lo - 1].n ? &c->ranges[lo - 1] : NULL;
}

/* Slice id (on track) among the slices, and the object spans (slices ascending). */
static int add_slice(struct vcx *c, int64_t id, int64_t track)
{
	int rc = grow((void **)&c->slices, &c->cslices, c->nslices + 1, sizeof *c->slices);
	if (rc != SQLITE_OK)
		return rc;
	c->slices[c->nslices++] = id;
	const struct vtrack *t = track_of(c, track);
	if (t && t->objects && !c->import) {
		if ((rc = grow((void **)&c->objs, &c->cobjs, c->nobjs + 1, sizeof *c->objs)) != SQLITE_OK)
			return rc;
		c->objs[c->nobjs++] = id;
	}
	return SQLITE_OK;
}

static int slice_row(struct vcx *c, sqlite3_value **v)
{
	return sqlite3_value_type(v[0]) == SQLITE_INTEGER ? add_slice(c, ival(v, 0), ival(v, 1)) : SQLITE_OK;
}

/* The slice ids (and object spans), when no check of kvio_slice in this pass gathered them. */
static int need_slices(struct vcx *c)
{
	int rc;
	if (c->have_slices)
		return SQLITE_OK;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_tracks(c)) != SQLITE_OK)
		return rc;
	c->nslices = c->nobjs = 0;
	c->have_slices = 1;
	return each_row(c, "SELECT id, track_id FROM %s.kvio_slice ORDER BY id", slice_row);
}


/* ---- the tables ----------------------------------------------------------- */

/* metadata's names kvio writes, with their key_type (is_int); the first five in every database */
static const struct {
	const char *name;
	int is_int;
} meta_names[] = {
	{"kvio_schema_version", 1}, {"trace_type", 0}, {"arms", 1}, {"extension", 0}, {"read_with", 0},
	{"kvio_join", 0}, {"kvio_time_range_start_ns", 1}, {"kvio_time_range_end_ns", 1}, {"kvio_trace_id_lo", 1},
	{"kvio_trace_id_hi", 1}, {"kvio_no_slba_counter", 1},
};
enum { META_ALWAYS = 0x1f, META_JOIN = 5, META_T0 = 6, META_T1 = 7, META_D0 = 8, META_D1 = 9, META_NOSLBA = 10 };

/* The value of metadata name k (its type checked) in kvio's domain. */
static void meta_value(struct vcx *c, int k, sqlite3_value **v)
{
	int64_t x = ival(v, 2);
	const char *s = tval(v, 3);
	if (k == 1 && strcmp(s, "kvio"))
		bad(c, "str_value '%s' is not kvio", s);
	else if (k == 2 && (x < 0 || x > 1000))
		bad(c, "int_value %lld is not a count of captures", (long long)x);
	else if (k == META_JOIN && strcmp(s, "user_data") && strcmp(s, "key") && strcmp(s, "offset"))
		bad(c, "str_value '%s' is not a join kvio makes (user_data, key, offset)", s);
	else if ((k == META_D0 || k == META_D1) && (x < 0 || x > UINT32_MAX))
		bad(c, "int_value %lld is not a trace_id", (long long)x);
	else if (k == META_NOSLBA && x != 1)
		bad(c, "int_value %lld: kvio writes 1", (long long)x);
	if (k == 2) {
		c->import = x == 0;
		c->have_kind = 1;
	}
}

static int meta_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TT, TT, TI | TN, TT | TN};
	at(c, "metadata", rowid, sqlite3_value_type(v[0]) == SQLITE_TEXT ? tval(v, 0) : NULL);
	if (!types_ok(c, v, types, 4))
		return SQLITE_OK;
	const char *name = tval(v, 0), *kt = tval(v, 1);
	int is_int = !strcmp(kt, "int");
	if (!is_int && strcmp(kt, "string")) {
		bad(c, "key_type '%s' is neither int nor string", kt);
		return SQLITE_OK;
	}
	if (!type_ok(c, v, 2, is_int ? TI : TN) || !type_ok(c, v, 3, is_int ? TN : TT))
		return SQLITE_OK;
	for (int k = 0; k < (int)(sizeof meta_names / sizeof meta_names[0]); k++)
		if (!strcmp(name, meta_names[k].name)) {
			if (meta_names[k].is_int != is_int)
				bad(c, "key_type %s where kvio writes %s", kt, meta_names[k].is_int ? "int" : "string");
			c->meta_seen |= 1u << k;
			meta_value(c, k, v);
		}
	return SQLITE_OK; /* a name of another kvio's: not read */
}

static int meta_end(struct vcx *c)
{
	at(c, "metadata", -1, NULL);
	for (int k = 0; k < 5; k++)
		if (!(c->meta_seen & (1u << k)))
			bad(c, "no %s row (kvio writes one in every database)", meta_names[k].name);
	if (!c->import && !(c->meta_seen & (1u << META_JOIN)))
		bad(c, "no kvio_join row (kvio-ingest writes it)");
	if (!(c->meta_seen & (1u << META_T0)) != !(c->meta_seen & (1u << META_T1)))
		bad(c, "one end of kvio_time_range without the other");
	if (!(c->meta_seen & (1u << META_D0)) != !(c->meta_seen & (1u << META_D1)))
		bad(c, "one end of kvio_trace_id without the other");
	return SQLITE_OK;
}

/* process: upid = id, a pid, a name (NULL: upid 0, trace_processor's placeholder, and
 * an import's process without one); kvio fills no other column. */
static int process_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TI, TI, TT | TN, TN, TN, TN, TN, TN, TN, TN, TN};
	int rc = need_kind(c);
	at(c, "process", rowid, NULL);
	if (rc != SQLITE_OK || !types_ok(c, v, types, 12))
		return rc;
	if (ival(v, 1) != ival(v, 0) || ival(v, 1) < 0)
		bad(c, "upid %lld is not its id", (long long)ival(v, 1));
	else if (!c->import && ival(v, 1) > 0 && sqlite3_value_type(v[3]) == SQLITE_NULL)
		bad(c, "name is NULL (kvio-ingest names every process but upid 0)");
	else if (!c->import && sqlite3_value_bytes(v[3]) > 6 + 2 * KVIO_LABEL_MAX) /* "NVMe <device> <label>" */
		bad(c, "name is %d bytes, longer than kvio writes (a label and the device: at most %d bytes each)",
		    sqlite3_value_bytes(v[3]), KVIO_LABEL_MAX);
	return SQLITE_OK;
}

static int thread_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TI, TI, TT | TN, TN, TN, TN, TN, TN};
	at(c, "thread", rowid, NULL);
	if (types_ok(c, v, types, 9) && (ival(v, 1) != ival(v, 0) || ival(v, 1) < 0))
		bad(c, "utid %lld is not its id", (long long)ival(v, 1));
	return SQLITE_OK;
}

/* kvio_track: a name or none, a parent written before it (an import's cycle
 * leaves parent 0), a process (an ingest's every track; its parent's), 0 or 1
 * is_counter with a unit exactly on counters, 'explicit' or no child ordering. */
static int track_row_check(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TT | TN, TN, TI | TN, TI | TN, TN, TI, TT | TN, TI | TN, TT | TN, TN};
	int rc;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_procs(c)) != SQLITE_OK || (rc = need_tracks(c)) != SQLITE_OK)
		return rc;
	at(c, "kvio_track", rowid, NULL);
	if (!types_ok(c, v, types, 11) || (!c->import && !type_ok(c, v, 4, TI)))
		return SQLITE_OK;
	int64_t id = ival(v, 0), parent = ival(v, 3), upid = ival(v, 4), ctr = ival(v, 6);
	int has_parent = sqlite3_value_type(v[3]) != SQLITE_NULL, has_upid = sqlite3_value_type(v[4]) != SQLITE_NULL;
	const struct vtrack *p = has_parent && parent < id ? track_of(c, parent) : NULL;
	if (has_parent && !p && !(c->import && parent == 0))
		bad(c, "parent_id %lld names no track before it", (long long)parent);
	else if (has_upid && !has_id(c->upids, c->nupids, upid))
		bad(c, "upid %lld names no process", (long long)upid);
	else if (!c->import && p && p->upid != upid)
		bad(c, "upid %lld is not its parent's (%lld)", (long long)upid, (long long)p->upid);
	else if (ctr != 0 && ctr != 1)
		bad(c, "is_counter %lld is not 0 or 1", (long long)ctr);
	else if ((sqlite3_value_type(v[7]) == SQLITE_NULL) == (ctr == 1))
		bad(c, "unit is %s on a %s track", ctr ? "NULL" : "set", ctr ? "counter" : "slice");
	else if (sqlite3_value_type(v[9]) != SQLITE_NULL && strcmp(tval(v, 9), "explicit"))
		bad(c, "child_ordering '%s' is not explicit", tval(v, 9));
	return SQLITE_OK;
}

/* A label of the captures (an ingest's "LMCache <label>" processes), its index or -1. */
static int label_of(const struct vcx *c, const char *label)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i], label))
			return (int)i;
	return -1;
}

/* kvio_file (ingests only): a capture's input file of a kind, its line counts. */
static int file_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TT, TT, TT, TI, TI, TI, TI, TI, TI};
	int rc;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_procs(c)) != SQLITE_OK)
		return rc;
	at(c, "kvio_file", rowid, NULL);
	if (c->import) {
		bad(c, "a .pftrace import has no input files of a capture");
		return SQLITE_OK;
	}
	if (!types_ok(c, v, types, 9))
		return SQLITE_OK;
	const char *kind = tval(v, 1);
	if (label_of(c, tval(v, 0)) < 0)
		bad(c, "label '%s' is no capture's (no process 'LMCache %s')", tval(v, 0), tval(v, 0));
	else if (strcmp(kind, "sem") && strcmp(kind, "ebpf") && strcmp(kind, "serving"))
		bad(c, "kind '%s' is not sem, ebpf or serving", kind);
	for (int col = 3; col < 9; col++)
		at_least(c, v, col, 0);
	return SQLITE_OK;
}

/* kvio_stats names: those kvio-ingest writes for every capture (write_stats: the
 * others depend on the options), and a .pftrace import's */
static const char *const stat_always[] = {
	"sem_records", "nvme_cmd_lines", "nvme_cmp_lines", "late_lines", "cmp_after_horizon", "serving_spans",
	"malformed_lines", "truncated_tail", "blank_lines", "other_lines", "cq_overflow", "clock_anchors",
	"clock_anomalies", "dup_trace_id", "cmp_unpaired", "header_cmds", "tagged_bytes", "untagged_bytes",
	"lba_bytes", "base_ns", "object_lanes",
};
#define NSTAT_ALWAYS (int)(sizeof stat_always / sizeof stat_always[0])
static const char *const stat_import[] = {
	"pftrace_packets", "pftrace_bad_packets", "pftrace_unknown_iids", "pftrace_extra_counter_without_track",
	"pftrace_unmatched_end", "pftrace_unended", "pftrace_long_cmd_names",
};

/* kvio_stats: a count (>= 0; base_ns any ns, completion_probe 0 or 1) per
 * capture label and name, every name of stat_always for each capture; an
 * import's six pftrace_* counts under its file's name. */
static int stats_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TT, TT, TI};
	int rc;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_procs(c)) != SQLITE_OK)
		return rc;
	at(c, "kvio_stats", rowid, sqlite3_value_type(v[1]) == SQLITE_TEXT ? tval(v, 1) : NULL);
	if (!types_ok(c, v, types, 3))
		return SQLITE_OK;
	const char *label = tval(v, 0), *name = tval(v, 1);
	int64_t x = ival(v, 2);
	int known = 0;
	for (size_t k = 0; c->import && k < sizeof stat_import / sizeof stat_import[0]; k++)
		known |= !strcmp(name, stat_import[k]);
	int li = c->import ? 0 : label_of(c, label);
	if (c->import && !known)
		bad(c, "not a count a .pftrace import writes");
	else if (li < 0)
		bad(c, "label '%s' is no capture's (no process 'LMCache %s')", label, label);
	else if (!strcmp(name, "completion_probe") && x != 0 && x != 1)
		bad(c, "value %lld is not 0 or 1", (long long)x);
	else if (strcmp(name, "base_ns"))
		at_least(c, v, 2, 0);
	for (int k = 0; !c->import && li >= 0 && k < NSTAT_ALWAYS; k++)
		if (!strcmp(name, stat_always[k]))
			c->stat_seen[li] |= 1u << k;
	return SQLITE_OK;
}

static int stats_end(struct vcx *c)
{
	at(c, "kvio_stats", -1, NULL);
	for (size_t li = 0; !c->import && li < c->nlabels; li++)
		for (int k = 0; k < NSTAT_ALWAYS; k++)
			if (!(c->stat_seen[li] & (1u << k)))
				bad(c, "capture '%s' has no %s row (kvio-ingest writes one for each capture)", c->labels[li],
				    stat_always[k]);
	return SQLITE_OK;
}

static int warning_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TT, TT};
	at(c, "kvio_warning", rowid, NULL);
	types_ok(c, v, types, 2);
	return SQLITE_OK;
}

/* kvio_slice: ids below 2^53 apart from the commands', arg_set_id = id, a span
 * (an ingest's from 0 on; an import's may never end: dur -1) whose end fits in
 * int64, a name, depth 0 (an import's nesting), on a slice track (an import's
 * event without a track descriptor: 0). Gathers the slice ids and the object spans. */
static int slice_row_check(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TI, TI, TI, TN, TT, TI, TN, TI};
	int rc;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_tracks(c)) != SQLITE_OK || (rc = need_ranges(c)) != SQLITE_OK)
		return rc;
	at(c, "kvio_slice", rowid, NULL);
	if (!types_ok(c, v, types, 9))
		return SQLITE_OK;
	int64_t id = ival(v, 0), ts = ival(v, 1), dur = ival(v, 2), track = ival(v, 3), end;
	const struct span *k = cmd_chunk(c, id);
	const struct vtrack *t = track_of(c, track);
	if (id < 1 || id >= DIR_MAX_ID)
		bad(c, "id is not one kvio numbers (1..2^53)");
	else if (k)
		bad(c, "id is a command's too (kvio_cmd_range %lld: commands %lld..%lld)", (long long)k->first,
		    (long long)k->first, (long long)(k->first + k->n - 1));
	else if (ival(v, 8) != id)
		bad(c, "arg_set_id %lld is not its id", (long long)ival(v, 8));
	else if ((!c->import && ts < 0) || dur < (c->import ? -1 : 0) || __builtin_add_overflow(ts, dur, &end))
		bad(c, "ts %lld, dur %lld are not a span", (long long)ts, (long long)dur);
	else if (c->import ? ival(v, 6) < 0 : ival(v, 6) != 0)
		bad(c, "depth %lld is not kvio's", (long long)ival(v, 6));
	else if (c->import ? !t && track != 0 : !t || t->counter)
		bad(c, "track_id %lld is not a slice track", (long long)track);
	else
		return add_slice(c, id, track);
	return SQLITE_OK;
}

static int slice_end(struct vcx *c)
{
	c->have_slices = 1;
	c->objpos = c->argpos = 0;
	return SQLITE_OK;
}

/* kvio_obj (ingests): one row per object span, ids ascending as the spans':
 * the record's values as write.c binds them (error, instance, producer_pid: the
 * JSON value as it came); an import keeps its objects' args in kvio_arg. */
static int obj_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TI, TT, TT | TN, TI, TI, TI | TN, TT | TN, TT | TN, TI | TN,
					 TI | TN, TT | TN, TI, TR, TANY, TANY, TANY, TT, TI | TN};
	/* rank, tp_rank, tp_world: a key's field of at most 18 digits, or a byte of
	 * its hex KVRANK (write.c); n_cmds: a count; occurrence: an int32 position */
	static const struct { int col; int64_t hi; } counts[] = {
		{6, 999999999999999999}, {9, 999999999999999999}, {10, 999999999999999999}, {12, INT64_MAX}, {18, INT32_MAX}};
	int rc = need_slices(c);
	at(c, "kvio_obj", rowid, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (c->import) {
		bad(c, "a .pftrace import keeps its objects' args in kvio_arg");
		return SQLITE_OK;
	}
	if (!types_ok(c, v, types, 19))
		return SQLITE_OK;
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
		within(c, v, counts[k].col, 0, counts[k].hi);
	if (sqlite3_value_double(v[13]) < 0)
		bad(c, "op_latency_ms %g is negative", sqlite3_value_double(v[13]));
	int64_t id = ival(v, 0);
	if (c->objpos < c->nobjs && c->objs[c->objpos] < id) {
		at(c, "kvio_slice", c->objs[c->objpos], NULL);
		bad(c, "an object span without its kvio_obj row");
	} else if (c->objpos < c->nobjs && c->objs[c->objpos] == id)
		c->objpos++;
	else
		bad(c, "no object span has its id (kvio_slice on an objects track)");
	return SQLITE_OK;
}

static int obj_end(struct vcx *c)
{
	int rc = need_slices(c);
	if (rc == SQLITE_OK && c->objpos < c->nobjs) {
		at(c, "kvio_slice", c->objs[c->objpos], NULL);
		bad(c, "an object span without its kvio_obj row");
	}
	return rc;
}

/* kvio_arg: a slice's debug.* arg, its value in the column its value_type names. */
static int arg_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TT, TI | TN, TT | TN, TR | TN, TT, TT | TN};
	static const char *const vts[] = {"int", "uint", "bool", "real", "string"};
	int rc = need_slices(c);
	(void)rowid;
	/* named by its key: (arg_set_id, key), or the key alone when arg_set_id is no integer */
	at(c, "kvio_arg", sqlite3_value_type(v[0]) == SQLITE_INTEGER ? ival(v, 0) : -1,
	   sqlite3_value_type(v[1]) == SQLITE_TEXT ? tval(v, 1) : NULL);
	if (rc != SQLITE_OK || !types_ok(c, v, types, 7))
		return rc;
	int64_t set = ival(v, 0);
	int vt = -1;
	for (int k = 0; k < 5; k++)
		if (!strcmp(tval(v, 5), vts[k]))
			vt = k;
	while (c->argpos < c->nslices && c->slices[c->argpos] < set)
		c->argpos++;
	if (c->argpos == c->nslices || c->slices[c->argpos] != set)
		bad(c, "arg_set_id names no slice");
	else if (strncmp(tval(v, 1), "debug.", 6))
		bad(c, "key is not a debug.* key");
	else if (vt < 0)
		bad(c, "value_type '%s' is not one kvio writes", tval(v, 5));
	else if (type_ok(c, v, 2, vt <= 2 ? TI : TN) && type_ok(c, v, 3, vt == 4 ? TT : TN) &&
		 type_ok(c, v, 4, vt == 3 ? TR | TN : TN) && vt == 2 && ival(v, 2) != 0 && ival(v, 2) != 1)
		bad(c, "int_value %lld is not a bool", (long long)ival(v, 2));
	return SQLITE_OK;
}

/* kvio_cmd_kv: a KV command's key and lengths as the line had them (dir.c checks the ids). */
static int kv_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TT | TN, TI | TN, TI | TN};
	at(c, "kvio_cmd_kv", rowid, NULL);
	types_ok(c, v, types, 4);
	return SQLITE_OK;
}

static int ext_row(struct vcx *c, sqlite3_value **v)
{
	int64_t x = sqlite3_value_type(v[0]) == SQLITE_NULL ? 0 : sqlite3_value_int64(v[0]); /* (a real: saturated) */
	c->ext_hi = x > c->ext_hi ? x : c->ext_hi;
	return SQLITE_OK;
}

/* The capture's latest end: of its commands (their directory's extents) and slices. */
static int need_ext(struct vcx *c)
{
	if (c->have_ext)
		return SQLITE_OK;
	c->have_ext = 1;
	int rc = each_row(c, "SELECT max(end_max) FROM %s.kvio_cmd_range", ext_row);
	return rc != SQLITE_OK ? rc : each_row(c, "SELECT max(ts + dur) FROM %s.kvio_slice", ext_row);
}

/* kvio_counter: ids from 2^40 (apart from the commands' slba points), a point
 * in time (an ingest's from 0 on, at most a rate bucket past the capture's last
 * end) on a counter track (an import's: its event's track), a value (an
 * ingest's a count or a rate in 0..2^64; an import's NaN reads NULL). */
static int counter_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TI, TI, TR | TN};
	int rc;
	if ((rc = need_kind(c)) != SQLITE_OK || (rc = need_tracks(c)) != SQLITE_OK || (rc = need_ext(c)) != SQLITE_OK)
		return rc;
	at(c, "kvio_counter", rowid, NULL);
	if (!types_ok(c, v, types, 4) || (!c->import && !type_ok(c, v, 3, TR)))
		return SQLITE_OK;
	double x = sqlite3_value_double(v[3]);
	const struct vtrack *t = track_of(c, ival(v, 2));
	if (ival(v, 0) < ((int64_t)1 << 40) || ival(v, 0) >= DIR_MAX_ID)
		bad(c, "id is not one kvio numbers (2^40..2^53)");
	else if (!c->import && ival(v, 1) < 0)
		bad(c, "ts %lld is before the capture", (long long)ival(v, 1));
	else if (!c->import && ival(v, 1) - KVIO_CTR_BUCKET_MAX_NS > c->ext_hi) /* (ts >= 0 here: no overflow) */
		bad(c, "ts %lld is past the capture's end (%lld ns) by more than a rate bucket", (long long)ival(v, 1),
		    (long long)c->ext_hi);
	else if (!t || (!c->import && !t->counter))
		bad(c, "track_id %lld is not a counter track", (long long)ival(v, 2));
	else if (!c->import && !(x >= 0 && x <= 18446744073709551616.0)) /* counts, objects in flight, bytes a second */
		bad(c, "value %g is not a count or rate kvio writes (0..2^64)", x);
	return SQLITE_OK;
}

/* A flow end: a slice or a command. */
static int names_slice(struct vcx *c, int64_t id)
{
	return has_id(c->slices, c->nslices, id) || cmd_chunk(c, id);
}

/* An ingest's flows (write.c, live.c): per object, flow id arm << 40 | the
 * object's index, ascending in each arm: the object to its first command,
 * then (when it has another) that command to its last, the next row. */
static void flow_order(struct vcx *c, int64_t out, int64_t in, int64_t key)
{
	int64_t arm = key >> 40;
	if (key < 0 || arm >= MAX_LABELS) {
		bad(c, "trace_id %lld is not a flow id kvio writes (arm << 40 | object)", (long long)key);
		return;
	}
	struct vflow *f = &c->flow[arm];
	if (f->n == 1 && key == f->key && out == f->in) {
		f->n = 2;
	} else if (f->n && key <= f->key) {
		bad(c, "trace_id %lld repeats or goes back (kvio writes an object's flows once, in order)", (long long)key);
	} else if (!has_id(c->objs, c->nobjs, out)) {
		bad(c, "slice_out %lld is not an object span (an object's first flow starts at it)", (long long)out);
	} else {
		f->key = key;
		f->in = in;
		f->n = 1;
	}
}

/* flow: between two slices or commands (an object and its first command, that
 * and the last; an import's flows), a flow id. */
static int flow_row(struct vcx *c, sqlite3_value **v, int64_t rowid)
{
	static const unsigned types[] = {TI, TT, TI, TI, TI, TN};
	int rc;
	if ((rc = need_slices(c)) != SQLITE_OK || (rc = need_ranges(c)) != SQLITE_OK)
		return rc;
	at(c, "flow", rowid, NULL);
	if (!types_ok(c, v, types, 6))
		return SQLITE_OK;
	if (strcmp(tval(v, 1), "__intrinsic_flow"))
		bad(c, "type '%s' is not kvio's", tval(v, 1));
	else if (!names_slice(c, ival(v, 2)))
		bad(c, "slice_out %lld names no slice or command", (long long)ival(v, 2));
	else if (!names_slice(c, ival(v, 3)))
		bad(c, "slice_in %lld names no slice or command", (long long)ival(v, 3));
	else if (!c->import)
		flow_order(c, ival(v, 2), ival(v, 3), ival(v, 4));
	return SQLITE_OK;
}

static const struct {
	const char *table;
	struct vhooks h;
} hooks[] = {
	{"metadata", {meta_row, meta_end}},    {"process", {process_row, NULL}}, {"thread", {thread_row, NULL}},
	{"kvio_track", {track_row_check, NULL}}, {"kvio_file", {file_row, NULL}},  {"kvio_stats", {stats_row, stats_end}},
	{"kvio_warning", {warning_row, NULL}}, {"kvio_slice", {slice_row_check, slice_end}},
	{"kvio_obj", {obj_row, obj_end}},      {"kvio_arg", {arg_row, NULL}},     {"kvio_cmd_kv", {kv_row, NULL}},
	{"kvio_counter", {counter_row, NULL}}, {"flow", {flow_row, NULL}},
};

const struct vhooks *values_of(const char *table)
{
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
		if (!strcmp(hooks[i].table, table))
			return &hooks[i].h;
	return NULL; /* kvio_cmd_range, kvio_cmd_name: dir.c's */
}
