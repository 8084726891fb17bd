/* kvio_ops.h — operators under the report's SQL: static functions compiled as part
 * of kvio_ext.c (included once, there; not a header for other files).
 *
 * Each is generic (named for what it computes, not for a metric) and comes as
 * a pair, in the manner of Perfetto's stdlib intrinsics: an aggregate gathers
 * rows into a C structure in one pass, grouping internally (SQLite's GROUP BY
 * is a sort), and returns it with sqlite3_result_pointer; an eponymous
 * table-valued function takes it (sqlite3_value_pointer) and returns a table:
 *
 *   kvio_pct_gather(k1, k2, v)            values by group      -> kvio_pct(p)
 *   kvio_runs_gather(k, t, max_gap)       run lengths by group -> kvio_pct(p)
 *   kvio_gaps_gather(k, seq, t, cls, min) consecutive gaps     -> kvio_pct(p)
 *   kvio_depth_gather(k, ts, dur)         depth sweep          -> kvio_depth(p)
 *   kvio_group_gather(k1, k2, v, ...)     count/min/max/sum    -> kvio_groups(p)
 *   kvio_step_gather(k, a, b [, len, unit])  a - previous b (+ len / unit) -> kvio_groups(p)
 *   kvio_count_distinct(x)                count(DISTINCT x), hashed (a plain aggregate)
 *   kvio_is(x, y)                         x IS y (a scalar; a batch column's test, below)
 *   (kvio_ops_grid.h: kvio_quantiles(p, grid), kvio_depth_buckets_gather -> kvio_depth_buckets(p))
 *
 * Every gathering aggregate takes its rows one at a time (SQL values) or as a
 * kvio_cmd batch (batch = 1, 2: pointers to the cursor's columns; agg_rows
 * walks the chunk's wanted rows with col_key, the values SQL reads).
 *
 * The contracts (inputs, NULLs, ties, order, output) are in docs/database.md
 * ("Operators"); tests/ops_twin.py checks each against a brute-force twin. */

/* ---- group keys ------------------------------------------------------------ */

/* struct key: in kvio_ext.c, beside the command columns it holds */

/* v as it is: its type kept (a blob as SQLITE_BLOB, with the text of its
 * bytes); text points into v (valid while v is). */
static inline struct key key_raw_t(sqlite3_value *v, int t)
{
	struct key k = {.t = t};
	if (k.t == SQLITE_INTEGER) {
		k.i = sqlite3_value_int64(v);
	} else if (k.t == SQLITE_FLOAT) {
		k.d = sqlite3_value_double(v);
	} else if (k.t == SQLITE_TEXT || k.t == SQLITE_BLOB) {
		const unsigned char *s = sqlite3_value_text(v);
		k.s = (char *)(s ? s : (const unsigned char *)"");
		k.len = sqlite3_value_bytes(v);
	}
	return k;
}

static inline struct key key_raw(sqlite3_value *v)
{
	return key_raw_t(v, sqlite3_value_type(v));
}

/* Value k as a group key: a real with an integral value is the integer (5.0
 * groups with 5, as SQL compares), a blob the text of its bytes. */
static inline struct key key_norm(struct key k)
{
	if (k.t == SQLITE_FLOAT && real_int64(k.d, &k.i)) /* an integral real: that integer */
		k.t = SQLITE_INTEGER;
	else if (k.t == SQLITE_BLOB)
		k.t = SQLITE_TEXT;
	return k;
}

