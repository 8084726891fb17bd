/* report.c — kvio-report: the metrics pack over a trace.db.
 *
 * Every number comes from a sql/ file (embedded at build time; the same text
 * runs in plain sqlite3 with kvio's extension). This file only runs them,
 * binds :batch_gap_ns, and formats the rows: a text report, and JSON whose
 * keys, units (ns) and meanings are those of the reference kvio_tp_report.py,
 * plus additive keys (see docs/report.md). */
#include "json.h"
#include "sqlfiles.h"
#include "../ingest/schema.h"
#include "../lib/cli.h"
#include "../lib/util.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- query results --------------------------------------------------------- */

struct cell {
	int t; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_NULL */
	int64_t i;
	double d;
	char *s;
};

struct rows {
	int ncol;
	char **col;
	struct cell *v; /* nrow * ncol */
	size_t nrow;
};

static void rows_free(struct rows *r)
{
	for (size_t k = 0; k < r->nrow * (size_t)r->ncol; k++)
		free(r->v[k].s);
	for (int c = 0; c < r->ncol; c++)
		free(r->col[c]);
	free(r->v);
	free(r->col);
	memset(r, 0, sizeof *r);
}

static const struct cell *cell(const struct rows *r, size_t row, const char *name)
{
	for (int c = 0; c < r->ncol; c++)
		if (!strcmp(r->col[c], name))
			return &r->v[row * r->ncol + c];
	return NULL;
}

/* JSON value of a cell, typed as SQLite returned it. */
static struct jnode *cell_json(const struct cell *c)
{
	if (!c)
		return jn_null();
	switch (c->t) {
	case SQLITE_INTEGER: return jn_int(c->i);
	case SQLITE_FLOAT: return jn_real(c->d);
	case SQLITE_TEXT: return jn_str(c->s);
	default: return jn_null();
	}
}

/* A ratio or mean: always a JSON float, as Python's division makes it. */
static struct jnode *cell_real(const struct cell *c)
{
	if (!c || c->t == SQLITE_NULL)
		return jn_null();
	return jn_real(c->t == SQLITE_INTEGER ? (double)c->i : c->d);
}

static double cnum(const struct cell *c)
{
	return !c ? 0 : c->t == SQLITE_INTEGER ? (double)c->i : c->t == SQLITE_FLOAT ? c->d : 0;
}

static const char *cstr(const struct cell *c)
{
	return c && c->t == SQLITE_TEXT ? c->s : NULL;
}

struct report_opts {
	int64_t batch_gap_ns;
	int progress; /* stderr is a terminal: say which file runs */
	int jobs;     /* connections; 0: one per core, up to MAX_CONN */
};

/* One line for a failed statement, from the first connection that fails (the
 * others usually fail the same way: a full temp directory hits them all). A
 * full disk names where SQLite's temp files go: the database is read-only, so
 * it is never the database that filled up. */
static void sql_fail(sqlite3 *db, const char *name)
{
	static atomic_int said;
	if (sqlite3_errcode(db) == SQLITE_INTERRUPT) /* an early exit stopped it: already said why */
		return;
	if (atomic_exchange(&said, 1))
		return;
	if (sqlite3_errcode(db) == SQLITE_FULL) {
		const char *dir = getenv("SQLITE_TMPDIR");
		kvio_err("sql/%s: %s: no room for SQLite's temp files in %s (set SQLITE_TMPDIR to a roomier directory)",
			 name, sqlite3_errmsg(db), dir && *dir ? dir : "/var/tmp or /tmp");
	} else {
		kvio_err("sql/%s: %s", name, sqlite3_errmsg(db));
	}
}

/* Run every statement of sql/<name>; the rows of the last one that returns
 * rows land in out. Returns 0, or -1 after a one-line error. */
static int run_sql(sqlite3 *db, const char *name, const struct report_opts *o, struct rows *out)
{
	const char *sql = sql_text(name);
	if (o->progress)
		fprintf(stderr, "\r%s: running sql/%-16s", kvio_prog, name);
	memset(out, 0, sizeof *out);
	if (!sql) {
		kvio_err("internal: sql/%s is not built in", name);
		return -1;
	}
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			sql_fail(db, name);
			return -1;
		}
		if (!st)
			continue; /* comment or blank tail */
		int pi = sqlite3_bind_parameter_index(st, ":batch_gap_ns");
		if (pi)
			sqlite3_bind_int64(st, pi, o->batch_gap_ns);
		int ncol = sqlite3_column_count(st);
		struct rows r = {0};
		size_t cap = 0;
		int rc;
		if (ncol) {
			r.ncol = ncol;
			r.col = xmalloc(ncol * sizeof *r.col);
			for (int c = 0; c < ncol; c++)
				r.col[c] = xstrdup(sqlite3_column_name(st, c));
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (r.nrow == cap) {
				cap = cap ? cap * 2 : 16;
				r.v = xrealloc(r.v, cap * ncol * sizeof *r.v);
			}
			for (int c = 0; c < ncol; c++) {
				struct cell *x = &r.v[r.nrow * ncol + c];
				memset(x, 0, sizeof *x);
				x->t = sqlite3_column_type(st, c);
				if (x->t == SQLITE_INTEGER)
					x->i = sqlite3_column_int64(st, c);
				else if (x->t == SQLITE_FLOAT)
					x->d = sqlite3_column_double(st, c);
				else if (x->t == SQLITE_TEXT || x->t == SQLITE_BLOB) {
					x->t = SQLITE_TEXT;
					x->s = xstrdup((const char *)sqlite3_column_text(st, c));
				}
			}
			r.nrow++;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			sql_fail(db, name);
			rows_free(&r);
			return -1;
		}
		if (ncol) {
			rows_free(out);
			*out = r;
		}
	}
	return 0;
}

