/* valid.c — whether a database is kvio's and unchanged since kvio wrote it:
 * its kvio_schema_version, its schema (every statement of ddl.c as written, no
 * trigger, no index kvio did not make), its tables' checksums (kvio_sum: rows
 * and an XXH3-64 of their values, written at the end of an ingest), and, in
 * the same read of the rows, their values (values.c: each column's type and
 * domain as kvio writes it, the references between tables), so that a
 * forger's sums do not make values kvio never writes believable.
 *
 * The command chunks carry their own checksums (chunk.c); kvio_sum covers
 * their directory (kvio_cmd_range) and every other table. A reader checks the version,
 * the schema and the sums of the small tables when it opens a database; the
 * tables of the capture's volume before it reads them (docs/database.md, "Trust"). */
#include "kvio_int.h"
#include "schema.h"
#include "valid.h"
#include "memo.h"
#include "values.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <xxhash.h>

/* The tables kvio_sum covers: the order its sum reads them in, whether the
 * read adds the rowid (not summed: it names a row that fails a value check),
 * and its kind: DB_SMALL (directory and bookkeeping: checked at every open),
 * DB_REPORT (a table of the capture's volume that kvio-report reads), DB_OTHER
 * (one only kvio-export and kvio-check read). In this order, so that each
 * table's value checks find the tables they refer to checked before it
 * (processes before tracks, tracks before slices, slices before objects,
 * args and flows). */
static const struct sumtab {
	const char *name, *order;
	int rowid, kind;
} sumtabs[] = {
	{"metadata", "rowid", 1, DB_SMALL},       {"process", "rowid", 1, DB_SMALL},
	{"thread", "rowid", 1, DB_SMALL},         {"kvio_track", "rowid", 1, DB_SMALL},
	{"kvio_cmd_range", "id", 1, DB_SMALL},    {"kvio_cmd_name", "id", 1, DB_SMALL},
	{"kvio_file", "rowid", 1, DB_SMALL},      {"kvio_stats", "rowid", 1, DB_SMALL},
	{"kvio_warning", "rowid", 1, DB_SMALL},   {"kvio_slice", "id", 1, DB_REPORT},
	{"kvio_obj", "id", 1, DB_REPORT},         {"kvio_arg", "arg_set_id, key", 0, DB_REPORT},
	{"flow", "id", 1, DB_REPORT}, /* objects.sql: an object's own first command */
	{"kvio_cmd_kv", "id", 1, DB_OTHER},       {"kvio_counter", "id", 1, DB_OTHER},
};
#define NSUMTAB (sizeof sumtabs / sizeof sumtabs[0])

/* *why = the sentence; returns SQLITE_CORRUPT (NOMEM without room for it). */
static int say(char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*why = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	return *why ? SQLITE_CORRUPT : SQLITE_NOMEM;
}

/* ddl.c's statements: their object names and texts, as sqlite_schema keeps them. */
#define MAXOBJ 64
struct expect {
	char name[64];
	const char *sql; /* into a copy of kvio_schema_sql, NUL-terminated per statement */
	int seen;
};

/* Split the DDL copy buf into statements, each named. Returns how many. */
static int expect_parse(char *buf, struct expect *e)
{
	int n = 0;
	for (char *p = buf, *end; *p && n < MAXOBJ; p = end + 2) {
		if (!(end = strstr(p, ";\n")))
			break;
		*end = 0;
		const char *nm = !strncmp(p, "CREATE VIRTUAL TABLE ", 21) ? p + 21 : !strncmp(p, "CREATE TABLE ", 13) ? p + 13
				 : !strncmp(p, "CREATE VIEW ", 12) ? p + 12 : NULL;
		size_t l = nm ? strcspn(nm, "( ") : 0;
		if (!nm || l >= sizeof e[n].name)
			continue;
		memcpy(e[n].name, nm, l);
		e[n].name[l] = 0;
		e[n].sql = p;
		e[n++].seen = 0;
	}
	return n;
}

