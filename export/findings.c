/* findings.c — the report's findings in the trace: the rows of sql/findings.sql
 * (the same file kvio-report counts) as the slices of a "kvio findings" track
 * group per label, each linked by a flow to the object it names.
 *
 * The SQL runs on a connection of its own, on a thread, while the commands are
 * written (export.c); its rows are then laid on tracks (a lane per overlap),
 * their descriptors written, the flows to the objects merged into the export's
 * (the objects are written after), and the slices written on the main
 * sequence, their numbers as debug annotations. A database that already holds
 * findings (a .pftrace import of a trace with them) is exported as it is. */
#include "export_int.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define FINDINGS_GROUP "kvio findings"
#define FINDINGS_RANK 5                    /* among the label's LMCache tracks: after objects in flight */
#define FINDING_FLOW0 ((uint64_t)1 << 62)  /* flow ids of findings: apart from the database's */
#define NFIXED 8                           /* label, kind, track, ts, dur, name, obj, obj_ts; then the args */

/* The text of sql/<name>: $KVIO_SQL_DIR's copy when set (as kvio-report reads
 * it), else the one built into kvio. malloc'd, or NULL when there is none. */
static char *findings_sql_text(const char *name)
{
	const char *dir = getenv("KVIO_SQL_DIR");
	if (dir && *dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		FILE *f = fopen(path, "rb");
		if (f) {
			size_t cap = 1 << 16, n = 0, got;
			char *t = xmalloc(cap);
			while ((got = fread(t + n, 1, cap - n - 1, f)) > 0)
				if ((n += got) + 1 == cap)
					t = xrealloc(t, cap *= 2);
			fclose(f);
			t[n] = 0;
			return t;
		}
	}
	for (const struct sql_file *s = kvio_sql_files; s->name; s++)
		if (!strcmp(s->name, name))
			return xstrdup(s->text);
	return NULL;
}

/* Bind the parameters the sql/ files read (those st names): the batch gap and
 * the window (unbound: NULL, "no bound"). */
