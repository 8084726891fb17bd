/* run.c — running the sql/ files for kvio-report: one file's statements on a
 * connection (their rows kept as cells), and the queue of analyses taken by a
 * pool of connections, one per core up to MAX_CONN.
 *
 * Each sql/ file is independent once prelude.sql has run, so the files are a
 * queue taken by the connections (each but the caller's on its own thread,
 * each with its own prelude: temp tables cannot be shared between SQLite
 * connections), heaviest first so they finish together; the rows are kept
 * and formatted afterwards in the table's order. */
#include "report.h"
#include "sqlfiles.h"
#include "../db/schema.h"
#include "../db/dir.h" /* KVIO_DAMAGED */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- query results --------------------------------------------------------- */

/* Free r's cells and names; r is left empty. */
void rows_free(struct rows *r)
{
	for (size_t k = 0; k < r->nrow * (size_t)r->ncol; k++)
		free(r->v[k].s);
	for (int c = 0; c < r->ncol; c++)
		free(r->col[c]);
	free(r->v);
	free(r->col);
	memset(r, 0, sizeof *r);
}

/* The cell of column name in row (row < r->nrow), or NULL for no such column. */
const struct cell *cell(const struct rows *r, size_t row, const char *name)
{
	for (int c = 0; c < r->ncol; c++)
		if (!strcmp(r->col[c], name))
			return &r->v[row * r->ncol + c];
	return NULL;
}

/* A cell as a number: 0 for NULL, text or no cell. */
double cnum(const struct cell *c)
{
	return !c ? 0 : c->t == SQLITE_INTEGER ? (double)c->i : c->t == SQLITE_FLOAT ? c->d : 0;
}

/* A cell's text, or NULL when it is not text. */
const char *cstr(const struct cell *c)
{
	return c && c->t == SQLITE_TEXT ? c->s : NULL;
}

/* One line for a failed statement, from the first connection that fails (the
 * others usually fail the same way: a full temp directory hits them all). A
 * full disk names where SQLite's temp files go: the database is read-only, so
 * it is never the database that filled up. */
static atomic_int stopping; /* an early exit interrupted the pool on purpose */
static atomic_int said;     /* a failure was said (once a report) */

void run_reset(void)
{
	atomic_store(&stopping, 0);
	atomic_store(&said, 0);
}

static void sql_fail(sqlite3 *db, const char *name)
{
	/* an early exit stopped it (already said why): whatever the interrupted
	 * statement failed with is no news */
	if (sqlite3_errcode(db) == SQLITE_INTERRUPT || atomic_load(&stopping))
		return;
	if (atomic_exchange(&said, 1))
		return;
	const char *msg = sqlite3_errmsg(db);
	if (sqlite3_errcode(db) == SQLITE_CORRUPT && !strncmp(msg, KVIO_DAMAGED, strlen(KVIO_DAMAGED))) {
		kvio_err("%s: %s", db_name(db), msg); /* the database, not the file that read it */
	} else if (sqlite3_errcode(db) == SQLITE_CORRUPT) { /* SQLite's own finding, in the pages */
		kvio_err("%s: " KVIO_DAMAGED "%s (while sql/%s read it)", db_name(db), msg, name);
	} else if (sqlite3_errcode(db) == SQLITE_FULL) {
		const char *dir = getenv("SQLITE_TMPDIR");
		kvio_err("sql/%s: %s: no room for SQLite's temp files in %s (set SQLITE_TMPDIR to a roomier directory)",
			 name, sqlite3_errmsg(db), dir && *dir ? dir : "/var/tmp or /tmp");
	} else {
		kvio_err("sql/%s: %s", name, sqlite3_errmsg(db));
	}
}

/* Copy the current row of st (ncol columns) into row nrow of r, growing r.v
 * (capacity *cap rows). */
static void keep_row(struct rows *r, sqlite3_stmt *st, size_t *cap)
{
	int ncol = r->ncol;
	if (r->nrow == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		r->v = xrealloc(r->v, *cap * ncol * sizeof *r->v);
	}
	for (int c = 0; c < ncol; c++) {
		struct cell *x = &r->v[r->nrow * ncol + c];
		memset(x, 0, sizeof *x);
		x->t = sqlite3_column_type(st, c);
		if (x->t == SQLITE_INTEGER)
			x->i = sqlite3_column_int64(st, c);
		else if (x->t == SQLITE_FLOAT)
			x->d = sqlite3_column_double(st, c);
		else if (x->t == SQLITE_TEXT || x->t == SQLITE_BLOB) {
			x->t = SQLITE_TEXT;
			x->s = xstrdup(nz(sqlite3_column_text(st, c)));
		}
	}
	r->nrow++;
}

