/* kvio_ops_grid.h — operators that sample on a grid: static functions compiled
 * as part of kvio_ext.c (included once, from kvio_ops.h, after the value sets
 * and the depth sweep they reuse; not a header for other files).
 *
 *   kvio_quantiles(p, grid)                      the values of each group of a
 *                                                value set at a list of quantiles
 *   kvio_values(p)                               each group's distinct values and their counts
 *   kvio_log_bins(p, per_decade)                 the values of each group of a
 *                                                value set counted in log-spaced bins
 *   kvio_depth_buckets_gather(k, ts, dur, t0, w) depth sweep per time bucket
 *                                                -> kvio_depth_buckets(p)
 *
 * The contracts are in docs/database.md ("Operators"); tests/ops_twin.py checks
 * each against a brute-force twin. */

#include <math.h>

/* ---- kvio_quantiles: a value set at grid quantiles ------------------------- */

struct qv_tab {
	sqlite3_vtab base;
};

struct qv_cur {
	sqlite3_vtab_cursor base;
	struct gtab *t; /* the groups of the set */
	double *q;      /* the grid, ascending */
	size_t nq;
	size_t g, j;    /* current group, grid index */
	int64_t rowid;
};

/* Parse grid (numbers in [0, 1] separated by commas or blanks) into c->q,
 * sorted ascending. SQLITE_OK, or an error with *err set. */
static int qv_parse(struct qv_cur *c, const char *grid, char **err)
{
	size_t cap = 16;
	c->q = sqlite3_malloc64(cap * sizeof *c->q);
	c->nq = 0;
	if (!c->q)
		return SQLITE_NOMEM;
	for (const char *s = grid; s && *s;) {
		while (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		char *end;
		double q = strtod(s, &end);
		if (end == s || !(q >= 0 && q <= 1)) {
			*err = sqlite3_mprintf("kvio_quantiles: the grid must be numbers in [0, 1] separated by commas");
			return SQLITE_ERROR;
		}
		if (c->nq == cap) {
			double *n = sqlite3_realloc64(c->q, 2 * cap * sizeof *n);
			if (!n)
				return SQLITE_NOMEM;
			c->q = n;
			cap *= 2;
		}
		c->q[c->nq++] = q;
		s = end;
	}
	/* insertion sort: grids are short */
	for (size_t i = 1; i < c->nq; i++)
		for (size_t k = i; k && c->q[k - 1] > c->q[k]; k--) {
			double x = c->q[k];
			c->q[k] = c->q[k - 1];
			c->q[k - 1] = x;
		}
	return SQLITE_OK;
}

/* The rank of grid quantile q in a group of n values: min(n-1, floor(q*n)). */
static int64_t qv_rank(double q, int64_t n)
{
	int64_t r = (int64_t)(q * (double)n);
	return r < n - 1 ? r : n - 1;
}

static int64_t qv_n(const struct ghead *h)
{
	const struct vgroup *g = (const struct vgroup *)h;
	return g->nnull + (int64_t)g->n;
}

/* Step to the next grid point of a new rank, across groups (skipping groups
 * without values). On entry c->j is a candidate index in group c->g. */
static void qv_settle(struct qv_cur *c)
{
	while (c->g < c->t->nlist) {
		int64_t n = qv_n(c->t->list[c->g]);
		if (n > 0) {
			while (c->j < c->nq && c->j > 0 && qv_rank(c->q[c->j], n) == qv_rank(c->q[c->j - 1], n))
				c->j++;
			if (c->j < c->nq)
				return;
		}
		c->g++;
		c->j = 0;
	}
}

/* A table of this file's operators: the schema declared, innocuous, zeroed. */
static int grid_tab_new(sqlite3 *db, const char *schema, sqlite3_vtab **out)
{
	int rc = sqlite3_declare_vtab(db, schema);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	struct qv_tab *t = sqlite3_malloc(sizeof *t);
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof *t);
	*out = &t->base;
	return SQLITE_OK;
}

/* Plan a scan that needs its n hidden arguments, columns first .. first+n-1, each
 * given as "= ?" (argv in column order); missing ones fail with msg. */
static int grid_hidden_args(sqlite3_vtab *tab, sqlite3_index_info *ii, int first, int n, double rows, const char *msg)
{
	int have = 0;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (c->iColumn >= first && c->iColumn < first + n && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			if (!c->usable)
				return SQLITE_CONSTRAINT;
			ii->aConstraintUsage[i].argvIndex = c->iColumn - first + 1;
			ii->aConstraintUsage[i].omit = 1;
			have |= 1 << (c->iColumn - first);
		}
	}
	if (have != (1 << n) - 1) {
		tab->zErrMsg = sqlite3_mprintf("%s", msg);
		return SQLITE_ERROR;
	}
	ii->estimatedCost = 10;
	ii->estimatedRows = (sqlite3_int64)rows;
	return SQLITE_OK;
}

