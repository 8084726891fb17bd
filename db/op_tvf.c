/* op_tvf.c — the table-valued functions that read a gathered set:
 *
 *   kvio_pct(p)     k1, k2, n, p25, p50, p95, p99, max, members  (a value set, op_pct.c)
 *   kvio_depth(p)   k, depth, time                               (a depth sweep, op_depth.c)
 *   kvio_groups(p)  k1, k2, n, count, min, max, sum, col         (hash groups, op_group.c)
 *   kvio_runs(p)    k, start, end, n, tag                        (the runs of kvio_runs_gather's
 *                                                                 five-argument form, op_pct.c)
 *   kvio_depth_spans(p)  k, start, end                           (the low spans of kvio_depth_gather's
 *                                                                 five-argument form, op_depth.c)
 *   kvio_gaps(p)    k, seq, cls, n, p50, p95, members            (a kvio_gaps_gather set: its groups
 *                                                                 (k, cls) with seq NULL, then with
 *                                                                 each = 1 every counted sequence)
 *   kvio_depth_and_spans(p)  k, depth, time, start, end          (kvio_depth's rows, then
 *                                                                 kvio_depth_spans': one set read once)
 *
 * One eponymous module serves the seven; p is the pointer the gathering
 * aggregate returned (it lives only inside the statement). Rows come in the
 * keys' SQL order. */
#include "kvio_int.h"

/* ---- the table-valued functions ----------------------------------------------- */

/* One module serves the five tables; the kind says which. */
enum { TV_PCT, TV_DEPTH, TV_GROUPS, TV_RUNS, TV_SPANS, TV_GAPS, TV_DBOTH, TV_N };

struct tv_tab {
	sqlite3_vtab base;
	int kind;
};

struct tv_cur {
	sqlite3_vtab_cursor base;
	int kind;
	struct gtab *t; /* the groups of the set */
	size_t g;       /* current group */
	size_t d;       /* kvio_depth: current depth within the group; kvio_groups: value column;
			   kvio_runs, kvio_depth_spans: the group's run, span */
	int nvals;      /* kvio_groups: value columns per group */
	struct gtab *each; /* kvio_gaps: the sequences' groups, listed after t's (phase 1) */
	int phase;      /* kvio_gaps: 1 on each's groups; kvio_depth_and_spans: 1 on the spans */
	int virt;       /* kvio_gaps: the class groups' numbers are their sel_n, sel (vset.virt) */
	int64_t rowid;
};

static const char *const tv_schema[] = {
	"CREATE TABLE x(k1, k2, n, p25, p50, p95, p99, max, members, p HIDDEN)",
	"CREATE TABLE x(k, depth, time, p HIDDEN)",
	"CREATE TABLE x(k1, k2, n, count, min, max, sum, col, p HIDDEN)",
	"CREATE TABLE x(k, start, end, n, tag, p HIDDEN)",
	"CREATE TABLE x(k, start, end, p HIDDEN)",
	"CREATE TABLE x(k, seq, cls, n, p50, p95, members, p HIDDEN)",
	"CREATE TABLE x(k, depth, time, start, end, p HIDDEN)",
};
static const int tv_pcol[] = {9, 3, 8, 5, 3, 7, 5};
static const char *const tv_ptype[] = {"kvio_vset", "kvio_depth", "kvio_groups", "kvio_vset", "kvio_depth", "kvio_vset",
				       "kvio_depth"};

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

int tv_disconnect(sqlite3_vtab *v)
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

int tv_close(sqlite3_vtab_cursor *cur)
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
	for (;;) {
		while (c->g < c->t->nlist) {
			const struct vgroup *g = (const struct vgroup *)c->t->list[c->g];
			if (g->n || g->nnull || g->members)
				return;
			c->g++;
		}
		if (c->phase || !c->each) /* kvio_gaps: then the sequences */
			return;
		c->t = c->each;
		c->g = 0;
		c->phase = 1;
	}
}

/* kvio_runs, kvio_depth_spans: step to a group with a run (span) left. */
static void tv_list_settle(struct tv_cur *c)
{
	while (c->g < c->t->nlist) {
		const struct ghead *h = c->t->list[c->g];
		size_t n = c->kind == TV_RUNS ? ((const struct vgroup *)h)->nruns : ((const struct dgroup *)h)->nspans / 2;
		if (c->d < n)
			return;
		c->g++;
		c->d = 0;
	}
}

static const char *const tv_names[] = {"kvio_pct", "kvio_depth", "kvio_groups", "kvio_runs", "kvio_depth_spans", "kvio_gaps",
					"kvio_depth_and_spans"};

/* kvio_depth_and_spans: the depth rows of every group, then (phase 1) the spans. */
static void tv_dboth_settle(struct tv_cur *c)
{
	if (!c->phase) {
		tv_depth_settle(c);
		if (c->g < c->t->nlist)
			return;
		c->phase = 1;
		c->g = c->d = 0;
	}
	tv_list_settle(c);
}

