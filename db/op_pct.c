/* op_pct.c — value sets and their percentiles.
 *
 *   kvio_pct_gather(k1, k2, v)            v by group (k1, k2)              -> kvio_pct(p)
 *   kvio_runs_gather(k, t, max_gap)       run lengths by group (k, NULL)  -> kvio_pct(p)
 *   kvio_runs_gather(k, t, max_gap, end, tag)  the same, and each run      -> kvio_runs(p)
 *   kvio_gaps_gather(k, seq, t, cls, min) consecutive gaps by (k, cls)    -> kvio_pct(p), kvio_gaps(p)
 *   kvio_gaps_gather(k, seq, t, cls, min, each)  the same, and with each = 1
 *                                         each sequence's own gaps too       -> kvio_gaps(p)
 *
 * An aggregate gathers the values of each group in one pass (int32 while they
 * fit, then int64, then mixed with reals; NULLs counted) and returns the set
 * with sqlite3_result_pointer; kvio_pct (op_tvf.c), kvio_quantiles,
 * kvio_log_bins and kvio_values (op_grid.c) read it. kvio_pct's pXX is the
 * value at nearest rank min(n - 1, floor(XX/100 * n)) of the sorted values,
 * NULLs first. The contracts (inputs, NULLs, ties, order) are in
 * docs/database.md ("Operators"); tests/ops_twin.py checks each against a
 * brute-force twin. */
#include "kvio_int.h"
#include <stddef.h>

/* ---- value sets: the values of each group, for percentiles ---------------- */


static void vgroup_fini(struct ghead *h)
{
	sqlite3_free(((struct vgroup *)h)->v);
	sqlite3_free(((struct vgroup *)h)->runs);
}

void vset_free(void *p)
{
	struct vset *s = p;
	if (!s)
		return;
	gtab_free(&s->t, vgroup_fini);
	vset_free(s->each);
	sqlite3_free(s);
}

struct vset *vset_new(unsigned nkeys)
{
	struct vset *s = sqlite3_malloc(sizeof *s);
	if (s) {
		memset(s, 0, sizeof *s);
		gtab_init(&s->t, sizeof(struct vgroup), nkeys);
	}
	return s;
}

static size_t vm_size(int mode)
{
	return mode == VM_I32 ? 4 : mode == VM_I64 ? 8 : sizeof(struct mval);
}

/* Re-store g's values in mode m (wider). SQLITE_OK or NOMEM. */
static int vgroup_widen(struct vgroup *g, int m)
{
	size_t cap = g->cap ? g->cap : 16;
	void *nv = sqlite3_malloc64(cap * vm_size(m));
	if (!nv)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < g->n; i++) {
		int64_t x = g->mode == VM_I32 ? ((int32_t *)g->v)[i] : ((int64_t *)g->v)[i];
		if (m == VM_I64)
			((int64_t *)nv)[i] = x;
		else
			((struct mval *)nv)[i] = (struct mval){(double)x, x, 1};
	}
	sqlite3_free(g->v);
	g->v = nv;
	g->cap = cap;
	g->mode = m;
	return SQLITE_OK;
}

/* Add an integer (isint) or a real to g. SQLITE_OK or NOMEM. */
static int vgroup_add(struct vgroup *g, int isint, int64_t i, double d)
{
	int need = !isint ? VM_MIXED : (i >= INT32_MIN && i <= INT32_MAX) ? VM_I32 : VM_I64;
	if (need > g->mode && vgroup_widen(g, need) != SQLITE_OK)
		return SQLITE_NOMEM;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		void *nv = sqlite3_realloc64(g->v, cap * vm_size(g->mode));
		if (!nv)
			return SQLITE_NOMEM;
		g->v = nv;
		g->cap = cap;
	}
	if (g->mode == VM_I32)
		((int32_t *)g->v)[g->n++] = (int32_t)i;
	else if (g->mode == VM_I64)
		((int64_t *)g->v)[g->n++] = i;
	else
		((struct mval *)g->v)[g->n++] = (struct mval){isint ? (double)i : d, i, isint};
	return SQLITE_OK;
}