/* ---- formatting helpers (the reference's units) --------------------------- */

static const char *us(double ns, char *b) { sprintf(b, "%.1fus", ns / 1e3); return b; }
static const char *ms(double ns, char *b) { sprintf(b, "%.2fms", ns / 1e6); return b; }

struct label {
	char *name;
	struct jnode *R;
	struct vec text; /* char* lines */
};

static void say(struct label *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct label *L, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	*(char **)vec_push(&L->text, sizeof(char *)) = xstrdup(buf);
}

static struct label *find_label(struct label *ls, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (name && !strcmp(ls[i].name, name))
			return &ls[i];
	return NULL;
}

/* Python list repr of strings: ['EIO', "it's"] */
static void py_list(char *out, size_t n, const char *joined)
{
	size_t o = 0;
	o += snprintf(out + o, n - o, "[");
	const char *p = joined;
	int first = 1;
	while (p && o < n) {
		const char *e = strchr(p, 31);
		size_t l = e ? (size_t)(e - p) : strlen(p);
		int dq = memchr(p, '\'', l) && !memchr(p, '"', l);
		o += snprintf(out + o, n - o, "%s%c%.*s%c", first ? "" : ", ", dq ? '"' : '\'', (int)l, p,
			      dq ? '"' : '\'');
		first = 0;
		p = e ? e + 1 : NULL;
	}
	if (o < n)
		snprintf(out + o, n - o, "]");
}

/* ---- running the analyses on every core (up to MAX_CONN) -------------------
 * Each sql/ file is independent once prelude.sql has run, so the files are a
 * queue taken by up to MAX_CONN connections (one per core; each but the
 * caller's on its own thread, each with its own prelude), heaviest first; the
 * rows are kept and formatted afterwards in a fixed order. */
/* In queue order: slowest first (measured on a 1M-line capture), so the
 * connections finish together; the rows are taken by name, so this order
 * decides only the scheduling. */
static const char *const analyses[] = {"qd1.sql", "qd.sql", "latency.sql", "space.sql", "commands.sql",
	"batches.sql", "objects.sql", "serving.sql", "info.sql", "failed.sql", "tp_barrier.sql", "tp_ranks.sql",
	"capture.sql", "ab.sql"};
#define NANALYSES (int)(sizeof analyses / sizeof analyses[0])
#define MAX_CONN 4

struct result {
	struct rows rows;
	int done;
};

struct runner;
struct worker {
	struct runner *rn;
	sqlite3 *db;           /* NULL: open rn->dbpath */
	sqlite3 *live;         /* the connection it runs on, under rn->mu: an early exit interrupts it */
	int which;
	int rc;
	pthread_t th;
	int threaded;
};

struct runner {
	const char *dbpath;
	struct report_opts o;
	struct result *res;
	pthread_mutex_t mu;
	int next;              /* next index into analyses[] */
	int stop;              /* an early exit: running statements are interrupted */
	int nw, started;
	struct worker w[MAX_CONN];
};

/* Temp tables and sorts go to temp files (page cache, not the heap) with a 16 MB
 * cache per connection: a report's memory stays ~120-140 MB at any capture size
 * (in-memory temp storage took 315 MB at 1M lines and 1.26 GB at 4M, for the
 * same time). */
static int prepare_conn(sqlite3 *db, const struct report_opts *o)
{
	struct rows r = {0};
	int rc = db_exec(db, "PRAGMA temp_store=FILE; PRAGMA cache_size=-16384; PRAGMA threads=0;", "setting up the connection") != SQLITE_OK ||
		 run_sql(db, "prelude.sql", o, &r) != 0;
	rows_free(&r);
	return rc ? -1 : 0;
}

static int take_next(struct runner *rn)
{
	pthread_mutex_lock(&rn->mu);
	int i = rn->next < NANALYSES ? rn->next++ : -1;
	pthread_mutex_unlock(&rn->mu);
	return i;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct runner *rn = w->rn;
	sqlite3 *db = w->db;
	w->rc = 0;
	if (!db && !(db = db_open_ro(rn->dbpath))) {
		w->rc = -1;
		goto out;
	}
	pthread_mutex_lock(&rn->mu);
	w->live = rn->stop ? NULL : db;
	pthread_mutex_unlock(&rn->mu);
	if (!w->live || (!w->db && prepare_conn(db, &rn->o))) {
		w->rc = -1;
		goto out;
	}
	for (int i; !w->rc && (i = take_next(rn)) >= 0;) {
		double t0 = now_s();
		if (getenv("KVIO_TIMING"))
			kvio_err("timing: conn %d starts %s", w->which, analyses[i]);
		if (run_sql(db, analyses[i], &rn->o, &rn->res[i].rows))
			w->rc = -1;
		else if (getenv("KVIO_TIMING"))
			kvio_err("timing: conn %d %s %.2fs", w->which, analyses[i], now_s() - t0);
		if (!w->rc)
			rn->res[i].done = 1;
	}
out:
	pthread_mutex_lock(&rn->mu);
	w->live = NULL;
	pthread_mutex_unlock(&rn->mu);
	if (!w->db && db)
		sqlite3_close(db);
	return NULL;
}

