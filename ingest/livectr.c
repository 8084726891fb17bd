/* livectr.c — kvio-ingest --follow's interim rate counters and IO-activity
 * overview (live.c calls them at each interim commit).
 *
 * A one-shot ingest derives cmds/ms, MB/s and the overview at its end from
 * the commands' time buckets (write.c). While following, a bucket is final
 * once every command before its end is written: its end at or before the
 * stream's done time (stream_done_ts, rebased). Each commit takes the buckets
 * the stream added since the last (arm_out.ms, in write order), keeps those
 * not final yet, and appends the points and slices of the final ones, once:
 *  - a rate counter's point per bucket, and its 0 after a run of buckets as
 *    soon as the bucket after the run is final and empty (the points a
 *    one-shot writes, in its order);
 *  - an overview slice per run of consecutive 100 ms buckets once the run has
 *    ended; the run still growing is a slice of the commit's own (an id of the
 *    TMP_INFO range: written again by the next commit).
 * The objects-in-flight counter (a point per step: +1 at an object's begin,
 * -1 at its end) cannot wait for a final bucket: an object's record comes at
 * its end, so a step can land before points already written. Its settle rule:
 * the steps before the horizon H = (the newest end seen) - 2 x (the longest
 * span seen) are written once; those from H on are the commit's own (an id
 * of the TMP_CTR_TAIL range: written again by the next commit, with what came
 * since). An object longer than twice every one before it, or far out of end
 * order, can begin at or before a point written for good: that commit writes
 * the whole counter again from the objects' rows in the database (rare; the
 * counter's sums are read whole then; the objects themselves may have left
 * memory, livemem.c). So the counter always agrees with the objects written, and its
 * points before the earliest begin of an object not written yet are the
 * final's.
 * The stop deletes them all and writes the one-shot's (write_arm_end). */
#include "live.h"
#include "write.h"
#include "../db/schema.h"
#include <stdlib.h>
#include <string.h>

/* The final buckets of one width go out in key order. */
static void pend_add(struct vec *p, int64_t k, int64_t n, int64_t bytes)
{
	struct bucket *b = p->v;
	size_t i = p->n;
	while (i && b[i - 1].k > k) /* (the stream writes in time order: rarely more than one step) */
		i--;
	if (i && b[i - 1].k == k) {
		b[i - 1].n += n;
		b[i - 1].bytes += bytes;
		return;
	}
	vec_push(p, sizeof *b);
	b = p->v;
	memmove(&b[i + 1], &b[i], (p->n - 1 - i) * sizeof *b);
	b[i] = (struct bucket){k, n, bytes};
}

/* How many of p's first buckets are below limit (final: the caller writes
 * them, then pend_drop takes them out). */
static size_t pend_final(const struct vec *p, int64_t limit)
{
	const struct bucket *b = p->v;
	size_t m = 0;
	while (m < p->n && b[m].k < limit)
		m++;
	return m;
}

static void pend_drop(struct vec *p, size_t m)
{
	struct bucket *b = p->v;
	memmove(b, b + m, (p->n - m) * sizeof *b);
	p->n -= m;
}

static void rate_points(struct lrate *r, struct dbw *w, int64_t track, int64_t width_ms, double scale,
			int64_t limit)
{
	size_t n = pend_final(&r->pend, limit);
	const struct bucket *b = r->pend.v;
	int64_t width = width_ms * 1000000;
	for (size_t i = 0; i < n; i++) {
		if (r->open && b[i].k > r->last + 1 && !r->zeroed)
			dbw_counter(w, (r->last + 1) * width, track, 0);
		dbw_counter(w, b[i].k * width, track, scale > 0 ? b[i].bytes * scale : (double)b[i].n);
		r->last = b[i].k;
		r->open = 1;
		r->zeroed = 0;
	}
	if (r->open && !r->zeroed && r->last + 1 < limit) { /* the bucket after the run: final, empty */
		dbw_counter(w, (r->last + 1) * width, track, 0);
		r->zeroed = 1;
	}
	pend_drop(&r->pend, n);
}