/* Copy key view k into *out (its text or blob bytes copied). SQLITE_OK or NOMEM. */
static int key_copy(struct key *out, const struct key *k)
{
	*out = *k;
	if (k->t != SQLITE_TEXT && k->t != SQLITE_BLOB)
		return SQLITE_OK;
	out->s = sqlite3_malloc(k->len + 1);
	if (!out->s)
		return SQLITE_NOMEM;
	memcpy(out->s, k->s, k->len);
	out->s[k->len] = 0;
	return SQLITE_OK;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Hash of key k, chained on h. */
static uint64_t key_hash(const struct key *k, uint64_t h)
{
	if (k->t == SQLITE_INTEGER)
		return mix(h ^ (uint64_t)k->i);
	if (k->t == SQLITE_FLOAT) {
		uint64_t b;
		memcpy(&b, &k->d, 8);
		return mix(h ^ b ^ 0x9e3779b97f4a7c15ULL);
	}
	if (k->t != SQLITE_TEXT)
		return mix(h ^ 0x51afd7ed558ccdffULL);
	uint64_t x = 1469598103934665603ULL;
	for (int i = 0; i < k->len; i++)
		x = (x ^ (unsigned char)k->s[i]) * 1099511628211ULL;
	return mix(h ^ x);
}

/* Whether keys a and b are the same group. */
static int key_same(const struct key *a, const struct key *b)
{
	if (a->t != b->t)
		return 0;
	switch (a->t) {
	case SQLITE_INTEGER: return a->i == b->i;
	case SQLITE_FLOAT: return a->d == b->d;
	case SQLITE_TEXT: return a->len == b->len && (!a->len || !memcmp(a->s, b->s, a->len));
	default: return 1;
	}
}

/* SQLite's order of two keys: NULL, then numbers, then text (BINARY). */
static int key_cmp(const struct key *a, const struct key *b)
{
	int ca = a->t == SQLITE_NULL ? 0 : a->t == SQLITE_TEXT ? 2 : 1;
	int cb = b->t == SQLITE_NULL ? 0 : b->t == SQLITE_TEXT ? 2 : 1;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (ca == 0)
		return 0;
	if (ca == 2) {
		int n = a->len < b->len ? a->len : b->len;
		int c = n ? memcmp(a->s, b->s, n) : 0;
		return c ? c : (a->len > b->len) - (a->len < b->len);
	}
	if (a->t == SQLITE_INTEGER && b->t == SQLITE_INTEGER)
		return (a->i > b->i) - (a->i < b->i);
	double x = a->t == SQLITE_INTEGER ? (double)a->i : a->d, y = b->t == SQLITE_INTEGER ? (double)b->i : b->d;
	return (x > y) - (x < y);
}

static void key_result(sqlite3_context *ctx, const struct key *k)
{
	switch (k->t) {
	case SQLITE_INTEGER: sqlite3_result_int64(ctx, k->i); break;
	case SQLITE_FLOAT: sqlite3_result_double(ctx, k->d); break;
	case SQLITE_TEXT: sqlite3_result_text(ctx, k->s, k->len, SQLITE_TRANSIENT); break;
	default: sqlite3_result_null(ctx);
	}
}

/* ---- a hash table of groups keyed by up to two values ---------------------- */

/* Every operator's group starts with this head. */
struct ghead {
	struct key k[2];
	uint64_t h;
};

struct gtab {
	struct ghead **slot; /* open addressing, cap a power of two */
	size_t cap, n;
	size_t gsize;        /* bytes of one group, head included */
	struct ghead **list; /* the groups in insertion order, then sorted by key */
	size_t nlist, caplist;
	unsigned nkeys;      /* 1 or 2 */
	struct ghead *mru[4]; /* the groups found last, newest first: rows of one group come in runs */
};

static void gtab_init(struct gtab *t, size_t gsize, unsigned nkeys)
{
	memset(t, 0, sizeof *t);
	t->gsize = gsize;
	t->nkeys = nkeys;
}

/* Free the table's groups (after fini(g) on each, when given). */
static void gtab_free(struct gtab *t, void (*fini)(struct ghead *))
{
	for (size_t i = 0; i < t->nlist; i++) {
		struct ghead *g = t->list[i];
		if (fini)
			fini(g);
		sqlite3_free(g->k[0].s);
		sqlite3_free(g->k[1].s);
		sqlite3_free(g);
	}
	sqlite3_free(t->slot);
	sqlite3_free(t->list);
	memset(t, 0, sizeof *t);
}

static int gtab_grow(struct gtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct ghead **s = sqlite3_malloc64(cap * sizeof *s);
	if (!s)
		return SQLITE_NOMEM;
	memset(s, 0, cap * sizeof *s);
	for (size_t i = 0; i < t->nlist; i++) {
		size_t j = t->list[i]->h & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = t->list[i];
	}
	sqlite3_free(t->slot);
	t->slot = s;
	t->cap = cap;
	return SQLITE_OK;
}

/* The group of keys k (hashed, probed, or created): gtab_get_k without its recent groups. */
static struct ghead *gtab_find(struct gtab *t, const struct key *k)
{
	uint64_t h = key_hash(&k[0], 0x1234567);
	if (t->nkeys > 1)
		h = key_hash(&k[1], h);
	if (t->cap) {
		for (size_t j = h & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
			struct ghead *g = t->slot[j];
			if (g->h == h && key_same(&g->k[0], &k[0]) && (t->nkeys < 2 || key_same(&g->k[1], &k[1])))
				return g;
		}
	}
	if ((t->n + 1) * 2 > t->cap && gtab_grow(t) != SQLITE_OK)
		return NULL;
	if (t->nlist == t->caplist) {
		size_t c = t->caplist ? t->caplist * 2 : 16;
		struct ghead **l = sqlite3_realloc64(t->list, c * sizeof *l);
		if (!l)
			return NULL;
		t->list = l;
		t->caplist = c;
	}
	struct ghead *g = sqlite3_malloc64(t->gsize);
	if (!g)
		return NULL;
	memset(g, 0, t->gsize);
	g->h = h;
	g->k[1].t = SQLITE_NULL;
	if (key_copy(&g->k[0], &k[0]) != SQLITE_OK || (t->nkeys > 1 && key_copy(&g->k[1], &k[1]) != SQLITE_OK)) {
		sqlite3_free(g->k[0].t == SQLITE_TEXT ? g->k[0].s : NULL);
		sqlite3_free(g);
		return NULL;
	}
	size_t j = h & (t->cap - 1);
	while (t->slot[j])
		j = (j + 1) & (t->cap - 1);
	t->slot[j] = g;
	t->n++;
	t->list[t->nlist++] = g;
	return g;
}

/* The group of keys k[0], k[1] (k[1] only when nkeys is 2), created zeroed
 * if new; NULL when out of memory. */
static struct ghead *gtab_get_k(struct gtab *t, const struct key *k)
{
	int m = 0;
	struct ghead *g = NULL;
	for (; m < 4 && t->mru[m]; m++)
		if (key_same(&t->mru[m]->k[0], &k[0]) && (t->nkeys < 2 || key_same(&t->mru[m]->k[1], &k[1]))) {
			g = t->mru[m];
			break;
		}
	if (!g) {
		if (!(g = gtab_find(t, k)))
			return NULL;
		m = 3; /* a new recent group: the oldest drops out */
	}
	if (m) { /* g to the front */
		memmove(t->mru + 1, t->mru, (size_t)m * sizeof *t->mru);
		t->mru[0] = g;
	}
	return g;
}

/* The group of values a[0] (and a[1] when nkeys is 2), as key_raw gives them. */
static struct ghead *gtab_get(struct gtab *t, const struct key *a)
{
	struct key k[2] = {key_norm(a[0]), {.t = SQLITE_NULL}};
	if (t->nkeys > 1)
		k[1] = key_norm(a[1]);
	struct ghead *g = t->mru[0]; /* the last row's group, compared inline for integer keys */
	if (g && k[0].t == SQLITE_INTEGER && g->k[0].t == SQLITE_INTEGER && g->k[0].i == k[0].i &&
	    (t->nkeys < 2 || (k[1].t == SQLITE_INTEGER && g->k[1].t == SQLITE_INTEGER && g->k[1].i == k[1].i)))
		return g;
	return gtab_get_k(t, k);
}

static int ghead_cmp(const void *x, const void *y)
{
	const struct ghead *a = *(struct ghead *const *)x, *b = *(struct ghead *const *)y;
	int c = key_cmp(&a->k[0], &b->k[0]);
	return c ? c : key_cmp(&a->k[1], &b->k[1]);
}

/* Sort the groups by key (SQLite's order); the hash slots stay valid. */
static void gtab_sort(struct gtab *t)
{
	if (t->nlist > 1)
		qsort(t->list, t->nlist, sizeof *t->list, ghead_cmp);
}

/* ---- value sets: the values of each group, for percentiles ---------------- */

/* Values are kept as int32 while every one fits, as int64 after, and as
 * (double, is-int) pairs once a real arrives; NULLs only counted. */
enum { VM_I32, VM_I64, VM_MIXED };
struct mval {
	double d;
	int64_t i;
	int isint;
};

struct vgroup {
	struct ghead h;
	int mode;
	size_t n, cap;
	void *v;
	int64_t nnull;
	int64_t members; /* sequences behind the values (kvio_gaps_gather), else 0 */
};

struct vset {
	struct gtab t;
	int sorted;
};

static void vgroup_fini(struct ghead *h)
{
	sqlite3_free(((struct vgroup *)h)->v);
}

static void vset_free(void *p)
{
	struct vset *s = p;
	if (!s)
		return;
	gtab_free(&s->t, vgroup_fini);
	sqlite3_free(s);
}

static struct vset *vset_new(unsigned nkeys)
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
 * value while they fit in 32 bits). SQLITE_OK or NOMEM. */
