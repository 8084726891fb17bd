/* op_batch.c — how every gathering aggregate takes its rows: one at a time (SQL
 * values) or as a kvio_cmd batch (batch = 1, 2: pointers to the cursor's
 * columns), walked row by row with col_key, the values SQL reads (agg_rows);
 * the aggregates' state (struct agg); and kvio_is(x, y), SQL's x IS y, which
 * is also a batch column's test.
 *
 * A batch column read anywhere but as an aggregate's argument is an error
 * (the cursor counts what it handed out and what was read: cmd_vtab.c). */
#include "kvio_int.h"

/* ---- the aggregates that fill value sets -------------------------------- */


/* In a final: whether the aggregate failed (its state then freed here). */
int agg_done_failed(struct agg *a)
{
	if (!a || !a->failed)
		return 0;
	if (a->p && a->free)
		a->free(a->p);
	a->p = NULL;
	return 1;
}

/* The aggregate's state, or NULL after an error was set on ctx. */
struct agg *agg_state(sqlite3_context *ctx)
{
	struct agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	return a->failed ? NULL : a;
}

void agg_fail(sqlite3_context *ctx, struct agg *a, int rc, const char *msg)
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
	sqlite3_free(b->weq.s);
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


/* kvio_where(cond, x): x for the rows where cond is true (a number not 0); a
 * gathering aggregate skips the others, so that one pass over the commands
 * feeds gathers of different row filters (prelude.sql's kvio_pool_gather).
 * On a kvio_cmd batch x is a column and cond a column or kvio_is of one, of
 * the same batch; on single rows, values (x, or a marker the aggregates skip). */
static void where_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	static const char skip = 0;
	const struct bcol *cond = sqlite3_value_pointer(argv[0], "kvio_batch"), *x = sqlite3_value_pointer(argv[1], "kvio_batch");
	if (!cond && !x) {
		int t = sqlite3_value_numeric_type(argv[0]);
		int yes = t == SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) != 0
			: t == SQLITE_FLOAT ? sqlite3_value_double(argv[0]) != 0 : 0;
		if (yes)
			sqlite3_result_value(ctx, argv[1]);
		else
			sqlite3_result_pointer(ctx, (void *)&skip, "kvio_skip", NULL);
		return;
	}
	if (!cond || !x || cond->c != x->c || cond->where || x->is || x->where) {
		sqlite3_result_error(ctx, "kvio_where: cond (a column or kvio_is of one) and x (a column) of one kvio_cmd"
					  " batch", -1);
		return;
	}
	struct bcol *n = sqlite3_malloc(sizeof *n);
	struct key weq = {.t = SQLITE_NULL};
	if (!n || (cond->is && key_copy(&weq, &cond->eq) != SQLITE_OK)) {
		sqlite3_free(n);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	((struct bcol *)x)->used++;
	if (cond->is)
		x->c->derived_used++; /* the kvio_is column, read here */
	else
		((struct bcol *)cond)->used++;
	*n = (struct bcol){.c = x->c, .col = x->col, .where = 1, .wcol = cond->col, .wis = cond->is, .weq = weq};
	x->c->derived_made++; /* an aggregate must read it (vt_next checks) */
	sqlite3_result_pointer(ctx, n, "kvio_batch", bcol_free);
}

/* Whether a row's condition value k (of kvio_where's cond) is true. */
static int cond_true(const struct bcol *b, struct key k)
{
	if (b->wis)
		return key_is(&k, &b->weq);
	return k.t == SQLITE_INTEGER ? k.i != 0 : k.t == SQLITE_FLOAT ? k.d != 0 : 0;
}

#define IS_NAMES 64 /* kvio_is(name, x) on a batch is looked up by name id when the ids are this few */

/* kvio_is(name, eq) for every name id of s's commands (nnames < IS_NAMES; ids
 * past nnames have a NULL name, as the last slot says), into tab[IS_NAMES]. */
static void is_by_name(const struct store *s, const struct key *eq, uint8_t *tab)
{
	struct key null = {.t = SQLITE_NULL};
	tab[IS_NAMES - 1] = (uint8_t)key_is(&null, eq);
	for (size_t id = 0; id < s->d.nnames; id++) {
		struct key nm = col_key_name(s, (uint16_t)id);
		tab[id] = (uint8_t)key_is(&nm, eq);
	}
}

/* Column col of the n rows of chunk v (ids from first) into val and type (a
 * real's bits in val), as col_key gives them: each column's switch once, not
 * once a row. */