/* The overview's ended runs (ids from *slice_id) and the growing one (from *info_id). */
static void overview_runs(struct lctr *c, struct dbw *w, int64_t track, int64_t limit, int64_t *slice_id,
			  int64_t *info_id)
{
	const int64_t B = OVERVIEW_MS * 1000000;
	struct lrun *u = &c->run;
	size_t n = pend_final(&c->ov, limit);
	const struct bucket *b = c->ov.v;
	int64_t save = w->next_id;
	w->next_id = *slice_id;
	for (size_t i = 0; i <= n; i++) {
		int ended = u->open && (i < n ? b[i].k != u->k1 + 1 : u->k1 + 1 < limit);
		if (ended) {
			write_overview_run(w, u->k0 * B, (u->k1 + 1) * B, u->n, u->bytes, track);
			u->open = 0;
		}
		if (i == n)
			break;
		if (!u->open)
			*u = (struct lrun){b[i].k, b[i].k - 1, 0, 0, 1};
		u->k1 = b[i].k;
		u->n += b[i].n;
		u->bytes += b[i].bytes;
	}
	pend_drop(&c->ov, n);
	*slice_id = w->next_id;
	if (u->open) {
		w->next_id = *info_id;
		write_overview_run(w, u->k0 * B, (u->k1 + 1) * B, u->n, u->bytes, track);
		*info_id = w->next_id;
	}
	w->next_id = save;
}

void lctr_commit(struct lctr *c, struct dbw *w, const struct arm_out *t, int64_t done, int64_t *ctr_id,
		 int64_t *slice_id, int64_t *info_id)
{
	/* the buckets added since the last commit; the last one taken may have
	 * grown since (the stream adds to its last bucket): what it added */
	const struct bucket *ms = t->ms.v;
	for (size_t i = c->ms_out; i < t->ms.n; i++) {
		int64_t dn = ms[i].n, db = ms[i].bytes;
		if (i == c->ms_out) {
			dn -= c->took_n;
			db -= c->took_bytes;
		}
		if (!dn && !db)
			continue;
		pend_add(&c->rate[0].pend, floor_div(ms[i].k, CTR_CMDS_MS), dn, db);
		pend_add(&c->rate[1].pend, floor_div(ms[i].k, CTR_MBS_MS), dn, db);
		pend_add(&c->ov, floor_div(ms[i].k, OVERVIEW_MS), dn, db);
	}
	if (t->ms.n) {
		c->ms_out = t->ms.n - 1;
		c->took_n = ms[c->ms_out].n;
		c->took_bytes = ms[c->ms_out].bytes;
	}
	int64_t save = w->next_counter;
	w->next_counter = *ctr_id;
	rate_points(&c->rate[0], w, t->ctr_cmds, CTR_CMDS_MS, 0, floor_div(done, CTR_CMDS_MS * 1000000));
	rate_points(&c->rate[1], w, t->ctr_mbs, CTR_MBS_MS, CTR_MBS_SCALE, floor_div(done, CTR_MBS_MS * 1000000));
	*ctr_id = w->next_counter;
	w->next_counter = save;
	overview_runs(c, w, t->nv_root, floor_div(done, OVERVIEW_MS * 1000000), slice_id, info_id);
}

/* a's objects [taken..n)'s steps into c->ev; 1 when one lands at or before
 * the last point written for good. */
static int obj_steps(struct lobj *c, const struct arm *a, size_t n)
{
	int late = 0;
	for (; c->taken < n; c->taken++) {
		const struct obj *ob = arm_obj(a, c->taken);
		if (!ob->is_span) /* (write_objects' rule: an incremental follow has no window, every span counts) */
			continue;
		late |= c->settled && ob->b <= c->last;
		*(struct i64pair *)vec_push(&c->ev, sizeof(struct i64pair)) = (struct i64pair){ob->b, 1};
		*(struct i64pair *)vec_push(&c->ev, sizeof(struct i64pair)) = (struct i64pair){ob->e, -1};
		if (ob->e > c->max_end)
			c->max_end = ob->e;
		if (ob->e - ob->b > c->max_len)
			c->max_len = ob->e - ob->b;
	}
	return late;
}