static int vgroup_sort(struct vgroup *g)
{
	if (g->n < 2)
		return SQLITE_OK;
	if (g->mode == VM_MIXED) {
		qsort(g->v, g->n, sizeof(struct mval), mval_cmp);
		return SQLITE_OK;
	}
	if (g->mode == VM_I32) { /* sign flipped: unsigned order = signed order */
		uint32_t *a = g->v, *tmp = sqlite3_malloc64(g->n * sizeof *tmp);
		if (!tmp)
			return SQLITE_NOMEM;
		for (size_t i = 0; i < g->n; i++)
			a[i] ^= 0x80000000u;
		radix_u32(a, tmp, g->n);
		for (size_t i = 0; i < g->n; i++)
			a[i] ^= 0x80000000u;
		sqlite3_free(tmp);
		return SQLITE_OK;
	}
	uint64_t *a = g->v, *tmp = sqlite3_malloc64(g->n * sizeof *tmp);
	if (!tmp)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < g->n; i++)
		a[i] ^= 0x8000000000000000ULL;
	radix_u64(a, tmp, g->n);
	for (size_t i = 0; i < g->n; i++)
		a[i] ^= 0x8000000000000000ULL;
	sqlite3_free(tmp);
	return SQLITE_OK;
}

/* Sort the groups by key and each group's values. SQLITE_OK or NOMEM. */
static int vset_prepare(struct vset *s)
{
	if (s->sorted)
		return SQLITE_OK;
	gtab_sort(&s->t);
	for (size_t i = 0; i < s->t.nlist; i++)
		if (vgroup_sort((struct vgroup *)s->t.list[i]) != SQLITE_OK)
			return SQLITE_NOMEM;
	s->sorted = 1;
	return SQLITE_OK;
}