/* Bind the report's parameters st names (:batch_gap_ns, the window, :base_label). */
static void bind_opts(sqlite3_stmt *st, const struct report_opts *o)
{
	int pi = sqlite3_bind_parameter_index(st, ":batch_gap_ns");
	if (pi)
		sqlite3_bind_int64(st, pi, o->batch_gap_ns);
	/* the window (unbound, NULL, without one: the sql/ files read NULL as "no bound") */
	struct { const char *n; int on; int64_t v; } wp[] = {
		{":win_lo", o->win.has_time, o->win.lo_ns}, {":win_hi", o->win.has_time, o->win.hi_ns},
		{":win_tlo", o->win.has_tid, (int64_t)o->win.tid_lo}, {":win_thi", o->win.has_tid, (int64_t)o->win.tid_hi},
	};
	for (size_t k = 0; k < sizeof wp / sizeof wp[0]; k++)
		if (wp[k].on && (pi = sqlite3_bind_parameter_index(st, wp[k].n)))
			sqlite3_bind_int64(st, pi, wp[k].v);
	if ((pi = sqlite3_bind_parameter_index(st, ":base_label")) && o->base_label)
		sqlite3_bind_text(st, pi, o->base_label, -1, SQLITE_STATIC);
}

/* Step the prepared statement st of sql/<name> to its end, its rows (if it
 * has columns) into r. 0, or -1 after a one-line error. */
static int step_all(sqlite3 *db, sqlite3_stmt *st, const char *name, const struct report_opts *o, struct rows *r)
{
	bind_opts(st, o);
	int ncol = sqlite3_column_count(st), rc;
	size_t cap = 0;
	memset(r, 0, sizeof *r);
	if (ncol) {
		r->ncol = ncol;
		r->col = xmalloc(ncol * sizeof *r->col);
		for (int c = 0; c < ncol; c++)
			r->col[c] = xstrdup(sqlite3_column_name(st, c));
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		keep_row(r, st, &cap);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		sql_fail(db, name);
		rows_free(r);
		return -1;
	}
	return 0;
}

/* Run every statement of sql/<name>; the rows of the last one that returns
 * rows land in out. Returns 0, or -1 after a one-line error. */
int run_sql(sqlite3 *db, const char *name, const struct report_opts *o, struct rows *out)
{
	const char *sql = sql_text(name);
	memset(out, 0, sizeof *out);
	if (!sql) {
		kvio_err("internal: sql/%s is not built in", name);
		return -1;
	}
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		struct rows r;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			sql_fail(db, name);
			return -1;
		}
		if (!st)
			continue; /* comment or blank tail */
		if (step_all(db, st, name, o, &r))
			return -1;
		if (r.ncol) {
			rows_free(out);
			*out = r;
		}
	}
	return 0;
}

/* Print rows '|'-separated, reals as the sqlite3 shell prints them (%!.15g). */
void rows_print(const struct rows *r)
{
	for (size_t k = 0; k < r->nrow; k++)
		for (int c = 0; c < r->ncol; c++) {
			const struct cell *x = &r->v[k * r->ncol + c];
			char buf[64];
			if (x->t == SQLITE_INTEGER)
				printf("%lld", (long long)x->i);
			else if (x->t == SQLITE_FLOAT) {
				sqlite3_snprintf(sizeof buf, buf, "%!.15g", x->d);
				fputs(buf, stdout);
			} else if (x->t == SQLITE_TEXT)
				fputs(x->s, stdout);
			putchar(c + 1 < r->ncol ? '|' : '\n');
		}
}

/* ---- a --compare side's value sets (the stream: multi.h) -------------------- */

static int samples_fd = -1; /* run_send_samples: where they go, or -1 */

void run_send_samples(int fd)
{
	samples_fd = fd;
}

/* The stream's writer: a buffer, written whole; err: the first write's errno. */
struct sbuf {
	int fd, err;
	size_t n;
	char b[1 << 16];
};