/* The other connections start at once (their own prelude, then the queue);
 * the caller's joins when it has its labels. */
static void analyses_start(struct runner *rn, const char *dbpath, const struct report_opts *o, struct result *res)
{
	sql_text("prelude.sql");
	for (int i = 0; i < NANALYSES; i++)
		sql_text(analyses[i]); /* load KVIO_SQL_DIR copies before the threads start */
	long ncpu = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	rn->nw = ncpu < 1 ? 1 : ncpu > MAX_CONN ? MAX_CONN : (int)ncpu;
	rn->dbpath = dbpath;
	rn->o = *o;
	rn->o.progress = 0;
	rn->res = res;
	rn->next = 0;
	pthread_mutex_init(&rn->mu, NULL);
	for (int k = 1; k < rn->nw; k++) {
		rn->w[k] = (struct worker){.rn = rn, .which = k};
		rn->w[k].threaded = pthread_create(&rn->w[k].th, NULL, work, &rn->w[k]) == 0;
	}
	rn->started = 1;
}

/* Run the queue on the caller's connection too (prelude.sql already run
 * there), then wait for the others. 0, or -1 after an error (reported). */
static int analyses_finish(struct runner *rn, sqlite3 *main, int run_main)
{
	if (!rn->started)
		return 0;
	int rc = 0;
	if (run_main) {
		rn->w[0] = (struct worker){.rn = rn, .db = main};
		work(&rn->w[0]);
		rc = rn->w[0].rc;
	} else { /* an early exit: nothing more is started, what runs is interrupted */
		pthread_mutex_lock(&rn->mu);
		rn->next = NANALYSES;
		rn->stop = 1;
		for (int k = 1; k < rn->nw; k++)
			if (rn->w[k].live)
				sqlite3_interrupt(rn->w[k].live);
		pthread_mutex_unlock(&rn->mu);
	}
	for (int k = 1; k < rn->nw; k++) {
		if (rn->w[k].threaded)
			pthread_join(rn->w[k].th, NULL);
		else
			work(&rn->w[k]);
		rc |= rn->w[k].rc;
	}
	pthread_mutex_destroy(&rn->mu);
	rn->started = 0;
	return rc ? -1 : 0;
}

/* Move the rows of analysis name into r; -1 if it did not run. */
static int take(struct result *res, const char *name, struct rows *r)
{
	rows_free(r);
	for (int i = 0; i < NANALYSES; i++)
		if (!strcmp(analyses[i], name) && res[i].done) {
			*r = res[i].rows;
			memset(&res[i].rows, 0, sizeof res[i].rows);
			return 0;
		}
	return -1;
}

static const char report_help[] =
	"usage: kvio-report trace.db [--json [FILE]] [--batch-gap-us 50] [--label L ...]\n"
	"                   [--fail-on qd1] [--jobs N]\n\n"
	"The kvio metrics pack per capture label (A/B arms side by side): QD1 detector,\n"
	"latency percentiles, achieved queue depth, inferred batches, object spans,\n"
	"TP all-rank barrier, space axis, throughput, serving spans, paired A/B diffs.\n"
	"Every metric is defined in its sql/ file (installed under share/kvio/sql).\n\n"
	"options:\n"
	"  --json            print only the JSON (the reference kvio_tp_report.py's keys)\n"
	"  --json FILE       write the JSON to FILE and print the text report\n"
	"  --batch-gap-us N  submit gap that splits inferred batches (default 50)\n"
	"  --label L         report only label L (repeatable; an unknown one is an error)\n"
	"  --fail-on qd1     exit 3 when any label's load or store verdict is QD~1\n"
	"  --jobs N          database connections running the sql/ files at once, 1-4\n"
	"                    (default: one per core, up to 4; each holds ~100 MB)\n"
	"  --rows FILE.sql   print the rows of one sql/ file as kvio-report runs it\n"
	"                    ('|'-separated, like sqlite3), after prelude.sql\n\n"
	"The sql/ files are built into kvio; KVIO_SQL_DIR=DIR runs the ones in DIR instead\n"
	"(to try an edited metric without rebuilding).\n\n"
	"EXAMPLES\n"
	"  kvio-report trace.db\n"
	"  kvio-report ab.db --json metrics.json --label stock --label batched\n\n"
	"exit status: 0 ok, 2 usage error, unreadable/non-kvio database or an output that\n"
	"could not be written (a full disk), 3 --fail-on tripped\n";