/* The value at rank r (0-based) of g's sorted values, NULLs first, as a result. */
static void vgroup_result_at(sqlite3_context *ctx, const struct vgroup *g, int64_t r)
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

/* ---- the aggregates that fill value sets -------------------------------- */

/* The state of one gathering aggregate: its structure, created on first use. */
struct agg {
	void *p;
	void (*free)(void *); /* frees p */
	int failed;
};

/* In a final: whether the aggregate failed (its state then freed here). */
static int agg_done_failed(struct agg *a)
{
	if (!a || !a->failed)
		return 0;
	if (a->p && a->free)
		a->free(a->p);
	a->p = NULL;
	return 1;
}

/* The aggregate's state, or NULL after an error was set on ctx. */
static struct agg *agg_state(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	return a->failed ? NULL : a;
}

static void agg_fail(sqlite3_context *ctx, struct agg *a, int rc, const char *msg)
{
	a->failed = 1;
	if (rc == SQLITE_NOMEM)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_error(ctx, msg, -1);
}

/* ---- batches: every gathering aggregate takes rows one at a time or a kvio_cmd batch at a time --- */

/* SQL's a IS b for values as key_raw gives them, without affinity (as between two
 * expressions): NULL IS NULL; numbers by value (1 IS 1.0); text and blobs by
 * their bytes, a text never a blob. */
static int key_is(const struct key *a, const struct key *b)
{
	int na = a->t == SQLITE_INTEGER || a->t == SQLITE_FLOAT, nb = b->t == SQLITE_INTEGER || b->t == SQLITE_FLOAT;
	if (na && nb) {
		struct key x = key_norm(*a), y = key_norm(*b);
		return key_same(&x, &y);
	}
	if (a->t != b->t)
		return 0;
	if (a->t == SQLITE_NULL)
		return 1;
	return a->len == b->len && (!a->len || !memcmp(a->s, b->s, (size_t)a->len));
}

static void bcol_free(void *p)
{
	struct bcol *b = p;
	sqlite3_free(b->eq.s);
	sqlite3_free(b);
}

/* kvio_is(x, y): x IS y (key_is) as 1 or 0; when one side is a kvio_cmd batch's
 * column and the other a value, that column's IS test, as a batch column that
 * the gathering aggregates read row by row. */
static void is_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct bcol *b[2] = {sqlite3_value_pointer(argv[0], "kvio_batch"), sqlite3_value_pointer(argv[1], "kvio_batch")};
	if (!b[0] && !b[1]) {
		struct key x = key_raw(argv[0]), y = key_raw(argv[1]);
		sqlite3_result_int(ctx, key_is(&x, &y));
		return;
	}
	if ((b[0] && b[1]) || (b[0] ? b[0] : b[1])->is) {
		sqlite3_result_error(ctx, "kvio_is: two batch columns (one side must be a value)", -1);
		return;
	}
	struct bcol *from = (struct bcol *)(b[0] ? b[0] : b[1]);
	from->used++; /* read here; the aggregate reads the new column */
	struct key raw = key_raw(argv[b[0] ? 1 : 0]), eq;
	struct bcol *n = sqlite3_malloc(sizeof *n);
	if (!n || key_copy(&eq, &raw) != SQLITE_OK) { /* the value's bytes are the statement's: a copy */
		sqlite3_free(n);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	*n = (struct bcol){.c = from->c, .col = from->col, .is = 1, .eq = eq};
	from->c->derived_made++; /* an aggregate must read it (vt_next checks) */
	sqlite3_result_pointer(ctx, n, "kvio_batch", bcol_free);
}

/* One row of an aggregate: its arguments as key_raw gives them. SQLITE_OK, or
 * another code after agg_fail. */
typedef int (*row_fn)(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k);

