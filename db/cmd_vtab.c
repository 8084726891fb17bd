/* cmd_vtab.c — the kvio_cmd virtual table (module "kvio_cmds"): the command
 * chunks shown as rows, one per command, with their args as columns.
 *
 * The plan (xBestIndex) pushes the window, name, role, real_dur, upid and
 * trace_id constraints into the scan (cmd_scan.c applies them); batch = 1, 2
 * hands out a chunk's wanted rows as one row whose columns are pointers the
 * operators walk (op_batch.c). docs/database.md ("Typed storage", "Batches")
 * has the contract. */
#include "kvio_int.h"

const char *const col_names[NCOL] = {"id", "ts", "dur", "track_id", "name", "slba",
	"data_len", "trace_id", "role", "real_dur", "key_hex", "key_len", "value_len", "slba_track", "upid", "name_id",
	"tagged", "ts_end", "win_lo", "win_hi", "win_tlo", "win_thi", "win_pool", "batch"};

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
		      char **err)
{
	(void)err;
	int rc = sqlite3_declare_vtab(db,
		"CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, track_id INTEGER, name TEXT,"
		" slba INTEGER, data_len INTEGER, trace_id INTEGER, role TEXT, real_dur INTEGER,"
		" key_hex TEXT, key_len INTEGER, value_len INTEGER, slba_track INTEGER, upid INTEGER, name_id INTEGER,"
		" tagged INTEGER, ts_end INTEGER,"
		" win_lo HIDDEN, win_hi HIDDEN, win_tlo HIDDEN, win_thi HIDDEN, win_pool HIDDEN, batch HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	/* read-only and side-effect free: usable from views under trusted_schema=OFF */
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	struct cmd_vtab *v = sqlite3_malloc(sizeof *v);
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof *v);
	v->s = aux; /* main's: the connection's store, which extract_arg shares */
	/* the table of an ATTACHed database reads that one; a TEMP one (no chunks of its own) reads main's */
	if (argc > 1 && sqlite3_stricmp(argv[1], "main") && sqlite3_stricmp(argv[1], "temp")) {
		if (!(v->s = store_new(db, argv[1]))) {
			sqlite3_free(v);
			return SQLITE_NOMEM;
		}
		v->own = 1;
	}
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *t)
{
	struct cmd_vtab *v = (struct cmd_vtab *)t;
	if (v->own)
		store_free(v->s);
	sqlite3_free(v);
	return SQLITE_OK;
}

/* Whether the scan's id order satisfies the ORDER BY: id alone, or a prefix
 * of (upid, ts, id) when the data is in that order (a NULL upid, a track
 * without a process, sorts first as -1 does). */
static int order_consumed(struct store *s, const sqlite3_index_info *ii)
{
	static const int seq[3] = {C_UPID, C_TS, C_ID};
	if (ii->nOrderBy < 1 || ii->nOrderBy > 3)
		return 0;
	for (int k = 0; k < ii->nOrderBy; k++)
		if (ii->aOrderBy[k].desc)
			return 0;
	int c0 = ii->aOrderBy[0].iColumn;
	if (ii->nOrderBy == 1 && (c0 == C_ID || c0 == -1))
		return 1;
	for (int k = 0; k < ii->nOrderBy; k++) {
		int c = ii->aOrderBy[k].iColumn == -1 ? C_ID : ii->aOrderBy[k].iColumn;
		if (c != seq[k])
			return 0;
	}
	return store_ordered(s);
}

/* Whether constraint i compares with BINARY collation and a right-hand side
 * SQLite knows now (a literal; an IN list is read in xFilter). */
static int rhs_known(sqlite3_index_info *ii, int i, int in)
{
	sqlite3_value *rv = NULL;
	const char *coll = sqlite3_vtab_collation(ii, i);
	if (coll && sqlite3_stricmp(coll, "BINARY"))
		return 0;
	return in || sqlite3_vtab_rhs_value(ii, i, &rv) == SQLITE_OK;
}

/* Whether constraint i's right-hand side is an integer literal. */
static int int_rhs(sqlite3_index_info *ii, int i)
{
	sqlite3_value *rv = NULL;
	return sqlite3_vtab_rhs_value(ii, i, &rv) == SQLITE_OK && sqlite3_value_type(rv) == SQLITE_INTEGER;
}

