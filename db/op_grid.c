/* op_grid.c — a value set (op_pct.c) sampled on a grid:
 *
 *   kvio_quantiles(p, grid)     the values of each group at a list of quantiles
 *   kvio_values(p)              each group's distinct values and their counts
 *   kvio_log_bins(p, per_decade) the values of each group counted in log-spaced bins
 *
 * Also the helpers every grid TVF uses (op_depth.c's kvio_depth_buckets too).
 * The contracts are in docs/database.md ("Operators"); tests/ops_twin.py
 * checks each against a brute-force twin. */
#include "kvio_int.h"

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
int grid_tab_new(sqlite3 *db, const char *schema, sqlite3_vtab **out)
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
int grid_hidden_args(sqlite3_vtab *tab, sqlite3_index_info *ii, int first, int n, double rows, const char *msg)
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
int grid_cur_new(size_t size, sqlite3_vtab_cursor **out)
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


int op_grid_register(sqlite3 *db)
{
	int rc = sqlite3_create_module_v2(db, "kvio_quantiles", &qv_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "kvio_log_bins", &lb_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "kvio_values", &vv_module, NULL, NULL);
	return rc;
}