/* One sqlite_schema row against the expected objects: SQLITE_OK, or damage said. */
static int schema_row(struct expect *e, int n, const char *type, const char *name, const char *tbl, const char *sql,
		      char **why)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(e[k].name, name)) {
			e[k].seen = 1;
			return sql && !strcmp(sql, e[k].sql) ? SQLITE_OK
				: say(why, KVIO_DAMAGED "the %s %s is not kvio's (a changed or crafted schema)", type, name);
		}
	if (!strcmp(type, "trigger"))
		return say(why, KVIO_DAMAGED "a trigger (%s) kvio does not write", name);
	if (!strcmp(type, "index") && strncmp(name, "sqlite_autoindex_", 17))
		for (int k = 0; k < n; k++)
			if (!strcmp(e[k].name, tbl))
				return say(why, KVIO_DAMAGED "an index (%s) on %s that kvio does not write", name, tbl);
	return SQLITE_OK; /* a table or view of the user's own, or SQLite's: not read by kvio */
}

/* The sqlite_schema rows against ddl.c's statements: every row (only NULL),
 * each expected object present; or the rows of the object named only. */
static int schema_walk(sqlite3 *db, const char *q, const char *only, char **why)
{
	char *buf = sqlite3_mprintf("%s", kvio_schema_sql);
	char *sql = only ? sqlite3_mprintf("SELECT type, name, tbl_name, sql FROM %s.sqlite_schema WHERE name = %Q", q, only)
			 : sqlite3_mprintf("SELECT type, name, tbl_name, sql FROM %s.sqlite_schema", q);
	struct expect e[MAXOBJ];
	sqlite3_stmt *st = NULL;
	int n = buf ? expect_parse(buf, e) : 0, rc = !buf || !sql ? SQLITE_NOMEM : sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = schema_row(e, n, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
				(const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3), why);
	sqlite3_finalize(st);
	for (int k = 0; !only && rc == SQLITE_DONE && k < n; k++)
		if (!e[k].seen)
			rc = say(why, KVIO_DAMAGED "%s is missing", e[k].name);
	sqlite3_free(buf);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int db_check_schema(sqlite3 *db, const char *q, char **why)
{
	return schema_walk(db, q, NULL, why);
}

int db_check_version(sqlite3 *db, const char *q, char **why)
{
	/* metadata first: kvio's table, or none (the read below then says "not a
	 * kvio database"); a view of endless rows in its place would hang the read */
	char *mwhy = NULL;
	int mrc = schema_walk(db, q, "metadata", &mwhy);
	if (mwhy || mrc == SQLITE_NOMEM) {
		*why = mwhy;
		return mrc;
	} /* else SQLite's own error, which the read below says */
	sqlite3_stmt *st;
	char *sql = sqlite3_mprintf("SELECT typeof(int_value), int_value FROM %s.metadata WHERE name = 'kvio_schema_version'", q);
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc == SQLITE_NOMEM ? rc : say(why, "not a kvio database (%s; make one with kvio-ingest)", sqlite3_errmsg(db));
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc != SQLITE_DONE ? rc : say(why, "not a kvio database (no kvio_schema_version; make one with kvio-ingest)");
	}
	int isint = !strcmp((const char *)sqlite3_column_text(st, 0), "integer");
	sqlite3_int64 v = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	if (!isint)
		return say(why, KVIO_DAMAGED "metadata: kvio_schema_version is not an integer");
	if (v < KVIO_DB_VERSION)
		return say(why, "kvio database version %lld, written by an older kvio (version %d added chunk checksums):"
			   " this kvio reads version %d; ingest the capture again with it", v, KVIO_DB_VERSION, KVIO_DB_VERSION);
	if (v > KVIO_DB_VERSION)
		return say(why, "kvio database version %lld, written by a newer kvio: this kvio reads version %d; read it"
			   " with the kvio that wrote it", v, KVIO_DB_VERSION);
	return SQLITE_OK;
}

/* Values go into the hash through a buffer: XXH3's streaming update costs
 * more per call than per byte. */