/* The plan (idxStr): one letter per argument of xFilter, in order: e id = ?,
 * l id >=/> ?, h id <=/< ? (the range is a superset: SQLite checks those rows
 * again), 0-3 win_lo/win_hi/win_tlo/win_thi IS ?, p win_pool IS ?, n name = ?,
 * N name IN (...), r real_dur = ?, o role = ?, u upid = ?, > ] < [ trace_id >, >=, <, <= ?, b batch = ? (B: the
 * same, where the plan cannot hand out batches); and letters without an argument: T
 * trace_id IS NOT NULL, U trace_id IS NULL. Every constraint but the id ones is
 * omitted: the scan applies it exactly as SQL would.
 *
 * Batches (batch = 1, 2) only where SQLite evaluates nothing on a row itself: no
 * ORDER BY (a batch pointer does not survive a sort or a subquery), no id
 * constraint, LIMIT or other constraint the scan does not omit, usable or not
 * (one that is not usable joins another table on a column). Elsewhere the
 * same query reads rows (B), which the operators take as well. */
/* The id constraints (=, or a >/>= and a </<= bound) into plan at *np, their
 * arguments numbered from *arg; returns the rows they leave of rows. */
static double plan_ids(sqlite3_index_info *ii, char *plan, int *np, int *arg, double rows)
{
	int eq = -1, lo = -1, hi = -1;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (!c->usable || (c->iColumn != C_ID && c->iColumn != -1))
			continue;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ: eq = i; break;
		case SQLITE_INDEX_CONSTRAINT_GT: case SQLITE_INDEX_CONSTRAINT_GE: lo = i; break;
		case SQLITE_INDEX_CONSTRAINT_LT: case SQLITE_INDEX_CONSTRAINT_LE: hi = i; break;
		}
	}
	if (eq >= 0) {
		plan[(*np)++] = 'e';
		ii->aConstraintUsage[eq].argvIndex = (*arg)++;
		ii->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
		return 1;
	}
	if (lo >= 0) {
		plan[(*np)++] = 'l';
		ii->aConstraintUsage[lo].argvIndex = (*arg)++;
		rows /= 4;
	}
	if (hi >= 0) {
		plan[(*np)++] = 'h';
		ii->aConstraintUsage[hi].argvIndex = (*arg)++;
		rows /= 4;
	}
	return rows;
}

/* The plan letter of usable constraint i on a column other than id, or 0 when
 * the scan leaves it to SQLite (the letters: vt_best_index). */
static int plan_letter(sqlite3_index_info *ii, int i)
{
	const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
	int col = c->iColumn, op = c->op, eq = op == SQLITE_INDEX_CONSTRAINT_EQ;
	if (col == C_BATCH)
		return (op == SQLITE_INDEX_CONSTRAINT_IS || eq) && !sqlite3_vtab_in(ii, i, -1) ? 'b' : 0; /* or B: vt_best_index */
	if (col >= C_WLO) /* only IS: NULL = no bound (win_x = ... SQLite checks: never true) */
		return op != SQLITE_INDEX_CONSTRAINT_IS ? 0 : col == C_WPOOL ? 'p' : '0' + (col - C_WLO);
	if (col == C_NAME && eq) {
		int in = sqlite3_vtab_in(ii, i, -1);
		if (!rhs_known(ii, i, in))
			return 0;
		if (in)
			sqlite3_vtab_in(ii, i, 1); /* the whole list in one xFilter */
		return in ? 'N' : 'n';
	}
	if ((col == C_REAL || col == C_ROLE) && eq && !sqlite3_vtab_in(ii, i, -1) && rhs_known(ii, i, 0))
		return col == C_REAL ? 'r' : 'o';
	if (col == C_UPID && eq && !sqlite3_vtab_in(ii, i, -1))
		return 'u'; /* a value known at xFilter: a literal, or another table's column (a join) */
	if (col != C_TRACE_ID)
		return 0;
	if (op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL)
		return 'T';
	if (op == SQLITE_INDEX_CONSTRAINT_ISNULL)
		return 'U';
	if (!int_rhs(ii, i)) /* trace_id >, >=, <, <= an integer literal (tid > 0: tagged, checked here only) */
		return 0;
	return op == SQLITE_INDEX_CONSTRAINT_GT ? '>' : op == SQLITE_INDEX_CONSTRAINT_GE ? ']' :
	       op == SQLITE_INDEX_CONSTRAINT_LT ? '<' : op == SQLITE_INDEX_CONSTRAINT_LE ? '[' : 0;
}

