/* streamlive.c — the streaming join under --follow (live.c's side of
 * stream.c): the semantic side's progress, what the stream still holds at a
 * commit (stream_waiting), and what the stop checks against a one-shot ingest
 * of the final files (stream_follow_check). */
#include "stream_int.h"
#include <stdlib.h>
#include <string.h>

void stream_sem_seen(struct stream *s, int64_t end)
{
	if (end > s->sem_end)
		s->sem_end = end;
}

int64_t stream_done_ts(const struct stream *s)
{
	int64_t d = s->eof ? INT64_MAX : s->wm;
	if (s->head < s->tail && s->ring[s->head & (s->rcap - 1)].c.ts < d)
		d = s->ring[s->head & (s->rcap - 1)].c.ts;
	return d;
}

int64_t stream_obj_done_ts(const struct stream *s)
{
	int64_t d = stream_done_ts(s);
	return s->head == s->tail && obj_wm(s) > d ? obj_wm(s) : d;
}

void stream_objects_written(struct stream *s, size_t n)
{
	s->objs_written = n;
}

size_t stream_obj_floor(const struct stream *s)
{
	size_t f = s->lba_decided ? SIZE_MAX : s->lba_cursor;
	for (uint64_t q = s->head; q < s->tail; q++) {
		int32_t o = s->ring[q & (s->rcap - 1)].c.obj;
		if (o >= 0 && (size_t)o < f)
			f = (size_t)o;
	}
	return f;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

/* The reorder pool's completions as (user_data, ts) in i64pair's fields (ts,
 * d), sorted; their count. */
static size_t pool_cmps(const struct stream *s, struct i64pair **out)
{
	size_t n = 0;
	*out = xmalloc((s->npool ? s->npool : 1) * sizeof **out);
	for (size_t i = 0; i < s->npool; i++)
		if (s->pool[i].is_cmp)
			(*out)[n++] = (struct i64pair){(int64_t)s->pool[i].c.user_data, s->pool[i].c.ts};
	qsort(*out, n, sizeof **out, i64pair_cmp);
	return n;
}

/* Whether the pool holds a completion of user_data ud stamped at or after ts
 * (read, not joined yet: its command is not waiting for it). */
static int pool_completes(const struct i64pair *p, size_t n, uint64_t ud, int64_t ts)
{
	int64_t key = (int64_t)ud; /* (pool_cmps sorts on the same signed key) */
	size_t lo = 0, hi = n;    /* the first entry past every one of key: its latest is before it */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (p[m].ts <= key)
			lo = m + 1;
		else
			hi = m;
	}
	return lo > 0 && p[lo - 1].ts == key && p[lo - 1].d >= ts;
}

/* One command without its completion so far, submitted at ts: counted in w,
 * the oldest's time in *first, its trace_id (!= 0) in tid. */
static void one_unpaired(struct stream_wait *w, int64_t ts, uint32_t trace_id, int64_t *first, struct vec *tid)
{
	if (!w->unpaired++ || ts < *first) {
		*first = ts;
		w->oldest_tid = trace_id;
	}
	if (trace_id)
		*(uint32_t *)vec_push(tid, sizeof(uint32_t)) = trace_id;
}

void stream_waiting(const struct stream *s, struct stream_wait *w)
{
	int64_t last = s->last_ts, first = INT64_MAX;
	struct vec tid = {0};
	struct i64pair *pc;
	size_t npc = pool_cmps(s, &pc);
	*w = (struct stream_wait){.cmds = s->tail - s->head, .pool = s->npool, .age_ns = -1};
	for (size_t i = 0; i < s->npool; i++)
		if (s->pool[i].c.ts > last)
			last = s->pool[i].c.ts;
	for (uint64_t q = s->head; q < s->tail; q++) {
		const struct rent *r = &s->ring[q & (s->rcap - 1)];
		if (!r->paired && !pool_completes(pc, npc, r->c.user_data, r->c.ts))
			one_unpaired(w, r->c.ts, r->c.trace_id, &first, &tid);
	}
	const struct hung *h = s->hung.v; /* written by a quiet commit, still without their completion */
	for (size_t i = 0; i < s->hung.n; i++)
		if (!h[i].dead && !pool_completes(pc, npc, h[i].user_data, h[i].ts)) {
			one_unpaired(w, h[i].ts, h[i].trace_id, &first, &tid);
			w->written++;
		}
	w->unpaired += s->hung_lost; /* drawn past HUNG_MAX: counted, not listed */
	w->written += s->hung_lost;
	free(pc);
	if (w->unpaired)
		w->age_ns = ts_diff(last, first) < 0 ? 0 : ts_diff(last, first);
	const uint32_t *t = tid.v;
	if (tid.n)
		qsort(tid.v, tid.n, sizeof *t, u32_cmp);
	for (size_t i = 0; i < tid.n; i++)
		w->objects += !i || t[i] != t[i - 1];
	vec_free(&tid);
}

const char *stream_follow_check(struct stream *s, int64_t sem_min)
{
	struct arm *a = s->a;
	uint32_t f;
	for (size_t i = 0; i < s->orphans.cap; i++) /* a command written without the record that came later */
		if (s->orphans.v[i] != UINT32_MAX && map_get(&a->first_obj, s->orphans.k[i], &f))
			return s->orphans.v[i] == 2 ? "a quiet commit wrote a command before its object's semantic record came"
						    : "a command's semantic record came after its horizon";
	if (s->base_by_cmd) { /* the device's earliest time was known when the base was fixed */
		int64_t base = s->dev_min < sem_min ? s->dev_min : sem_min;
		if (s->dev_min_at_base != s->dev_min || (!s->o->no_rebase && base != a->base_ns))
			return "a record older than the first written command came after it";
	}
	/* what depends on where the file's blocks are cut (a follow reads smaller ones) */
	if (a->late_lines)
		return "device records out of time order";
	if (s->near_horizon || a->cmp_after_horizon)
		return "a completion near --pair-horizon records after its command";
	if (s->flush_why) /* what a quiet commit drew: a completion came, or a next command that caps it */
		return s->flush_why;
	if (s->o->join != JOIN_COOKIE)
		return NULL;
	/* the LBA size as a one-shot ingest decides it: the first 50 store objects
	 * with commands, none of them with a command after its op end */
	int score[3] = {0}, sampled = 0;
	for (size_t i = a->objs_base; i < arm_nobjs(a) && sampled < 50; i++) {
		const struct obj *ob = arm_obj(a, i);
		if (!ob->is_store || !ob->n_cmds)
			continue;
		if (ob->last_ts > ob->end)
			return "a store object with a command after its op end";
		for (int k = 0; k < s->ncand; k++)
			if (ob->lba_match & (1u << k))
				score[k]++;
		sampled++;
	}
	if (lba_choose(a, s->o, s->cand, s->ncand, score, sampled, 1) != a->lba_bytes)
		return "the LBA size was decided before its store objects came";
	return NULL;
}