static void findings_bind(sqlite3_stmt *st, const struct export_opts *eo)
{
	const struct kvio_window *w = eo->win;
	int on_t = w && w->has_time, on_id = w && w->has_tid, k;
	struct { const char *n; int on; int64_t v; } p[] = {
		{":batch_gap_ns", 1, eo->batch_gap_ns},
		{":win_lo", on_t, on_t ? w->lo_ns : 0}, {":win_hi", on_t, on_t ? w->hi_ns : 0},
		{":win_tlo", on_id, on_id ? (int64_t)w->tid_lo : 0}, {":win_thi", on_id, on_id ? (int64_t)w->tid_hi : 0},
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
		if (p[i].on && (k = sqlite3_bind_parameter_index(st, p[i].n)))
			sqlite3_bind_int64(st, k, p[i].v);
}

/* Keep the failure of connection c (the caller says it, once). -1. */
static int findings_fail(struct fconn *c, const char *what)
{
	if (!c->err) {
		c->errcode = sqlite3_errcode(c->db);
		c->err = xmalloc(strlen(what) + strlen(sqlite3_errmsg(c->db)) + 4);
		sprintf(c->err, "%s%s%s", what, *what ? ": " : "", sqlite3_errmsg(c->db));
	}
	return -1;
}

/* The current row of st (findings.sql's) into f. */
static void findings_keep(struct findings *f, sqlite3_stmt *st)
{
	if (!f->col) {
		f->ncol = sqlite3_column_count(st) - NFIXED;
		f->col = xcalloc(f->ncol > 0 ? (size_t)f->ncol : 1, sizeof *f->col);
		for (int c = 0; c < f->ncol; c++)
			f->col[c] = xstrdup(sqlite3_column_name(st, NFIXED + c));
	}
	struct frow *r = vec_push(&f->rows, sizeof *r);
	memset(r, 0, sizeof *r);
	r->label = xstrdup(nz(sqlite3_column_text(st, 0)));
	r->track = xstrdup(nz(sqlite3_column_text(st, 2)));
	r->ts = sqlite3_column_int64(st, 3);
	r->dur = sqlite3_column_int64(st, 4);
	r->name = xstrdup(nz(sqlite3_column_text(st, 5)));
	r->obj = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
	r->obj_ts = sqlite3_column_int64(st, 7);
	r->args = xcalloc(f->ncol > 0 ? (size_t)f->ncol : 1, sizeof *r->args);
	for (int c = 0; c < f->ncol; c++) {
		struct fcell *a = &r->args[c];
		a->t = sqlite3_column_type(st, NFIXED + c);
		if (a->t == SQLITE_INTEGER)
			a->i = sqlite3_column_int64(st, NFIXED + c);
		else if (a->t == SQLITE_FLOAT)
			a->d = sqlite3_column_double(st, NFIXED + c);
		else if (a->t != SQLITE_NULL)
			a->s = xstrdup(nz(sqlite3_column_text(st, NFIXED + c)));
	}
}

/* The first words of st's SQL after its comments, for KVIO_TIMING's lines. */
static const char *statement_head(sqlite3_stmt *st)
{
	const char *q = sqlite3_sql(st);
	while (q && (*q == ' ' || *q == '\n' || *q == '\t' || (q[0] == '-' && q[1] == '-')))
		q = q[0] == '-' ? (strchr(q, '\n') ? strchr(q, '\n') + 1 : q + strlen(q)) : q + 1;
	return q ? q : "";
}

/* Run every statement of sql (named what in errors and timing lines) on c;
 * keep: the rows of its statements with columns (findings.sql has one) are
 * the findings. Stops before a statement once f->stop is set. 0, or -1 (kept
 * in c). */
static int findings_exec(struct findings *f, struct fconn *c, const char *sql, const char *what, int keep)
{
	const char *tail = sql;
	int rc = 0;
	while (!rc && tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
			c->err = c->err ? c->err : xstrdup("interrupted");
			return -1;
		}
		if (sqlite3_prepare_v2(c->db, tail, -1, &st, &tail) != SQLITE_OK) {
			rc = findings_fail(c, what);
			break;
		}
		if (!st)
			continue; /* a comment or blank tail */
		findings_bind(st, f->eo);
		double t0 = now_s(), c0 = thread_cpu_s();
		int rows = keep && sqlite3_column_count(st) > 0, s;
		while ((s = sqlite3_step(st)) == SQLITE_ROW)
			if (rows)
				findings_keep(f, st);
		if (s != SQLITE_DONE)
			rc = findings_fail(c, what);
		if (getenv("KVIO_TIMING")) /* as kvio-report's: each statement's time, its first words */
			kvio_err("timing: findings: %s %.3fs (CPU %.3fs): %.*s", what, now_s() - t0, thread_cpu_s() - c0,
				 (int)strcspn(statement_head(st), "\n"), statement_head(st));
		sqlite3_finalize(st);
	}
	return rc;
}

/* Run sql/<name> on c (findings_exec). 0, or -1 (kept in c). */
static int findings_run(struct findings *f, struct fconn *c, const char *name, int keep)
{
	char *sql = findings_sql_text(name), what[64];
	snprintf(what, sizeof what, "sql/%s", name);
	if (!sql) {
		c->err = xstrdup("sql/findings.sql is not built into this kvio");
		return -1;
	}
	int rc = findings_exec(f, c, sql, what, keep);
	free(sql);
	return rc;
}

/* Each label's process track (its LMCache process; else another of its
 * processes): the findings group's parent. 0 or -1. */
static int findings_parents(struct findings *f)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->c.db, "SELECT p.label, t.id FROM main.kvio_track t JOIN kvio_proc p ON p.upid = t.upid"
			       " WHERE t.parent_id IS NULL AND t.name IS NULL ORDER BY p.label, p.name NOT LIKE 'LMCache %', t.id",
			       -1, &st, NULL) != SQLITE_OK)
		return findings_fail(&f->c, "reading the tracks");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *l = nz(sqlite3_column_text(st, 0));
		struct flabel *last = f->labels.n ? &VEC_AT(&f->labels, struct flabel, f->labels.n - 1) : NULL;
		if (last && !strcmp(last->label, l))
			continue;
		struct flabel *n = vec_push(&f->labels, sizeof *n);
		n->label = xstrdup(l);
		n->proc_track = sqlite3_column_int64(st, 1);
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return findings_fail(&f->c, "reading the tracks");
	return 0;
}

/* A findings connection's settings: temporary tables in files, a 16 MB cache,
 * SQLite's sorter on this thread (no memory map: measured, it saved the
 * read()s' system time and cost as much user time; and a file cut under a map
 * is a SIGBUS, not an error line). 0 or -1. */