struct hbuf {
	XXH3_state_t *x;
	size_t n;
	unsigned char b[8192];
};

static void hput(struct hbuf *h, const void *p, size_t n)
{
	if (h->n + n > sizeof h->b) {
		XXH3_64bits_update(h->x, h->b, h->n);
		h->n = 0;
	}
	if (n > sizeof h->b) {
		XXH3_64bits_update(h->x, p, n);
		return;
	}
	memcpy(h->b + h->n, p, n);
	h->n += n;
}

/* A value into h: its type, then integers and reals as 8 bytes, text and
 * blobs as length and bytes (hval reads one from a row, db_sum_* take the
 * writer's: one encoding). */
static void h_typed(struct hbuf *h, unsigned char ty, const void *p, uint32_t len)
{
	int num = ty == SQLITE_INTEGER || ty == SQLITE_FLOAT, bytes = ty == SQLITE_TEXT || ty == SQLITE_BLOB;
	if (h->n + 9 > sizeof h->b) { /* (the type and 8 bytes or a length: in the buffer at once) */
		XXH3_64bits_update(h->x, h->b, h->n);
		h->n = 0;
	}
	h->b[h->n++] = ty;
	if (num) {
		memcpy(h->b + h->n, p, 8);
		h->n += 8;
	} else if (bytes) {
		memcpy(h->b + h->n, &len, 4);
		h->n += 4;
		if (len && p)
			hput(h, p, len);
	}
}

/* Column value v into h (h_typed). (The row's values are taken once each with
 * sqlite3_column_value and read with sqlite3_value_*: each sqlite3_column_*
 * call takes the connection's mutex, which cost more than the hashing and the
 * value checks together. The connection is this thread's while it steps.) */
static void hval(struct hbuf *h, sqlite3_value *v)
{
	unsigned char ty = (unsigned char)sqlite3_value_type(v);
	union { int64_t i; double d; } u = {0};
	if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
		if (ty == SQLITE_INTEGER)
			u.i = sqlite3_value_int64(v);
		else
			u.d = sqlite3_value_double(v);
		h_typed(h, ty, &u, 8);
	} else if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) {
		const void *p = ty == SQLITE_TEXT ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);
		h_typed(h, ty, p, (uint32_t)sqlite3_value_bytes(v));
	} else {
		h_typed(h, ty, NULL, 0);
	}
}

/* ---- reading a table's rows into its sum ---- */

/* kvio_sum_rows(p, values...): the state of a read (p, a pointer bound by
 * rows_fast) and each row's values, as the SELECT * [, rowid] of rows_slow
 * would give them. Stepping an aggregate inside SQLite's loop costs half of
 * sqlite3_step and sqlite3_column_value per row and column (measured on the
 * 4M bench database's objects, slices, flows and counters: 24 ms against 60). */
struct sumrows {
	struct hbuf *h;
	int64_t *rows;
	struct vcx *vc;
	const struct vhooks *hk;
	int ncol, idcol; /* ncol: the columns before the rowid; idcol: the id column that is the rowid (-1: none) */
	int rc, started;
	int64_t last;
};

static void sumrows_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sumrows *r = argc > 0 ? sqlite3_value_pointer(argv[0], "kvio_sumrows") : NULL;
	if (!r || argc - 1 != r->ncol + 1) {
		sqlite3_result_error(ctx, "kvio_sum_rows: kvio's checks call it", -1);
		return;
	}
	if (r->rc != SQLITE_OK)
		return;
	sqlite3_value **v = argv + 1;
	int64_t id = sqlite3_value_int64(v[r->ncol]); /* a b-tree's scan comes in rowid order: else its pages are damaged */
	if ((r->started && id <= r->last) ||
	    (r->idcol >= 0 && (sqlite3_value_type(v[r->idcol]) != SQLITE_INTEGER || sqlite3_value_int64(v[r->idcol]) != id))) {
		r->rc = SQLITE_CORRUPT;
		sqlite3_result_error_code(ctx, SQLITE_CORRUPT);
		return;
	}
	r->last = id;
	r->started = 1;
	(*r->rows)++;
	for (int c = 0; c < r->ncol; c++)
		hval(r->h, v[c]);
	if (r->hk && r->hk->row && !vcx_failed(r->vc) &&
	    (r->rc = r->hk->row(r->vc, v, id)) != SQLITE_OK)
		sqlite3_result_error_code(ctx, r->rc);
}

