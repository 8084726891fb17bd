/* op_depth.c — the depth sweep: how many intervals [ts, ts + dur) are open.
 *
 *   kvio_depth_gather(k, ts, dur)                 time at each depth by k      -> kvio_depth(p)
 *   kvio_depth_gather(k, ts, dur, max_depth, min_len)  the same, and the spans
 *                                                 at depth <= max_depth        -> kvio_depth_spans(p)
 *   kvio_depth_buckets_gather(k, ts, dur, t0, w)  area and max depth per time
 *                                                 bucket of width w from t0    -> kvio_depth_buckets(p)
 *
 * Events +1 at ts, -1 at ts + dur, in (time, delta) order (a completion before
 * a submit at the same ns); rows of a group come in ts order. Memory is the
 * open intervals (a min-heap of their ends), not the input. Contracts in
 * docs/database.md ("Operators"); tests/ops_twin.py holds them to a twin. */
#include "kvio_int.h"

/* ---- the depth sweep ------------------------------------------------------- */


static void dgroup_fini(struct ghead *h)
{
	struct dgroup *g = (struct dgroup *)h;
	sqlite3_free(g->heap);
	sqlite3_free(g->at);
	sqlite3_free(g->spans);
}

void dset_free(void *p)
{
	struct dset *s = p;
	if (!s)
		return;
	gtab_free(&s->t, dgroup_fini);
	sqlite3_free(s);
}

/* Move the sweep of g to time t (>= g->t): the time between at the current depth. */
static int dgroup_advance(struct dgroup *g, int64_t t)
{
	if (t <= g->t)
		return SQLITE_OK;
	if ((size_t)g->depth >= g->nat) {
		size_t n = (size_t)g->depth + 16;
		int64_t *at = sqlite3_realloc64(g->at, n * sizeof *at);
		if (!at)
			return SQLITE_NOMEM;
		memset(at + g->nat, 0, (n - g->nat) * sizeof *at);
		g->at = at;
		g->nat = n;
	}
	int64_t dt; /* a span beyond int64 (times from a crafted table): an error, not overflow */
	if (__builtin_sub_overflow(t, g->t, &dt) || __builtin_add_overflow(g->at[g->depth], dt, &g->at[g->depth]))
		return SQLITE_TOOBIG;
	g->t = t;
	return SQLITE_OK;
}

static void heap_push(int64_t *h, size_t *n, int64_t v)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

/* The least end out: the hole at the root goes down the smaller children to a
 * leaf, and the last end rises from there (one comparison per level on the
 * way down; the last end seldom rises far). */
static int64_t heap_pop(int64_t *h, size_t *n)
{
	int64_t top = h[0], v = h[--*n];
	size_t m = *n, i = 0;
	if (!m)
		return top;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= m)
			break;
		c += c + 1 < m && h[c + 1] < h[c];
		h[i] = h[c];
		i = c;
	}
	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
	return top;
}

/* Keep the low span [lo_from, end) of g when it lasts at least min_len (and
 * more than 0). SQLITE_OK or NOMEM. */
static int dgroup_span(struct dgroup *g, int64_t end)
{
	if (end - g->lo_from < g->min_len || end <= g->lo_from)
		return SQLITE_OK;
	if (g->nspans + 2 > g->capspans) {
		size_t c = g->capspans ? g->capspans * 2 : 16;
		int64_t *sp = sqlite3_realloc64(g->spans, c * sizeof *sp);
		if (!sp)
			return SQLITE_NOMEM;
		g->spans = sp;
		g->capspans = c;
	}
	g->spans[g->nspans++] = g->lo_from;
	g->spans[g->nspans++] = end;
	return SQLITE_OK;
}

/* Change g's depth by delta at its time g->t; with spans, follow the low spans:
 * a span ends where the depth rises above max_depth for a time > 0 (a rise
 * and fall at one ns does not split it). SQLITE_OK or NOMEM. */
static int dgroup_step(struct dgroup *g, int delta)
{
	g->depth += delta;
	if (!g->spans_on)
		return SQLITE_OK;
	int high = g->depth > g->max_depth;
	if (high && !g->high) {
		g->hi_from = g->t;
	} else if (!high && g->high && g->t > g->hi_from) {
		int rc = dgroup_span(g, g->hi_from);
		if (rc != SQLITE_OK)
			return rc;
		g->lo_from = g->t;
	}
	g->high = high;
	return SQLITE_OK;
}