#define ROW_MAXARG 16

/* Step the aggregate of ctx: f once with argv's values, or, when arguments are
 * columns of a kvio_cmd batch (batch = 1), once per row of the batch, those
 * arguments that row's values (col_key: the values SQL reads) and the others
 * as given. */
static void agg_rows(sqlite3_context *ctx, int argc, sqlite3_value **argv, row_fn f)
{
	struct agg *a = agg_state(ctx);
	if (!a)
		return;
	if (argc > ROW_MAXARG) {
		agg_fail(ctx, a, SQLITE_MISUSE, "kvio: at most 16 arguments to a gathering aggregate");
		return;
	}
	struct key k[ROW_MAXARG];
	int at[ROW_MAXARG], nb = 0;
	const struct bcol *bc[ROW_MAXARG];
	struct cmd_cur *c = NULL;
	for (int j = 0; j < argc; j++) {
		int t = sqlite3_value_type(argv[j]);
		const struct bcol *b = t == SQLITE_NULL ? sqlite3_value_pointer(argv[j], "kvio_batch") : NULL;
		if (!b) { /* a value (a pointer reads as NULL) */
			k[j] = key_raw_t(argv[j], t);
			continue;
		}
		if (c && b->c != c) {
			agg_fail(ctx, a, SQLITE_MISUSE, "kvio: the columns of two kvio_cmd scans in one aggregate call");
			return;
		}
		c = b->c;
		at[nb] = j;
		bc[nb++] = b;
		if (b->is)
			c->derived_used++; /* a kvio_is column, read here */
		else
			((struct bcol *)b)->used++; /* read here (vt_next checks every fetched column was) */
	}
	if (!nb) {
		f(ctx, a, argc, k);
		return;
	}
	struct store *s = cur_store(&c->base);
	const struct chunk_view *v = cur_view(c, s);
	if (!v) {
		chunk_error(ctx, s, "kvio_cmd");
		a->failed = 1;
		return;
	}
	const uint32_t *rows = &c->i;
	uint32_t n = 1;
	if (c->selok && c->selk == c->k) {
		rows = c->sel + c->psel;
		n = c->nsel - c->psel;
	}
	int64_t first = s->first[c->k];
	for (uint32_t r = 0; r < n; r++) {
		for (int m = 0; m < nb; m++) {
			k[at[m]] = col_key(s, v, first, rows[r], bc[m]->col);
			if (bc[m]->is)
				k[at[m]] = (struct key){.t = SQLITE_INTEGER, .i = key_is(&k[at[m]], &bc[m]->eq)};
		}
		if (f(ctx, a, argc, k) != SQLITE_OK)
			return;
	}
}

/* kvio_pct_gather(k1, k2, v): v into the value set of group (k1, k2). */
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
	int64_t pend[16];    /* gaps: held until the sequence has min_n rows */
};

struct seqagg {
	struct gtab seqs;     /* struct seq by (k, seq) or (k) */
	struct vset *set;     /* the output */
	int64_t min_n, max_gap;
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
static struct seqagg *seqagg_new(unsigned nkeys, int with_cls)
{
	struct seqagg *q = sqlite3_malloc(sizeof *q);
	if (!q)
		return NULL;
	memset(q, 0, sizeof *q);
	gtab_init(&q->seqs, sizeof(struct seq), nkeys);
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

/* kvio_runs_gather(k, t, max_gap): rows of group k in t order split into runs
 * wherever t - previous t > max_gap; each run's length into group (k, NULL). */
static int runs_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	(void)argc;
	if (k[1].t != SQLITE_INTEGER || k[2].t != SQLITE_INTEGER) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_runs_gather: t and max_gap must be integers");
		return SQLITE_MISMATCH;
	}
	struct seqagg *q = a->p;
	a->free = seqagg_free;
	if (!q && !(q = a->p = seqagg_new(1, 0))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	q->max_gap = k[2].i;
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
	if (s->n && t - s->last_t > q->max_gap) {
		if (vgroup_add(s->out, 1, s->n, 0) != SQLITE_OK) {
			agg_fail(ctx, a, SQLITE_NOMEM, NULL);
			return SQLITE_NOMEM;
		}
		s->n = 0;
	}
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
		if (s->n && vgroup_add(s->out, 1, s->n, 0) != SQLITE_OK)
			return SQLITE_NOMEM;
	}
	return SQLITE_OK;
}

static void runs_final(sqlite3_context *ctx)
{
	seqagg_final(ctx, runs_flush);
}

/* kvio_gaps_gather(k, seq, t, cls, min_n): within each sequence (k, seq), in
 * t order, the differences t - previous t; a sequence's differences go to
 * group (k, cls of its first row) once it has min_n rows (its members count). */