static void sumrows_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

int db_valid_register(sqlite3 *db)
{
	return sqlite3_create_function(db, "kvio_sum_rows", -1, SQLITE_UTF8, NULL, NULL, sumrows_step, sumrows_final);
}

/* The SQL of t's rows in its order: SELECT what FROM q.t [NOT INDEXED]
 * (those whose first order column is in [lo, hi) when lo <= hi) [ORDER BY]. */
static char *rows_sql(const char *q, const struct sumtab *t, const char *what, int fast, int64_t lo, int64_t hi)
{
	char col[32];
	snprintf(col, sizeof col, "%.*s", (int)strcspn(t->order, ","), t->order);
	char *where = lo <= hi ? sqlite3_mprintf(" WHERE %s >= %lld AND %s < %lld", col, (long long)lo, col, (long long)hi)
			       : sqlite3_mprintf("%s", "");
	char *sql = where ? sqlite3_mprintf("SELECT %s FROM %s.%s%s%s%s%s", what, q, t->name, fast ? " NOT INDEXED" : "",
					    where, fast ? "" : " ORDER BY ", fast ? "" : t->order)
			  : NULL;
	sqlite3_free(where);
	return sql;
}

/* rows_into by kvio_sum_rows, for a table read in its rowid's order (its
 * order column the rowid or the id that is it): SQLITE_OK or the code;
 * SQLITE_MISUSE when it cannot (kvio_sum_rows not registered on db, a
 * table without rowid): rows_slow then reads it, nothing read yet. */
static int rows_fast(sqlite3 *db, const char *q, const struct sumtab *t, struct hbuf *h, int64_t *rows,
		     struct vcx *vc, int64_t lo, int64_t hi)
{
	if (!t->rowid || (strcmp(t->order, "rowid") && strcmp(t->order, "id")))
		return SQLITE_MISUSE;
	char *sql = rows_sql(q, t, "*, rowid", 0, 1, 0);
	sqlite3_stmt *names = NULL, *st = NULL; /* names: the columns' (the value checks' words) */
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &names, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	struct sumrows r = {.h = h, .rows = rows, .vc = vc, .hk = vc ? values_of(t->name) : NULL, .idcol = -1};
	r.ncol = sqlite3_column_count(names) - 1;
	sqlite3_str *args = sqlite3_str_new(db);
	sqlite3_str_appendall(args, "kvio_sum_rows(?1");
	for (int c = 0; c < r.ncol; c++) {
		const char *n = sqlite3_column_name(names, c);
		if (!strcmp(t->order, "id") && n && !strcmp(n, "id"))
			r.idcol = c;
		sqlite3_str_appendf(args, ", \"%w\"", n ? n : "");
	}
	sqlite3_str_appendall(args, ", rowid)");
	char *what = sqlite3_str_finish(args);
	sql = what ? rows_sql(q, t, what, 1, lo, hi) : NULL;
	sqlite3_free(what);
	rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc == SQLITE_OK && !strcmp(t->order, "id") && r.idcol < 0)
		rc = SQLITE_MISUSE; /* (no id column: not kvio's table; rows_slow says what SQLite says) */
	if (rc != SQLITE_OK) {
		sqlite3_finalize(names);
		sqlite3_finalize(st);
		return rc == SQLITE_NOMEM ? rc : SQLITE_MISUSE;
	}
	sqlite3_bind_pointer(st, 1, &r, "kvio_sumrows", NULL);
	vcx_reading(vc, names);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE && r.rc != SQLITE_OK)
		rc = r.rc; /* a value check's read, or rows out of their order */
	if (rc == SQLITE_DONE && r.hk && r.hk->end && !vcx_failed(vc))
		rc = (rc = r.hk->end(vc)) == SQLITE_OK ? SQLITE_DONE : rc;
	vcx_reading(vc, NULL);
	sqlite3_finalize(st);
	sqlite3_finalize(names);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* rows_into row by row: SELECT * [, rowid] ... ORDER BY t's order. */