static int findings_setup(struct fconn *c)
{
	if (sqlite3_exec(c->db, "PRAGMA temp_store=FILE; PRAGMA cache_size=-16384; PRAGMA threads=0;", NULL, NULL,
			 NULL))
		return findings_fail(c, "setting up the connection");
	return 0;
}

/* The thread: set the connection up, prelude.sql, findings.sql, the parents. */
static void *findings_main(void *arg)
{
	struct findings *f = arg;
	f->c.rc = findings_setup(&f->c) || findings_run(f, &f->c, "prelude.sql", 0) ||
			  findings_run(f, &f->c, "findings.sql", 1) || findings_parents(f) ? -1 : 0;
	if (getenv("KVIO_TIMING"))
		kvio_err("timing: findings: done, %.3fs of the thread's CPU", thread_cpu_s());
	return NULL;
}

/* A connection of f's on db's file, checked as db was (its process's memo:
 * no news), in a read transaction: its snapshot must be db's (snap), which
 * differs when kvio-ingest --follow committed between the two. 0, 1 (another
 * snapshot: c closed), or -1 after a one-line error. */
static int findings_open(sqlite3 *db, struct fconn *c, const char *snap)
{
	char *why = NULL, *id = NULL;
	if (!(c->db = db_open_input(sqlite3_db_filename(db, "main"))))
		return -1;
	if (db_exec(c->db, "BEGIN", "starting a read transaction") != SQLITE_OK)
		return -1;
	if (db_valid(c->db, "main", &why) != SQLITE_OK) { /* the file was checked by db's open */
		say_once("%s: %s", db_name(db), why ? why : "database changed while read");
		sqlite3_free(why);
		return -1;
	}
	if (!(id = db_snapshot_id(c->db, 0))) { /* (said once: the export's own reads may say it too) */
		say_once("%s: %s", db_name(db), sqlite3_errmsg(c->db));
		return -1;
	}
	int moved = strcmp(id, snap) != 0;
	sqlite3_free(id);
	if (moved) {
		sqlite3_close(c->db);
		c->db = NULL;
	}
	return moved;
}

/* f's connection on db's snapshot: when a commit came between, db's read
 * transaction starts again on the newest one (nothing is read from db before
 * this), up to 8 times. 0, or -1 after a one-line error. */
static int findings_open_snap(sqlite3 *db, struct findings *f)
{
	for (int tries = 0; tries < 8; tries++) {
		char *snap = db_snapshot_id(db, 0);
		if (!snap) /* (the export's reads of db say what failed: its first read of db is this) */
			return -1;
		int a = findings_open(db, &f->c, snap);
		sqlite3_free(snap);
		if (a <= 0)
			return a;
		if (db_exec(db, "COMMIT; BEGIN", "starting a read transaction") != SQLITE_OK)
			return -1;
	}
	say_once("%s: the database kept changing under the reader (8 commits while its connection opened)",
		 db_name(db));
	return -1;
}

/* Whether db holds findings already (an import's), and the track uuids'
 * start for f's. 0, or -1 (SQLite's error, said by the caller's next read). */
static int findings_tracks_of(sqlite3 *db, struct findings *f)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT 1 FROM kvio_track WHERE name = '" FINDINGS_GROUP "'),"
			       " (SELECT max(id) FROM kvio_track)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		f->imported = sqlite3_column_int(st, 0);
		f->next_uuid = (uint64_t)sqlite3_column_int64(st, 1) + 1;
	}
	return sqlite3_finalize(st) != SQLITE_OK ? -1 : 0;
}

/* Start computing db's findings (f zeroed): unless the database holds some
 * already, a second connection on its file runs the SQL on a thread. 0, or
 * -1 after a one-line error (none when the first read of db failed). */
int findings_start(sqlite3 *db, struct findings *f, const struct export_opts *eo)
{
	f->eo = eo;
	if (findings_tracks_of(db, f))
		return -1;
	if (f->imported)
		return 0;
	/* (db's snapshot may start again there: its tracks read again) */
	if (findings_open_snap(db, f) || findings_tracks_of(db, f))
		return -1;
	if (pthread_create(&f->c.th, NULL, findings_main, f)) {
		say_once("cannot start a thread for the findings");
		return -1;
	}
	f->c.started = 1;
	return 0;
}