static void sb_flush(struct sbuf *b)
{
	for (size_t off = 0; off < b->n && !b->err;) {
		ssize_t k = write(b->fd, b->b + off, b->n - off);
		if (k < 0 && errno != EINTR)
			b->err = errno;
		else if (k > 0)
			off += (size_t)k;
	}
	b->n = 0;
}

static void sb_put(struct sbuf *b, const void *p, size_t n)
{
	for (const char *c = p; n;) {
		if (b->n == sizeof b->b)
			sb_flush(b);
		size_t k = n < sizeof b->b - b->n ? n : sizeof b->b - b->n;
		memcpy(b->b + b->n, c, k);
		b->n += k, c += k, n -= k;
	}
}

/* One row of samples.sql (label, sample, v, n) into the stream: a set's header
 * when (label, sample) differs from the last row's (*set: "label\nsample"). */
static void sb_row(struct sbuf *b, sqlite3_stmt *st, char **set)
{
	const char *l = (const char *)sqlite3_column_text(st, 0), *s = (const char *)sqlite3_column_text(st, 1);
	int64_t n = sqlite3_column_int64(st, 3);
	if (sqlite3_column_type(st, 0) != SQLITE_TEXT || sqlite3_column_type(st, 1) != SQLITE_TEXT || !l || !s || n < 1)
		return; /* no set, or no value */
	uint32_t ll = (uint32_t)strlen(l), sl = (uint32_t)strlen(s);
	if (!*set || strncmp(*set, l, ll) || (*set)[ll] != '\n' || strcmp(*set + ll + 1, s)) {
		free(*set);
		*set = xmalloc((size_t)ll + sl + 2);
		sprintf(*set, "%s\n%s", l, s);
		sb_put(b, "G", 1);
		sb_put(b, &ll, sizeof ll);
		sb_put(b, &sl, sizeof sl);
		sb_put(b, l, ll);
		sb_put(b, s, sl);
	}
	double v = sqlite3_column_double(st, 2);
	sb_put(b, "V", 1);
	sb_put(b, &v, sizeof v);
	sb_put(b, &n, sizeof n);
}

/* sql/samples.sql on db (the connection the report's analyses ran on: the
 * gathers they left in its temp tables are reused) into fd, then 'E'; fd
 * closed. 0, or -1 after a one-line error. */
static int samples_send(sqlite3 *db, const struct report_opts *o, int fd)
{
	const char *tail = sql_text("samples.sql");
	struct sbuf *b = xmalloc(sizeof *b);
	char *set = NULL;
	int rc = 0;
	b->fd = fd, b->err = 0, b->n = 0;
	while (!rc && tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			sql_fail(db, "samples.sql");
			rc = -1;
			break;
		}
		if (!st)
			continue;
		bind_opts(st, o);
		int step, rows = sqlite3_column_count(st) == 4;
		while ((step = sqlite3_step(st)) == SQLITE_ROW && !b->err)
			if (rows)
				sb_row(b, st, &set);
		sqlite3_finalize(st);
		if (step != SQLITE_DONE && step != SQLITE_ROW) {
			sql_fail(db, "samples.sql");
			rc = -1;
		}
	}
	if (!rc)
		sb_put(b, "E", 1);
	sb_flush(b);
	if (!rc && b->err) {
		kvio_err("%s: cannot hand the value sets to --compare: %s", db_name(db), strerror(b->err));
		rc = -1;
	}
	free(set);
	free(b);
	close(fd);
	return rc;
}

/* Temp tables and sorts go to temp files (page cache, not the heap) with a 16 MB
 * cache per connection: a report's memory stays ~120-140 MB at any capture size
 * (in-memory temp storage took 315 MB at 1M lines and 1.26 GB at 4M, for the
 * same time). */
int prepare_conn(sqlite3 *db, const struct report_opts *o)
{
	struct rows r = {0};
	int rc = db_exec(db, "PRAGMA temp_store=FILE; PRAGMA cache_size=-16384; PRAGMA threads=0;", "setting up the connection") != SQLITE_OK ||
		 run_sql(db, "prelude.sql", o, &r) != 0;
	rows_free(&r);
	return rc ? -1 : 0;
}

/* ---- the pool ------------------------------------------------------------ */