static int rows_slow(sqlite3 *db, const char *q, const struct sumtab *t, struct hbuf *h, int64_t *rows,
		     struct vcx *vc, int64_t lo, int64_t hi)
{
	char *sql = rows_sql(q, t, t->rowid ? "*, rowid" : "*", 0, lo, hi);
	sqlite3_stmt *st;
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	int nall = sqlite3_column_count(st), ncol = nall - t->rowid; /* the rowid: not summed */
	sqlite3_value **v = sqlite3_malloc64((sqlite3_uint64)(nall + 1) * sizeof *v);
	if (!v) {
		sqlite3_finalize(st);
		return SQLITE_NOMEM;
	}
	const struct vhooks *hk = vc ? values_of(t->name) : NULL;
	vcx_reading(vc, st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		(*rows)++;
		for (int c = 0; c < nall; c++)
			v[c] = sqlite3_column_value(st, c);
		for (int c = 0; c < ncol; c++)
			hval(h, v[c]);
		if (hk && hk->row && !vcx_failed(vc) &&
		    (rc = hk->row(vc, v, t->rowid ? sqlite3_value_int64(v[ncol]) : -1)) != SQLITE_OK)
			break;
	}
	if (rc == SQLITE_DONE && hk && hk->end && !vcx_failed(vc))
		rc = (rc = hk->end(vc)) == SQLITE_OK ? SQLITE_DONE : rc;
	vcx_reading(vc, NULL);
	sqlite3_free(v);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Rows of t (those whose first order column is in [lo, hi) when lo <= hi)
 * into h, counted in *rows, in t's order; with vc, each handed to t's value
 * checks (values.h). */
static int rows_into(sqlite3 *db, const char *q, const struct sumtab *t, struct hbuf *h, int64_t *rows, struct vcx *vc,
		     int64_t lo, int64_t hi)
{
	int rc = rows_fast(db, q, t, h, rows, vc, lo, hi);
	return rc == SQLITE_MISUSE ? rows_slow(db, q, t, h, rows, vc, lo, hi) : rc;
}

static struct hbuf *hbuf_new(void)
{
	struct hbuf *h = sqlite3_malloc(sizeof *h);
	if (h && !(h->x = XXH3_createState())) {
		sqlite3_free(h);
		return NULL;
	}
	if (h) {
		XXH3_64bits_reset(h->x);
		h->n = 0;
	}
	return h;
}

static void hbuf_free(struct hbuf *h)
{
	if (h)
		XXH3_freeState(h->x);
	sqlite3_free(h);
}

/* The digest of what h holds (h itself unchanged). */
static uint64_t hbuf_digest(const struct hbuf *h)
{
	XXH3_state_t *x = XXH3_createState();
	if (!x)
		return 0;
	XXH3_copyState(x, h->x);
	XXH3_64bits_update(x, h->b, h->n);
	uint64_t d = XXH3_64bits_digest(x);
	XXH3_freeState(x);
	return d;
}

/* Table t's rows and the XXH3-64 of their values, in t's order; with vc, each
 * row handed to t's value checks too (values.h: a failed check recorded in vc). */
static int table_sum(sqlite3 *db, const char *q, const struct sumtab *t, int64_t *rows, uint64_t *sum,
		     struct vcx *vc)
{
	struct hbuf *h = hbuf_new();
	*rows = 0;
	if (!h)
		return SQLITE_NOMEM;
	int rc = rows_into(db, q, t, h, rows, vc, 1, 0);
	*sum = hbuf_digest(h);
	hbuf_free(h);
	return rc;
}


/* Table t's sum against kvio_sum's row for it (read with st, bound here), then
 * its values (vc): a sum that does not match says so first (damage), a value
 * kvio never writes behind a matching sum after. */
static int sum_check(sqlite3 *db, const char *q, const struct sumtab *t, sqlite3_stmt *st, struct vcx *vc,
		     int64_t *rows_out, char **why)
{
	int64_t rows;
	uint64_t sum;
	int rc = table_sum(db, q, t, &rows, &sum, vc);
	if (rows_out)
		*rows_out = rows;
	if ((rc & 0xff) == SQLITE_CORRUPT) /* SQLite found the table's pages damaged */
		return say(why, KVIO_DAMAGED "%s: %s", t->name, sqlite3_errstr(rc));
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		return rc == SQLITE_DONE ? say(why, KVIO_DAMAGED "kvio_sum has no row for %s", t->name) : rc;
	}
	int64_t want_rows = sqlite3_column_int64(st, 0), want = sqlite3_column_int64(st, 1);
	int ok = !strcmp((const char *)sqlite3_column_text(st, 2), "integer") && want == (int64_t)sum && want_rows == rows;
#ifdef KVIO_FUZZ_NO_SUMS
	/* a switch of the libFuzzer builds only (tests/fuzz_db.c; make fuzz, with
	 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, else an error): every table's sum
	 * passes once its rows were read, so that the fuzzer's bytes reach the checks
	 * behind the sums (the directory's values, the chunks'). chunk.c has the same. */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#error "KVIO_FUZZ_NO_SUMS is for libFuzzer builds (make fuzz) only"
#endif
	ok = 1;
#endif
	sqlite3_reset(st);
	if (ok && vcx_failed(vc))
		return (*why = vcx_take_why(vc)) ? SQLITE_CORRUPT : SQLITE_NOMEM;
	if (ok)
		return SQLITE_OK;
	return say(why, KVIO_DAMAGED "%s: its %lld rows do not match their checksum (kvio wrote %lld rows)", t->name,
		   (long long)rows, (long long)want_rows);
}