/* Add value v (key_raw) to g: NULL is counted, text refused. SQLITE_OK, NOMEM or
 * SQLITE_MISMATCH. */
static int vgroup_add_value(struct vgroup *g, const struct key *v)
{
	switch (v->t) {
	case SQLITE_NULL: g->nnull++; return SQLITE_OK;
	case SQLITE_INTEGER: return vgroup_add(g, 1, v->i, 0);
	case SQLITE_FLOAT: return vgroup_add(g, 0, 0, v->d);
	default: return SQLITE_MISMATCH;
	}
}

/* RADIX_SORT(name, T, bits) defines name(a, tmp, n): an LSD radix sort of n
 * unsigned keys of type T (tmp: n more), skipping bytes all keys share. */
#define RADIX_SORT(name, T, bits)                                              \
	static void name(T *a, T *tmp, size_t n)                               \
	{                                                                      \
		T or_ = 0, and_ = (T)~(T)0;                                    \
		for (size_t i = 0; i < n; i++) {                               \
			or_ |= a[i];                                           \
			and_ &= a[i];                                          \
		}                                                              \
		for (int sh = 0; sh < (bits); sh += 8) {                       \
			if ((((or_ ^ and_) >> sh) & 0xff) == 0)                \
				continue;                                      \
			size_t cnt[257] = {0};                                 \
			for (size_t i = 0; i < n; i++)                         \
				cnt[((a[i] >> sh) & 0xff) + 1]++;              \
			for (int b = 0; b < 256; b++)                          \
				cnt[b + 1] += cnt[b];                          \
			for (size_t i = 0; i < n; i++)                         \
				tmp[cnt[(a[i] >> sh) & 0xff]++] = a[i];        \
			memcpy(a, tmp, n * sizeof *a);                         \
		}                                                              \
	}
RADIX_SORT(radix_u64, uint64_t, 64)
RADIX_SORT(radix_u32, uint32_t, 32)

static int mval_cmp(const void *x, const void *y)
{
	const struct mval *a = x, *b = y;
	if (a->isint && b->isint)
		return (a->i > b->i) - (a->i < b->i);
	return (a->d > b->d) - (a->d < b->d);
}

/* Sort g's values ascending, in place (a scratch of one more copy: 4 bytes a
 * value while they fit in 32 bits). */
#define SMALL_SORT 64 /* groups this small: insertion sort (a radix pass costs its 257 counters and a scratch) */
#define INSERTION_SORT(T, a, n)                                                \
	for (size_t i_ = 1; i_ < (n); i_++) {                                   \
		T x_ = (a)[i_];                                                 \
		size_t j_ = i_;                                                 \
		for (; j_ > 0 && (a)[j_ - 1] > x_; j_--)                        \
			(a)[j_] = (a)[j_ - 1];                                  \
		(a)[j_] = x_;                                                   \
	}

/* (tmp: the radix sort's scratch, radix_bytes(g) of room, shared by the
 * groups of a set: one allocation, not one per group) */
/* The scratch vgroup_sort wants for g: a copy of its values when they are
 * radix sorted (integers, more than SMALL_SORT), else none. */
static size_t radix_bytes(const struct vgroup *g)
{
	return g->mode == VM_MIXED || g->n <= SMALL_SORT ? 0 : g->n * vm_size(g->mode);
}

static void vgroup_sort(struct vgroup *g, void *tmp)
{
	if (g->n < 2)
		return;
	if (g->mode == VM_I32 && g->n <= SMALL_SORT) {
		INSERTION_SORT(int32_t, (int32_t *)g->v, g->n);
		return;
	}
	if (g->mode == VM_I64 && g->n <= SMALL_SORT) {
		INSERTION_SORT(int64_t, (int64_t *)g->v, g->n);
		return;
	}
	if (g->mode == VM_MIXED) {
		qsort(g->v, g->n, sizeof(struct mval), mval_cmp);
		return;
	}
	if (g->mode == VM_I32) { /* sign flipped: unsigned order = signed order */
		uint32_t *a = g->v;
		for (size_t i = 0; i < g->n; i++)
			a[i] ^= 0x80000000u;
		radix_u32(a, tmp, g->n);
		for (size_t i = 0; i < g->n; i++)
			a[i] ^= 0x80000000u;
		return;
	}
	uint64_t *a = g->v;
	for (size_t i = 0; i < g->n; i++)
		a[i] ^= 0x8000000000000000ULL;
	radix_u64(a, tmp, g->n);
	for (size_t i = 0; i < g->n; i++)
		a[i] ^= 0x8000000000000000ULL;
}