/* End every open interval of g that ends at or before t. */
static int dgroup_close_until(struct dgroup *g, int64_t t)
{
	while (g->nheap && g->heap[0] <= t) {
		int64_t e = heap_pop(g->heap, &g->nheap);
		int rc = dgroup_advance(g, e);
		if (rc == SQLITE_OK)
			rc = dgroup_step(g, -1);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* kvio_depth_gather(k, ts, dur [, max_depth, min_len]): interval [ts, ts + dur)
 * of group k; rows of a group in ts order, dur >= 0; with max_depth and
 * min_len (integers >= 0) the group's spans at depth <= max_depth lasting at
 * least min_len are kept too. */
static int depth_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	if (k[1].t != SQLITE_INTEGER || k[2].t != SQLITE_INTEGER || k[2].i < 0) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_depth_gather: ts and dur must be integers, dur >= 0");
		return SQLITE_MISMATCH;
	}
	if (argc == 5 && (k[3].t != SQLITE_INTEGER || k[4].t != SQLITE_INTEGER || k[3].i < 0 || k[4].i < 0)) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_depth_gather: max_depth and min_len must be integers >= 0");
		return SQLITE_MISMATCH;
	}
	struct dset *s = a->p;
	a->free = dset_free;
	if (!s) {
		if (!(s = a->p = sqlite3_malloc(sizeof *s))) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		memset(s, 0, sizeof *s);
		gtab_init(&s->t, sizeof(struct dgroup), 1);
	}
	int64_t ts = k[1].i, dur = k[2].i, end;
	if (__builtin_add_overflow(ts, dur, &end)) {
		agg_fail(ctx, a, SQLITE_TOOBIG, "kvio_depth_gather: ts + dur overflows int64");
		return SQLITE_TOOBIG;
	}
	struct dgroup *g = (struct dgroup *)gtab_get(&s->t, k);
	if (!g) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	if (g->started && ts < g->last_start) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_depth_gather: rows of a group are not in ts order");
		return SQLITE_ERROR;
	}
	if (!g->started) {
		g->started = 1;
		g->t = g->lo_from = ts;
		g->spans_on = argc == 5;
		g->max_depth = argc == 5 ? k[3].i : 0;
		g->min_len = argc == 5 ? k[4].i : 0;
	}
	g->last_start = ts;
	if (g->nheap == g->capheap) {
		size_t c = g->capheap ? g->capheap * 2 : 64;
		int64_t *h = sqlite3_realloc64(g->heap, c * sizeof *h);
		if (!h) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		g->heap = h;
		g->capheap = c;
	}
	int rc = dgroup_close_until(g, ts);
	if (rc == SQLITE_OK)
		rc = dgroup_advance(g, ts);
	if (rc == SQLITE_OK)
		rc = dgroup_step(g, +1);
	if (rc != SQLITE_OK) {
		agg_fail(ctx, a, rc, rc == SQLITE_NOMEM ? NULL : "kvio_depth_gather: a group's times span more than int64");
		return rc;
	}
	heap_push(g->heap, &g->nheap, end);
	return SQLITE_OK;
}

static void depth_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, depth_row);
}

static void depth_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct dset *s = a ? a->p : NULL;
	if (a)
		a->p = NULL;
	if (!s && (s = sqlite3_malloc(sizeof *s))) {
		memset(s, 0, sizeof *s);
		gtab_init(&s->t, sizeof(struct dgroup), 1);
	}
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	for (size_t i = 0; i < s->t.nlist; i++) {
		struct dgroup *g = (struct dgroup *)s->t.list[i];
		int rc = dgroup_close_until(g, INT64_MAX);
		if (rc == SQLITE_OK && g->spans_on && !g->high) /* the last span ends at the last end */
			rc = dgroup_span(g, g->t);
		if (rc != SQLITE_OK) {
			dset_free(s);
			if (rc == SQLITE_NOMEM)
				sqlite3_result_error_nomem(ctx);
			else
				sqlite3_result_error(ctx, "kvio_depth_gather: a group's times span more than int64", -1);
			return;
		}
	}
	sqlite3_result_pointer(ctx, s, "kvio_depth", dset_free);
}

/* ---- kvio_depth_buckets: the depth sweep per time bucket ------------------- */