/* ---- kvio-ingest --follow: the sums of each commit, reading what changed ---- */

struct sumcache {
	struct hbuf *h[NSUMTAB]; /* each table's rows below upto[] hashed (NULL: none yet) */
	int64_t rows[NSUMTAB], upto[NSUMTAB];
};

struct sumcache *db_sums_new(void)
{
	struct sumcache *c = sqlite3_malloc(sizeof *c);
	if (c)
		memset(c, 0, sizeof *c);
	return c;
}

void db_sums_free(struct sumcache *c)
{
	for (size_t i = 0; c && i < NSUMTAB; i++)
		hbuf_free(c->h[i]);
	sqlite3_free(c);
}

/* Table i's rows and sum: those below frozen from c (extended to it), the rest read. */
static int sum_inc(sqlite3 *db, struct sumcache *c, size_t i, int64_t frozen, int64_t *rows, uint64_t *sum)
{
	const struct sumtab *t = &sumtabs[i];
	if (frozen == INT64_MIN)
		return table_sum(db, "main", t, rows, sum, NULL);
	if (c->h[i] && frozen < c->upto[i]) { /* rows below what was hashed changed: from the start */
		hbuf_free(c->h[i]);
		c->h[i] = NULL;
	}
	if (!c->h[i]) {
		if (!(c->h[i] = hbuf_new()))
			return SQLITE_NOMEM;
		c->rows[i] = 0;
		c->upto[i] = INT64_MIN;
	}
	int rc = rows_into(db, "main", t, c->h[i], &c->rows[i], NULL, c->upto[i], frozen);
	c->upto[i] = frozen;
	struct hbuf *w = rc == SQLITE_OK ? hbuf_new() : NULL;
	if (!w) {
		hbuf_free(c->h[i]);
		c->h[i] = NULL;
		return rc == SQLITE_OK ? SQLITE_NOMEM : rc;
	}
	XXH3_copyState(w->x, c->h[i]->x);
	memcpy(w->b, c->h[i]->b, c->h[i]->n);
	w->n = c->h[i]->n;
	*rows = c->rows[i];
	rc = rows_into(db, "main", t, w, rows, NULL, frozen, INT64_MAX);
	*sum = hbuf_digest(w);
	hbuf_free(w);
	return rc;
}