static int vset_materialize(struct vset *s);

/* Sort the groups by key and each group's values (a virt set's class groups
 * given their values first). SQLITE_OK or NOMEM. */
int vset_prepare(struct vset *s)
{
	if (s->virt && vset_materialize(s) != SQLITE_OK)
		return SQLITE_NOMEM;
	return vset_prepare_gaps(s);
}

int vset_prepare_gaps(struct vset *s)
{
	if (s->sorted)
		return SQLITE_OK;
	gtab_sort(&s->t);
	size_t most = 0;
	for (size_t i = 0; i < s->t.nlist; i++) {
		size_t b = radix_bytes((const struct vgroup *)s->t.list[i]);
		most = b > most ? b : most;
	}
	void *tmp = most ? sqlite3_malloc64(most) : NULL;
	if (most && !tmp)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < s->t.nlist; i++)
		vgroup_sort((struct vgroup *)s->t.list[i], tmp);
	sqlite3_free(tmp);
	if (s->each && vset_prepare(s->each) != SQLITE_OK)
		return SQLITE_NOMEM;
	s->sorted = 1;
	return SQLITE_OK;
}

/* The value at rank r (0-based) of g's sorted values, NULLs first, as a result. */
void vgroup_result_at(sqlite3_context *ctx, const struct vgroup *g, int64_t r)
{
	if (r < g->nnull || r - g->nnull >= (int64_t)g->n) {
		sqlite3_result_null(ctx);
		return;
	}
	size_t i = (size_t)(r - g->nnull);
	if (g->mode == VM_I32)
		sqlite3_result_int64(ctx, ((int32_t *)g->v)[i]);
	else if (g->mode == VM_I64)
		sqlite3_result_int64(ctx, ((int64_t *)g->v)[i]);
	else if (((struct mval *)g->v)[i].isint)
		sqlite3_result_int64(ctx, ((struct mval *)g->v)[i].i);
	else
		sqlite3_result_double(ctx, ((struct mval *)g->v)[i].d);
}

static int pct_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	(void)argc;
	a->free = vset_free;
	if (!a->p && !(a->p = vset_new(2))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	struct vgroup *g = (struct vgroup *)gtab_get(&((struct vset *)a->p)->t, k);
	int rc = g ? vgroup_add_value(g, &k[2]) : SQLITE_NOMEM;
	if (rc != SQLITE_OK)
		agg_fail(ctx, a, rc, "kvio_pct_gather: v must be a number or NULL");
	return rc;
}

static void pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, pct_row);
}

/* The final of every value-set aggregate: the set (empty without rows). */
static void vset_final(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct vset *s = a && a->p ? a->p : vset_new(2);
	if (a)
		a->p = NULL;
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_pointer(ctx, s, "kvio_vset", vset_free);
}

/* Per-group state of kvio_runs_gather and kvio_gaps_gather. */
struct seq {
	struct ghead h;
	int64_t last_t, n;   /* last t seen, rows so far */
	struct vgroup *out;  /* where its values go (gaps: chosen by the first row's cls) */
	struct vgroup *own;  /* gaps with each = 1: its own group, once it counts */
	union {              /* (one sequence is one gather's: 125k of them at 16M lines) */
		int64_t pend[16]; /* gaps: held until the sequence has min_n rows (min_n - 2 of them) */
		struct vrun run;  /* runs with spans: the current run (its start, end, tag) */
	};
};