/* Files that share TEMP tables (prelude.sql's shared gathers, filled once per
 * connection) run on one connection, in this order: the connection that takes
 * the first of them in the queue runs them all. */
static const char *const together[] = {"latency.sql", "batches.sql", "qd.sql", "qd1.sql", "findings.sql"};
#define NTOGETHER (int)(sizeof together / sizeof together[0])

/* The queue index of together[k] (k < 0: of the first of them in the queue), or -1. */
static int together_at(const struct runner *rn, int k)
{
	for (int i = 0; i < rn->nfiles; i++)
		for (int t = k < 0 ? 0 : k; t < (k < 0 ? NTOGETHER : k + 1); t++)
			if (!strcmp(rn->files[i], together[t]))
				return i;
	return -1;
}

/* The next file of the queue for a connection, or -1 when none is left (the
 * files of together[] but the first are run with it). */
static int take_next(struct runner *rn)
{
	int first = together_at(rn, -1), i = -1;
	pthread_mutex_lock(&rn->mu);
	while (i < 0 && rn->next < rn->nfiles) {
		i = rn->next++;
		for (int k = 0; i >= 0 && i != first && k < NTOGETHER; k++)
			if (!strcmp(rn->files[i], together[k]))
				i = -1;
	}
	pthread_mutex_unlock(&rn->mu);
	return i;
}

/* The files whose gathers hold the most memory (at 16M lines: qd1.sql's
 * per-object gaps ~65 MB, objects.sql's per-object groups ~50 MB): one at a
 * time, so the peak is the larger, not the sum (the 16M report's peak RSS was
 * ~126 MB or ~155 MB by whether they met). objects.sql is queued first on the
 * connection beside together[]'s, which reaches qd1.sql after three files:
 * they rarely wait for each other. */
static const char *const wide[] = {"objects.sql", "qd1.sql"};

static int is_wide(const char *file)
{
	for (size_t k = 0; k < sizeof wide / sizeof wide[0]; k++)
		if (!strcmp(file, wide[k]))
			return 1;
	return 0;
}

/* File i of the queue (and its html follower) has run: the progress line's count. */
static void analysis_done(struct runner *rn, int i)
{
	pthread_mutex_lock(&rn->mu);
	rn->ndone += 1 + (rn->html && rn->html[i]);
	progress_tick(&rn->prog, (uint64_t)rn->ndone, (uint64_t)rn->ndone);
	pthread_mutex_unlock(&rn->mu);
}

/* Run file i of the queue (and its html follower) on w's connection db. */
static void run_file(struct worker *w, sqlite3 *db, int i)
{
	struct runner *rn = w->rn;
	int wd = is_wide(rn->files[i]);
	if (wd)
		pthread_mutex_lock(&rn->wide);
	double t0 = now_s();
	if (getenv("KVIO_TIMING"))
		kvio_err("timing: conn %d starts %s", w->which, rn->files[i]);
	if (run_sql(db, rn->files[i], &rn->o, &rn->res[i].rows) ||
	    (rn->html && rn->html[i] && run_sql(db, rn->html[i], &rn->o, &rn->res[i].html)))
		w->rc = -1;
	else if (getenv("KVIO_TIMING"))
		kvio_err("timing: conn %d %s %.2fs", w->which, rn->files[i], now_s() - t0);
	if (wd)
		pthread_mutex_unlock(&rn->wide);
	if (!w->rc)
		rn->res[i].done = 1;
	analysis_done(rn, i);
}