#define BK_MAX_BUCKETS (1 << 24)

/* One group: the sweep (open ends in a heap, the starts at one ts held until
 * every end at that ts is known) and its buckets. */
struct bgroup {
	struct ghead h;
	int64_t *heap;
	size_t nheap, capheap;
	int64_t t0, w;          /* the grid, from the group's first row */
	int64_t pend_ts, npend; /* starts at pend_ts not yet swept */
	int64_t t, depth, end;  /* last event time, depth after it, last end */
	int started, evented;
	int64_t *area, *max;    /* per bucket: depth x ns, deepest depth */
	size_t nb;              /* buckets touched so far (then: the grid's count) */
};

struct bset {
	struct gtab t;
	int sorted;
};

static void bgroup_fini(struct ghead *h)
{
	struct bgroup *g = (struct bgroup *)h;
	sqlite3_free(g->heap);
	sqlite3_free(g->area);
	sqlite3_free(g->max);
}

static void bset_free(void *p)
{
	struct bset *s = p;
	if (!s)
		return;
	gtab_free(&s->t, bgroup_fini);
	sqlite3_free(s);
}

/* Make buckets [0, n) exist in g (zeroed). SQLITE_OK, NOMEM or TOOBIG. */
static int bgroup_reserve(struct bgroup *g, size_t n)
{
	if (n <= g->nb)
		return SQLITE_OK;
	if (n > BK_MAX_BUCKETS)
		return SQLITE_TOOBIG;
	size_t cap = n < 2 * g->nb ? 2 * g->nb : n;
	cap = cap > BK_MAX_BUCKETS ? BK_MAX_BUCKETS : cap;
	int64_t *a = sqlite3_realloc64(g->area, cap * sizeof *a);
	if (!a)
		return SQLITE_NOMEM;
	g->area = a;
	int64_t *m = sqlite3_realloc64(g->max, cap * sizeof *m);
	if (!m)
		return SQLITE_NOMEM;
	g->max = m;
	memset(g->area + g->nb, 0, (cap - g->nb) * sizeof *a);
	memset(g->max + g->nb, 0, (cap - g->nb) * sizeof *m);
	g->nb = cap;
	return SQLITE_OK;
}

/* Account the interval [a, b) at depth d (a >= t0) to the buckets it touches:
 * those it overlaps, or, zero-length, the one holding a. */
static int bgroup_account(struct bgroup *g, int64_t a, int64_t b, int64_t d)
{
	if (d <= 0)
		return SQLITE_OK;
	int64_t lo = (a - g->t0) / g->w, hi = ((b > a ? b - 1 : a) - g->t0) / g->w;
	int rc = bgroup_reserve(g, (size_t)hi + 1);
	if (rc != SQLITE_OK)
		return rc;
	for (int64_t k = lo; k <= hi; k++) {
		int64_t x = g->t0 + k * g->w;
		int64_t s = a > x ? a : x, e = b - x < g->w ? b : x + g->w, da;
		if (__builtin_mul_overflow(d, e - s, &da) || __builtin_add_overflow(g->area[k], da, &g->area[k]))
			return SQLITE_RANGE; /* depth x ns beyond int64 */
		if (d > g->max[k])
			g->max[k] = d;
	}
	return SQLITE_OK;
}

/* One event at t (>= the last) changing the depth by delta. */
static int bgroup_event(struct bgroup *g, int64_t t, int delta)
{
	if (g->evented) {
		int rc = bgroup_account(g, g->t, t, g->depth);
		if (rc != SQLITE_OK)
			return rc;
	}
	g->evented = 1;
	g->t = t;
	g->depth += delta;
	return SQLITE_OK;
}

/* Sweep every end <= t, then the held starts (a completion before a submit at the same ns). */
static int bgroup_flush(struct bgroup *g, int64_t t)
{
	int rc = SQLITE_OK;
	while (rc == SQLITE_OK && g->nheap && g->heap[0] <= t)
		rc = bgroup_event(g, heap_pop(g->heap, &g->nheap), -1);
	for (; rc == SQLITE_OK && g->npend; g->npend--)
		rc = bgroup_event(g, g->pend_ts, +1);
	return rc;
}

