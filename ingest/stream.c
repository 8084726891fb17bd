/* stream.c — the device file joined while it is read, in bounded memory.
 *
 * Blocks of parsed records arrive in file order (load.c). The device stream is
 * nearly in time order, so records go into a reorder pool and are processed in
 * (ts, command before completion, file order) once no later block can hold an
 * earlier record: everything older than the newest block's earliest time.
 * Processing a command segments it onto its semantic occurrence and pushes it
 * on its user_data's stack of unpaired commands; a completion pairs with the
 * top of that stack (the latest unpaired command with cmd.ts <= cmp.ts): the
 * reference converter's rule, applied in time order.
 *
 * Processed commands wait in a ring (time order) until they can be written:
 * a command is written once it is paired, or --pair-horizon records were
 * processed after it (its completion is taken as lost); a nominal one also
 * once its duration is settled (the next command of its role is known, or so
 * far away that the 0.9 x gap cap cannot apply). Writing assigns the final
 * duration, the header/payload role, the lane, the slice id, and the command
 * goes into its columnar chunk: memory holds the reorder pool and the
 * commands in flight, not the capture.
 *
 * What this changes against a whole-file join, and only then (each counted):
 * a completion more than --pair-horizon records after its command stays
 * unpaired (cmp_unpaired and, when recognised, cmp_after_horizon); a record
 * more than one block older than records before it, or beyond a pool of
 * KVIO_POOL_MAX records, is joined out of time order (late_lines). */
#include "stream_int.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A command of an equal-time group, with its final duration: written in (dur, seq) order. */
struct gent {
	int64_t dur;
	uint64_t seq;
};