/* A zeroed cursor of size bytes. */
static int grid_cur_new(size_t size, sqlite3_vtab_cursor **out)
{
	sqlite3_vtab_cursor *c = sqlite3_malloc((int)size);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, size);
	*out = c;
	return SQLITE_OK;
}

static int qv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)aux; (void)argc; (void)argv; (void)err;
	return grid_tab_new(db, "CREATE TABLE x(k1, k2, n, q, rank, v, p HIDDEN, grid HIDDEN)", out);
}

/* Both hidden arguments (p = ?, grid = ?) must be given. */
static int qv_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	return grid_hidden_args(tab, ii, 6, 2, 100, "kvio_quantiles: needs its set and grid arguments");
}

static int qv_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	return grid_cur_new(sizeof(struct qv_cur), out);
}

static int qv_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(((struct qv_cur *)cur)->q);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int qv_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct qv_cur *c = (struct qv_cur *)cur;
	struct vset *p = argc == 2 ? sqlite3_value_pointer(argv[0], "kvio_vset") : NULL;
	sqlite3_free(c->q);
	c->q = NULL;
	c->t = NULL;
	c->g = c->j = 0;
	c->rowid = 0;
	if (!p) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_quantiles: the argument is not a kvio_vset set (use kvio_pct_gather)");
		return SQLITE_ERROR;
	}
	int rc = qv_parse(c, (const char *)sqlite3_value_text(argv[1]), &cur->pVtab->zErrMsg);
	if (rc != SQLITE_OK)
		return rc;
	if (vset_prepare(p) != SQLITE_OK)
		return SQLITE_NOMEM;
	c->t = &p->t;
	qv_settle(c);
	return SQLITE_OK;
}

static int qv_next(sqlite3_vtab_cursor *cur)
{
	struct qv_cur *c = (struct qv_cur *)cur;
	c->rowid++;
	c->j++;
	qv_settle(c);
	return SQLITE_OK;
}

static int qv_eof(sqlite3_vtab_cursor *cur)
{
	struct qv_cur *c = (struct qv_cur *)cur;
	return !c->t || c->g >= c->t->nlist;
}

/* A row: the group's keys, n, the first grid quantile of this rank, the rank, its value. */
static int qv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct qv_cur *c = (struct qv_cur *)cur;
	const struct ghead *h = c->t->list[c->g];
	int64_t n = qv_n(h);
	switch (col) {
	case 0: case 1: key_result(ctx, &h->k[col]); break;
	case 2: sqlite3_result_int64(ctx, n); break;
	case 3: sqlite3_result_double(ctx, c->q[c->j]); break;
	case 4: sqlite3_result_int64(ctx, qv_rank(c->q[c->j], n)); break;
	case 5: vgroup_result_at(ctx, (const struct vgroup *)h, qv_rank(c->q[c->j], n)); break;
	}
	return SQLITE_OK;
}

static int qv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct qv_cur *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module qv_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = qv_connect,
	.xBestIndex = qv_best_index,
	.xDisconnect = tv_disconnect,
	.xDestroy = tv_disconnect,
	.xOpen = qv_open,
	.xClose = qv_close,
	.xFilter = qv_filter,
	.xNext = qv_next,
	.xEof = qv_eof,
	.xColumn = qv_column,
	.xRowid = qv_rowid,
};

/* ---- kvio_log_bins: a value set counted in log-spaced bins ----------------- */

struct lb_cur {
	sqlite3_vtab_cursor base;
	struct gtab *t;
	double per;       /* bins per decade */
	size_t g, i, j;   /* group; its current bin holds sorted non-NULL values [i, j) */
	int64_t bin;
	int64_t rowid;
};

/* The bin of the i-th non-NULL sorted value of g: floor(per * log10(max(v, 1)))
 * with log10 as SQLite's log10() computes it, ln(v) / ln(10) (so that SQL agrees:
 * 1000 is 2.9999999999999996 there, in bin 29 at 10 a decade). */
static int64_t lb_bin(const struct vgroup *g, size_t i, double per)
{
	double v;
	if (g->mode == VM_I32)
		v = ((int32_t *)g->v)[i];
	else if (g->mode == VM_I64)
		v = (double)((int64_t *)g->v)[i];
	else
		v = ((struct mval *)g->v)[i].isint ? (double)((struct mval *)g->v)[i].i : ((struct mval *)g->v)[i].d;
	return (int64_t)floor(per * (log(v > 1 ? v : 1) / 2.302585092994045684));
}

