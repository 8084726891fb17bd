/* op_group.c — hash grouping.
 *
 *   kvio_group_gather(k1, k2, v [, v2 ...])   count/min/max/sum of each v by (k1, k2) -> kvio_groups(p)
 *   kvio_step_gather(k, a, b [, len, unit])   a - previous b (+ len / unit) by (k, sign) -> kvio_groups(p)
 *   kvio_count_distinct(x)                    count(DISTINCT x), hashed (a plain aggregate)
 *
 * The same answers as SQL's count, min, max, sum and count(DISTINCT) over
 * GROUP BY, in one hashed pass instead of a sort. Contracts in
 * docs/database.md ("Operators"); tests/ops_twin.py holds them to a twin. */
#include "kvio_int.h"

/* ---- hash grouping: count, min, max, sum ------------------------------------ */


/* A set of groups of nvals value columns, or NULL. */
static struct sset *sset_new(int nvals)
{
	struct sset *s = sqlite3_malloc(sizeof *s);
	if (!s)
		return NULL;
	memset(s, 0, sizeof *s);
	s->nvals = nvals;
	gtab_init(&s->t, sizeof(struct sgroup) + (size_t)nvals * sizeof(struct vsum), 2);
	return s;
}

/* Add the number k (its own type) to u. */
static void vsum_add(struct vsum *u, const struct key *k)
{
	if (k->t == SQLITE_INTEGER && u->nv && u->min.t == SQLITE_INTEGER && u->max.t == SQLITE_INTEGER) {
		/* integers only so far (the usual case): key_cmp's integer order, inline */
		if (k->i < u->min.i)
			u->min.i = k->i;
		if (k->i > u->max.i)
			u->max.i = k->i;
	} else {
		if (!u->nv || key_cmp(k, &u->min) < 0)
			u->min = *k;
		if (!u->nv || key_cmp(k, &u->max) > 0)
			u->max = *k;
	}
	u->nv++;
	if (k->t == SQLITE_FLOAT) {
		u->real = 1;
		u->dsum += k->d;
	} else {
		u->dsum += (double)k->i;
		if (__builtin_add_overflow(u->isum, k->i, &u->isum))
			u->overflow = 1;
	}
}

static void sset_free(void *p)
{
	struct sset *s = p;
	if (!s)
		return;
	gtab_free(&s->t, NULL); /* min and max are numbers: nothing of a group to free */
	sqlite3_free(s);
}

/* kvio_group_gather(k1, k2, v [, v2 ...]): per group (k1, k2) the rows, and
 * of each v the non-NULL count, min, max and sum (as SQLite's count/min/max/sum). */
static int group_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	if (argc < 3) {
		agg_fail(ctx, a, SQLITE_MISUSE, "kvio_group_gather: (k1, k2, v [, v2 ...])");
		return SQLITE_MISUSE;
	}
	struct sset *s = a->p;
	a->free = sset_free;
	if (!s && !(s = a->p = sset_new(argc - 2))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	struct sgroup *g = (struct sgroup *)gtab_get(&s->t, k);
	if (!g) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	g->n++;
	for (int i = 0; i < s->nvals; i++) {
		const struct key *v = &k[2 + i]; /* a real keeps its own type */
		if (v->t == SQLITE_NULL)
			continue;
		if (v->t != SQLITE_INTEGER && v->t != SQLITE_FLOAT) {
			agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_group_gather: each v must be a number or NULL");
			return SQLITE_MISMATCH;
		}
		vsum_add(&g->v[i], v);
	}
	return SQLITE_OK;
}

static void group_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, group_row);
}

static void group_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct sset *s = a ? a->p : NULL;
	if (a)
		a->p = NULL;
	if (!s && !(s = sset_new(1))) /* an empty set */
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_pointer(ctx, s, "kvio_groups", sset_free);
}

/* Per group of kvio_step_gather: the previous row's b. */
struct pgroup {
	struct ghead h;
	int has_prev, prev_null;
	int64_t prev;
};

struct stepagg {
	struct gtab prev; /* struct pgroup by k */
	struct sset *out; /* by (k, sign of the step) */
};

static void stepagg_free(void *p)
{
	struct stepagg *q = p;
	gtab_free(&q->prev, NULL);
	sset_free(q->out);
	sqlite3_free(q);
}