/* The bytes of a sequence that holds npend pending gaps: a group is only as
 * long as its gather needs (kvio_gaps_gather's min_n is 4 in qd1.sql: 2 of
 * the 16, 88 bytes less for each of 125k sequences at 16M lines). */
static size_t seq_size(int64_t npend)
{
	size_t p = npend > 0 ? (size_t)npend * sizeof(int64_t) : 0;
	return offsetof(struct seq, pend) + (p > sizeof(struct vrun) ? p : sizeof(struct vrun));
}

#define SEQ_DM 1024 /* kvio_gaps_gather: recent sequences by their integer keys (rows of many interleave) */

struct seqagg {
	struct gtab seqs;     /* struct seq by (k, seq) or (k) */
	struct seq *dm[SEQ_DM]; /* gaps: a direct-mapped cache of seqs' groups keyed by two integers */
	struct vset *set;     /* the output */
	int64_t min_n, max_gap;
	int spans;            /* kvio_runs_gather's five-argument form: the runs are kept */
	int each;             /* kvio_gaps_gather's each = 1: each sequence's gaps are kept too */
};

static void seqagg_free(void *p)
{
	struct seqagg *q = p;
	gtab_free(&q->seqs, NULL);
	vset_free(q->set);
	sqlite3_free(q);
}

/* nkeys: of a sequence (1: k, 2: k and seq); the output is keyed by k, and
 * by cls when with_cls. */
static struct seqagg *seqagg_new(unsigned nkeys, int with_cls, size_t gsize)
{
	struct seqagg *q = sqlite3_malloc(sizeof *q);
	if (!q)
		return NULL;
	memset(q, 0, sizeof *q);
	gtab_init(&q->seqs, gsize, nkeys);
	if (!(q->set = vset_new(with_cls ? 2 : 1))) {
		sqlite3_free(q);
		return NULL;
	}
	return q;
}

/* The output group (k, cls) of q's set (cls NULL: a set keyed by k alone). */
static struct vgroup *seqagg_out(struct seqagg *q, const struct key *k, const struct key *cls)
{
	struct key a[2] = {*k, cls ? *cls : (struct key){.t = SQLITE_NULL}};
	return (struct vgroup *)gtab_get(&q->set->t, a);
}

/* Close run s (n rows) into its output group: its length, and with spans
 * (kvio_runs_gather's five-argument form) the run itself. SQLITE_OK or NOMEM. */
static int run_close(struct seq *s, int spans)
{
	if (vgroup_add(s->out, 1, s->n, 0) != SQLITE_OK)
		return SQLITE_NOMEM;
	if (!spans)
		return SQLITE_OK;
	struct vgroup *g = s->out;
	if (g->nruns == g->capruns) {
		size_t cap = g->capruns ? g->capruns * 2 : 16;
		struct vrun *r = sqlite3_realloc64(g->runs, cap * sizeof *r);
		if (!r)
			return SQLITE_NOMEM;
		g->runs = r;
		g->capruns = cap;
	}
	s->run.n = s->n;
	g->runs[g->nruns++] = s->run;
	return SQLITE_OK;
}

/* kvio_runs_gather(k, t, max_gap [, end, tag]): rows of group k in t order split
 * into runs wherever t - previous t > max_gap; each run's length into group
 * (k, NULL); with end and tag (integers; tag may be NULL) each run too: its
 * first t, the largest end of its rows, the tag of its first row. */
