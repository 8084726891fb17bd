/* window.c — what an export of --time-range / --trace-id reads, found once
 * before anything is written (a flow is written when both its ends are), and
 * the flows: slice id -> its flow ids. */
#include "export_int.h"
#include <stdlib.h>

/* ---- the window: which rows an export of --time-range / --trace-id reads ------
 * Generic slices (kvio_slice) are kept when their span overlaps the window and
 * their trace_id (an object's, or a "no device cmds" instant's arg) is in the
 * range; slices without one (serving, overview) by time only; the capture_info
 * instant always (as at ingest: it says what produced the database).
 * Commands are read only from the chunks whose extent (kvio_cmd_range) meets
 * the window: time proportional to the window, not to the database. */
#define WIN_SLICE_SQL                                                                                  \
	" WHERE s.name = 'capture_info' OR s.ts <= :hi AND (s.dur < 0 OR s.ts + s.dur >= :lo) AND (:ht = 0 OR coalesce("\
	"(SELECT o.trace_id FROM kvio_obj o WHERE o.id = s.id), (SELECT a.int_value FROM kvio_arg a"      \
	" WHERE a.arg_set_id = s.id AND a.key = 'debug.trace_id')) IS NULL OR coalesce((SELECT o.trace_id" \
	" FROM kvio_obj o WHERE o.id = s.id), (SELECT a.int_value FROM kvio_arg a WHERE a.arg_set_id ="   \
	" s.id AND a.key = 'debug.trace_id')) BETWEEN :tlo AND :thi)"
/* Prepare sql with the window's parameters bound (those it names). */
int win_prepare(sqlite3 *db, const struct kvio_window *w, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL))
		return -1;
	int64_t lo = w && w->has_time ? w->lo_ns : INT64_MIN, hi = w && w->has_time ? w->hi_ns : INT64_MAX;
	struct { const char *n; int64_t v; } p[] = {
		{":lo", lo}, {":hi", hi}, {":ht", w && w->has_tid},
		{":tlo", w ? (int64_t)w->tid_lo : 0}, {":thi", w ? (int64_t)w->tid_hi : 0},
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		int k = sqlite3_bind_parameter_index(*st, p[i].n);
		if (k)
			sqlite3_bind_int64(*st, k, p[i].v);
	}
	return 0;
}

/* Whether window w can keep a command of a chunk of extent e (its time
 * overlaps; under --trace-id, its tagged commands' range meets it), and
 * *inside: every command of it is kept (a time-only window holding the whole
 * extent: the chunk need not be read). */
static int extent_meets(const struct kvio_window *w, const struct extent *e, int *inside)
{
	int64_t lo = w->has_time ? w->lo_ns : INT64_MIN, hi = w->has_time ? w->hi_ns : INT64_MAX;
	*inside = e->ts_min >= lo && e->end_max <= hi && !w->has_tid;
	return e->ts_min <= hi && e->end_max >= lo &&
	       (!w->has_tid || (e->tid_max && e->tid_max >= (int64_t)w->tid_lo && e->tid_min <= (int64_t)w->tid_hi));
}

/* A command is written: its trace_id and span pass the window. */
static int cmd_kept(const struct kvio_window *w, const struct chunk_view *v, uint32_t i)
{
	return !w || (window_cmd_tid(w, v->trace_id[i]) && window_span(w, v->ts[i], v->dur[i]));
}

void kept_free(struct kept *k)
{
	for (size_t i = 0; i < k->chunks.n; i++)
		free(VEC_AT(&k->chunks, struct kept_chunk, i).bits);
	vec_free(&k->slices);
	vec_free(&k->chunks);
}

/* The window's commands of chunk k (inside: all of them, unread; else read
 * and checked, a bit per command). -1 when it cannot be read (said). */
static int kept_chunk_add(sqlite3 *db, struct exporter *x, struct kept *kp, size_t k, int inside)
{
	struct kept_chunk c = {x->dir.first[k], k, x->dir.n[k], 0, NULL};
	struct chunk_view v;
	if (inside) {
		c.nkept = c.n;
	} else {
		if (export_read_chunk(db, x, k, 1, &v))
			return -1;
		c.bits = xcalloc(c.n / 64 + 1, sizeof *c.bits);
		for (uint32_t i = 0; i < c.n; i++)
			if (cmd_kept(x->win, &v, i)) {
				c.bits[i / 64] |= (uint64_t)1 << (i % 64);
				c.nkept++;
			}
	}
	*(struct kept_chunk *)vec_push(&kp->chunks, sizeof c) = c;
	return 0;
}

/* Command i of chunk c is kept. */
int kept_chunk_has(const struct kept_chunk *c, uint32_t i)
{
	return !c->bits ? i < c->n : i < c->n && (c->bits[i / 64] >> (i % 64) & 1);
}

/* Find everything x's window keeps. Returns 0 or -1. */
int window_kept(sqlite3 *db, struct exporter *x, struct kept *k)
{
	sqlite3_stmt *st;
	if (win_prepare(db, x->win, "SELECT s.id FROM kvio_slice s" WIN_SLICE_SQL " ORDER BY s.id", &st))
		return -1;
	int sr;
	while ((sr = sqlite3_step(st)) == SQLITE_ROW)
		*(int64_t *)vec_push(&k->slices, sizeof(int64_t)) = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sr != SQLITE_DONE)
		return -1; /* a read error: not a shorter window */
	for (size_t c = 0; c < x->dir.nchunks; c++) {
		int inside;
		if (extent_meets(x->win, &x->dir.ext[c], &inside) && kept_chunk_add(db, x, k, c, inside))
			return -1;
	}
	return 0;
}

/* id is in the ascending list ids. */
static int in_ids(const struct vec *ids, int64_t id)
{
	size_t lo = 0, hi = ids->n;
	const int64_t *v = ids->v;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ids->n && v[lo] == id;
}