int cmd_report(int argc, char **argv)
{
	const char *dbpath = NULL, *json_file = NULL;
	int json_only = 0, json = 0, fail_qd1 = 0;
	struct report_opts o = {.batch_gap_ns = 50000, .progress = isatty(2)};
	const char *only[64], *rows_of = NULL;
	int nonly = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(report_help, stdout);
			return 0;
		} else if (opt_is(a, "--json")) {
			json = 1;
			if (a[6] == '=') {
				json_file = a + 7;
			} else if (i + 1 < argc && argv[i + 1][0] != '-') {
				/* the next word is FILE when the database is already named, or
				 * another word follows it */
				int later = 0;
				for (int k = i + 2; k < argc; k++)
					if (argv[k][0] != '-')
						later = 1;
				if (dbpath || later)
					json_file = argv[++i];
			}
		} else if (opt_is(a, "--batch-gap-us")) {
			int64_t n;
			if (!(v = opt_value(argc, argv, &i, "--batch-gap-us")))
				return 2;
			if (parse_i64(v, &n) || n < 0) {
				kvio_err("--batch-gap-us: '%s' is not a non-negative integer", v);
				return 2;
			}
			o.batch_gap_ns = n * 1000;
		} else if (opt_is(a, "--label")) {
			if (!(v = opt_value(argc, argv, &i, "--label")))
				return 2;
			if (nonly < 64)
				only[nonly++] = v;
		} else if (opt_is(a, "--rows")) {
			if (!(rows_of = opt_value(argc, argv, &i, "--rows")))
				return 2;
			if (!sql_text(rows_of)) {
				kvio_err("--rows: no sql/%s in this kvio", rows_of);
				return 2;
			}
		} else if (opt_is(a, "--jobs")) {
			int64_t n;
			if (!(v = opt_value(argc, argv, &i, "--jobs")))
				return 2;
			if (parse_i64(v, &n) || n < 1 || n > MAX_CONN) {
				kvio_err("--jobs: '%s' is not a number from 1 to %d", v, MAX_CONN);
				return 2;
			}
			o.jobs = (int)n;
		} else if (opt_is(a, "--fail-on")) {
			if (!(v = opt_value(argc, argv, &i, "--fail-on")))
				return 2;
			if (strcmp(v, "qd1")) {
				kvio_err("--fail-on: only 'qd1' is known");
				return 2;
			}
			fail_qd1 = 1;
		} else if (a[0] == '-') {
			kvio_err("unknown option '%s' (see --help)", a);
			return 2;
		} else if (!dbpath) {
			dbpath = a;
		} else {
			kvio_err("unexpected argument '%s' (see --help)", a);
			return 2;
		}
	}
	if (!dbpath) {
		kvio_err("need a trace.db (see --help)");
		return 2;
	}
	json_only = json && !json_file;
	sqlite3 *db = db_open_ro(dbpath);
	if (!db)
		return 2;
	int status = 0;
	struct rows r = {0};
	struct label *ls = NULL;
	int nl = 0;
	struct result res[NANALYSES];
	memset(res, 0, sizeof res);
	struct runner rn = {0};
	if (!rows_of)
		analyses_start(&rn, dbpath, &o, res);
	if (prepare_conn(db, &o)) {
		status = 2;
		goto done;
	}
	if (rows_of) {
		if (run_sql(db, rows_of, &o, &r)) {
			status = 2;
			goto done;
		}
		for (size_t k = 0; k < r.nrow; k++)
			for (int c = 0; c < r.ncol; c++) {
				const struct cell *x = &r.v[k * r.ncol + c];
				char buf[64];
				if (x->t == SQLITE_INTEGER)
					printf("%lld", (long long)x->i);
				else if (x->t == SQLITE_FLOAT) {
					/* sqlite3's shell prints reals with %!.15g */
					sqlite3_snprintf(sizeof buf, buf, "%!.15g", x->d);
					fputs(buf, stdout);
				} else if (x->t == SQLITE_TEXT)
					fputs(x->s, stdout);
				putchar(c + 1 < r.ncol ? '|' : '\n');
			}
		goto done;
	}
	/* labels: those with commands or objects, in string order */
	{
		sqlite3_stmt *st;
		sqlite3_prepare_v2(db, "SELECT label FROM kvio_command UNION SELECT label FROM kvio_object ORDER BY 1",
				   -1, &st, NULL);
		char all[512] = "";     /* every label, for the message about an unknown --label */
		int found[64] = {0};
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			size_t used = strlen(all);
			snprintf(all + used, sizeof all - used, "%s%s", used ? ", " : "", name);
			int keep = !nonly;
			for (int k = 0; k < nonly; k++)
				if (!strcmp(only[k], name))
					keep = found[k] = 1;
			if (!keep)
				continue;
			ls = xrealloc(ls, (nl + 1) * sizeof *ls);
			memset(&ls[nl], 0, sizeof ls[nl]);
			ls[nl].name = xstrdup(name);
			ls[nl].R = jn_obj();
			jn_set(ls[nl].R, "label", jn_str(name));
			nl++;
		}
		sqlite3_finalize(st);
		int unknown = 0; /* a mistyped --label is a usage error, not a shorter report */
		for (int k = 0; k < nonly; k++)
			if (!found[k] && ++unknown)
				kvio_err("%s: no label '%s' (labels: %s)", dbpath, only[k], *all ? all : "none");
		if (unknown) {
			status = 2;
			goto done;
		}
	}
	if (!nl) {
		kvio_err("%s: no kvio command or object slices%s", dbpath, nonly ? " for those labels" : "");
		status = 2;
		goto done;
	}
	if (o.progress)
		fprintf(stderr, "\r%s: running the analyses on %d connections...", kvio_prog, rn.nw);
	if (analyses_finish(&rn, db, 1)) {
		status = 2;
		goto done;
	}
	char b1[64], b2[64], b3[64], b4[64];

	/* info */
	if (take(res, "info.sql", &r)) { status = 2; goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L || jn_get(L->R, "info"))
			continue;
		struct jnode *I = jn_set(L->R, "info", jn_obj());
		static const char *const keys[] = {"schema", "hostname", "device", "lba_bytes", "header_bytes"};
		for (int q = 0; q < 5; q++)
			jn_set(I, keys[q], cell_json(cell(&r, k, keys[q])));
		char sch[64], lba[64];
		const struct cell *c = cell(&r, k, "schema");
		snprintf(sch, sizeof sch, "%lld", (long long)(c ? c->i : 0));
		c = cell(&r, k, "lba_bytes");
		snprintf(lba, sizeof lba, "%lld", (long long)(c ? c->i : 0));
		say(L, "  capture : schema=%s host=%s dev=%s lba=%s",
		    cell(&r, k, "schema")->t == SQLITE_NULL ? "None" : sch,
		    cstr(cell(&r, k, "hostname")) ? cstr(cell(&r, k, "hostname")) : "None",
		    cstr(cell(&r, k, "device")) ? cstr(cell(&r, k, "device")) : "None",
		    cell(&r, k, "lba_bytes")->t == SQLITE_NULL ? "None" : lba);
	}

	/* commands, throughput */
	if (take(res, "commands.sql", &r)) { status = 2; goto done; }
	for (int li = 0; li < nl; li++) {
		struct label *L = &ls[li];
		size_t k;
		for (k = 0; k < r.nrow && strcmp(cstr(cell(&r, k, "label")), L->name); k++)
			;
		int64_t n = 0, tg = 0, ut = 0, tb = 0, wall = 0;
		double cover = 0;
		if (k < r.nrow) {
			n = cell(&r, k, "n")->i;
			tg = cell(&r, k, "tagged")->i;
			ut = cell(&r, k, "untagged")->i;
			tb = cell(&r, k, "tagged_bytes")->i;
			wall = cell(&r, k, "wall_ns")->i;
			cover = cnum(cell(&r, k, "real_cover"));
		}
		struct jnode *C = jn_set(L->R, "commands", jn_obj());
		jn_set(C, "n", jn_int(n));
		jn_set(C, "tagged", jn_int(tg));
		jn_set(C, "untagged", jn_int(ut));
		jn_set(C, "tagged_bytes", jn_int(tb));
		jn_set(C, "wall_ns", jn_int(wall));
		jn_set(C, "real_cover", jn_real(cover));
		say(L, "  commands: %lld (%lld tagged / %lld untagged), %.2f GB tagged, wall %.2fs, "
		       "real-duration coverage %.0f%%", (long long)n, (long long)tg, (long long)ut, tb / 1e9,
		    wall / 1e9, 100 * cover);
	}
	struct rows tput = r;
	memset(&r, 0, sizeof r);

	/* latency */
	if (take(res, "latency.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		const char *op = cstr(cell(&r, k, "op"));
		char key[32];
		snprintf(key, sizeof key, "lat_%s", op ? op : "");
		struct jnode *J = jn_set(L->R, key, jn_obj());
		jn_set(J, "p50", cell_json(cell(&r, k, "p50")));
		jn_set(J, "p99", cell_json(cell(&r, k, "p99")));
		jn_set(J, "p95", cell_json(cell(&r, k, "p95")));
		jn_set(J, "max", cell_json(cell(&r, k, "max")));
		jn_set(J, "n", cell_json(cell(&r, k, "n")));
		say(L, "  %-5s latency: p50 %s  p95 %s  p99 %s  max %s  (n=%lld)", op,
		    us(cnum(cell(&r, k, "p50")), b1), us(cnum(cell(&r, k, "p95")), b2),
		    us(cnum(cell(&r, k, "p99")), b3), us(cnum(cell(&r, k, "max")), b4),
		    (long long)cell(&r, k, "n")->i);
	}

	/* QD1 detector: the qd1 object is always present */
	if (take(res, "qd1.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	int qd1_tripped = 0;
	for (int li = 0; li < nl; li++) {
		struct label *L = &ls[li];
		say(L, "  --- QD1 detector (per-object submission gaps) ---");
		struct jnode *Q = jn_set(L->R, "qd1", jn_obj());
		for (size_t k = 0; k < r.nrow; k++) {
			if (strcmp(cstr(cell(&r, k, "label")), L->name))
				continue;
			const char *op = cstr(cell(&r, k, "op")), *verdict = cstr(cell(&r, k, "verdict"));
			struct jnode *E = jn_set(Q, op, jn_obj());
			jn_set(E, "gap_p50", cell_json(cell(&r, k, "gap_p50")));
			jn_set(E, "gap_p95", cell_json(cell(&r, k, "gap_p95")));
			jn_set(E, "verdict", jn_str(verdict));
			jn_set(E, "svc", cell_json(cell(&r, k, "svc")));
			jn_set(E, "n_objects", cell_json(cell(&r, k, "n_objects")));
			if (!strncmp(verdict, "QD~1", 4))
				qd1_tripped = 1;
			say(L, "    %-5s: gap p50 %s  p95 %s  -> %s", op, us(cnum(cell(&r, k, "gap_p50")), b1),
			    us(cnum(cell(&r, k, "gap_p95")), b2), verdict);
		}
	}

	/* achieved QD */
	if (take(res, "qd.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *Q = jn_set(L->R, "qd", jn_obj());
		jn_set(Q, "mean", cell_real(cell(&r, k, "mean")));
		jn_set(Q, "max", cell_json(cell(&r, k, "max")));
		jn_set(Q, "pct_time_le1", cell_real(cell(&r, k, "pct_time_le1")));
		say(L, "  achieved QD: mean %.1f  max %lld  %%time QD<=1: %.0f%%", cnum(cell(&r, k, "mean")),
		    (long long)cell(&r, k, "max")->i, 100 * cnum(cell(&r, k, "pct_time_le1")));
	}

	/* inferred batches */
	if (take(res, "batches.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *B = jn_set(L->R, "batches", jn_obj());
		jn_set(B, "n", cell_json(cell(&r, k, "n")));
		jn_set(B, "size_p50", cell_json(cell(&r, k, "size_p50")));
		jn_set(B, "size_p95", cell_json(cell(&r, k, "size_p95")));
		say(L, "  inferred batches (gap>%lldus): %lld batches, size p50 %.0f p95 %.0f max %lld",
		    (long long)(o.batch_gap_ns / 1000), (long long)cell(&r, k, "n")->i,
		    cnum(cell(&r, k, "size_p50")), cnum(cell(&r, k, "size_p95")),
		    (long long)cell(&r, k, "size_max")->i);
	}

	/* objects: always present */
	if (take(res, "objects.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (int li = 0; li < nl; li++) {
		struct label *L = &ls[li];
		say(L, "  --- objects (span = op-start..op-end when schema-2) ---");
		struct jnode *O = jn_set(L->R, "objects", jn_obj());
		for (size_t k = 0; k < r.nrow; k++) {
			if (strcmp(cstr(cell(&r, k, "label")), L->name))
				continue;
			const char *op = cstr(cell(&r, k, "op"));
			struct jnode *E = jn_set(O, op, jn_obj());
			jn_set(E, "n", cell_json(cell(&r, k, "n")));
			jn_set(E, "span_p50", cell_json(cell(&r, k, "span_p50")));
			jn_set(E, "span_p99", cell_json(cell(&r, k, "span_p99")));
			jn_set(E, "eff_mbs_p50", cell_real(cell(&r, k, "eff_mbs_p50")));
			jn_set(E, "presubmit_p50", cell_json(cell(&r, k, "presubmit_p50")));
			char line[512];
			int w = snprintf(line, sizeof line, "    %-6s: n=%4lld  span p50 %s  p99 %s", op,
					 (long long)cell(&r, k, "n")->i, ms(cnum(cell(&r, k, "span_p50")), b1),
					 ms(cnum(cell(&r, k, "span_p99")), b2));
			if (cell(&r, k, "eff_mbs_p50")->t != SQLITE_NULL)
				w += snprintf(line + w, sizeof line - w, "  eff %.0f MB/s", cnum(cell(&r, k, "eff_mbs_p50")));
			if (cell(&r, k, "presubmit_p50")->t != SQLITE_NULL)
				snprintf(line + w, sizeof line - w, "  pre-submit p50 %s",
					 ms(cnum(cell(&r, k, "presubmit_p50")), b3));
			say(L, "%s", line);
		}
	}
	if (take(res, "failed.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		char list[1024];
		py_list(list, sizeof list, cstr(cell(&r, k, "errors")));
		jn_set(L->R, "failed_ops", cell_json(cell(&r, k, "failed_ops")));
		say(L, "    FAILED ops: %lld (%s)", (long long)cell(&r, k, "failed_ops")->i, list);
	}

	/* TP barrier (fmt heuristic) */
	if (take(res, "tp_barrier.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *T = jn_set(L->R, "tp_barrier", jn_obj());
		jn_set(T, "shards", cell_json(cell(&r, k, "shards")));
		jn_set(T, "gap_p50", cell_json(cell(&r, k, "gap_p50")));
		jn_set(T, "gap_p99", cell_json(cell(&r, k, "gap_p99")));
		say(L, "  TP barrier (%lld shards): all-rank-ready gap p50 %s  p99 %s  (n=%lld chunks)",
		    (long long)cell(&r, k, "shards")->i, ms(cnum(cell(&r, k, "gap_p50")), b1),
		    ms(cnum(cell(&r, k, "gap_p99")), b2), (long long)cell(&r, k, "chunks")->i);
	}

	/* space axis */
	if (take(res, "space.sql", &r)) { status = 2; rows_free(&tput); goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *S = jn_set(L->R, "space", jn_obj());
		jn_set(S, "lba_reuse", cell_json(cell(&r, k, "lba_reuse")));
		jn_set(S, "seq_pct", cell_real(cell(&r, k, "seq_pct")));
		jn_set(S, "header_cmds", cell_json(cell(&r, k, "header_cmds")));
		double tb = 0;
		for (size_t q = 0; q < tput.nrow; q++)
			if (!strcmp(cstr(cell(&tput, q, "label")), L->name))
				tb = cnum(cell(&tput, q, "tagged_bytes"));
		double hdr = cnum(cell(&r, k, "header_bytes"));
		int64_t hc = cell(&r, k, "header_cmds")->i;
		say(L, "  space: %lld/%lld write-LBA reuses, sequentiality %.0f%%, header cmds %lld (%.1f%% of bytes)",
		    (long long)cell(&r, k, "lba_reuse")->i, (long long)cell(&r, k, "writes")->i,
		    100 * cnum(cell(&r, k, "seq_pct")), (long long)hc, 100 * hc * hdr / (tb > 1 ? tb : 1));
	}

	/* throughput (from commands.sql) */
	for (size_t k = 0; k < tput.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&tput, k, "label")));
		const struct cell *t = cell(&tput, k, "throughput_gbs");
		if (!L || !t || t->t == SQLITE_NULL)
			continue;
		jn_set(L->R, "throughput_gbs", cell_real(t));
		say(L, "  throughput: %.2f GB/s tagged aggregate", cnum(t));
	}
	rows_free(&tput);

	/* serving spans */
	if (take(res, "serving.sql", &r)) { status = 2; goto done; }
	for (int li = 0; li < nl; li++) {
		struct label *L = &ls[li];
		struct jnode *S = NULL;
		for (size_t k = 0; k < r.nrow; k++) {
			if (strcmp(cstr(cell(&r, k, "label")), L->name))
				continue;
			if (!S) {
				say(L, "  --- serving spans ---");
				S = jn_set(L->R, "serving", jn_obj());
			}
			const char *op = cstr(cell(&r, k, "op"));
			struct jnode *E = jn_set(S, op ? op : "", jn_obj());
			jn_set(E, "n", cell_json(cell(&r, k, "n")));
			jn_set(E, "p50", cell_json(cell(&r, k, "p50")));
			jn_set(E, "p99", cell_json(cell(&r, k, "p99")));
			say(L, "    %-12s: n=%3lld  p50 %s  p99 %s", op ? op : "", (long long)cell(&r, k, "n")->i,
			    ms(cnum(cell(&r, k, "p50")), b1), ms(cnum(cell(&r, k, "p99")), b2));
		}
	}

	/* kvio additions: decoded TP ranks, ingest bookkeeping, A/B */
	if (take(res, "tp_ranks.sql", &r)) { status = 2; goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *T = jn_set(L->R, "tp_ranks", jn_obj());
		jn_set(T, "world_size", cell_json(cell(&r, k, "world_size")));
		jn_set(T, "ranks", cell_json(cell(&r, k, "ranks")));
		jn_set(T, "gap_p50", cell_json(cell(&r, k, "gap_p50")));
		jn_set(T, "gap_p99", cell_json(cell(&r, k, "gap_p99")));
		jn_set(T, "chunks", cell_json(cell(&r, k, "chunks")));
		char world[32] = "?";
		if (cell(&r, k, "world_size")->t == SQLITE_INTEGER)
			snprintf(world, sizeof world, "%lld", (long long)cell(&r, k, "world_size")->i);
		say(L, "  TP ranks (decoded keys, %lld of world %s): all-rank-ready gap p50 %s  p99 %s  (n=%lld chunks)",
		    (long long)cell(&r, k, "ranks")->i, world,
		    ms(cnum(cell(&r, k, "gap_p50")), b1), ms(cnum(cell(&r, k, "gap_p99")), b2),
		    (long long)cell(&r, k, "chunks")->i);
	}
	if (take(res, "capture.sql", &r)) { status = 2; goto done; }
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		if (!L)
			continue;
		struct jnode *C = jn_set(L->R, "capture", jn_obj());
		static const char *const keys[] = {"malformed_lines", "truncated_tail", "drops", "cq_overflow",
						   "clock_anomalies", "cmp_unpaired", "cmp_after_horizon", "late_lines"};
		char line[512];
		int w = snprintf(line, sizeof line, "  ingest  :");
		for (int q = 0; q < (int)(sizeof keys / sizeof keys[0]); q++) {
			const struct cell *c = cell(&r, k, keys[q]);
			if (c && c->t != SQLITE_NULL) {
				jn_set(C, keys[q], cell_json(c));
				w += snprintf(line + w, sizeof line - w, " %s %lld", keys[q], (long long)c->i);
			}
		}
		say(L, "%s", line);
	}
	if (take(res, "ab.sql", &r)) { status = 2; goto done; }
	struct vec ab_text = {0};
	for (size_t k = 0; k < r.nrow; k++) {
		struct label *L = find_label(ls, nl, cstr(cell(&r, k, "label")));
		const char *vs = cstr(cell(&r, k, "vs")), *op = cstr(cell(&r, k, "op"));
		if (!L || !find_label(ls, nl, vs))
			continue; /* a --label selection without the base: nothing to pair */
		struct jnode *A = jn_get(L->R, "ab");
		if (!A) {
			A = jn_set(L->R, "ab", jn_obj());
			jn_set(A, "vs", jn_str(vs));
		}
		struct jnode *E = jn_set(A, op, jn_obj());
		jn_set(E, "n", cell_json(cell(&r, k, "n")));
		jn_set(E, "delta_p50", cell_json(cell(&r, k, "delta_p50")));
		jn_set(E, "delta_p95", cell_json(cell(&r, k, "delta_p95")));
		char line[512];
		snprintf(line, sizeof line, "  %s vs %s [%s]: span delta p50 %s (n=%lld paired; negative = %s faster)",
			 L->name, vs, op, ms(cnum(cell(&r, k, "delta_p50")), b1), (long long)cell(&r, k, "n")->i,
			 L->name);
		*(char **)vec_push(&ab_text, sizeof(char *)) = xstrdup(line);
	}

	if (o.progress)
		fprintf(stderr, "\r%*s\r", 40, "");
	/* output */
	struct jnode *root = jn_obj();
	for (int li = 0; li < nl; li++) {
		jn_set(root, ls[li].name, ls[li].R);
		ls[li].R = NULL;
	}
	if (!json_only) {
		printf("=== kvio report: %s (%d capture label(s)) ===\n", dbpath, nl);
		for (int li = 0; li < nl; li++) {
			printf("===== [%s] =====\n", ls[li].name);
			for (size_t q = 0; q < ls[li].text.n; q++)
				printf("%s\n", VEC_AT(&ls[li].text, char *, q));
		}
		if (ab_text.n) {
			printf("===== A/B paired object diff =====\n");
			for (size_t q = 0; q < ab_text.n; q++)
				printf("%s\n", VEC_AT(&ab_text, char *, q));
		}
	}
	for (size_t q = 0; q < ab_text.n; q++)
		free(VEC_AT(&ab_text, char *, q));
	vec_free(&ab_text);
	if (json_only) {
		jn_print(stdout, root, 1);
	} else if (json_file) {
		FILE *f = fopen(json_file, "w");
		if (!f) {
			kvio_err("%s: cannot write", json_file);
			status = 2;
		} else {
			jn_print(f, root, 1);
			if (fclose(f) != 0) {
				kvio_err("%s: write error", json_file);
				status = 2;
			} else {
				printf("(json -> %s)\n", json_file);
			}
		}
	}
	jn_free(root);
	if (!status && fail_qd1 && qd1_tripped) {
		kvio_err("--fail-on qd1: a load or store path looks serialized (QD~1)");
		status = 3;
	}
done:
	analyses_finish(&rn, NULL, 0); /* an early exit still waits for the other connections */
	rows_free(&r);
	for (int i = 0; i < NANALYSES; i++)
		rows_free(&res[i].rows);
	for (int li = 0; li < nl; li++) {
		jn_free(ls[li].R);
		for (size_t q = 0; q < ls[li].text.n; q++)
			free(VEC_AT(&ls[li].text, char *, q));
		vec_free(&ls[li].text);
		free(ls[li].name);
	}
	free(ls);
	sqlite3_close(db);
	fflush(stdout);
	return status;
}

/* The text of sql/<name>: from $KVIO_SQL_DIR when set (to try an edited
 * metric without rebuilding), else the copy built into kvio. */
const char *sql_text(const char *name)
{
	static char *loaded[64];
	static const char *loaded_name[64];
	const char *dir = getenv("KVIO_SQL_DIR");
	const char *builtin = NULL;
	for (const struct sql_file *f = kvio_sql_files; f->name; f++)
		if (!strcmp(f->name, name))
			builtin = f->text;
	if (!dir || !*dir || !builtin)
		return builtin;
	for (int i = 0; i < 64 && loaded_name[i]; i++)
		if (!strcmp(loaded_name[i], name))
			return loaded[i];
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		kvio_err("KVIO_SQL_DIR: %s: cannot open; using the built-in sql/%s", path, name);
		return builtin;
	}
	size_t cap = 1 << 16, n = 0, got;
	char *text = xmalloc(cap);
	while ((got = fread(text + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap)
			text = xrealloc(text, cap *= 2);
	}
	fclose(f);
	text[n] = 0;
	for (int i = 0; i < 64; i++)
		if (!loaded_name[i]) {
			loaded_name[i] = name;
			loaded[i] = text;
			return text;
		}
	return text;
}