/* One connection's life: open (unless given), prelude, then files from the
 * queue until none is left or one fails (w->rc -1). */
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
	/* its own read transaction: one snapshot for all its files (a database being
	 * written, kvio-ingest --follow, moves on between statements otherwise) */
	if (!w->db && (db_exec(db, "BEGIN", "starting a read transaction") != SQLITE_OK || !(w->snap = db_snapshot_id(db, 1)))) {
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
		if (i != together_at(rn, -1)) {
			run_file(w, db, i);
			continue;
		}
		for (int k = 0, j; !w->rc && k < NTOGETHER; k++) {
			pthread_mutex_lock(&rn->mu);
			int stop = rn->stop;
			pthread_mutex_unlock(&rn->mu);
			if (!stop && (j = together_at(rn, k)) >= 0)
				run_file(w, db, j);
		}
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
void analyses_start(struct runner *rn, const char *dbpath, const struct report_opts *o,
		    const char *const *files, const char *const *html, int n, struct result *res)
{
	sql_text("prelude.sql");
	for (int i = 0; i < n; i++) { /* load KVIO_SQL_DIR copies before the threads start */
		sql_text(files[i]);
		if (html && html[i])
			sql_text(html[i]);
	}
	long ncpu = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	rn->nw = ncpu < 1 ? 1 : ncpu > MAX_CONN ? MAX_CONN : (int)ncpu;
	rn->dbpath = dbpath;
	rn->o = *o;
	rn->o.progress = 0;
	rn->ndone = 0;
	progress_start(&rn->prog, o->progress && progress_wanted(0), dbpath, "analyses");
	int total = n;
	for (int i = 0; html && i < n; i++)
		total += html[i] != NULL;
	progress_total(&rn->prog, (uint64_t)total, 0);
	rn->files = files;
	rn->html = html;
	rn->nfiles = n;
	rn->res = res;
	rn->next = 0;
	pthread_mutex_init(&rn->mu, NULL);
	pthread_mutex_init(&rn->wide, NULL);
	for (int k = 1; k < rn->nw; k++) {
		rn->w[k] = (struct worker){.rn = rn, .which = k};
		rn->w[k].threaded = pthread_create(&rn->w[k].th, NULL, work, &rn->w[k]) == 0;
	}
	rn->started = 1;
}

/* Run the queue on the caller's connection too (prelude.sql already run
 * there), then wait for the others. 0, or -1 after an error (reported). */
int analyses_finish(struct runner *rn, sqlite3 *main, int run_main)
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
		rn->next = rn->nfiles;
		rn->stop = 1;
		atomic_store(&stopping, 1);
		for (int k = 1; k < rn->nw; k++)
			if (rn->w[k].live)
				sqlite3_interrupt(rn->w[k].live);
		pthread_mutex_unlock(&rn->mu);
	}
	int moved = 0;
	for (int k = 1; k < rn->nw; k++) {
		if (rn->w[k].threaded)
			pthread_join(rn->w[k].th, NULL);
		else
			work(&rn->w[k]);
		rc |= rn->w[k].rc;
		moved |= rn->w[k].snap && (!rn->snap || strcmp(rn->w[k].snap, rn->snap));
		sqlite3_free(rn->w[k].snap);
		rn->w[k].snap = NULL;
	}
	if (!rc && moved && run_main) {
		if (getenv("KVIO_TIMING"))
			kvio_err("timing: the database moved on between the connections' snapshots: again, on one");
		return SNAPSHOT_MOVED;
	}
	if (!rc && run_main && samples_fd >= 0) { /* a --compare side: its value sets, on main */
		double t0 = now_s();
		rc = samples_send(main, &rn->o, samples_fd);
		samples_fd = -1;
		if (getenv("KVIO_TIMING"))
			kvio_err("timing: conn 0 samples.sql (to --compare) %.2fs", now_s() - t0);
	}
	pthread_mutex_destroy(&rn->mu);
	pthread_mutex_destroy(&rn->wide);
	progress_end(&rn->prog, 0, 0, 0);
	rn->started = 0;
	return rc ? -1 : 0;
}

/* The text of sql/<name>: from $KVIO_SQL_DIR when set (to try an edited
 * metric without rebuilding), else the copy built into kvio. A name with a
 * '/' is a path (--rows ./mine.sql): that file's text, or NULL with errno. */
const char *sql_text(const char *name)
{
	static char *loaded[64];
	static const char *loaded_name[64];
	const char *dir = getenv("KVIO_SQL_DIR");
	const char *builtin = NULL;
	int is_path = strchr(name, '/') != NULL;
	for (const struct sql_file *f = kvio_sql_files; f->name; f++)
		if (!strcmp(f->name, name))
			builtin = f->text;
	if (!is_path && (!dir || !*dir || !builtin))
		return builtin;
	for (int i = 0; i < 64 && loaded_name[i]; i++)
		if (!strcmp(loaded_name[i], name))
			return loaded[i];
	char path[4096];
	if (is_path)
		snprintf(path, sizeof path, "%s", name);
	else
		snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f && is_path)
		return NULL;
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