static int gaps_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	(void)argc;
	if (k[2].t != SQLITE_INTEGER || k[4].t != SQLITE_INTEGER || k[4].i < 1 || k[4].i > 17) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_gaps_gather: t must be an integer, min_n from 1 to 17");
		return SQLITE_MISMATCH;
	}
	struct seqagg *q = a->p;
	a->free = seqagg_free;
	if (!q && !(q = a->p = seqagg_new(2, 1))) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	q->min_n = k[4].i;
	int64_t t = k[2].i;
	struct seq *s = (struct seq *)gtab_get(&q->seqs, k);
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
		int64_t gap = t - s->last_t;
		if (s->n < q->min_n - 1)
			s->pend[s->n - 1] = gap; /* rows 2 .. min_n - 1 */
		else if (s->n == q->min_n - 1) { /* the min_n-th row: the sequence counts */
			for (int64_t k = 0; rc == SQLITE_OK && k < s->n - 1; k++)
				rc = vgroup_add(s->out, 1, s->pend[k], 0);
			if (rc == SQLITE_OK)
				rc = vgroup_add(s->out, 1, gap, 0);
			s->out->members++;
		} else {
			rc = vgroup_add(s->out, 1, gap, 0);
		}
	} else if (q->min_n == 1) {
		s->out->members++;
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
	seqagg_final(ctx, NULL);
}

/* ---- the depth sweep ------------------------------------------------------- */

/* Per group: the ends of the open intervals (a min-heap), the sweep's time
 * and depth, and the time spent at each depth. */
struct dgroup {
	struct ghead h;
	int64_t *heap;
	size_t nheap, capheap;
	int64_t t, depth, last_start;
	int started;
	int64_t *at; /* at[d]: time at depth d */
	size_t nat;
};

struct dset {
	struct gtab t;
	int sorted;
};

static void dgroup_fini(struct ghead *h)
{
	struct dgroup *g = (struct dgroup *)h;
	sqlite3_free(g->heap);
	sqlite3_free(g->at);
}

static void dset_free(void *p)
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
	g->at[g->depth] += t - g->t;
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

static int64_t heap_pop(int64_t *h, size_t *n)
{
	int64_t top = h[0], v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

/* End every open interval of g that ends at or before t. */
static int dgroup_close_until(struct dgroup *g, int64_t t)
{
	while (g->nheap && g->heap[0] <= t) {
		int64_t e = heap_pop(g->heap, &g->nheap);
		if (dgroup_advance(g, e) != SQLITE_OK)
			return SQLITE_NOMEM;
		g->depth--;
	}
	return SQLITE_OK;
}

/* kvio_depth_gather(k, ts, dur): interval [ts, ts + dur) of group k; rows of a
 * group in ts order, dur >= 0. */
static int depth_row(sqlite3_context *ctx, struct agg *a, int argc, const struct key *k)
{
	(void)argc;
	if (k[1].t != SQLITE_INTEGER || k[2].t != SQLITE_INTEGER || k[2].i < 0) {
		agg_fail(ctx, a, SQLITE_MISMATCH, "kvio_depth_gather: ts and dur must be integers, dur >= 0");
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
	int64_t ts = k[1].i, dur = k[2].i;
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
		g->t = ts;
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
	if (dgroup_close_until(g, ts) != SQLITE_OK || dgroup_advance(g, ts) != SQLITE_OK) {
		agg_fail(ctx, a, SQLITE_NOMEM, NULL);
		return SQLITE_NOMEM;
	}
	g->depth++;
	heap_push(g->heap, &g->nheap, ts + dur);
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
	for (size_t i = 0; i < s->t.nlist; i++)
		if (dgroup_close_until((struct dgroup *)s->t.list[i], INT64_MAX) != SQLITE_OK) {
			dset_free(s);
			sqlite3_result_error_nomem(ctx);
			return;
		}
	sqlite3_result_pointer(ctx, s, "kvio_depth", dset_free);
}

/* ---- hash grouping: count, min, max, sum ------------------------------------ */

/* count/min/max/sum of one value column within a group */
struct vsum {
	int64_t nv;      /* non-NULL values */
	struct key min, max;
	int64_t isum;
	double dsum;
	int real, overflow;
};

struct sgroup {
	struct ghead h;
	int64_t n;       /* rows */
	struct vsum v[]; /* one per value column (sset.nvals) */
};

struct sset {
	struct gtab t;
	int sorted;
	int nvals;       /* value columns: kvio_group_gather's arguments after k1, k2; 1 for kvio_step_gather */
};

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

/* ---- the table-valued functions ----------------------------------------------- */

/* One module serves the three tables; the kind says which. */
enum { TV_PCT, TV_DEPTH, TV_GROUPS };

struct tv_tab {
	sqlite3_vtab base;
	int kind;
};

struct tv_cur {
	sqlite3_vtab_cursor base;
	int kind;
	struct gtab *t; /* the groups of the set */
	size_t g;       /* current group */
	size_t d;       /* kvio_depth: current depth within the group; kvio_groups: value column */
	int nvals;      /* kvio_groups: value columns per group */
	int64_t rowid;
};

static const char *const tv_schema[] = {
	"CREATE TABLE x(k1, k2, n, p25, p50, p95, p99, max, members, p HIDDEN)",
	"CREATE TABLE x(k, depth, time, p HIDDEN)",
	"CREATE TABLE x(k1, k2, n, count, min, max, sum, col, p HIDDEN)",
};
static const int tv_pcol[] = {9, 3, 8};
static const char *const tv_ptype[] = {"kvio_vset", "kvio_depth", "kvio_groups"};

static int tv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc; (void)argv; (void)err;
	int kind = (int)(intptr_t)aux;
	int rc = sqlite3_declare_vtab(db, tv_schema[kind]);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	struct tv_tab *t = sqlite3_malloc(sizeof *t);
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof *t);
	t->kind = kind;
	*out = &t->base;
	return SQLITE_OK;
}