/* ---- sums taken as the rows are written ---- */

struct db_sum {
	struct hbuf *h;
	int64_t rows;
};

struct db_sum *db_sum_new(void)
{
	struct db_sum *s = sqlite3_malloc(sizeof *s);
	if (s && !(s->h = hbuf_new())) {
		sqlite3_free(s);
		return NULL;
	}
	if (s)
		s->rows = 0;
	return s;
}

void db_sum_free(struct db_sum *s)
{
	if (s)
		hbuf_free(s->h);
	sqlite3_free(s);
}

void db_sum_int(struct db_sum *s, int64_t v)
{
	h_typed(s->h, SQLITE_INTEGER, &v, 8);
}

void db_sum_real(struct db_sum *s, double v, int real_column)
{
	if (isnan(v)) { /* sqlite3_bind_double binds a NaN as NULL */
		db_sum_null(s);
		return;
	}
	if (real_column && v == 0)
		v = 0.0; /* stored as the integer 0 there (REAL affinity), read back +0.0 */
	h_typed(s->h, SQLITE_FLOAT, &v, 8);
}

void db_sum_text(struct db_sum *s, const char *t)
{
	if (!t)
		db_sum_null(s);
	else
		h_typed(s->h, SQLITE_TEXT, t, (uint32_t)strlen(t));
}

void db_sum_null(struct db_sum *s)
{
	h_typed(s->h, SQLITE_NULL, NULL, 0);
}

void db_sum_row(struct db_sum *s)
{
	s->rows++;
}

/* The given sum of table name (names[k], sums[k]; names NULL-terminated), or NULL. */
static const struct db_sum *sum_given(const char *name, const char *const *names, struct db_sum *const *sums)
{
	for (size_t k = 0; names && names[k]; k++)
		if (sums[k] && !strcmp(names[k], name))
			return sums[k];
	return NULL;
}

/* The kvio_sum rows: every table read whole (c NULL), or only what changed
 * since c's last sums (--follow's commits); a table whose sum is given
 * (names, sums) is not read. */