/* Whether the plan can hand out batches: every constraint is the scan's (one
 * not usable here is another table's, joined on a column), nothing is sorted,
 * and no trace_id IS [NOT] NULL (SQLite checks it again, on the row). */
static int plan_batches(const sqlite3_index_info *ii, const char *plan)
{
	if (ii->nOrderBy != 0 || strchr(plan, 'T') || strchr(plan, 'U'))
		return 0;
	for (int i = 0; i < ii->nConstraint; i++)
		if (!ii->aConstraintUsage[i].omit)
			return 0;
	return 1;
}

static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	char plan[32];
	int np = 0, arg = 1;
	double rows = plan_ids(ii, plan, &np, &arg, 1e6);
	int seen[NCOL] = {0}, bpos = -1;
	for (int i = 0; i < ii->nConstraint && np < (int)sizeof plan - 1; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		int col = c->iColumn, letter;
		if (!c->usable || col < 0 || col == C_ID || seen[col] || !(letter = plan_letter(ii, i)))
			continue;
		if (letter == 'b')
			bpos = np;
		seen[col] = 1;
		plan[np++] = (char)letter;
		if (letter != 'T' && letter != 'U')
			ii->aConstraintUsage[i].argvIndex = arg++;
		ii->aConstraintUsage[i].omit = 1;
		if (col < C_WLO)
			rows /= 2;
	}
	plan[np] = 0;
	if (bpos >= 0)
		plan[bpos] = plan_batches(ii, plan) ? 'b' : 'B';
	ii->estimatedCost = rows;
	ii->estimatedRows = (sqlite3_int64)rows;
	if (order_consumed(((struct cmd_vtab *)tab)->s, ii))
		ii->orderByConsumed = 1;
	ii->idxStr = sqlite3_mprintf("%s", plan);
	if (!ii->idxStr)
		return SQLITE_NOMEM;
	ii->needToFreeIdxStr = 1;
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	(void)tab;
	struct cmd_cur *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->eof = 1;
	*out = &c->base;
	return SQLITE_OK;
}

static void cur_filters_free(struct cmd_cur *c)
{
	sqlite3_free(c->names);
	sqlite3_free(c->pool_upid);
	c->names = NULL;
	c->pool_upid = NULL;
	c->nnames = c->npool = 0;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	cur_filters_free((struct cmd_cur *)cur);
	sqlite3_free(((struct cmd_cur *)cur)->sel);
	sqlite3_free(((struct cmd_cur *)cur)->perm);
	sqlite3_free(((struct cmd_cur *)cur)->bval);
	sqlite3_free(((struct cmd_cur *)cur)->btype);
	sqlite3_free(((struct cmd_cur *)cur)->bskip);
	sqlite3_free(cur);
	return SQLITE_OK;
}


static int vt_next(sqlite3_vtab_cursor *cur);

/* Whether SQL read a column of the batch the cursor hands out other than as an
 * argument of kvio's aggregates (a WHERE term the scan leaves to SQLite, an
 * expression, a row stored by a subquery): it saw NULL there, so the result
 * would be wrong; the cursor's error says so. The counts start over. */
static int batch_misread(struct cmd_cur *c)
{
	int bad = -1;
	for (int k = 0; k < NCOL; k++) {
		if (bad < 0 && c->bcol[k].fetched > c->bcol[k].used)
			bad = k;
		c->bcol[k].fetched = c->bcol[k].used = 0;
	}
	int derived = c->derived_made > c->derived_used;
	c->derived_made = c->derived_used = 0;
	if (bad < 0 && !derived)
		return 0;
	sqlite3_free(c->base.pVtab->zErrMsg);
	c->base.pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: a batch's %s was read outside the arguments of kvio's"
		" aggregates (there it reads NULL: a WHERE term the scan does not apply, an expression, a stored"
		" subquery or a join); read kvio_command or kvio_pool (rows) for that (docs/database.md, Batches)",
		bad >= 0 ? col_names[bad] : "kvio_is(...)");
	return 1;
}