static int tv_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

/* The set must be given (p = ?): without it there is no table. */
static int tv_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	int pcol = tv_pcol[((struct tv_tab *)tab)->kind];
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (c->iColumn == pcol && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			if (!c->usable)
				return SQLITE_CONSTRAINT;
			ii->aConstraintUsage[i].argvIndex = 1;
			ii->aConstraintUsage[i].omit = 1;
			ii->estimatedCost = 10;
			ii->estimatedRows = 10;
			return SQLITE_OK;
		}
	}
	tab->zErrMsg = sqlite3_mprintf("%s: needs its set argument", tv_ptype[((struct tv_tab *)tab)->kind]);
	return SQLITE_ERROR;
}

static int tv_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	struct tv_cur *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->kind = ((struct tv_tab *)tab)->kind;
	*out = &c->base;
	return SQLITE_OK;
}

static int tv_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

/* kvio_depth: step to a depth with time > 0, across groups. */
static void tv_depth_settle(struct tv_cur *c)
{
	while (c->g < c->t->nlist) {
		struct dgroup *g = (struct dgroup *)c->t->list[c->g];
		while (c->d < g->nat && g->at[c->d] == 0)
			c->d++;
		if (c->d < g->nat)
			return;
		c->g++;
		c->d = 0;
	}
}

/* kvio_pct: step over groups without values or members (a sequence's class
 * before any of its sequences qualified). */
static void tv_pct_settle(struct tv_cur *c)
{
	while (c->g < c->t->nlist) {
		const struct vgroup *g = (const struct vgroup *)c->t->list[c->g];
		if (g->n || g->nnull || g->members)
			return;
		c->g++;
	}
}

static const char *const tv_names[] = {"kvio_pct", "kvio_depth", "kvio_groups"};

static int tv_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct tv_cur *c = (struct tv_cur *)cur;
	void *p = argc ? sqlite3_value_pointer(argv[0], tv_ptype[c->kind]) : NULL;
	c->t = NULL;
	c->g = c->d = 0;
	c->rowid = 0;
	if (!p) {
		static const char *const from[] = {"kvio_pct_gather, kvio_runs_gather or kvio_gaps_gather",
						   "kvio_depth_gather", "kvio_group_gather or kvio_step_gather"};
		cur->pVtab->zErrMsg = sqlite3_mprintf("%s: the argument is not a %s set (the result of %s)",
						     tv_names[c->kind], tv_ptype[c->kind], from[c->kind]);
		return SQLITE_ERROR;
	}
	if (c->kind == TV_PCT) {
		if (vset_prepare(p) != SQLITE_OK)
			return SQLITE_NOMEM;
		c->t = &((struct vset *)p)->t;
		tv_pct_settle(c);
	} else if (c->kind == TV_DEPTH) {
		struct dset *s = p;
		if (!s->sorted)
			gtab_sort(&s->t);
		s->sorted = 1;
		c->t = &s->t;
		tv_depth_settle(c);
	} else {
		struct sset *s = p;
		if (!s->sorted)
			gtab_sort(&s->t);
		s->sorted = 1;
		c->t = &s->t;
		c->nvals = s->nvals;
	}
	return SQLITE_OK;
}

static int tv_next(sqlite3_vtab_cursor *cur)
{
	struct tv_cur *c = (struct tv_cur *)cur;
	c->rowid++;
	if (c->kind == TV_DEPTH) {
		c->d++;
		tv_depth_settle(c);
	} else if (c->kind == TV_GROUPS && (int)++c->d < c->nvals) {
		/* the group's next value column */
	} else {
		c->d = 0;
		c->g++;
		if (c->kind == TV_PCT)
			tv_pct_settle(c);
	}
	return SQLITE_OK;
}