static void column_fill(const struct store *s, const struct chunk_view *v, int64_t first, const uint32_t *rows,
			uint32_t n, int col, int64_t *val, uint8_t *type)
{
#define FILL(expr)                                   \
	for (uint32_t r = 0; r < n; r++) {           \
		uint32_t i = rows[r];                \
		val[r] = (expr);                     \
		type[r] = SQLITE_INTEGER;            \
	}                                            \
	return
	switch (col) {
	case C_ID: FILL(first + i);
	case C_TS: FILL(v->ts[i]);
	case C_DUR: FILL(v->dur[i]);
	case C_TRACK: FILL(v->track[i]);
	case C_DATA_LEN: FILL(v->data_len[i]);
	case C_REAL: FILL((v->flags[i] & CHF_REAL) != 0);
	case C_TAGGED: FILL(v->trace_id[i] != 0);
	default: break;
	}
#undef FILL
	for (uint32_t r = 0; r < n; r++) { /* the others (NULLs, a real): as col_key says */
		struct key k = col_key(s, v, first, rows[r], col);
		type[r] = (uint8_t)k.t;
		if (k.t == SQLITE_FLOAT)
			memcpy(&val[r], &k.d, sizeof k.d);
		else
			val[r] = k.i;
	}
}

/* c->bskip[r] = 1 for the rows r of the batch that a kvio_where argument of
 * bc[0..nb) skips (kvio_is conditions by name id): SQLITE_OK, or NOMEM (the
 * caller then goes row by row). */
static int where_skips(struct cmd_cur *c, const struct store *s, const struct chunk_view *v, int64_t first,
		       const uint32_t *rows, uint32_t n, int nb, const struct bcol *const *bc)
{
	if (c->bskipcap < n) {
		uint8_t *b = sqlite3_realloc64(c->bskip, n);
		if (!b)
			return SQLITE_NOMEM;
		c->bskip = b;
		c->bskipcap = n;
	}
	uint8_t *skip = c->bskip, tab[IS_NAMES];
	memset(skip, 0, n);
	for (int m = 0; m < nb; m++) {
		const struct bcol *b = bc[m];
		if (!b->where)
			continue;
		if (!b->wis && (b->wcol == C_REAL || b->wcol == C_TAGGED)) { /* (prelude.sql's: from the arrays) */
			for (uint32_t r = 0; r < n; r++)
				skip[r] |= b->wcol == C_REAL ? !(v->flags[rows[r]] & CHF_REAL) : !v->trace_id[rows[r]];
			continue;
		}
		if (!b->wis) {
			for (uint32_t r = 0; r < n; r++)
				skip[r] |= !cond_true(b, col_key(s, v, first, rows[r], b->wcol));
			continue;
		}
		is_by_name(s, &b->weq, tab);
		for (uint32_t r = 0; r < n; r++) {
			uint16_t id = v->name[rows[r]];
			skip[r] |= !tab[id < s->d.nnames ? id : IS_NAMES - 1];
		}
	}
	return SQLITE_OK;
}

/* The batch's columns bc[0..nb) for its n rows into c->bval and c->btype,
 * column by column (kvio_is(name, x) by name id), when every one is a number,
 * and (nw of them kvio_where's) the rows they skip into c->bskip: 1; 0 (a text
 * column, a kvio_is of another, no memory): row by row instead. */
static int batch_columns(struct cmd_cur *c, const struct store *s, const struct chunk_view *v, int64_t first,
			 const uint32_t *rows, uint32_t n, int nb, const struct bcol *const *bc, int nw)
{
	for (int m = 0; m < nb; m++) {
		int col = bc[m]->col;
		if (bc[m]->is ? col != C_NAME || s->d.nnames >= IS_NAMES : col == C_NAME || col == C_ROLE)
			return 0;
		if (bc[m]->where && (bc[m]->wis ? bc[m]->wcol != C_NAME || s->d.nnames >= IS_NAMES
					       : bc[m]->wcol == C_NAME || bc[m]->wcol == C_ROLE))
			return 0;
	}
	if (nw && where_skips(c, s, v, first, rows, n, nb, bc) != SQLITE_OK)
		return 0;
	size_t need = (size_t)nb * n;
	if (c->bcap < need) {
		int64_t *bv = sqlite3_realloc64(c->bval, need * sizeof *bv);
		uint8_t *bt = bv ? sqlite3_realloc64(c->btype, need) : NULL;
		if (bv)
			c->bval = bv;
		if (!bt)
			return 0;
		c->btype = bt;
		c->bcap = need;
	}
	for (int m = 0; m < nb; m++) {
		int64_t *val = c->bval + (size_t)m * n;
		uint8_t *type = c->btype + (size_t)m * n, tab[IS_NAMES];
		if (!bc[m]->is) {
			column_fill(s, v, first, rows, n, bc[m]->col, val, type);
			continue;
		}
		is_by_name(s, &bc[m]->eq, tab);
		for (uint32_t r = 0; r < n; r++) {
			uint16_t id = v->name[rows[r]];
			val[r] = tab[id < s->d.nnames ? id : IS_NAMES - 1];
			type[r] = SQLITE_INTEGER;
		}
	}
	return 1;
}