static int prow_cmp(const void *x, const void *y)
{
	const struct prow *a = x, *b = y;
	if (a->upid != b->upid)
		return a->upid < b->upid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* batch = 2 (sorted), on a cursor at its first wanted row: if the ids are not
 * in (upid, ts, id) order, every wanted row from here into perm, sorted, and
 * the cursor at the first (a NULL upid sorts first, as -1). */
static int cur_sort(struct cmd_cur *c, struct store *s)
{
	if (!c->sorted || (s->order_known && s->ordered) || cur_ordered(c, s)) {
		c->sorted = 0; /* id order is that order */
		return SQLITE_OK;
	}
	size_t cap = 0;
	int batch = c->batch;
	c->batch = c->sorted = 0; /* step row by row, in id order, while collecting */
	while (!c->eof) {
		const struct chunk_view *v = cur_view(c, s);
		if (!v)
			return s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
		if (c->nperm == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			struct prow *np = sqlite3_realloc64(c->perm, nc * sizeof *np);
			if (!np)
				return SQLITE_NOMEM;
			c->perm = np;
			cap = nc;
		}
		c->perm[c->nperm++] = (struct prow){store_upid(s, v->track[c->i]), v->ts[c->i], s->d.first[c->k] + c->i,
						    (uint32_t)c->k, c->i};
		vt_next(&c->base);
	}
	if (c->nperm > 1)
		qsort(c->perm, c->nperm, sizeof *c->perm, prow_cmp);
	c->batch = batch;
	c->sorted = 1;
	c->selok = 0; /* a batch is the one row */
	c->pperm = 0;
	c->eof = c->nperm == 0;
	if (!c->eof) {
		c->k = c->perm[0].k;
		c->i = c->perm[0].i;
	}
	return SQLITE_OK;
}

/* cur_settle's failure rc (a chunk the scan's filter could not read) as the cursor's error:
 * damage with its sentence, else the read's code (an interrupt says itself). */
static int scan_failed(sqlite3_vtab_cursor *cur, struct store *s, int rc)
{
	if (rc == SQLITE_CORRUPT) {
		sqlite3_free(cur->pVtab->zErrMsg);
		cur->pVtab->zErrMsg = sqlite3_mprintf("%s", store_why(s));
	}
	return rc;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idx;
	struct cmd_cur *c = (struct cmd_cur *)cur;
	struct store *s = cur_store(cur);
	if (c->batch && batch_misread(c)) /* the last batch of the scan before (a subquery run again) */
		return SQLITE_ERROR;
	int rc = store_refresh(s);
	if (rc != SQLITE_OK) { /* an interrupt is no failure to read: SQLite says "interrupted" */
		if (rc == SQLITE_CORRUPT)
			cur->pVtab->zErrMsg = sqlite3_mprintf("%s", store_why(s));
		else if (rc != SQLITE_INTERRUPT)
			cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: cannot read its tables: %s", sqlite3_errstr(rc));
		return rc;
	}
	int64_t lo = INT64_MIN;
	c->hi = INT64_MAX;
	c->skip = c->tagged = c->pool = c->tid_range = c->selok = c->role = c->batch = c->sorted = c->upid = 0;
	c->batch_req = 0;
	c->nperm = c->pperm = 0;
	for (int k = 0; k < NCOL; k++)
		c->bcol[k].fetched = c->bcol[k].used = 0;
	c->derived_made = c->derived_used = 0;
	c->real = -1;
	cur_filters_free(c);
	memset(c->wset, 0, sizeof c->wset);
	int a = 0;
	for (const char *p = idxStr ? idxStr : ""; *p; p++) {
		sqlite3_value *x = NULL;
		if (*p != 'T' && *p != 'U') {
			if (a >= argc)
				return SQLITE_ERROR;
			x = argv[a++];
			if (strchr("elh", *p) && sqlite3_value_type(x) == SQLITE_NULL) {
				c->eof = 1; /* id compared with NULL: no row */
				return SQLITE_OK;
			}
		}
		if ((rc = cur_constrain(c, s, *p, x, &lo)) != SQLITE_OK) {
			if (rc == SQLITE_MISMATCH)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: win_pool is a list of upids (1,2,...)");
			else if (rc == SQLITE_TOOBIG)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: batch takes the integer 0 (rows), 1 or 2 (batches)");
			else if (rc == SQLITE_RANGE)
				cur->pVtab->zErrMsg = sqlite3_mprintf("kvio_cmd: %s is an integer or NULL",
								      col_names[C_WLO + (*p - '0')]);
			return rc == SQLITE_RANGE || rc == SQLITE_TOOBIG ? SQLITE_MISMATCH : rc;
		}
	}
	/* first chunk that can hold lo */
	size_t k = 0;
	if (lo != INT64_MIN) {
		long f = dir_find(&s->d, lo);
		if (f >= 0) {
			c->k = (size_t)f;
			c->i = (uint32_t)(lo - s->d.first[f]);
			if ((rc = cur_settle(c, s)) != SQLITE_OK)
				return scan_failed(cur, s, rc);
			return cur_sort(c, s);
		}
		while (k < s->d.nchunks && s->d.first[k] + (int64_t)s->d.n[k] <= lo)
			k++;
	}
	c->k = k;
	c->i = 0;
	if (k < s->d.nchunks && s->d.first[k] < lo)
		c->i = (uint32_t)(lo - s->d.first[k]);
	if ((rc = cur_settle(c, s)) != SQLITE_OK)
		return scan_failed(cur, s, rc);
	return cur_sort(c, s);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	if (c->batch && batch_misread(c)) /* a column SQL read itself saw NULL: not a silent result */
		return SQLITE_ERROR;
	if (c->sorted) { /* the next of the sorted rows */
		if (++c->pperm >= c->nperm) {
			c->eof = 1;
		} else {
			c->k = c->perm[c->pperm].k;
			c->i = c->perm[c->pperm].i;
		}
		return SQLITE_OK;
	}
	if (c->batch) { /* past the batch: the chunk's selection, or the one row */
		c->i = c->selok && c->selk == c->k ? cur_store(cur)->d.n[c->k] : c->i + 1;
		int rc = cur_settle(c, cur_store(cur));
		return rc == SQLITE_OK ? rc : scan_failed(cur, cur_store(cur), rc);
	}
	if (c->selok && c->selk == c->k && c->psel + 1 < c->nsel && c->sel[c->psel] == c->i) {
		c->i = c->sel[++c->psel]; /* the chunk's next wanted row */
		return SQLITE_OK;
	}
	c->i++;
	int rc = cur_settle(c, cur_store(cur));
	return rc == SQLITE_OK ? rc : scan_failed(cur, cur_store(cur), rc);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cmd_cur *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	struct store *s = cur_store(cur);
	const struct chunk_view *v = c->v;
	/* the usual case first: a chunk column of the chunk the cursor holds */
	if (__builtin_expect(!v || c->vk != c->k || c->vgen != s->gen || col == C_ID || col >= C_WLO || c->batch, 0)) {
		if (c->batch && col < C_WLO) {
			if (col >= C_KEY_HEX && col <= C_VALUE_LEN) {
				sqlite3_result_error(ctx, "kvio_cmd: key_hex, key_len and value_len are not in batches", -1);
				return SQLITE_ERROR;
			}
			c->bcol[col].c = c;
			c->bcol[col].col = col;
			c->bcol[col].fetched++; /* vt_next checks that an aggregate read each one */
			sqlite3_result_pointer(ctx, &c->bcol[col], "kvio_batch", NULL);
			return SQLITE_OK;
		}
		if (col == C_ID) {
			sqlite3_result_int64(ctx, s->d.first[c->k] + c->i);
			return SQLITE_OK;
		}
		if (col >= C_WLO) { /* the window's bound, as given (win_pool: NULL); batch: 1 in batches */
			if (col < C_WPOOL && c->wset[col - C_WLO])
				sqlite3_result_int64(ctx, c->w[col - C_WLO]);
			else if (col == C_BATCH)
				sqlite3_result_int(ctx, c->batch_req);
			return SQLITE_OK;
		}
		if (!(v = cur_view(c, s)))
			return chunk_error(ctx, s, "kvio_cmd");
	}
	col_value(ctx, s, v, s->d.first[c->k], c->i, col);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cmd_cur *c = (struct cmd_cur *)cur;
	*rowid = cur_store(cur)->d.first[c->k] + c->i;
	return SQLITE_OK;
}

const sqlite3_module kvio_cmd_module = {
	.iVersion = 0,
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};