static int runs_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	int spans = argc == 5;
	if (k[1].t != SQLITE_INTEGER || k[2].t != SQLITE_INTEGER ||
	    (spans && (k[3].t != SQLITE_INTEGER || (k[4].t != SQLITE_INTEGER && k[4].t != SQLITE_NULL)))) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_runs_gather: t, max_gap and end must be integers, tag an integer or NULL");
		return SQLITE_MISMATCH;
	}
	struct seqagg *q = a->p;
	a->free = seqagg_free;
	if (!q && !(q = a->p = seqagg_new(1, 0, sizeof(struct seq)))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	q->max_gap = k[2].i;
	q->spans = spans;
	int64_t t = k[1].i;
	struct seq *s = (struct seq *)gtab_get(&q->seqs, k);
	if (!s || (!s->out && !(s->out = seqagg_out(q, &k[0], NULL)))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	if (s->n && t < s->last_t) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_runs_gather: rows of a group are not in t order");
		return SQLITE_ERROR;
	}
	int64_t gap;
	if (s->n && __builtin_sub_overflow(t, s->last_t, &gap)) {
		agg_fail(ctx, a, SQLITE_TOOBIG, "kvio_runs_gather: t - previous t overflows int64");
		return SQLITE_TOOBIG;
	}
	if (s->n && gap > q->max_gap) {
		if (run_close(s, spans) != SQLITE_OK) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		s->n = 0;
	}
	if (spans && !s->n)
		s->run = (struct vrun){.start = t, .end = k[3].i, .tag = k[4].i, .has_tag = k[4].t == SQLITE_INTEGER};
	else if (spans && k[3].i > s->run.end)
		s->run.end = k[3].i;
	s->n++;
	s->last_t = t;
	return SQLITE_OK;
}

static void runs_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, runs_row);
}