/* The counter again from every object span written (the rows of slices
 * [from, to) on tracks (lo, hi]: the arm's interim lanes), in one pass over
 * their steps in (ts, step) order, the points before the new horizon
 * written (ids from *ctr_id), the rest into c->ev. */
static void obj_steps_db(struct lobj *c, struct dbw *w, int64_t track, const int64_t span[4], int64_t *ctr_id)
{
	char sql[512], where[192];
	sqlite3_stmt *st;
	snprintf(where, sizeof where, "FROM kvio_slice WHERE id >= %lld AND id < %lld AND track_id > %lld AND track_id <= %lld",
		 (long long)span[0], (long long)span[1], (long long)span[2], (long long)span[3]);
	snprintf(sql, sizeof sql, "SELECT count(*), max(ts + dur), max(dur) %s", where);
	if (w->rc != SQLITE_OK || sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) {
		w->rc = w->rc != SQLITE_OK ? w->rc : SQLITE_ERROR;
		return;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		c->max_end = sqlite3_column_int64(st, 1);
		c->max_len = sqlite3_column_int64(st, 2);
		if (c->max_end - 2 * c->max_len > c->hz)
			c->hz = c->max_end - 2 * c->max_len;
	}
	sqlite3_finalize(st);
	snprintf(sql, sizeof sql, "SELECT t, d FROM (SELECT ts AS t, 1 AS d %s UNION ALL SELECT ts + dur, -1 %s) "
		 "ORDER BY t, d", where, where);
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) {
		w->rc = SQLITE_ERROR;
		return;
	}
	int64_t save = w->next_counter;
	w->next_counter = *ctr_id;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct i64pair p = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
		if (p.ts >= c->hz) {
			*(struct i64pair *)vec_push(&c->ev, sizeof p) = p;
			continue;
		}
		c->cur += p.d;
		dbw_counter(w, p.ts, track, (double)c->cur);
		c->last = p.ts;
		c->settled = 1;
	}
	if (rc != SQLITE_DONE && w->rc == SQLITE_OK)
		w->rc = rc;
	sqlite3_finalize(st);
	*ctr_id = w->next_counter;
	w->next_counter = save;
}

int lctr_objects(struct lctr *c, struct dbw *w, int64_t track, const struct arm *a, size_t n, const int64_t span[4],
		 int64_t *ctr_id, int64_t *tail_id)
{
	struct lobj *o = &c->obj;
	int redo = obj_steps(o, a, n);
	if (redo) { /* every step again, from the first object's row */
		char sql[96];
		snprintf(sql, sizeof sql, "DELETE FROM kvio_counter WHERE track_id = %lld", (long long)track);
		if (w->rc == SQLITE_OK)
			w->rc = db_exec(w->db, sql, "writing the database");
		vec_free(&o->ev);
		*o = (struct lobj){0};
		o->taken = n;
		obj_steps_db(o, w, track, span, ctr_id);
	}
	struct i64pair *ev = o->ev.v;
	qsort(ev, o->ev.n, sizeof *ev, i64pair_cmp);
	if (o->ev.n && o->max_end - 2 * o->max_len > o->hz)
		o->hz = o->max_end - 2 * o->max_len;
	int64_t save = w->next_counter;
	size_t m = 0;
	w->next_counter = *ctr_id;
	for (; m < o->ev.n && ev[m].ts < o->hz; m++) {
		o->cur += ev[m].d;
		dbw_counter(w, ev[m].ts, track, (double)o->cur);
		o->last = ev[m].ts;
		o->settled = 1;
	}
	*ctr_id = w->next_counter;
	w->next_counter = *tail_id;
	int64_t v = o->cur;
	for (size_t i = m; i < o->ev.n; i++) {
		v += ev[i].d;
		dbw_counter(w, ev[i].ts, track, (double)v);
	}
	*tail_id = w->next_counter;
	w->next_counter = save;
	memmove(ev, ev + m, (o->ev.n - m) * sizeof *ev);
	o->ev.n -= m;
	return redo;
}

void lctr_free(struct lctr *c)
{
	vec_free(&c->obj.ev);
	vec_free(&c->rate[0].pend);
	vec_free(&c->rate[1].pend);
	vec_free(&c->ov);
	memset(c, 0, sizeof *c);
}