static int tv_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx; (void)idxStr;
	struct tv_cur *c = (struct tv_cur *)cur;
	void *p = argc ? sqlite3_value_pointer(argv[0], tv_ptype[c->kind]) : NULL;
	c->t = c->each = NULL;
	c->phase = 0;
	c->g = c->d = 0;
	c->rowid = 0;
	if (!p) {
		static const char *const from[] = {"kvio_pct_gather, kvio_runs_gather or kvio_gaps_gather",
						   "kvio_depth_gather", "kvio_group_gather or kvio_step_gather",
						   "kvio_runs_gather(k, t, max_gap, end, tag)",
						   "kvio_depth_gather(k, ts, dur, max_depth, min_len)", "kvio_gaps_gather",
						   "kvio_depth_gather"};
		cur->pVtab->zErrMsg = sqlite3_mprintf("%s: the argument is not a %s set (the result of %s)",
						     tv_names[c->kind], tv_ptype[c->kind], from[c->kind]);
		return SQLITE_ERROR;
	}
	if (c->kind == TV_PCT || c->kind == TV_RUNS || c->kind == TV_GAPS) {
		if ((c->kind == TV_GAPS ? vset_prepare_gaps(p) : vset_prepare(p)) != SQLITE_OK)
			return SQLITE_NOMEM;
		c->virt = ((struct vset *)p)->virt;
		c->t = &((struct vset *)p)->t;
		if (c->kind == TV_GAPS && ((struct vset *)p)->each)
			c->each = &((struct vset *)p)->each->t;
		if (c->kind != TV_RUNS)
			tv_pct_settle(c);
		else
			tv_list_settle(c);
	} else if (c->kind == TV_DEPTH || c->kind == TV_SPANS || c->kind == TV_DBOTH) {
		struct dset *s = p;
		if (!s->sorted)
			gtab_sort(&s->t);
		s->sorted = 1;
		c->t = &s->t;
		if (c->kind == TV_DEPTH)
			tv_depth_settle(c);
		else if (c->kind == TV_DBOTH)
			tv_dboth_settle(c);
		else
			tv_list_settle(c);
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
	} else if (c->kind == TV_RUNS || c->kind == TV_SPANS) {
		c->d++;
		tv_list_settle(c);
	} else if (c->kind == TV_DBOTH) {
		c->d++;
		tv_dboth_settle(c);
	} else if (c->kind == TV_GROUPS && (int)++c->d < c->nvals) {
		/* the group's next value column */
	} else {
		c->d = 0;
		c->g++;
		if (c->kind == TV_PCT || c->kind == TV_GAPS)
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

/* A virt kvio_gaps class row's n, p50, p95 (cols 3-5): selected by the gather. */
static void tv_sel_column(sqlite3_context *ctx, const struct vgroup *g, int col)
{
	if (col == 3)
		sqlite3_result_int64(ctx, g->sel_n);
	else if (g->sel_n)
		sqlite3_result_int64(ctx, g->sel[col - 4]);
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

/* A kvio_runs row (k, start, end, n, tag) or a kvio_depth_spans row (k, start, end). */
static void tv_list_column(sqlite3_context *ctx, const struct tv_cur *c, const struct ghead *h, int col)
{
	if (col == 0) {
		key_result(ctx, &h->k[0]);
	} else if (c->kind == TV_SPANS) {
		if (col <= 2)
			sqlite3_result_int64(ctx, ((const struct dgroup *)h)->spans[2 * c->d + (size_t)col - 1]);
	} else {
		const struct vrun *r = &((const struct vgroup *)h)->runs[c->d];
		if (col == 1)
			sqlite3_result_int64(ctx, r->start);
		else if (col == 2)
			sqlite3_result_int64(ctx, r->end);
		else if (col == 3)
			sqlite3_result_int64(ctx, r->n);
		else if (col == 4 && r->has_tag)
			sqlite3_result_int64(ctx, r->tag);
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
	if (c->kind == TV_RUNS || c->kind == TV_SPANS) {
		tv_list_column(ctx, c, h, col);
		return SQLITE_OK;
	}
	if (c->kind == TV_DBOTH) { /* k, then depth, time (start, end NULL) or start, end (depth, time NULL) */
		const struct dgroup *g = (const struct dgroup *)h;
		if (col == 0)
			key_result(ctx, &h->k[0]);
		else if (!c->phase && col == 1)
			sqlite3_result_int64(ctx, (int64_t)c->d);
		else if (!c->phase && col == 2)
			sqlite3_result_int64(ctx, g->at[c->d]);
		else if (c->phase && (col == 3 || col == 4))
			sqlite3_result_int64(ctx, g->spans[2 * c->d + (size_t)col - 3]);
		return SQLITE_OK;
	}
	if (c->kind == TV_GAPS) { /* k, seq (NULL on a group (k, cls)), cls, then kvio_pct's n, p50, p95, members */
		static const int pct_col[] = {0, 0, 0, 2, 4, 5, 8};
		const struct vgroup *g = (const struct vgroup *)h;
		if (col == 0 || (col == 1 && c->phase))
			key_result(ctx, &h->k[col]);
		else if (col == 2)
			key_result(ctx, c->phase ? &g->pool->h.k[1] : &h->k[1]);
		else if (c->virt && !c->phase && col >= 3 && col <= 5)
			tv_sel_column(ctx, g, col);
		else if (col >= 3 && col <= 6)
			tv_pct_column(ctx, g, pct_col[col]);
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


int op_tvf_register(sqlite3 *db)
{
	for (int k = 0; k < TV_N; k++) {
		int rc = sqlite3_create_module_v2(db, tv_names[k], &tv_module, (void *)(intptr_t)k, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