/* Hand q's set out as the aggregate's result, after flush(q) (may be NULL). */
static void seqagg_final(sqlite3_context *ctx, int (*flush)(struct seqagg *))
{
	struct agg *a = sqlite3_aggregate_context(ctx, 0);
	if (agg_done_failed(a))
		return;
	struct seqagg *q = a ? a->p : NULL;
	if (!q) {
		vset_final(ctx);
		return;
	}
	a->p = NULL;
	if (flush && flush(q) != SQLITE_OK) {
		seqagg_free(q);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	struct vset *s = q->set;
	q->set = NULL;
	seqagg_free(q);
	sqlite3_result_pointer(ctx, s, "kvio_vset", vset_free);
}

/* The last run of every group. */
static int runs_flush(struct seqagg *q)
{
	for (size_t i = 0; i < q->seqs.nlist; i++) {
		struct seq *s = (struct seq *)q->seqs.list[i];
		if (s->n && run_close(s, q->spans) != SQLITE_OK)
			return SQLITE_NOMEM;
	}
	return SQLITE_OK;
}

static void runs_final(sqlite3_context *ctx)
{
	seqagg_final(ctx, runs_flush);
}

/* Add gap to s's group: its own (each = 1; gaps_flush adds the own groups'
 * values to their output groups at the end), else its output group.
 * SQLITE_OK or NOMEM. */
static int gap_add(struct seq *s, int64_t gap)
{
	return vgroup_add(s->own ? s->own : s->out, 1, gap, 0);
}

/* Add g's values (integers: gaps) to p, its output group. SQLITE_OK or NOMEM. */
static int vgroup_add_all(struct vgroup *p, const struct vgroup *g)
{
	if (g->mode > p->mode && vgroup_widen(p, g->mode) != SQLITE_OK)
		return SQLITE_NOMEM;
	if (p->cap - p->n < g->n) { /* room for them, doubling (gaps_flush reserved it: never here) */
		size_t cap = p->cap ? p->cap : 16;
		while (cap - p->n < g->n)
			cap *= 2;
		void *nv = sqlite3_realloc64(p->v, cap * vm_size(p->mode));
		if (!nv)
			return SQLITE_NOMEM;
		p->v = nv;
		p->cap = cap;
	}
	if (p->mode == g->mode) {
		memcpy((char *)p->v + p->n * vm_size(p->mode), g->v, g->n * vm_size(g->mode));
		p->n += g->n;
		return SQLITE_OK;
	}
	for (size_t i = 0; i < g->n; i++) /* p wider: an int32 group into an int64 one */
		if (vgroup_add(p, 1, ((int32_t *)g->v)[i], 0) != SQLITE_OK)
			return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* Room in each output group of q's set for every gap its sequences hold, at
 * their widest mode, in one allocation: grown by doubling, a class of 2M gaps
 * was copied ~20 times over (and its pages touched twice). SQLITE_OK or NOMEM. */
static int gaps_reserve(struct vset *set)
{
	const struct gtab *own = &set->each->t, *out = &set->t;
	size_t *need = sqlite3_malloc64((out->nlist ? out->nlist : 1) * sizeof *need);
	int *mode = sqlite3_malloc64((out->nlist ? out->nlist : 1) * sizeof *mode), rc = SQLITE_OK;
	if (!need || !mode) {
		sqlite3_free(need);
		sqlite3_free(mode);
		return SQLITE_NOMEM;
	}
	for (size_t k = 0; k < out->nlist; k++) {
		need[k] = ((const struct vgroup *)out->list[k])->n;
		mode[k] = ((const struct vgroup *)out->list[k])->mode;
	}
	for (size_t i = 0, k = 0; i < own->nlist; i++) { /* (the pools are few: a class per label) */
		const struct vgroup *g = (const struct vgroup *)own->list[i];
		if (!g->n)
			continue;
		if (k >= out->nlist || (const struct vgroup *)out->list[k] != g->pool)
			for (k = 0; k < out->nlist && (const struct vgroup *)out->list[k] != g->pool; k++)
				;
		if (k == out->nlist)
			continue; /* (not one of the set's: vgroup_add_all grows it) */
		need[k] += g->n;
		mode[k] = g->mode > mode[k] ? g->mode : mode[k];
	}
	for (size_t k = 0; rc == SQLITE_OK && k < out->nlist; k++) {
		struct vgroup *p = (struct vgroup *)out->list[k];
		if (mode[k] > p->mode)
			rc = vgroup_widen(p, mode[k]);
		if (rc == SQLITE_OK && need[k] > p->cap) {
			void *nv = sqlite3_realloc64(p->v, need[k] * vm_size(p->mode));
			if (!nv)
				rc = SQLITE_NOMEM;
			else
				p->v = nv, p->cap = need[k];
		}
	}
	sqlite3_free(need);
	sqlite3_free(mode);
	return rc;
}

/* A virt set's class groups given their values: every counted sequence's
 * gaps copied into its output group (for the readers but kvio_gaps: kvio_pct,
 * kvio_values, the grids). SQLITE_OK or NOMEM. */
static int vset_materialize(struct vset *s)
{
	const struct gtab *own = &s->each->t;
	if (gaps_reserve(s) != SQLITE_OK)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < own->nlist; i++) {
		const struct vgroup *g = (const struct vgroup *)own->list[i];
		if (g->n && vgroup_add_all(g->pool, g) != SQLITE_OK)
			return SQLITE_NOMEM;
	}
	s->virt = 0;
	return SQLITE_OK;
}

/* Value i of integer group g as the unsigned key that sorts as the value. */
static inline uint64_t vg_key(const struct vgroup *g, size_t i)
{
	int64_t v = g->mode == VM_I32 ? ((const int32_t *)g->v)[i] : ((const int64_t *)g->v)[i];
	return (uint64_t)v ^ 0x8000000000000000ULL;
}

#define SEL_BITS 16
#define SEL_B ((size_t)1 << SEL_BITS)

/* One pass of class_select: the values of p's sequences (key - lo) whose bits
 * above shift + w are pre[j] counted by their next w bits, into cnt[j]. */
static void select_count(const struct gtab *own, const struct vgroup *p, uint64_t lo, int shift, int w,
			 const uint64_t pre[2], size_t *cnt)
{
	memset(cnt, 0, 2 * SEL_B * sizeof *cnt);
	int top = shift + w; /* (64: the first pass of a full-width range, every value in) */
	for (size_t i = 0; i < own->nlist; i++) {
		const struct vgroup *g = (const struct vgroup *)own->list[i];
		if (g->pool != p)
			continue;
		for (size_t k = 0; k < g->n; k++) {
			uint64_t d = vg_key(g, k) - lo, hi = top < 64 ? d >> top : 0, b = (d >> shift) & ((1u << w) - 1);
			cnt[b] += hi == pre[0];
			cnt[SEL_B + b] += hi == pre[1];
		}
	}
}

/* Class group p of a six-argument gaps set, its values in its sequences'
 * groups (own's with pool p): their count and the values at kvio_gaps'
 * ranks (floor(q x n), q = 0.50, 0.95, as kvio_pct's), selected across them
 * without a copy: a radix select, SEL_BITS bits a pass from the top of the
 * values' range. SQLITE_OK or NOMEM. */
static int class_select(const struct gtab *own, struct vgroup *p)
{
	static const double q[2] = {0.50, 0.95};
	uint64_t lo = UINT64_MAX, hi = 0, pre[2] = {0, 0};
	int64_t n = 0, want[2];
	for (size_t i = 0; i < own->nlist; i++) {
		const struct vgroup *g = (const struct vgroup *)own->list[i];
		for (size_t k = 0; g->pool == p && k < g->n; k++) {
			uint64_t x = vg_key(g, k);
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		n += g->pool == p ? (int64_t)g->n : 0;
	}
	p->sel_n = n;
	if (!n)
		return SQLITE_OK;
	for (int j = 0; j < 2; j++) {
		int64_t r = (int64_t)(q[j] * (double)n);
		want[j] = r < n - 1 ? r : n - 1;
	}
	size_t *cnt = sqlite3_malloc64(2 * SEL_B * sizeof *cnt);
	if (!cnt)
		return SQLITE_NOMEM;
	int bits = hi > lo ? 64 - __builtin_clzll(hi - lo) : 0;
	while (bits > 0) {
		int w = bits < SEL_BITS ? bits : SEL_BITS;
		bits -= w;
		select_count(own, p, lo, bits, w, pre, cnt);
		for (int j = 0; j < 2; j++) {
			const size_t *c = cnt + (size_t)j * SEL_B;
			uint64_t b = 0;
			while ((size_t)want[j] >= c[b]) /* (want < the values counted: it stops in the range) */
				want[j] -= (int64_t)c[b++];
			pre[j] = (pre[j] << w) | b;
		}
	}
	sqlite3_free(cnt);
	for (int j = 0; j < 2; j++)
		p->sel[j] = (int64_t)((lo + pre[j]) ^ 0x8000000000000000ULL);
	return SQLITE_OK;
}

/* With each = 1, every counted sequence's gaps were kept once, in its own
 * group; its class group (the output) keeps none (virt): kvio_gaps reads
 * the class's count and percentiles selected across its sequences' groups,
 * the other readers get the values copied in (vset_prepare). Keeping them
 * twice cost a copy of every gap and its sort's scratch (~64 MB at 16M
 * lines). SQLITE_OK or NOMEM. */
static int gaps_flush(struct seqagg *q)
{
	if (!q->each)
		return SQLITE_OK;
	const struct gtab *own = &q->set->each->t, *out = &q->set->t;
	for (size_t k = 0; k < out->nlist; k++)
		if (class_select(own, (struct vgroup *)out->list[k]) != SQLITE_OK)
			return SQLITE_NOMEM;
	q->set->virt = 1;
	return SQLITE_OK;
}

/* Sequence s (keys k) now counts: a member of its output group, and with each
 * = 1 a group of its own in q's set's each. SQLITE_OK or NOMEM. */
static int seq_counts(struct seqagg *q, struct seq *s, const struct key *k)
{
	s->out->members++;
	if (!q->each)
		return SQLITE_OK;
	if (!(s->own = (struct vgroup *)gtab_get(&q->set->each->t, k)))
		return SQLITE_NOMEM;
	s->own->pool = s->out;
	s->own->members = 1;
	return SQLITE_OK;
}

/* The sequence (k[0], k[1]) of q (gtab_get), through q's direct-mapped cache
 * when both are integers: the commands of many objects interleave, more than
 * the table's few recent groups. NULL when out of memory. */
static struct seq *seq_find(struct seqagg *q, const struct key *k)
{
	if (k[0].t != SQLITE_INTEGER || k[1].t != SQLITE_INTEGER)
		return (struct seq *)gtab_get(&q->seqs, k);
	uint64_t h = ((uint64_t)k[0].i * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)k[1].i * 0xc2b2ae3d27d4eb4fULL);
	struct seq **e = &q->dm[(h >> 32) & (SEQ_DM - 1)];
	if (*e && (*e)->h.k[0].t == SQLITE_INTEGER && (*e)->h.k[0].i == k[0].i && (*e)->h.k[1].t == SQLITE_INTEGER &&
	    (*e)->h.k[1].i == k[1].i)
		return *e;
	return *e = (struct seq *)gtab_get(&q->seqs, k);
}

/* kvio_gaps_gather(k, seq, t, cls, min_n [, each]): within each sequence (k,
 * seq), in t order, the differences t - previous t; a sequence's differences
 * go to group (k, cls of its first row) once it has min_n rows (its members
 * count); with each = 1 also to the sequence's own group (k, seq), which
 * kvio_gaps lists. */
static int gaps_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	if (k[2].t != SQLITE_INTEGER || k[4].t != SQLITE_INTEGER || k[4].i < 1 || k[4].i > 17 ||
	    (argc == 6 && (k[5].t != SQLITE_INTEGER || (k[5].i != 0 && k[5].i != 1)))) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_gaps_gather: t must be an integer, min_n from 1 to 17, each 0 or 1");
		return SQLITE_MISMATCH;
	}
	struct seqagg *q = a->p;
	a->free = seqagg_free;
	if (!q && (q = a->p = seqagg_new(2, 1, seq_size(k[4].i - 2))))
		q->min_n = k[4].i; /* the sequences hold min_n - 2 pending gaps */
	if (!q) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	if (k[4].i != q->min_n) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_gaps_gather: min_n differs between rows");
		return SQLITE_MISMATCH;
	}
	if (argc == 6 && k[5].i && !q->each) { /* each: the sequences' own groups, a set of their own */
		if (!(q->set->each = vset_new(2))) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		q->each = 1;
	}
	int64_t t = k[2].i;
	struct seq *s = seq_find(q, k);
	if (!s || (!s->out && !(s->out = seqagg_out(q, &k[0], &k[3])))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	if (s->n && t < s->last_t) {
		agg_fail(ctx, a, SQLITE_ERROR, "kvio_gaps_gather: rows of a sequence are not in t order");
		return SQLITE_ERROR;
	}
	int rc = SQLITE_OK;
	if (s->n) {
		int64_t gap;
		if (__builtin_sub_overflow(t, s->last_t, &gap)) {
			agg_fail(ctx, a, SQLITE_TOOBIG, "kvio_gaps_gather: t - previous t overflows int64");
			return SQLITE_TOOBIG;
		}
		if (s->n < q->min_n - 1)
			s->pend[s->n - 1] = gap; /* rows 2 .. min_n - 1 */
		else if (s->n == q->min_n - 1) { /* the min_n-th row: the sequence counts */
			rc = seq_counts(q, s, k);
			for (int64_t j = 0; rc == SQLITE_OK && j < s->n - 1; j++)
				rc = gap_add(s, s->pend[j]);
			if (rc == SQLITE_OK)
				rc = gap_add(s, gap);
		} else {
			rc = gap_add(s, gap);
		}
	} else if (q->min_n == 1) {
		rc = seq_counts(q, s, k);
	}
	if (rc != SQLITE_OK) {
		agg_fail(ctx, a, rc, NULL);
		return rc;
	}
	s->n++;
	s->last_t = t;
	return SQLITE_OK;
}

static void gaps_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg_rows(ctx, argc, argv, gaps_row);
}

static void gaps_final(sqlite3_context *ctx)
{
	seqagg_final(ctx, gaps_flush);
}


int op_pct_register(sqlite3 *db)
{
	static const struct op_agg aggs[] = {
		{"kvio_pct_gather", 3, pct_step, vset_final},
		{"kvio_runs_gather", 3, runs_step, runs_final},
		{"kvio_runs_gather", 5, runs_step, runs_final},
		{"kvio_gaps_gather", 5, gaps_step, gaps_final},
		{"kvio_gaps_gather", 6, gaps_step, gaps_final},
	};
	return op_register_aggs(db, aggs, sizeof aggs / sizeof aggs[0]);
}