/* Add d (is_null: a NULL step) to the output group (k, sign of d). */
static int step_add(struct sset *out, const struct key *k, int is_null, int64_t d)
{
	struct key kk[2] = {*k, {.t = is_null ? SQLITE_NULL : SQLITE_INTEGER, .i = d < 0 ? -1 : d > 0}};
	struct sgroup *g = (struct sgroup *)gtab_get_k(&out->t, kk);
	if (!g)
		return SQLITE_NOMEM;
	g->n++;
	if (!is_null) {
		struct key v = {.t = SQLITE_INTEGER, .i = d};
		vsum_add(&g->v[0], &v);
	}
	return SQLITE_OK;
}

/* b + len / unit as SQL computes it on integers (NULL: a NULL operand or unit 0;
 * MISMATCH where SQL would give a real: the quotient or the sum out of int64). */
static int extent_end(const struct key *b, const struct key *len, const struct key *unit, struct key *out)
{
	const struct key *in[3] = {b, len, unit};
	for (int i = 0; i < 3; i++)
		if (in[i]->t != SQLITE_INTEGER && in[i]->t != SQLITE_NULL)
			return SQLITE_MISMATCH;
	*out = (struct key){.t = SQLITE_NULL};
	if (b->t == SQLITE_NULL || len->t == SQLITE_NULL || unit->t == SQLITE_NULL || unit->i == 0)
		return SQLITE_OK;
	if (len->i == INT64_MIN && unit->i == -1)
		return SQLITE_MISMATCH;
	out->t = SQLITE_INTEGER;
	return __builtin_add_overflow(b->i, len->i / unit->i, &out->i) ? SQLITE_MISMATCH : SQLITE_OK;
}

/* kvio_step_gather(k, a, b [, len, unit]): for each row after the first of its
 * group k, in the order the rows come, the step d = a - (the previous row's b,
 * or b + len / unit: where its extent ended), grouped by (k, sign of d: -1, 0,
 * 1; NULL when a or that b is NULL). */
static int step_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	struct key end = k[2];
	if ((argc != 3 && argc != 5) || (argc == 5 && extent_end(&k[2], &k[3], &k[4], &end) != SQLITE_OK)) {
		agg_fail(ctx, a, SQLITE_MISMATCH, argc != 3 && argc != 5 ? "kvio_step_gather: (k, a, b [, len, unit])"
			 : "kvio_step_gather: a, b, len and unit must be integers or NULL, b + len / unit an integer");
		return SQLITE_MISMATCH;
	}
	int ta = k[1].t, tb = end.t;
	if ((ta != SQLITE_INTEGER && ta != SQLITE_NULL) || (tb != SQLITE_INTEGER && tb != SQLITE_NULL)) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_step_gather: a and b must be integers or NULL");
		return SQLITE_MISMATCH;
	}
	struct stepagg *q = a->p;
	a->free = stepagg_free;
	if (!q) {
		if (!(q = a->p = sqlite3_malloc(sizeof *q)) || !(q->out = sset_new(1))) {
			sqlite3_free(q);
			a->p = NULL;
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		gtab_init(&q->prev, sizeof(struct pgroup), 1);
	}
	struct pgroup *g = (struct pgroup *)gtab_get(&q->prev, k);
	int rc = g ? SQLITE_OK : SQLITE_NOMEM;
	if (g && g->has_prev) {
		int is_null = ta == SQLITE_NULL || g->prev_null;
		int64_t d = 0;
		if (!is_null && __builtin_sub_overflow(k[1].i, g->prev, &d))
			is_null = 1; /* no integer step: counted as NULL */
		rc = step_add(q->out, &g->h.k[0], is_null, d);
	}
	if (rc != SQLITE_OK) {
		agg_fail(ctx, a, rc, NULL);
		return rc;
	}
	g->has_prev = 1;
	g->prev_null = tb == SQLITE_NULL;
	g->prev = g->prev_null ? 0 : end.i;
	return SQLITE_OK;
}

static void step_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, step_row);
}

static void step_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct stepagg *q = a ? a->p : NULL;
	if (!q) {
		group_final(ctx); /* an empty set */
		return;
	}
	a->p = NULL;
	struct sset *out = q->out;
	gtab_free(&q->prev, NULL);
	sqlite3_free(q);
	sqlite3_result_pointer(ctx, out, "kvio_groups", sset_free);
}


/* Register the operators on db. SQLITE_OK or an error code. */
/* ---- kvio_count_distinct(x): count(DISTINCT x), hashed ---------------------- */