/* Say f's failure as the report says a failed sql/ file: a damaged database
 * in the words of its checks, else the file and SQLite's reason. */
static void findings_say(sqlite3 *db, const struct findings *f)
{
	const char *m = strstr(f->c.err, KVIO_DAMAGED);
	if (f->c.errcode == SQLITE_CORRUPT && m)
		say_once("%s: %s", db_name(db), m);
	else if (f->c.errcode == SQLITE_CORRUPT)
		say_once("%s: " KVIO_DAMAGED "%s", db_name(db), f->c.err);
	else
		say_once("%s", f->c.err);
}

/* Wait for f's thread (stop: stop it first, the export failed). 0, or -1
 * after the one line saying why it failed. */
int findings_finish(sqlite3 *db, struct findings *f, int stop)
{
	if (!f->c.started)
		return 0;
	if (stop) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		sqlite3_interrupt(f->c.db);
	}
	pthread_join(f->c.th, NULL);
	f->c.started = 0;
	if (f->c.rc && !stop)
		findings_say(db, f);
	return stop ? 0 : f->c.rc;
}

/* A track group or track of the findings: a descriptor on the main sequence. */
static void findings_track(struct exporter *x, uint64_t uuid, const char *name, uint64_t parent, int rank,
			   int group)
{
	Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
	Kvio__Pf__TrackDescriptor d = KVIO__PF__TRACK_DESCRIPTOR__INIT;
	p.track_descriptor = &d;
	d.has_uuid = 1;
	d.uuid = uuid;
	d.name = (char *)name;
	d.has_parent_uuid = parent != 0;
	d.parent_uuid = parent;
	d.has_sibling_order_rank = 1;
	d.sibling_order_rank = rank;
	if (group) {
		d.has_child_ordering = 1;
		d.child_ordering = KVIO__PF__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
	}
	out_packet(&x->o, &p);
	x->packets++;
}

/* The process track of label (0: none found). */
static uint64_t findings_parent(const struct findings *f, const char *label)
{
	for (size_t i = 0; i < f->labels.n; i++)
		if (!strcmp(VEC_AT(&f->labels, struct flabel, i).label, label))
			return (uint64_t)VEC_AT(&f->labels, struct flabel, i).proc_track;
	return 0;
}

/* Rows [a, b) (one label, one track name, in ts order) on lanes: the first
 * lane whose last slice ends before the row begins (slices on a track never
 * overlap or touch); their track uuids from f->next_uuid, their descriptors
 * (one lane: the track; more: a group of name.000, ...) under parent. */
static void findings_lanes(struct exporter *x, struct findings *f, size_t a, size_t b, uint64_t parent, int rank)
{
	struct frow *r = f->rows.v;
	int64_t *end = xmalloc((b - a) * sizeof *end);
	size_t nl = 0;
	for (size_t i = a; i < b; i++) {
		size_t l = 0;
		while (l < nl && end[l] >= r[i].ts)
			l++;
		if (l == nl)
			nl++;
		end[l] = r[i].ts + (r[i].dur > 0 ? r[i].dur : 0);
		r[i].lane = (uint32_t)l;
	}
	free(end);
	uint64_t base = f->next_uuid;
	if (nl == 1) {
		findings_track(x, base, r[a].track, parent, rank, 0);
	} else {
		findings_track(x, base, r[a].track, parent, rank, 1);
		for (size_t l = 0; l < nl; l++) {
			char name[256];
			snprintf(name, sizeof name, "%s.%03zu", r[a].track, l);
			findings_track(x, base + 1 + l, name, base, (int)l, 0);
		}
		base++;
	}
	for (size_t i = a; i < b; i++)
		r[i].uuid = base + r[i].lane;
	f->next_uuid = base + nl;
}

/* The findings' track descriptors: per label a group under its process
 * track, in it a track (or lanes) per track name, in the rows' order. */
void findings_tracks(struct exporter *x, struct findings *f)
{
	struct frow *r = f->rows.v;
	size_t n = f->rows.n;
	for (size_t a = 0; a < n;) {
		size_t e = a;
		while (e < n && !strcmp(r[e].label, r[a].label))
			e++;
		uint64_t group = f->next_uuid++;
		findings_track(x, group, FINDINGS_GROUP, findings_parent(f, r[a].label), FINDINGS_RANK, 1);
		int rank = 0;
		for (size_t t = a; t < e; rank++) {
			size_t u = t;
			while (u < e && !strcmp(r[u].track, r[t].track))
				u++;
			findings_lanes(x, f, t, u, group, rank);
			t = u;
		}
		a = e;
	}
}