/* The slice (generic or command) of id is kept. */
static int id_kept(const struct kept *k, int64_t id)
{
	size_t lo = 0, hi = k->chunks.n;
	const struct kept_chunk *c = k->chunks.v;
	while (lo < hi) { /* the last chunk starting at or before id */
		size_t mid = (lo + hi) / 2;
		if (c[mid].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && id - c[lo - 1].first < (int64_t)c[lo - 1].n && kept_chunk_has(&c[lo - 1], (uint32_t)(id - c[lo - 1].first)))
		return 1;
	return in_ids(&k->slices, id);
}

/* The slice of id (generic or command) is written under the window k keeps. */
int kept_has(const struct kept *k, int64_t id)
{
	return id_kept(k, id);
}

static int flowref_cmp(const void *a, const void *b)
{
	const struct flowref *x = a, *y = b;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

/* The flow rows, with k only those whose ends both lie in the id spans of
 * what k keeps (its commands' chunks, its slices): SQLite skips the rest of the
 * table without returning them; id_kept then decides. */
static int flow_query(sqlite3 *db, const struct kept *k, sqlite3_stmt **st)
{
	if (!k)
		return sqlite3_prepare_v2(db, "SELECT slice_out, slice_in, coalesce(trace_id, id) FROM flow", -1, st, NULL);
	if (sqlite3_prepare_v2(db, "SELECT slice_out, slice_in, coalesce(trace_id, id) FROM flow"
				   " WHERE (slice_out BETWEEN ?1 AND ?2 OR slice_out BETWEEN ?3 AND ?4)"
				   " AND (slice_in BETWEEN ?1 AND ?2 OR slice_in BETWEEN ?3 AND ?4)", -1, st, NULL))
		return -1;
	int64_t span[4] = {1, 0, 1, 0}; /* lo > hi: empty */
	const struct kept_chunk *c = k->chunks.v;
	for (size_t i = 0; i < k->chunks.n; i++) {
		if (!c[i].nkept)
			continue;
		if (span[0] > span[1] || c[i].first < span[0])
			span[0] = c[i].first;
		if (span[0] > span[1] || c[i].first + c[i].n - 1 > span[1])
			span[1] = c[i].first + c[i].n - 1;
	}
	if (k->slices.n) {
		span[2] = VEC_AT(&k->slices, int64_t, 0);
		span[3] = VEC_AT(&k->slices, int64_t, k->slices.n - 1);
	}
	for (int i = 0; i < 4; i++)
		sqlite3_bind_int64(*st, i + 1, span[i]);
	return 0;
}

/* The flows (with a window: those whose both ends it keeps, k). */
int load_flows(sqlite3 *db, const struct kept *k, struct flows *f)
{
	sqlite3_stmt *st;
	if (flow_query(db, k, &st))
		return -1;
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (k && !(id_kept(k, sqlite3_column_int64(st, 0)) && id_kept(k, sqlite3_column_int64(st, 1))))
			continue;
		if (f->n + 2 > cap) {
			cap = cap ? cap * 2 : 256;
			f->r = xrealloc(f->r, cap * sizeof *f->r);
		}
		uint64_t fid = (uint64_t)sqlite3_column_int64(st, 2) + 1; /* flow id 0 is invalid */
		f->r[f->n++] = (struct flowref){sqlite3_column_int64(st, 0), fid, 1};
		f->r[f->n++] = (struct flowref){sqlite3_column_int64(st, 1), fid, 0};
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return -1; /* a read error, not fewer flows */
	if (f->n > 1)
		qsort(f->r, f->n, sizeof *f->r, flowref_cmp);
	return 0;
}

static int flowref_fid_cmp(const void *a, const void *b)
{
	const struct flowref *x = a, *y = b;
	return x->slice != y->slice ? (x->slice < y->slice ? -1 : 1) : (x->fid > y->fid) - (x->fid < y->fid);
}

/* Merge the n flow ends add[] into f, after f's own ends of the same slice
 * (add[] is sorted here; f's order is kept: a slice's flow ids come out in it). */
void flows_add(struct flows *f, struct flowref *add, size_t n)
{
	if (!n)
		return;
	qsort(add, n, sizeof *add, flowref_fid_cmp);
	struct flowref *m = xmalloc((f->n + n) * sizeof *m);
	size_t i = 0, j = 0, k = 0;
	while (i < f->n || j < n)
		m[k++] = j == n || (i < f->n && f->r[i].slice <= add[j].slice) ? f->r[i++] : add[j++];
	free(f->r);
	f->r = m;
	f->n = k;
}

/* Put slice id's flow ids on the current event: a source continues the flow,
 * a slice that only receives it terminates it. */
void slice_flows(const struct flows *f, int64_t id, uint64_t *fl, size_t *nf, uint64_t *tfl, size_t *ntf)
{
	size_t lo = 0, hi = f->n;
	*nf = *ntf = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->r[mid].slice < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < f->n && f->r[i].slice == id; i++) {
		const struct flowref *r = &f->r[i];
		int out_too = 0;
		for (size_t k = lo; k < f->n && f->r[k].slice == id; k++)
			out_too |= f->r[k].fid == r->fid && f->r[k].out;
		if (r->out) {
			if (*nf < MAXFLOWS)
				fl[(*nf)++] = r->fid;
		} else if (!out_too && *ntf < MAXFLOWS) {
			tfl[(*ntf)++] = r->fid;
		}
	}
}

void ev_flows(struct exporter *x, const struct flows *f, int64_t id)
{
	struct ev *e = &x->e;
	slice_flows(f, id, e->flows, &e->te.n_flow_ids, e->tflows, &e->te.n_terminating_flow_ids);
}