/* Make [i, j) the next non-empty bin at or after value i, across groups. */
static void lb_settle(struct lb_cur *c)
{
	while (c->g < c->t->nlist) {
		const struct vgroup *g = (const struct vgroup *)c->t->list[c->g];
		if (c->i < g->n) {
			c->bin = lb_bin(g, c->i, c->per);
			for (c->j = c->i + 1; c->j < g->n && lb_bin(g, c->j, c->per) == c->bin; c->j++)
				;
			return;
		}
		c->g++;
		c->i = 0;
	}
}

static int lb_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)aux; (void)argc; (void)argv; (void)err;
	return grid_tab_new(db, "CREATE TABLE x(k1, k2, bin, count, p HIDDEN, per_decade HIDDEN)", out);
}

/* Both hidden arguments (p = ?, per_decade = ?) must be given. */
static int lb_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	return grid_hidden_args(tab, ii, 4, 2, 100, "kvio_log_bins: needs its set and per_decade arguments");
}

static int lb_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	return grid_cur_new(sizeof(struct lb_cur), out);
}

static int lb_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct lb_cur *c = (struct lb_cur *)cur;
	struct vset *p = argc == 2 ? sqlite3_value_pointer(argv[0], "kvio_vset") : NULL;
	c->t = NULL;
	c->g = c->i = c->j = 0;
	c->rowid = 0;
	if (!p) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_log_bins: the argument is not a kvio_vset set (use a kvio_pct gathering aggregate)");
		return SQLITE_ERROR;
	}
	int t = sqlite3_value_numeric_type(argv[1]);
	c->per = sqlite3_value_double(argv[1]);
	if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(c->per > 0 && c->per <= 1e6)) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_log_bins: per_decade must be a number in (0, 1e6]");
		return SQLITE_ERROR;
	}
	if (vset_prepare(p) != SQLITE_OK)
		return SQLITE_NOMEM;
	c->t = &p->t;
	lb_settle(c);
	return SQLITE_OK;
}

static int lb_next(sqlite3_vtab_cursor *cur)
{
	struct lb_cur *c = (struct lb_cur *)cur;
	c->rowid++;
	c->i = c->j;
	lb_settle(c);
	return SQLITE_OK;
}

static int lb_eof(sqlite3_vtab_cursor *cur)
{
	struct lb_cur *c = (struct lb_cur *)cur;
	return !c->t || c->g >= c->t->nlist;
}

/* A row: the group's keys, a bin, the values in it. */
static int lb_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct lb_cur *c = (struct lb_cur *)cur;
	const struct ghead *h = c->t->list[c->g];
	switch (col) {
	case 0: case 1: key_result(ctx, &h->k[col]); break;
	case 2: sqlite3_result_int64(ctx, c->bin); break;
	case 3: sqlite3_result_int64(ctx, (int64_t)(c->j - c->i)); break;
	}
	return SQLITE_OK;
}

static int lb_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct lb_cur *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module lb_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = lb_connect,
	.xBestIndex = lb_best_index,
	.xDisconnect = tv_disconnect,
	.xDestroy = tv_disconnect,
	.xOpen = lb_open,
	.xClose = tv_close,
	.xFilter = lb_filter,
	.xNext = lb_next,
	.xEof = lb_eof,
	.xColumn = lb_column,
	.xRowid = lb_rowid,
};

/* ---- kvio_values: a value set's distinct values and their counts ------------ */

struct vv_cur {
	sqlite3_vtab_cursor base;
	struct gtab *t;
	size_t g;         /* group */
	int null_row;     /* the group's NULLs are the current row */
	size_t i, j;      /* else its current value run: sorted non-NULL values [i, j) */
	int64_t rowid;
};

/* Whether the i-th and j-th sorted values of g are equal (an integer and an
 * equal real are one value, as SQL's GROUP BY takes them). */
static int vv_same(const struct vgroup *g, size_t i, size_t j)
{
	if (g->mode == VM_I32)
		return ((int32_t *)g->v)[i] == ((int32_t *)g->v)[j];
	if (g->mode == VM_I64)
		return ((int64_t *)g->v)[i] == ((int64_t *)g->v)[j];
	const struct mval *a = &((struct mval *)g->v)[i], *b = &((struct mval *)g->v)[j];
	if (a->isint && b->isint)
		return a->i == b->i;
	if (!a->isint && !b->isint)
		return a->d == b->d;
	int64_t n = a->isint ? a->i : b->i;
	double d = a->isint ? b->d : a->d;
	return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (int64_t)d == n && d == (double)(int64_t)d;
}