/* SQL's count(DISTINCT x) sorts the values into a B-tree; this hashes them.
 * Same answer: NULLs are not counted; an integer and an equal real are one
 * value (key_norm); text and blobs by their bytes, a text never equal to a blob. */
struct hset {
	struct key *k; /* open addressing; t == 0: an empty slot */
	uint64_t *h;
	size_t cap, n;
};

static uint64_t dkey_hash(const struct key *k)
{
	if (k->t != SQLITE_BLOB)
		return key_hash(k, 0x2545f491);
	struct key t = *k;
	t.t = SQLITE_TEXT;
	return key_hash(&t, 0x6b43a9b5);
}

static int dkey_same(const struct key *a, const struct key *b)
{
	if (a->t == SQLITE_BLOB && b->t == SQLITE_BLOB)
		return a->len == b->len && (!a->len || !memcmp(a->s, b->s, a->len));
	return key_same(a, b);
}

static void hset_free(struct hset *d)
{
	for (size_t j = 0; j < d->cap; j++)
		if (d->k[j].t == SQLITE_TEXT || d->k[j].t == SQLITE_BLOB)
			sqlite3_free(d->k[j].s);
	sqlite3_free(d->k);
	sqlite3_free(d->h);
	memset(d, 0, sizeof *d);
}

/* The slot of key k (hash h) among cap slots (a power of two) ks/hs: the one
 * holding it, else the empty one where it goes. */
static size_t hset_slot(const struct key *ks, const uint64_t *hs, size_t cap, const struct key *k, uint64_t h)
{
	size_t j = h & (cap - 1);
	while (ks[j].t && !(hs[j] == h && dkey_same(&ks[j], k)))
		j = (j + 1) & (cap - 1);
	return j;
}

static int hset_grow(struct hset *d)
{
	size_t cap = d->cap ? d->cap * 2 : 64;
	struct key *ks = sqlite3_malloc64(cap * sizeof *ks);
	uint64_t *hs = sqlite3_malloc64(cap * sizeof *hs);
	if (!ks || !hs) {
		sqlite3_free(ks);
		sqlite3_free(hs);
		return SQLITE_NOMEM;
	}
	memset(ks, 0, cap * sizeof *ks);
	for (size_t j = 0; j < d->cap; j++)
		if (d->k[j].t) {
			size_t to = hset_slot(ks, hs, cap, &d->k[j], d->h[j]);
			ks[to] = d->k[j];
			hs[to] = d->h[j];
		}
	sqlite3_free(d->k);
	sqlite3_free(d->h);
	d->k = ks;
	d->h = hs;
	d->cap = cap;
	return SQLITE_OK;
}

static void hset_drop(void *p)
{
	hset_free(p);
	sqlite3_free(p);
}

static int distinct_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *x)
{
	(void)argc;
	struct hset *d = a->p;
	a->free = hset_drop;
	if (!d && (d = a->p = sqlite3_malloc(sizeof *d)))
		memset(d, 0, sizeof *d);
	if (!d || ((d->n + 1) * 2 > d->cap && hset_grow(d) != SQLITE_OK)) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	if (x->t == SQLITE_NULL)
		return SQLITE_OK;
	struct key k = x->t != SQLITE_BLOB ? key_norm(*x) : *x; /* a blob stays a blob: never equal to a text */
	uint64_t h = dkey_hash(&k);
	size_t j = hset_slot(d->k, d->h, d->cap, &k, h);
	if (d->k[j].t)
		return SQLITE_OK; /* seen */
	if (key_copy(&d->k[j], &k) != SQLITE_OK) { /* the value's bytes are the statement's: keep a copy */
		d->k[j].t = 0; /* the slot stays empty */
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	d->h[j] = h;
	d->n++;
	return SQLITE_OK;
}

static void distinct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, distinct_row);
}

static void distinct_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct hset *d = a ? a->p : NULL;
	sqlite3_result_int64(ctx, d ? (sqlite3_int64)d->n : 0);
	if (d) {
		hset_drop(d);
		a->p = NULL;
	}
}


int op_group_register(sqlite3 *db)
{
	static const struct op_agg aggs[] = {
		{"kvio_group_gather", -1, group_step, group_final},
		{"kvio_step_gather", -1, step_step, step_final},
		{"kvio_count_distinct", 1, distinct_step, distinct_final},
	};
	return op_register_aggs(db, aggs, sizeof aggs / sizeof aggs[0]);
}