/* f once per row of the batch (rows[0..n) of chunk v): the batch columns bc
 * (at argument positions at) that row's values, the other arguments k as
 * given; a row a kvio_where argument leaves out skipped. */
static void batch_rows(sqlite3_context *ctx, struct agg *a, row_fn f, int argc, struct key *k, struct cmd_cur *c,
		       struct store *s, const struct chunk_view *v, const uint32_t *rows, uint32_t n, int nb,
		       const int *at, const struct bcol *const *bc)
{
	int64_t first = s->d.first[c->k];
	int nw = 0;
	for (int m = 0; m < nb; m++)
		nw += bc[m]->where;
	if (n > 1 && batch_columns(c, s, v, first, rows, n, nb, bc, nw)) {
		for (int m = 0; m < nb; m++)
			k[at[m]] = (struct key){.t = SQLITE_NULL};
		const int64_t *bv = c->bval;
		const uint8_t *bt = c->btype, *skip = nw ? c->bskip : NULL;
		for (uint32_t r = 0; r < n; r++) {
			if (skip && skip[r])
				continue;
			for (int m = 0; m < nb; m++) {
				struct key *x = &k[at[m]];
				x->t = bt[(size_t)m * n + r];
				x->i = bv[(size_t)m * n + r];
				if (__builtin_expect(x->t == SQLITE_FLOAT, 0))
					memcpy(&x->d, &x->i, sizeof x->d);
			}
			if (f(ctx, a, argc, k) != SQLITE_OK)
				return;
		}
		return;
	}
	for (uint32_t r = 0; r < n; r++) {
		int skip = 0;
		for (int m = 0; m < nb; m++) {
			k[at[m]] = col_key(s, v, first, rows[r], bc[m]->col);
			if (bc[m]->is)
				k[at[m]] = (struct key){.t = SQLITE_INTEGER, .i = key_is(&k[at[m]], &bc[m]->eq)};
			else if (bc[m]->where)
				skip |= !cond_true(bc[m], col_key(s, v, first, rows[r], bc[m]->wcol));
		}
		if (!skip && f(ctx, a, argc, k) != SQLITE_OK)
			return;
	}
}

/* Step the aggregate of ctx: f once with argv's values, or, when arguments are
 * columns of a kvio_cmd batch (batch = 1), once per row of the batch, those
 * arguments that row's values (col_key: the values SQL reads) and the others
 * as given. */
void agg_rows(sqlite3_context *ctx, int argc, sqlite3_value **argv, row_fn f)
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
		if (!b && t == SQLITE_NULL && sqlite3_value_pointer(argv[j], "kvio_skip"))
			return; /* a single row that kvio_where leaves out */
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
		if (b->is || b->where)
			c->derived_used++; /* a kvio_is or kvio_where column, read here */
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
	batch_rows(ctx, a, f, argc, k, c, s, v, rows, n, nb, at, bc);
}

/* kvio_pct_gather(k1, k2, v): v into the value set of group (k1, k2). */

/* Register n aggregates of table a on db. SQLITE_OK or the first error. */
int op_register_aggs(sqlite3 *db, const struct op_agg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = sqlite3_create_function_v2(db, a[i].name, a[i].nargs, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
						    NULL, a[i].step, a[i].final, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

int op_batch_register(sqlite3 *db)
{
	int rc = sqlite3_create_function_v2(db, "kvio_is", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, is_func, NULL, NULL,
					    NULL);
	return rc != SQLITE_OK ? rc
			       : sqlite3_create_function_v2(db, "kvio_where", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
							    where_func, NULL, NULL, NULL);
}