/* Make the current row the group's NULLs or the run of equal values at i, across groups. */
static void vv_settle(struct vv_cur *c)
{
	while (c->g < c->t->nlist) {
		const struct vgroup *g = (const struct vgroup *)c->t->list[c->g];
		if (c->null_row)
			return;
		if (c->i < g->n) {
			for (c->j = c->i + 1; c->j < g->n && vv_same(g, c->i, c->j); c->j++)
				;
			return;
		}
		c->g++;
		c->i = 0;
		c->null_row = c->g < c->t->nlist && ((const struct vgroup *)c->t->list[c->g])->nnull > 0;
	}
}

static int vv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)aux; (void)argc; (void)argv; (void)err;
	return grid_tab_new(db, "CREATE TABLE x(k1, k2, v, count, p HIDDEN)", out);
}

static int vv_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	return grid_hidden_args(tab, ii, 4, 1, 100, "kvio_values: needs its set argument");
}

static int vv_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	return grid_cur_new(sizeof(struct vv_cur), out);
}

static int vv_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct vv_cur *c = (struct vv_cur *)cur;
	struct vset *p = argc == 1 ? sqlite3_value_pointer(argv[0], "kvio_vset") : NULL;
	c->t = NULL;
	c->g = c->i = c->j = 0;
	c->rowid = 0;
	if (!p) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_values: the argument is not a kvio_vset set (use a kvio_pct gathering aggregate)");
		return SQLITE_ERROR;
	}
	if (vset_prepare(p) != SQLITE_OK)
		return SQLITE_NOMEM;
	c->t = &p->t;
	c->null_row = c->t->nlist && ((const struct vgroup *)c->t->list[0])->nnull > 0;
	vv_settle(c);
	return SQLITE_OK;
}

static int vv_next(sqlite3_vtab_cursor *cur)
{
	struct vv_cur *c = (struct vv_cur *)cur;
	c->rowid++;
	if (c->null_row)
		c->null_row = 0;
	else
		c->i = c->j;
	vv_settle(c);
	return SQLITE_OK;
}

static int vv_eof(sqlite3_vtab_cursor *cur)
{
	struct vv_cur *c = (struct vv_cur *)cur;
	return !c->t || c->g >= c->t->nlist;
}

/* A row: the group's keys, a value (NULL for the NULLs), how many times it occurs. */
static int vv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct vv_cur *c = (struct vv_cur *)cur;
	const struct vgroup *g = (const struct vgroup *)c->t->list[c->g];
	switch (col) {
	case 0: case 1: key_result(ctx, &g->h.k[col]); break;
	case 2:
		if (!c->null_row)
			vgroup_result_at(ctx, g, g->nnull + (int64_t)c->i);
		break;
	case 3: sqlite3_result_int64(ctx, c->null_row ? g->nnull : (int64_t)(c->j - c->i)); break;
	}
	return SQLITE_OK;
}

static int vv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct vv_cur *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module vv_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = vv_connect,
	.xBestIndex = vv_best_index,
	.xDisconnect = tv_disconnect,
	.xDestroy = tv_disconnect,
	.xOpen = vv_open,
	.xClose = tv_close,
	.xFilter = vv_filter,
	.xNext = vv_next,
	.xEof = vv_eof,
	.xColumn = vv_column,
	.xRowid = vv_rowid,
};

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
		int64_t s = a > x ? a : x, e = b < x + g->w ? b : x + g->w;
		g->area[k] += d * (e - s);
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
	int64_t ts = k[1].i, dur = k[2].i;
	int64_t t0 = k[3].i, w = k[4].i;
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
		agg_fail(ctx, a, rc, "kvio_depth_buckets_gather: more than 2^24 buckets");
		return rc;
	}
	g->npend++;
	heap_push(g->heap, &g->nheap, ts + dur);
	if (ts + dur > g->end)
		g->end = ts + dur;
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
		size_t nb = (size_t)((g->end - g->t0 + g->w - 1) / g->w);
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
			sqlite3_result_error(ctx, "kvio_depth_buckets_gather: more than 2^24 buckets", -1);
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
static int kvio_register_grid_ops(sqlite3 *db)
{
	int rc = sqlite3_create_module_v2(db, "kvio_quantiles", &qv_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "kvio_log_bins", &lb_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "kvio_values", &vv_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "kvio_depth_buckets", &bk_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "kvio_depth_buckets_gather", 5, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
						NULL, bucket_step, bucket_final, NULL);
	return rc;
}