/* Find or make the set in a and the group of row k; checks the row. NULL after an error. */
static struct bgroup *bucket_row_group(sqlite3_context *ctx, struct agg *a, const struct key *k)
{
	for (int i = 1; i < 5; i++)
		if (k[i].t != SQLITE_INTEGER) {
			agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_depth_buckets_gather: ts, dur, t0 and w must be integers");
			return NULL;
		}
	if (k[2].i < 0 || k[4].i < 1 || k[3].i > k[1].i) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_depth_buckets_gather: needs dur >= 0, w >= 1, t0 <= ts");
		return NULL;
	}
	struct bset *s = a->p;
	a->free = bset_free;
	if (!s) {
		if (!(s = a->p = sqlite3_malloc(sizeof *s))) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return NULL;
		}
		memset(s, 0, sizeof *s);
		gtab_init(&s->t, sizeof(struct bgroup), 1);
	}
	struct bgroup *g = (struct bgroup *)gtab_get(&s->t, k);
	if (!g)
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
	return g;
}

/* kvio_depth_buckets_gather(k, ts, dur, t0, w): interval [ts, ts + dur) of
 * group k on the grid of buckets [t0 + b*w, t0 + (b+1)*w); rows of a group in
 * ts order, t0 and w the same on each of them. */
static int bucket_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	(void)argc;
	struct bgroup *g = bucket_row_group(ctx, a, k);
	if (!g)
		return SQLITE_ERROR;
	int64_t ts = k[1].i, dur = k[2].i, end, span;
	int64_t t0 = k[3].i, w = k[4].i;
	if (__builtin_add_overflow(ts, dur, &end) || __builtin_sub_overflow(end, t0, &span)) {
		agg_fail(ctx, a, SQLITE_TOOBIG, "kvio_depth_buckets_gather: ts + dur - t0 overflows int64");
		return SQLITE_TOOBIG;
	}
	if (!g->started) {
		g->started = 1;
		g->t0 = t0;
		g->w = w;
		g->pend_ts = ts;
		g->end = ts;
	} else if (t0 != g->t0 || w != g->w) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_depth_buckets_gather: t0 and w differ within a group");
		return SQLITE_ERROR;
	} else if (ts < g->pend_ts) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_depth_buckets_gather: rows of a group are not in ts order");
		return SQLITE_ERROR;
	}
	int rc = SQLITE_OK;
	if (ts > g->pend_ts) {
		rc = bgroup_flush(g, g->pend_ts);
		g->pend_ts = ts;
	}
	if (rc == SQLITE_OK && g->nheap == g->capheap) {
		size_t c = g->capheap ? g->capheap * 2 : 64;
		int64_t *h = sqlite3_realloc64(g->heap, c * sizeof *h);
		if (h) {
			g->heap = h;
			g->capheap = c;
		} else
			rc = SQLITE_NOMEM;
	}
	if (rc != SQLITE_OK) {
		agg_fail(ctx, a, rc, rc == SQLITE_RANGE ? "kvio_depth_buckets_gather: a bucket's depth x ns beyond int64"
							 : "kvio_depth_buckets_gather: more than 2^24 buckets");
		return rc;
	}
	g->npend++;
	heap_push(g->heap, &g->nheap, end);
	if (end > g->end)
		g->end = end;
	return SQLITE_OK;
}

static void bucket_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, bucket_row);
}

/* Finish the sweep of every group; its bucket count becomes ceil((end - t0) / w). */
static int bset_finish(struct bset *s)
{
	for (size_t i = 0; i < s->t.nlist; i++) {
		struct bgroup *g = (struct bgroup *)s->t.list[i];
		int rc = bgroup_flush(g, g->pend_ts); /* the last starts, then every end */
		if (rc == SQLITE_OK)
			rc = bgroup_flush(g, INT64_MAX);
		if (rc != SQLITE_OK)
			return rc;
		int64_t span = g->end - g->t0; /* >= 0 and in range: bucket_row checked each row's */
		size_t nb = (size_t)(span / g->w + (span % g->w != 0));
		if ((rc = bgroup_reserve(g, nb)) != SQLITE_OK)
			return rc;
		g->nb = nb;
	}
	return SQLITE_OK;
}