static int write_sums(sqlite3 *db, struct sumcache *c, int64_t (*frozen)(void *ctx, const char *table), void *ctx,
		      const char *const *names, struct db_sum *const *sums)
{
	sqlite3_stmt *ins;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO kvio_sum VALUES(?1, ?2, ?3)", -1, &ins, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < NSUMTAB; i++) {
		int64_t rows;
		uint64_t sum;
		const struct db_sum *g = c ? NULL : sum_given(sumtabs[i].name, names, sums);
		if (g) {
			rows = g->rows;
			sum = hbuf_digest(g->h);
		} else {
			rc = c ? sum_inc(db, c, i, frozen(ctx, sumtabs[i].name), &rows, &sum)
			       : table_sum(db, "main", &sumtabs[i], &rows, &sum, NULL);
		}
		if (rc != SQLITE_OK)
			break;
		sqlite3_bind_text(ins, 1, sumtabs[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 2, rows);
		sqlite3_bind_int64(ins, 3, (int64_t)sum);
		rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	return rc;
}

int db_write_sums(sqlite3 *db)
{
	return write_sums(db, NULL, NULL, NULL, NULL, NULL);
}

int db_write_sums_given(sqlite3 *db, const char *const *names, struct db_sum *const *sums)
{
	return write_sums(db, NULL, NULL, NULL, names, sums);
}

int db_write_sums_inc(sqlite3 *db, struct sumcache *c, int64_t (*frozen)(void *ctx, const char *table), void *ctx)
{
	return write_sums(db, c, frozen, ctx, NULL, NULL);
}

const char *db_sum_table(size_t i)
{
	return i < NSUMTAB ? sumtabs[i].name : NULL;
}

int db_check_sum(sqlite3 *db, const char *q, size_t i, int64_t *rows, char **why)
{
	char *sql = sqlite3_mprintf("SELECT rows, xxh3, typeof(xxh3) FROM %s.kvio_sum WHERE name = ?1", q);
	sqlite3_stmt *st = NULL;
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	struct vcx *vc = rc == SQLITE_OK ? vcx_new(db, q) : NULL; /* what other tables say: read when needed */
	if (rc == SQLITE_OK)
		rc = vc ? sum_check(db, q, &sumtabs[i], st, vc, rows, why) : SQLITE_NOMEM;
	vcx_free(vc);
	sqlite3_finalize(st);
	return rc;
}

/* The sums and values of the tables of the kinds in mask (DB_*), in sumtabs' order. */
static int check_sums(sqlite3 *db, const char *q, int mask, char **why)
{
	char *sql = sqlite3_mprintf("SELECT rows, xxh3, typeof(xxh3) FROM %s.kvio_sum WHERE name = ?1", q);
	sqlite3_stmt *st = NULL;
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	struct vcx *vc = rc == SQLITE_OK ? vcx_new(db, q) : NULL;
	if (rc == SQLITE_OK && !vc)
		rc = SQLITE_NOMEM;
	for (size_t i = 0; rc == SQLITE_OK && i < NSUMTAB; i++)
		if (sumtabs[i].kind & mask)
			rc = sum_check(db, q, &sumtabs[i], st, vc, NULL, why);
	vcx_free(vc);
	sqlite3_finalize(st);
	return rc;
}

int db_unchecked(void)
{
	static int v = -1;
	if (v < 0) {
		const char *e = getenv("KVIO_UNCHECKED");
		v = e && *e && strcmp(e, "0");
	}
	return v;
}

/* The checks of mask (DB_SMALL: version, schema, the small tables' sums and
 * values; DB_REPORT, DB_OTHER: those tables' sums and values) not yet made by this process on
 * schema's file as it is now (memo.h). */
static int check(sqlite3 *db, const char *schema, int mask, char **why)
{
	struct memo *m = memo_of(db, schema);
	int todo = 0;
	for (int bit = DB_SMALL; bit <= DB_OTHER; bit <<= 1)
		if ((mask & bit) && !memo_has(m, bit))
			todo |= bit;
	if (!todo)
		return SQLITE_OK;
	char *q = sqlite3_mprintf("\"%w\"", schema);
	if (!q)
		return SQLITE_NOMEM;
	/* one snapshot for every check: a database that kvio-ingest --follow
	 * commits to (WAL) would else show a table and its kvio_sum row of two
	 * commits. Inside a running statement (the extension's own checks) the
	 * statement's snapshot holds already. */
	int own = sqlite3_get_autocommit(db);
	for (sqlite3_stmt *p = NULL; own && (p = sqlite3_next_stmt(db, p));)
		if (sqlite3_stmt_busy(p))
			own = 0;
	if (own && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		own = 0;
	int rc = SQLITE_OK;
	if (todo & DB_SMALL)
		rc = db_check_version(db, q, why);
	if (rc == SQLITE_OK && (todo & DB_SMALL) && !db_unchecked())
		rc = db_check_schema(db, q, why);
	if (rc == SQLITE_OK && !db_unchecked())
		rc = check_sums(db, q, todo, why);
	if (own)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_free(q);
	if (rc == SQLITE_OK)
		memo_set(m, todo);
	return rc;
}

int db_valid(sqlite3 *db, const char *schema, char **why)
{
	*why = NULL;
	return check(db, schema, DB_SMALL, why);
}

int db_check_tables(sqlite3 *db, const char *schema, int mask, char **why)
{
	*why = NULL;
	return check(db, schema, mask | DB_SMALL, why);
}