static int tv_eof(sqlite3_vtab_cursor *cur)
{
	struct tv_cur *c = (struct tv_cur *)cur;
	return !c->t || c->g >= c->t->nlist;
}

/* A kvio_pct row: n counts NULLs; pXX = sorted[min(n-1, floor(XX/100 * n))]. */
static void tv_pct_column(sqlite3_context *ctx, const struct vgroup *g, int col)
{
	static const double q[4] = {0.25, 0.50, 0.95, 0.99};
	int64_t n = g->nnull + (int64_t)g->n;
	if (col == 2) {
		sqlite3_result_int64(ctx, n);
	} else if (col >= 3 && col <= 6) {
		int64_t r = (int64_t)(q[col - 3] * (double)n);
		vgroup_result_at(ctx, g, r < n - 1 ? r : n - 1);
	} else if (col == 7) {
		vgroup_result_at(ctx, g, n - 1);
	} else if (col == 8) {
		sqlite3_result_int64(ctx, g->members);
	}
}

/* A kvio_groups row: group g's value column d (col = d + 1). */
static void tv_groups_column(sqlite3_context *ctx, const struct sgroup *g, size_t d, int col)
{
	const struct vsum *u = &g->v[d];
	switch (col) {
	case 2: sqlite3_result_int64(ctx, g->n); break;
	case 3: sqlite3_result_int64(ctx, u->nv); break;
	case 4: if (u->nv) key_result(ctx, &u->min); break;
	case 5: if (u->nv) key_result(ctx, &u->max); break;
	case 6:
		if (!u->nv)
			break;
		if (u->real)
			sqlite3_result_double(ctx, u->dsum);
		else if (u->overflow)
			sqlite3_result_error(ctx, "integer overflow", -1);
		else
			sqlite3_result_int64(ctx, u->isum);
		break;
	case 7: sqlite3_result_int64(ctx, (int64_t)d + 1); break;
	}
}

static int tv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct tv_cur *c = (struct tv_cur *)cur;
	const struct ghead *h = c->t->list[c->g];
	if (c->kind == TV_DEPTH) {
		const struct dgroup *g = (const struct dgroup *)h;
		if (col == 0)
			key_result(ctx, &h->k[0]);
		else if (col == 1)
			sqlite3_result_int64(ctx, (int64_t)c->d);
		else if (col == 2)
			sqlite3_result_int64(ctx, g->at[c->d]);
		return SQLITE_OK;
	}
	if (col < 2) {
		key_result(ctx, &h->k[col]);
		return SQLITE_OK;
	}
	if (c->kind == TV_PCT)
		tv_pct_column(ctx, (const struct vgroup *)h, col);
	else
		tv_groups_column(ctx, (const struct sgroup *)h, c->d, col);
	return SQLITE_OK;
}

static int tv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct tv_cur *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module tv_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = tv_connect,
	.xBestIndex = tv_best_index,
	.xDisconnect = tv_disconnect,
	.xDestroy = tv_disconnect,
	.xOpen = tv_open,
	.xClose = tv_close,
	.xFilter = tv_filter,
	.xNext = tv_next,
	.xEof = tv_eof,
	.xColumn = tv_column,
	.xRowid = tv_rowid,
};

#include "kvio_ops_grid.h" /* kvio_quantiles, kvio_depth_buckets */

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

static int kvio_register_ops(sqlite3 *db)
{
	static const struct {
		const char *name;
		int nargs;
		void (*step)(sqlite3_context *, int, sqlite3_value **);
		void (*final)(sqlite3_context *);
	} aggs[] = {
		{"kvio_pct_gather", 3, pct_step, vset_final},
		{"kvio_runs_gather", 3, runs_step, runs_final},
		{"kvio_gaps_gather", 5, gaps_step, gaps_final},
		{"kvio_depth_gather", 3, depth_step, depth_final},
		{"kvio_group_gather", -1, group_step, group_final},
		{"kvio_step_gather", -1, step_step, step_final},
		{"kvio_count_distinct", 1, distinct_step, distinct_final},
	};
	int rc = sqlite3_create_function_v2(db, "kvio_is", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, is_func, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	for (int k = 0; k < 3; k++) {
		int rc = sqlite3_create_module_v2(db, tv_names[k], &tv_module, (void *)(intptr_t)k, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++) {
		int rc = sqlite3_create_function_v2(db, aggs[i].name, aggs[i].nargs, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
						    NULL, aggs[i].step, aggs[i].final, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return kvio_register_grid_ops(db);
}