static void bucket_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct bset *s = a ? a->p : NULL;
	if (a)
		a->p = NULL;
	if (!s && (s = sqlite3_malloc(sizeof *s))) {
		memset(s, 0, sizeof *s);
		gtab_init(&s->t, sizeof(struct bgroup), 1);
	}
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	int rc = bset_finish(s);
	if (rc != SQLITE_OK) {
		bset_free(s);
		if (rc == SQLITE_NOMEM)
			sqlite3_result_error_nomem(ctx);
		else
			sqlite3_result_error(ctx, rc == SQLITE_RANGE ? "kvio_depth_buckets_gather: a bucket's depth x ns beyond int64"
								    : "kvio_depth_buckets_gather: more than 2^24 buckets", -1);
		return;
	}
	sqlite3_result_pointer(ctx, s, "kvio_buckets", bset_free);
}

struct bk_cur {
	sqlite3_vtab_cursor base;
	struct gtab *t;
	size_t g, b; /* current group, bucket */
	int64_t rowid;
};

static void bk_settle(struct bk_cur *c)
{
	while (c->g < c->t->nlist && c->b >= ((struct bgroup *)c->t->list[c->g])->nb) {
		c->g++;
		c->b = 0;
	}
}

static int bk_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)aux; (void)argc; (void)argv; (void)err;
	return grid_tab_new(db, "CREATE TABLE x(k, bucket, start, width, area, max, p HIDDEN)", out);
}

static int bk_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	return grid_hidden_args(tab, ii, 6, 1, 400, "kvio_depth_buckets: needs its set argument");
}

static int bk_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	return grid_cur_new(sizeof(struct bk_cur), out);
}

static int bk_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct bk_cur *c = (struct bk_cur *)cur;
	struct bset *s = argc ? sqlite3_value_pointer(argv[0], "kvio_buckets") : NULL;
	c->t = NULL;
	c->g = c->b = 0;
	c->rowid = 0;
	if (!s) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_depth_buckets: the argument is not a kvio_buckets set (use kvio_depth_buckets_gather)");
		return SQLITE_ERROR;
	}
	if (!s->sorted)
		gtab_sort(&s->t);
	s->sorted = 1;
	c->t = &s->t;
	bk_settle(c);
	return SQLITE_OK;
}

static int bk_next(sqlite3_vtab_cursor *cur)
{
	struct bk_cur *c = (struct bk_cur *)cur;
	c->rowid++;
	c->b++;
	bk_settle(c);
	return SQLITE_OK;
}

static int bk_eof(sqlite3_vtab_cursor *cur)
{
	struct bk_cur *c = (struct bk_cur *)cur;
	return !c->t || c->g >= c->t->nlist;
}

/* A row: k, bucket b, its start t0 + b*w, width (the last one cut at the group's end), area, max. */
static int bk_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct bk_cur *c = (struct bk_cur *)cur;
	const struct bgroup *g = (const struct bgroup *)c->t->list[c->g];
	int64_t x = g->t0 + (int64_t)c->b * g->w;
	switch (col) {
	case 0: key_result(ctx, &g->h.k[0]); break;
	case 1: sqlite3_result_int64(ctx, (int64_t)c->b); break;
	case 2: sqlite3_result_int64(ctx, x); break;
	case 3: sqlite3_result_int64(ctx, g->end - x < g->w ? g->end - x : g->w); break;
	case 4: sqlite3_result_int64(ctx, g->area[c->b]); break;
	case 5: sqlite3_result_int64(ctx, g->max[c->b]); break;
	}
	return SQLITE_OK;
}

static int bk_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct bk_cur *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module bk_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = bk_connect,
	.xBestIndex = bk_best_index,
	.xDisconnect = tv_disconnect,
	.xDestroy = tv_disconnect,
	.xOpen = bk_open,
	.xClose = tv_close,
	.xFilter = bk_filter,
	.xNext = bk_next,
	.xEof = bk_eof,
	.xColumn = bk_column,
	.xRowid = bk_rowid,
};

/* Register the grid operators on db. SQLITE_OK or an error code. */

int op_depth_register(sqlite3 *db)
{
	static const struct op_agg aggs[] = {
		{"kvio_depth_gather", 3, depth_step, depth_final},
		{"kvio_depth_gather", 5, depth_step, depth_final},
		{"kvio_depth_buckets_gather", 5, bucket_step, bucket_final},
	};
	int rc = sqlite3_create_module_v2(db, "kvio_depth_buckets", &bk_module, NULL, NULL);
	return rc == SQLITE_OK ? op_register_aggs(db, aggs, sizeof aggs / sizeof aggs[0]) : rc;
}