/* Merge into fl the flow between each finding and its object (a written
 * object: under a window, one it keeps). The earlier of the two is the
 * flow's source (trace_processor links a flow in time order; at one ts the
 * object, written first); the finding's end is set when it is written. */
void findings_flows(const struct exporter *x, struct findings *f, struct flows *fl)
{
	struct frow *r = f->rows.v;
	size_t add = 0;
	for (size_t i = 0; i < f->rows.n; i++) {
		r[i].fid = 0;
		if (r[i].obj < 0 || (x->keep && !kept_has(x->keep, r[i].obj)))
			continue;
		r[i].fid = FINDING_FLOW0 + i;
		add++;
	}
	struct flowref *ends = xmalloc((add ? add : 1) * sizeof *ends);
	size_t k = 0;
	for (size_t i = 0; i < f->rows.n; i++)
		if (r[i].fid)
			ends[k++] = (struct flowref){r[i].obj, r[i].fid, r[i].obj_ts <= r[i].ts};
	flows_add(fl, ends, k);
	free(ends);
}

size_t findings_objects(const struct findings *f, int64_t **ids)
{
	const struct frow *r = f->rows.v;
	size_t n = 0;
	*ids = xmalloc((f->rows.n ? f->rows.n : 1) * sizeof **ids);
	for (size_t i = 0; i < f->rows.n; i++)
		if (r[i].fid)
			(*ids)[n++] = r[i].obj;
	qsort(*ids, n, sizeof **ids, i64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || (*ids)[i] != (*ids)[u - 1])
			(*ids)[u++] = (*ids)[i];
	return u;
}

/* The findings' slices on the main sequence: name, args (the non-NULL
 * columns after obj, each with its type), the flow to the object. */
void findings_slices(struct exporter *x, struct findings *f)
{
	const struct frow *r = f->rows.v;
	for (size_t i = 0; i < f->rows.n && !out_failed(&x->o); i++) {
		ev_reset(x, r[i].dur > 0 ? KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN : KVIO__PF__TRACK_EVENT__TYPE__TYPE_INSTANT,
			 r[i].ts, r[i].uuid);
		ev_name(x, r[i].name);
		for (int c = 0; c < f->ncol; c++) {
			const struct fcell *a = &r[i].args[c];
			if (a->t == SQLITE_INTEGER && a->i < 0)
				ann_int(x, f->col[c], a->i);
			else if (a->t == SQLITE_INTEGER)
				ann_uint(x, f->col[c], (uint64_t)a->i);
			else if (a->t == SQLITE_FLOAT)
				ann_double(x, f->col[c], a->d);
			else if (a->t != SQLITE_NULL)
				ann_str(x, f->col[c], a->s, 0);
		}
		if (r[i].fid && r[i].obj_ts <= r[i].ts) { /* the object is the source: this slice ends the flow */
			x->e.tflows[0] = r[i].fid;
			x->e.te.n_terminating_flow_ids = 1;
		} else if (r[i].fid) {
			x->e.flows[0] = r[i].fid;
			x->e.te.n_flow_ids = 1;
		}
		ev_emit(x);
		x->findings++;
		if (r[i].dur > 0)
			emit_end(x, SEQ_ID, r[i].ts + r[i].dur, r[i].uuid);
	}
}

/* Free what f holds (its rows, names, error; its connection if still open). */
void findings_free(struct findings *f)
{
	struct frow *r = f->rows.v;
	for (size_t i = 0; i < f->rows.n; i++) {
		for (int c = 0; c < f->ncol; c++)
			free(r[i].args[c].s);
		free(r[i].args);
		free(r[i].label);
		free(r[i].track);
		free(r[i].name);
	}
	vec_free(&f->rows);
	for (int c = 0; c < f->ncol; c++)
		free(f->col[c]);
	free(f->col);
	for (size_t i = 0; i < f->labels.n; i++)
		free(VEC_AT(&f->labels, struct flabel, i).label);
	vec_free(&f->labels);
	free(f->c.err);
	if (f->c.db)
		sqlite3_close(f->c.db);
}