static int gent_cmp(const void *x, const void *y)
{
	const struct gent *a = x, *b = y;
	if (a->dur != b->dur)
		return a->dur < b->dur ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void ring_grow(struct stream *s)
{
	uint64_t ncap = s->rcap ? s->rcap * 2 : 4096;
	struct rent *nr = xmalloc(ncap * sizeof *nr);
	for (uint64_t q = s->head; q < s->tail; q++)
		nr[q & (ncap - 1)] = *R(s, q);
	free(s->ring);
	s->ring = nr;
	s->rcap = ncap;
}

/* ---- processing, in time order ------------------------------------------- */

/* The command's occurrence: the first whose op end is >= ts, else the
 * trace_id's last (its first and last command: the lowest and highest
 * sequence, as a follow may attribute a waiting command after later ones). */
static void attribute(struct stream *s, struct rent *r, uint64_t seq)
{
	struct arm *a = s->a;
	int64_t ts = r->c.ts;
	uint32_t f;
	r->c.obj = -1;
	if (!r->c.trace_id || !map_get(&a->first_obj, r->c.trace_id, &f)) {
		if (s->follow && r->c.trace_id)
			r->c.obj = OBJ_PENDING;
		return;
	}
	/* (a follow's trace_ids have one record each: no occurrences to walk) */
	uint32_t oi = f;
	if (!s->follow) {
		struct obj *objs = a->objs.v;
		while (s->cur[f] + 1 < objs[f].n_occ && ts > objs[f + s->cur[f]].end)
			s->cur[f]++;
		oi = f + s->cur[f];
	}
	struct obj *ob = arm_obj(a, oi);
	r->c.obj = (int32_t)oi;
	if (oi < s->objs_written) /* its object went in at a quiet commit's watermark */
		flush_news(s, "a command came for an object a quiet commit had written");
	if (!ob->n_cmds || seq < ob->first_seq) {
		ob->first_seq = seq;
		ob->first_ts = ts;
	}
	if (!ob->n_cmds || seq > ob->last_seq) {
		ob->last_seq = seq;
		ob->last_ts = ts;
	}
	ob->n_cmds++;
	if (ob->is_store) {
		int64_t slot, sl = (r->c.flags & CF_SLBA) ? (int64_t)r->c.slba : 0;
		jv_int(&ob->slot_offset, -1, &slot);
		for (int k = 0; k < s->ncand; k++)
			if (sl * s->cand[k] == slot)
				ob->lba_match |= (uint8_t)(1u << k);
	}
}

/* --follow: a waiting command's record came, or it waited its horizon (or
 * the stop came): 1 when it may go on. */
static int follow_resolve(struct stream *s, struct rent *r, uint64_t seq)
{
	uint32_t f;
	if (map_get(&s->a->first_obj, r->c.trace_id, &f)) {
		attribute(s, r, seq);
		return 1;
	}
	if (!s->eof && !s->flush && s->nproc - r->proc < s->horizon)
		return 0;
	r->c.obj = -1;
	uint32_t *o = map_slot(&s->orphans, r->c.trace_id, &(int){0});
	*o = s->flush ? 2 : 1; /* 2: a quiet commit wrote it (the stop's words) */
	return 1;
}

/* hung without its completed entries (their chains point at live ones only:
 * a completion takes the latest of its user_data). */
static void hung_compact(struct stream *s)
{
	struct hung *h = s->hung.v;
	int32_t *to = xmalloc((s->hung.n ? s->hung.n : 1) * sizeof *to);
	size_t n = 0;
	for (size_t i = 0; i < s->hung.n; i++) {
		to[i] = h[i].dead ? -1 : (int32_t)n;
		if (!h[i].dead) {
			h[n] = h[i];
			h[n].prev = h[n].prev >= 0 ? to[h[n].prev] : -1;
			n++;
		}
	}
	for (size_t i = 0; i < s->hungm.cap; i++) /* the map's tops, renumbered */
		if (s->hungm.v[i] != UINT32_MAX)
			s->hungm.v[i] = (uint32_t)to[s->hungm.v[i]];
	s->hung.n = n;
	free(to);
}

/* A quiet commit drew command r of role without its completion: remembered
 * (hung; its next command of the role, open_*), for the waiting counts and
 * for what the stop checks. */
static void hung_add(struct stream *s, const struct rent *r)
{
	const struct cmd *c = &r->c;
	if (r->next_ts == INT64_MAX) {
		s->open_set[c->role] = 1;
		s->open_ts[c->role] = c->ts;
		s->open_dur[c->role] = c->dur;
	}
	if (s->hung.n >= HUNG_MAX && s->hung_live < s->hung.n)
		hung_compact(s);
	if (s->hung.n >= HUNG_MAX) {
		s->hung_lost++;
		return;
	}
	int fresh;
	uint32_t *top = map_slot(&s->hungm, c->user_data, &fresh);
	*(struct hung *)vec_push(&s->hung, sizeof(struct hung)) =
		(struct hung){c->user_data, c->ts, c->trace_id, fresh ? -1 : (int32_t)*top, 0};
	*top = (uint32_t)(s->hung.n - 1);
	s->hung_live++;
}

/* A command of role came at ts: a quiet commit's drawn one of that role would
 * have had it as its next; its duration differs when the gap caps it. */
static void open_role_next(struct stream *s, uint8_t role, int64_t ts)
{
	if (!s->open_set[role])
		return;
	s->open_set[role] = 0;
	int64_t cap = (int64_t)((double)ts_diff(ts, s->open_ts[role]) * 0.9);
	if (cap < s->open_dur[role])
		flush_news(s, "a quiet commit drew a command before the next one of its role came");
}

/* A completion of user_data ud stamped ts came: 1 when it is that of a
 * command a quiet commit drew without it (the latest of ud, submitted at or
 * before ts), which no longer waits. */
static int hung_done(struct stream *s, uint64_t ud, int64_t ts)
{
	uint32_t i;
	struct hung *h = s->hung.v;
	if (!map_get(&s->hungm, ud, &i) || h[i].ts > ts)
		return 0;
	h[i].dead = 1;
	s->hung_live--;
	if (h[i].prev >= 0)
		*map_slot(&s->hungm, ud, &(int){0}) = (uint32_t)h[i].prev;
	else
		map_del(&s->hungm, ud);
	return 1;
}

static void process_cmd(struct stream *s, const struct pev *e)
{
	if (s->tail - s->head == s->rcap)
		ring_grow(s);
	uint64_t seq = s->tail++;
	struct rent *r = R(s, seq);
	r->c = e->c;
	r->kv = e->kv;
	r->block = e->block;
	r->next_ts = INT64_MAX;
	r->proc = s->nproc;
	r->paired = 0;
	r->ud_prev = NONE;
	int64_t ts = r->c.ts;

	/* the previous command of the role learns its successor's time */
	uint64_t p = s->last_role[r->c.role];
	if (live(s, p))
		R(s, p)->next_ts = ts;
	s->last_role[r->c.role] = seq;
	open_role_next(s, r->c.role, ts);

	attribute(s, r, seq);

	/* push on its user_data's stack */
	int fresh;
	uint32_t *top = map_slot(&s->ud, r->c.user_data, &fresh);
	if (!fresh)
		r->ud_prev = ud_seq(s, *top);
	*top = (uint32_t)(seq & SEQ_MASK);
}

/* One command of user_data ud given up before the end (s->gone) is taken by
 * its late completion: 1, or 0 when none was. */
static int gone_take(struct stream *s, uint64_t ud)
{
	uint32_t n;
	if (!map_get(&s->gone, ud, &n))
		return 0;
	if (n > 1)
		*map_slot(&s->gone, ud, &(int){0}) = n - 1;
	else
		map_del(&s->gone, ud);
	return 1;
}

/* A completion that pairs with nothing; counted apart when a command of its
 * user_data was given up at the horizon (a stall longer than the horizon).
 * One of a command a quiet commit drew is neither: a one-shot pairs them (the
 * stop rebuilds). */
static void cmp_unpaired(struct stream *s, uint64_t ud, int64_t ts)
{
	uint32_t n;
	int drawn = hung_done(s, ud, ts);
	if (drawn)
		flush_news(s, "a quiet commit drew a command whose completion came later");
	/* past HUNG_MAX a given-up command's completion is taken for a drawn one's */
	if (drawn || (s->hung_lost && map_get(&s->gone, ud, &n))) {
		s->hung_lost -= !drawn;
		gone_take(s, ud);
		return;
	}
	s->a->cmp_unpaired++;
	if (gone_take(s, ud))
		s->a->cmp_after_horizon++;
}

static void process_cmp(struct stream *s, const struct pev *e)
{
	uint32_t v;
	if (!map_get(&s->ud, e->c.user_data, &v)) {
		cmp_unpaired(s, e->c.user_data, e->c.ts);
		return;
	}
	/* the latest unpaired command with cmd.ts <= cmp.ts (the top, unless
	 * this completion was written out of time order) */
	uint64_t q = ud_seq(s, v), above = NONE;
	while (live(s, q) && R(s, q)->c.ts > e->c.ts) {
		above = q;
		q = R(s, q)->ud_prev;
	}
	if (!live(s, q)) {
		if (above == NONE)
			map_del(&s->ud, e->c.user_data); /* only written commands were left */
		cmp_unpaired(s, e->c.user_data, e->c.ts);
		return;
	}
	struct rent *r = R(s, q);
	if (s->nproc - r->proc >= s->horizon / 2) /* read in other blocks, it might have been given up */
		s->near_horizon = 1;
	int64_t d = ts_diff(e->c.ts, r->c.ts);
	r->c.dur = d < 1 ? 1 : d;
	r->c.flags |= CF_REAL;
	r->paired = 1;
	if (above != NONE) {
		R(s, above)->ud_prev = r->ud_prev;
	} else if (live(s, r->ud_prev)) {
		uint32_t *top = map_slot(&s->ud, e->c.user_data, &(int){0});
		*top = (uint32_t)(r->ud_prev & SEQ_MASK);
	} else {
		map_del(&s->ud, e->c.user_data);
	}
}

/* ---- writing ------------------------------------------------------------- */

/* LBA size: the flag, else 4096 or 512, whichever makes store headers
 * (slba * lba == slot_offset) match, sampled on the first 50 store objects
 * with commands (in occurrence order). Decided once those objects are
 * complete (the stream is past their op end), before the first store
 * command is written. */
/* The LBA size of the scores (warnings said when warn). */
int64_t lba_choose(struct arm *a, const struct ingest_opts *o, const int64_t *cand, int ncand,
			  const int *score, int sampled, int warn)
{
	int64_t lba = o->lba_bytes;
	if (!sampled)
		return lba;
	int best = 0;
	for (int k = 1; k < ncand; k++)
		if (score[k] > score[best])
			best = k;
	if (score[best] == 0) {
		if (warn)
			arm_warn(a, "header classification: no store command matches slot_offset under any "
				    "candidate LBA size; headers will read as payload");
	} else if (cand[best] != o->lba_bytes) {
		if (warn)
			arm_warn(a, "--lba-bytes %lld matches no headers; inferred lba_bytes=%lld (matched "
				    "%d/%d sampled stores) and using it",
				 (long long)o->lba_bytes, (long long)cand[best], score[best], sampled);
		lba = cand[best];
	}
	return lba;
}

/* force (--follow): a store command waited its horizon, decide on the objects so far. */
static int lba_decide(struct stream *s, int force)
{
	struct arm *a = s->a;
	while (!s->lba_decided && s->lba_cursor < arm_nobjs(a) && s->sampled < 50) {
		const struct obj *ob = arm_obj(a, s->lba_cursor);
		if (!ob->is_store) {
			s->lba_cursor++;
			continue;
		}
		if (!s->eof && obj_wm(s) <= ob->end) {
			if (s->follow && s->sampled >= FOLLOW_LBA_SAMPLES)
				break; /* decide now: the stop checks it against the first 50 */
			return 0;
		}
		if (ob->n_cmds) {
			for (int k = 0; k < s->ncand; k++)
				if (ob->lba_match & (1u << k))
					s->score[k]++;
			s->sampled++;
		}
		s->lba_cursor++;
	}
	if (s->lba_decided)
		return 1;
	if (s->follow && !s->eof && !force && s->sampled < FOLLOW_LBA_SAMPLES) /* more store objects may come */
		return 0;
	s->lba_decided = 1;
	/* under a follow the stop says the warnings (stream_follow_check) */
	a->lba_bytes = lba_choose(a, s->o, s->cand, s->ncand, s->score, s->sampled, !s->follow);
	return 1;
}

static int is_store_cmd(const struct stream *s, const struct rent *r)
{
	if (r->c.obj < 0 || s->o->join == JOIN_KEY) /* KV commands have no slba geometry: no header roles */
		return 0;
	return arm_obj(s->a, (size_t)r->c.obj)->is_store;
}

static int ready(struct stream *s, uint64_t seq)
{
	struct rent *r = R(s, seq);
	if (r->c.obj == OBJ_PENDING && !follow_resolve(s, r, seq))
		return 0;
	/* --follow: the base (the earliest time of any kind) waits for the semantic
	 * records of the command's time (the first object starts before its commands) */
	int end = s->eof || s->flush; /* the end of the file, or of what a hung run wrote so far */
	if (s->follow && !s->a->base_set && !end && s->sem_end < r->c.ts && s->nproc - r->proc < s->horizon)
		return 0;
	if (!r->paired && !end) {
		if (s->nproc - r->proc < s->horizon)
			return 0;
		if (r->next_ts == INT64_MAX && ts_diff(s->wm, r->c.ts) < s->settle)
			return 0;
	}
	if (!s->lba_decided && is_store_cmd(s, r) && !lba_decide(s, s->follow && s->nproc - r->proc >= s->horizon))
		return 0;
	return 1;
}

/* Real duration, else nominal capped at 0.9 x the gap to the next command of the role. */
static int64_t final_dur(const struct stream *s, const struct rent *r)
{
	if (r->paired)
		return r->c.dur;
	int64_t d = s->o->nominal_dur_ns;
	if (r->next_ts != INT64_MAX) {
		int64_t cap = (int64_t)((double)ts_diff(r->next_ts, r->c.ts) * 0.9);
		if (cap < d)
			d = cap;
		if (d < 1)
			d = 1;
	}
	return d;
}

static void bucket_add(struct arm_out *t, int64_t ts, uint32_t bytes)
{
	int64_t k = floor_div(ts, 1000000); /* 1 ms */
	struct bucket *b = t->ms.n ? &VEC_AT(&t->ms, struct bucket, t->ms.n - 1) : NULL;
	if (b && b->k == k) {
		b->n++;
		b->bytes += bytes;
	} else {
		*(struct bucket *)vec_push(&t->ms, sizeof *b) = (struct bucket){k, 1, bytes};
	}
}

/* Command entry r's row for the database (ts already rebased): its args,
 * its role flags (a store's header or payload, counted), its KV args. */
static void cmd_row_of(struct stream *s, struct rent *r, int64_t ts, struct cmd_row *row)
{
	struct arm *a = s->a;
	struct cmd *c = &r->c;
	*row = (struct cmd_row){
		.ts = ts,
		.dur = c->dur,
		.slba = (c->flags & CF_SLBA) ? (int64_t)c->slba : 0,
		.data_len = c->data_len,
		.trace_id = c->trace_id,
		.name = VEC_AT(&a->names, const char *, c->name),
		/* the slba counter point of a read/write (see the counter view) */
		.slba_track = c->name == s->wname ? s->t->ctr_wslba : c->name == s->rname ? s->t->ctr_rslba : 0,
	};
	if (c->flags & CF_SLBA) row->flags |= CHF_SLBA;
	if (c->flags & CF_REAL) row->flags |= CHF_REAL;
	if (is_store_cmd(s, r)) {
		const struct obj *ob = arm_obj(a, (size_t)c->obj);
		int64_t slot;
		jv_int(&ob->slot_offset, -1, &slot);
		if (row->slba * a->lba_bytes == slot) {
			row->flags |= CHF_HEADER;
			a->header_cmds++;
		} else {
			row->flags |= CHF_PAYLOAD;
		}
	}
	if (c->flags & CF_KV) {
		row->flags |= CHF_KV;
		row->key_hex = r->kv->key_hex;
		row->has_key_len = r->kv->has_key_len;
		row->key_len = r->kv->key_len;
		row->has_value_len = r->kv->has_value_len;
		row->value_len = r->kv->value_len;
	}
}

/* Command entry r (sequence seq) leaves the stream: given up unpaired, it
 * leaves its user_data's stack; its block's strings go with its last command. */
static void cmd_retire(struct stream *s, struct rent *r, uint64_t seq)
{
	struct cmd *c = &r->c;
	if (!r->paired) { /* leave its user_data's stack (it is the bottom) */
		uint32_t v;
		if (map_get(&s->ud, c->user_data, &v) && ud_seq(s, v) == seq)
			map_del(&s->ud, c->user_data);
		if (!s->eof && s->gone.n < GONE_MAX) { /* given up: remember, to name a late completion */
			int fresh;
			uint32_t *n = map_slot(&s->gone, c->user_data, &fresh);
			*n = fresh ? 1 : *n + 1;
		}
		if (s->flush) /* a quiet commit's: still waiting for its completion */
			hung_add(s, r);
	}
	struct blk *b = &VEC_AT(&s->blocks, struct blk, r->block);
	if (--b->live == 0) {
		arena_free(&b->strs);
		vec_free(&b->kv);
	}
}

static void write_one(struct stream *s, uint64_t seq)
{
	struct arm *a = s->a;
	struct rent *r = R(s, seq);
	struct cmd *c = &r->c;
	if (!a->base_set) {
		a->base_ns = s->o->no_rebase ? 0 : a->min_ts;
		a->base_set = 1;
		s->base_by_cmd = 1;
		s->dev_min_at_base = s->dev_min;
	}
	int64_t base = a->base_ns, ts = c->ts - base;
	c->dur = final_dur(s, r);
	a->cmd_no_cmp += !r->paired;
	struct cmd_row row;
	cmd_row_of(s, r, ts, &row);
	if (c->trace_id == 0)
		a->untagged_bytes += c->data_len;
	else
		a->tagged_bytes += c->data_len;
	/* the window: the counts above describe the input; a command of the
	 * trace_ids counts in the rate counters; one also inside the time window
	 * is written (its lane, its slice id) */
	const struct kvio_window *win = &s->o->win;
	int tid_kept = window_cmd_tid(win, c->trace_id);
	if (tid_kept && window_span(win, ts, c->dur)) {
		uint32_t lane = lanes_add(&s->t->lanes[c->role], ts, ts + c->dur);
		row.track = write_lane_track(s->w, s->t, c->role, lane);
		int64_t id = s->w->next_id++;
		dbw_cmd(s->w, id, &row);
		a->emitted_cmds++;
		if (c->obj >= 0) {
			struct obj *ob = arm_obj(a, (size_t)c->obj);
			if (ob->first_seq == seq)
				ob->first_id = id;
			if (ob->last_seq == seq)
				ob->last_id = id;
		}
	}
	if (tid_kept)
		bucket_add(s->t, ts, c->data_len);
	cmd_retire(s, r, seq);
}

/* Write the oldest commands while they are ready. Commands submitted at the
 * same time go together, in (duration, sequence) order: the lane colouring's
 * (begin, end) order. */
static void drain(struct stream *s)
{
	while (s->head < s->tail) {
		int64_t ts = R(s, s->head)->c.ts;
		uint64_t g = s->head;
		while (g < s->tail && R(s, g)->c.ts == ts) {
			if (!ready(s, g))
				return;
			g++;
		}
		size_t n = (size_t)(g - s->head);
		if (n > s->cap_grp) {
			s->cap_grp = n * 2;
			s->grp = xrealloc(s->grp, s->cap_grp * sizeof *s->grp);
		}
		for (size_t i = 0; i < n; i++) /* each duration once; a sort, not an insertion per command */
			s->grp[i] = (struct gent){final_dur(s, R(s, s->head + i)), s->head + i};
		if (n > 1)
			qsort(s->grp, n, sizeof *s->grp, gent_cmp);
		for (size_t i = 0; i < n; i++)
			write_one(s, s->grp[i].seq);
		s->head = g;
	}
}

/* ---- the reorder pool ---------------------------------------------------- */

static int pev_cmp(const void *x, const void *y)
{
	const struct pev *a = x, *b = y;
	if (a->c.ts != b->c.ts)
		return a->c.ts < b->c.ts ? -1 : 1;
	if (a->is_cmp != b->is_cmp)
		return a->is_cmp - b->is_cmp;
	return a < b ? -1 : a > b; /* stable: pool order */
}

/* The order the pool's n records are processed in, (ts, command first, pool
 * order), into s->sidx: the merge of its two sorted runs (what waited, the
 * block load.c sorted), else a sort. */
static uint32_t *pool_order(struct stream *s, size_t n)
{
	struct pev *p = s->pool;
	if (n > s->cap_sort) { /* sort scratch, kept across rounds (no fresh pages per block) */
		s->cap_sort = n + n / 2;
		s->sidx = xrealloc(s->sidx, s->cap_sort * sizeof *s->sidx);
		s->stmp = xrealloc(s->stmp, s->cap_sort * sizeof *s->stmp);
		s->skey = xrealloc(s->skey, s->cap_sort * sizeof *s->skey);
	}
	uint32_t *idx = s->sidx;
	if (s->new_sorted && s->sorted_upto <= n) { /* two sorted runs: merged (ties: the older first) */
		size_t i = 0, j = s->sorted_upto, k = 0, a = s->sorted_upto;
		while (i < a && j < n)
			idx[k++] = (p[j].c.ts < p[i].c.ts || (p[j].c.ts == p[i].c.ts && p[j].is_cmp < p[i].is_cmp))
					   ? (uint32_t)j++ : (uint32_t)i++;
		while (i < a)
			idx[k++] = (uint32_t)i++;
		while (j < n)
			idx[k++] = (uint32_t)j++;
		return idx;
	}
	int64_t mn = p[0].c.ts, mx = mn;
	for (size_t i = 0; i < n; i++) {
		idx[i] = (uint32_t)i;
		if (p[i].c.ts < mn) mn = p[i].c.ts;
		if (p[i].c.ts > mx) mx = p[i].c.ts;
	}
	if ((uint64_t)mx - (uint64_t)mn < (1ull << 62)) {
		uint64_t *key = s->skey;
		for (size_t i = 0; i < n; i++)
			key[i] = ((uint64_t)p[i].c.ts - (uint64_t)mn) << 1 | p[i].is_cmp;
		radix_sort_idx(idx, s->stmp, n, key);
	} else { /* absurd time span: a comparison sort (pointer order keeps it stable) */
		struct pev **pp = xmalloc(n * sizeof *pp);
		for (size_t i = 0; i < n; i++)
			pp[i] = &p[i];
		qsort(pp, n, sizeof *pp, pev_cmp);
		for (size_t i = 0; i < n; i++)
			idx[i] = (uint32_t)(pp[i] - p);
		free(pp);
	}
	return idx;
}

/* Process the pool's records older than the watermark (all at EOF), in
 * (ts, command first, pool order); keep the rest. */
static void process_pool(struct stream *s)
{
	size_t n = s->npool;
	if (!n)
		return;
	struct pev *p = s->pool;
	const uint32_t *idx = pool_order(s, n);
	/* a pool that no watermark drains (a file far out of time order) is cut
	 * back: its oldest records are processed anyway (later, older records
	 * then count as late) so memory and the per-block sort stay bounded */
	size_t force = n > s->pool_max ? n - s->pool_max / 2 : 0;
	size_t k = 0;
	for (; k < n; k++) {
		const struct pev *e = &p[idx[k]];
		if (!s->eof && e->c.ts >= s->wm && k >= force)
			break;
		if (e->c.ts < s->quiet_ts) /* the quiet commit took it for come: not the capture's */
			flush_news(s, "a device record older than a quiet commit's latest came after it");
		else if (e->c.ts < s->last_ts)
			s->a->late_lines++;
		if (e->c.ts >= s->last_ts)
			s->last_ts = e->c.ts;
		if (e->is_cmp)
			process_cmp(s, e);
		else
			process_cmd(s, e);
		s->nproc++;
	}
	size_t m = 0;
	for (; k < n; k++)
		s->spare[m++] = p[idx[k]];
	struct pev *t = s->pool;
	s->pool = s->spare;
	s->spare = t;
	s->npool = m;
	s->sorted_upto = m; /* what stays is in order */
	s->new_sorted = 1;
}

static void pool_reserve(struct stream *s, size_t n)
{
	if (n <= s->cap_pool)
		return;
	size_t old = s->cap_pool * sizeof *s->pool;
	s->cap_pool = n + n / 2;
	s->pool = xrealloc(s->pool, s->cap_pool * sizeof *s->pool);
	s->spare = xrealloc(s->spare, s->cap_pool * sizeof *s->spare);
	mem_prefault((char *)s->pool + old, s->cap_pool * sizeof *s->pool - old); /* both fill up */
	mem_prefault((char *)s->spare + old, s->cap_pool * sizeof *s->spare - old);
}

/* One parsed block, in file order. */
static void consume(void *ctx, struct arm *part)
{
	struct stream *s = ctx;
	struct arm *a = s->a;
	if (part->names.n > s->nremap) {
		s->nremap = part->names.n;
		s->remap = xrealloc(s->remap, s->nremap * sizeof *s->remap);
	}
	arm_absorb(a, part, s->remap);
	for (size_t i = 0; i < part->names.n; i++) { /* the arm ids of "write" and "read" */
		const char *nm = VEC_AT(&part->names, const char *, i);
		if (!strcmp(nm, "write")) s->wname = s->remap[i];
		if (!strcmp(nm, "read")) s->rname = s->remap[i];
	}
	size_t nc = part->cmds.n, np = part->cmps.n;
	a->n_cmd_lines += nc;
	a->n_cmp_lines += np;
	uint32_t bi = (uint32_t)s->blocks.n;
	struct blk *b = vec_push(&s->blocks, sizeof *b);
	memset(b, 0, sizeof *b);
	b->live = nc;
	pool_reserve(s, s->npool + nc + np);
	int64_t bmin = INT64_MAX;
	const struct cmd *cs = part->cmds.v;
	const struct cmp *ps = part->cmps.v;
	/* in the order load.c sorted the block in (else commands, then completions) */
	const uint32_t *ord = part->order.n == nc + np ? part->order.v : NULL;
	s->new_sorted = ord != NULL;
	for (size_t k = 0; k < nc + np; k++) {
		size_t i = ord ? ord[k] : k;
		struct pev *e = &s->pool[s->npool++];
		if (i >= nc) {
			i -= nc;
			memset(&e->c, 0, sizeof e->c);
			e->c.ts = ps[i].ts;
			e->c.user_data = ps[i].user_data;
			e->kv = NULL;
			e->block = bi;
			e->is_cmp = 1;
			if (ps[i].ts < bmin) bmin = ps[i].ts;
			continue;
		}
		e->c = cs[i];
		e->c.name = s->remap[cs[i].name];
		e->kv = (cs[i].flags & CF_KV) ? &VEC_AT(&part->kv, struct cmd_kv, cs[i].kv) : NULL;
		e->block = bi;
		e->is_cmp = 0;
		if (s->o->join == JOIN_KEY) { /* the key is the join: user_data's trace_id is not used */
			const char *kh = e->kv ? e->kv->key_hex : NULL;
			e->c.trace_id = 0;
			if (kh && *kh) {
				a->key_cmds++;
				if ((e->c.trace_id = arm_key_id(a, kh)))
					a->key_matched++;
			} else {
				e->c.role = ROLE_UNTAGGED;
			}
		}
		if (cs[i].ts < bmin) bmin = cs[i].ts;
	}
	/* the block keeps its KV strings while its commands wait */
	if (nc) {
		b->strs = part->strs;
		memset(&part->strs, 0, sizeof part->strs);
		b->kv = part->kv;
		memset(&part->kv, 0, sizeof part->kv);
	}
	if (bmin < a->min_ts)
		a->min_ts = bmin;
	if (bmin < s->dev_min)
		s->dev_min = bmin;
	if (bmin != INT64_MAX) {
		s->wm = bmin;
		process_pool(s);
		drain(s);
	}
}

struct stream *stream_open(struct arm *a, struct dbw *w, struct arm_out *t, const struct ingest_opts *o, int follow)
{
	struct stream *s = xcalloc(1, sizeof *s);
	s->a = a;
	s->w = w;
	s->t = t;
	s->o = o;
	s->follow = follow;
	s->wm = INT64_MIN;
	s->wm_obj = INT64_MIN;
	s->quiet_ts = INT64_MIN;
	s->last_ts = INT64_MIN;
	s->sem_end = INT64_MIN;
	s->dev_min = s->dev_min_at_base = INT64_MAX;
	s->wname = s->rname = UINT16_MAX;
	for (int r = 0; r < NROLES; r++)
		s->last_role[r] = NONE;
	s->horizon = (uint64_t)o->pair_horizon;
	s->pool_max = (size_t)env_i64("KVIO_POOL_MAX", 1 << 20, 2);
	/* smallest gap whose 0.9 x cap is >= the nominal duration, plus margin */
	s->settle = (int64_t)ceil((double)o->nominal_dur_ns / 0.9) + 2;
	size_t no = a->objs.n; /* (a follow's: none yet, and none needed) */
	s->cur = xcalloc(no ? no : 1, sizeof *s->cur);
	int64_t cl[3] = {o->lba_bytes, 4096, 512};
	for (int i = 0; i < 3; i++) {
		int dup = 0;
		for (int k = 0; k < s->ncand; k++)
			dup |= s->cand[k] == cl[i];
		if (!dup)
			s->cand[s->ncand++] = cl[i];
	}
	a->lba_bytes = o->lba_bytes;
	if (o->join != JOIN_COOKIE) /* KV: no slba geometry; offset: the join fixes the geometry */
		s->lba_decided = 1;
	return s;
}

void stream_block(struct stream *s, struct arm *part)
{
	consume(s, part);
}

void stream_end(struct stream *s)
{
	s->eof = 1;
	process_pool(s);
	drain(s);
	lba_decide(s, 1);
	dbw_flush_chunk(s->w);
}

/* Quiet, every record stamped before now has come: the watermark past the
 * pool's records, the objects' past the latest op end logged too (so the
 * objects that ended after the device's last record are decided; a device
 * record that comes later is in order, unless its object was written then:
 * attribute), the LBA size decided on
 * the store objects logged (fewer than FOLLOW_LBA_SAMPLES in a run that hung
 * early), and what waits written as at the end of the file (flush). */
void stream_quiet(struct stream *s)
{
	int64_t d = INT64_MIN;
	for (size_t i = 0; i < s->npool; i++)
		if (s->pool[i].c.ts > d)
			d = s->pool[i].c.ts;
	if (d != INT64_MIN && d != INT64_MAX && d >= s->wm) {
		s->wm = d + 1; /* records that come later are in time order past the device's */
		process_pool(s);
	}
	s->quiet_ts = s->last_ts;
	int64_t m = s->sem_end > d ? s->sem_end : d;
	if (m != INT64_MIN && m != INT64_MAX && m >= s->wm_obj)
		s->wm_obj = m + 1;
	lba_decide(s, 1); /* on the store objects so far (the stop checks it against a one-shot's 50) */
	s->flush = 1;     /* what is held, written as at the end of the file */
	drain(s);
	s->flush = 0;
}

void stream_free(struct stream *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->blocks.n; i++) {
		struct blk *b = &VEC_AT(&s->blocks, struct blk, i);
		arena_free(&b->strs);
		vec_free(&b->kv);
	}
	vec_free(&s->blocks);
	free(s->pool);
	free(s->spare);
	free(s->ring);
	free(s->cur);
	free(s->remap);
	free(s->grp);
	free(s->sidx);
	free(s->stmp);
	free(s->skey);
	map_free(&s->ud);
	map_free(&s->gone);
	map_free(&s->orphans);
	vec_free(&s->hung);
	map_free(&s->hungm);
	free(s);
}

static void consume_cb(void *ctx, struct arm *part)
{
	consume(ctx, part);
}

int arm_stream(struct arm *a, struct dbw *w, struct arm_out *t, const char *path, const struct ingest_opts *o)
{
	struct stream *s = stream_open(a, w, t, o, 0);
	int rc = arm_read_device(a, path, o, consume_cb, s);
	if (!rc)
		stream_end(s);
	stream_free(s);
	return rc;
}
