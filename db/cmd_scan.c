/* cmd_scan.c — the kvio_cmd cursor's scan: which rows a plan's constraints
 * keep (cur_constrain reads the plan's letters and values; cur_wanted tests a
 * row exactly as SQL would), the selection of a chunk's wanted rows in one
 * pass, and the step to the next wanted row (cur_settle). */
#include "kvio_int.h"

/* Whether upid u is one of the pool's (win_pool's list). */
static inline int pool_has(const struct cmd_cur *c, int64_t u)
{
	for (size_t k = 0; k < c->npool; k++)
		if (c->pool_upid[k] == u)
			return 1;
	return 0;
}

/* Whether row i of chunk v is wanted: inside the window (ts <= win_hi,
 * ts + dur >= win_lo) and through every pushed-down filter (the trace_id
 * window among them, an untagged command never in it). */
static inline __attribute__((always_inline)) int cur_wanted(const struct cmd_cur *c, const struct store *s,
							   const struct chunk_view *v, uint32_t i)
{
	if (c->wset[1] && v->ts[i] > c->w[1])
		return 0;
	if (c->wset[0] && v->ts[i] + v->dur[i] < c->w[0])
		return 0;
	if (c->tagged && (v->trace_id[i] != 0) != (c->tagged > 0))
		return 0;
	if (c->tid_range && (!v->trace_id[i] || (int64_t)v->trace_id[i] < c->tid_lo || (int64_t)v->trace_id[i] > c->tid_hi))
		return 0;
	if (c->real >= 0 && ((v->flags[i] & CHF_REAL) != 0) != c->real)
		return 0;
	if (c->role && !(v->flags[i] & c->role_flag))
		return 0;
	if (c->names && (v->name[i] >= c->nnames || !c->names[v->name[i]]))
		return 0;
	if (c->upid) {
		int64_t u = store_upid(s, v->track[i]);
		if (c->upid < 0 || u < 0 || u != c->upid_want)
			return 0;
	}
	if (c->pool && !v->trace_id[i] && !pool_has(c, store_upid(s, v->track[i])))
		return 0;
	return 1;
}

/* Whether the window misses every row of a chunk of extent e. */
static int cur_misses(const struct cmd_cur *c, const struct extent *e)
{
	return (c->wset[1] && e->ts_min > c->w[1]) || (c->wset[0] && e->end_max < c->w[0]) ||
	       (c->tid_range && (!e->tid_max || e->tid_max < c->tid_lo || e->tid_min > c->tid_hi));
}

int cur_ordered(struct cmd_cur *c, struct store *s)
{
	int64_t pu = INT64_MIN, pt = INT64_MIN;
	for (size_t k = c->k; k < s->d.nchunks && s->d.first[k] <= c->hi; k++) {
		const int64_t *key;
		if (c->skip && s->d.ext && cur_misses(c, &s->d.ext[k]))
			continue; /* the scan does not enter it */
		if (store_chunk_order(s, k, &key) != 1 || key[0] < pu || (key[0] == pu && key[1] < pt))
			return 0;
		pu = key[2];
		pt = key[3];
	}
	return 1;
}

/* SEL_KEEP(cond): keep the rows of sel[0..m) for which cond (on row i) holds,
 * in place, without a branch a row. */
#define SEL_KEEP(cond)                                  \
	do {                                            \
		uint32_t k_ = 0;                        \
		for (uint32_t j_ = 0; j_ < m; j_++) {   \
			uint32_t i = sel[j_];           \
			sel[k_] = i;                    \
			k_ += (cond) ? 1 : 0;           \
		}                                       \
		m = k_;                                 \
	} while (0)

/* The rows i0 .. n - 1 of chunk v that cur_wanted keeps, into sel (room for
 * n - i0): one pass per filter the cursor has, each a tight loop over the rows
 * still kept (the filters in one test a row cost a branch each). Their count. */
static uint32_t select_rows(const struct cmd_cur *c, const struct store *s, const struct chunk_view *v,
			    uint32_t i0, uint32_t n, uint32_t *sel)
{
	uint32_t m = 0;
	for (uint32_t i = i0; i < n; i++)
		sel[m++] = i;
	const int64_t w0 = c->w[0], w1 = c->w[1], tlo = c->tid_lo, thi = c->tid_hi, want = c->upid_want;
	const int tagged = c->tagged > 0, real = c->real;
	if (c->wset[1])
		SEL_KEEP(v->ts[i] <= w1);
	if (c->wset[0])
		SEL_KEEP(v->ts[i] + v->dur[i] >= w0);
	if (c->tagged)
		SEL_KEEP((v->trace_id[i] != 0) == tagged);
	if (c->tid_range)
		SEL_KEEP(v->trace_id[i] && (int64_t)v->trace_id[i] >= tlo && (int64_t)v->trace_id[i] <= thi);
	if (c->real >= 0)
		SEL_KEEP(((v->flags[i] & CHF_REAL) != 0) == real);
	if (c->role)
		SEL_KEEP((v->flags[i] & c->role_flag) != 0);
	if (c->names)
		SEL_KEEP(v->name[i] < c->nnames && c->names[v->name[i]]);
	if (c->upid)
		SEL_KEEP(c->upid > 0 && store_upid(s, v->track[i]) == want && want >= 0);
	if (c->pool)
		SEL_KEEP(v->trace_id[i] || pool_has(c, store_upid(s, v->track[i])));
	return m;
}
#undef SEL_KEEP

/* The wanted rows of chunk k from row i0 on (ids up to hi) into c->sel; 0, -1
 * when the chunk cannot be read (vt_column then says so), 1 when there is no
 * memory for the selection (the caller checks row by row). */
static int cur_select(struct cmd_cur *c, struct store *s, uint32_t i0)
{
	const struct chunk_view *v = cur_view(c, s);
	if (!v)
		return -1;
	uint32_t n = s->d.n[c->k];
	if (n && c->hi < s->d.first[c->k] + (int64_t)n - 1) /* ids past hi are not wanted */
		n = c->hi < s->d.first[c->k] ? 0 : (uint32_t)(c->hi - s->d.first[c->k] + 1);
	if (c->selcap < n) {
		uint32_t *p = sqlite3_realloc64(c->sel, (sqlite3_uint64)n * sizeof *p);
		if (!p) {
			c->selok = 0;
			return 1;
		}
		c->sel = p;
		c->selcap = n;
	}
	c->nsel = select_rows(c, s, v, i0, n, c->sel);
	c->psel = 0;
	c->selk = c->k;
	c->selfrom = i0;
	c->selok = 1;
	return 0;
}

/* Move to the first wanted row at or after (k, i), or eof. SQLITE_OK; else
 * the code of a chunk the filter could not read (SQLITE_CORRUPT: damaged,
 * store_why says how): the scan must fail, not hand out its rows unfiltered. */
int cur_settle(struct cmd_cur *c, struct store *s)
{
	for (;;) {
		while (c->k < s->d.nchunks && c->i >= s->d.n[c->k]) {
			c->k++;
			c->i = 0;
		}
		c->eof = c->k >= s->d.nchunks || s->d.first[c->k] + c->i > c->hi;
		if (c->eof || !c->skip)
			return SQLITE_OK;
		if (s->d.ext && cur_misses(c, &s->d.ext[c->k])) {
			c->k++;
			c->i = 0;
			continue;
		}
		if (!c->selok || c->selk != c->k || c->i < c->selfrom) {
			int r = cur_select(c, s, c->i);
			if (r < 0) /* an unreadable chunk: a statement that reads no column would count its rows */
				return s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
			if (r > 0) { /* no room for a selection: row by row */
				const struct chunk_view *v = cur_view(c, s);
				uint32_t n = s->d.n[c->k];
				while (c->i < n && s->d.first[c->k] + c->i <= c->hi && !cur_wanted(c, s, v, c->i))
					c->i++;
				if (c->i < n) {
					c->eof = s->d.first[c->k] + c->i > c->hi;
					return SQLITE_OK;
				}
				continue;
			}
		}
		while (c->psel < c->nsel && c->sel[c->psel] < c->i)
			c->psel++;
		if (c->psel < c->nsel) {
			c->i = c->sel[c->psel]; /* an id <= hi: not eof */
			return SQLITE_OK;
		}
		c->i = s->d.n[c->k]; /* no more wanted rows in this chunk */
	}
}

/* Mark name x (as SQL's = on a TEXT column compares it) wanted. */
static void want_name(struct cmd_cur *c, const struct store *s, sqlite3_value *x)
{
	int t = sqlite3_value_type(x);
	if (t == SQLITE_NULL || t == SQLITE_BLOB)
		return; /* equal to no name */
	const char *want = (const char *)sqlite3_value_text(x);
	int len = sqlite3_value_bytes(x);
	for (size_t k = 0; want && k < s->d.nnames && k < c->nnames; k++)
		if (s->d.names[k] && (int)strlen(s->d.names[k]) == len && !memcmp(s->d.names[k], want, (size_t)len))
			c->names[k] = 1;
}

/* win_pool's value: NULL no bound, else text of upids separated by commas
 * ('' none; digits only, an optional '-', no blanks). */
static int want_pool(struct cmd_cur *c, sqlite3_value *x)
{
	if (sqlite3_value_type(x) == SQLITE_NULL)
		return SQLITE_OK;
	if (sqlite3_value_type(x) != SQLITE_TEXT)
		return SQLITE_MISMATCH;
	const char *p = (const char *)sqlite3_value_text(x);
	c->pool = 1;
	while (p && *p) {
		const char *d = p + (*p == '-');
		if (*d < '0' || *d > '9')
			return SQLITE_MISMATCH;
		char *end;
		long long u = strtoll(p, &end, 10);
		if (*end && (*end != ',' || !end[1]))
			return SQLITE_MISMATCH; /* a blank, a dot, a trailing comma */
		int64_t *np = sqlite3_realloc64(c->pool_upid, (c->npool + 1) * sizeof *np);
		if (!np)
			return SQLITE_NOMEM;
		c->pool_upid = np;
		np[c->npool++] = u;
		p = *end ? end + 1 : end;
	}
	return SQLITE_OK;
}

/* real_dur = x: the value 0 or 1 it names (2: none; x as SQL compares it
 * with an INTEGER column). */
static int want_real(sqlite3_value *x)
{
	int t = sqlite3_value_numeric_type(x);
	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return 2;
	double d = sqlite3_value_double(x);
	return d == 0 ? 0 : d == 1 ? 1 : 2;
}

/* role = x: the flag of the role x names (as SQL compares x with a TEXT column,
 * BINARY: only the texts 'header' and 'payload' match a role; 0: no row). */
static uint8_t want_role(sqlite3_value *x)
{
	int t = sqlite3_value_type(x);
	if (t == SQLITE_NULL || t == SQLITE_BLOB)
		return 0; /* equal to no role */
	const char *r = (const char *)sqlite3_value_text(x);
	int len = sqlite3_value_bytes(x);
	if (r && len == 6 && !memcmp(r, "header", 6))
		return CHF_HEADER;
	if (r && len == 7 && !memcmp(r, "payload", 7))
		return CHF_PAYLOAD;
	return 0;
}

/* Keep only tagged rows with lo <= trace_id <= hi, within any bounds set before. */
static void tid_clip(struct cmd_cur *c, int64_t lo, int64_t hi)
{
	if (!c->tid_range)
		c->tid_range = 1, c->tid_lo = INT64_MIN, c->tid_hi = INT64_MAX;
	if (lo > c->tid_lo)
		c->tid_lo = lo;
	if (hi < c->tid_hi)
		c->tid_hi = hi;
	c->skip = 1;
}

/* trace_id > v (p '>'), >= v (']'), < v ('<') or <= v ('['): > INT64_MAX and
 * < INT64_MIN keep no row. */
static void want_tid(struct cmd_cur *c, char p, int64_t v)
{
	if (p == '>')
		tid_clip(c, v == INT64_MAX ? INT64_MAX : v + 1, v == INT64_MAX ? INT64_MIN : INT64_MAX);
	else if (p == ']')
		tid_clip(c, v, INT64_MAX);
	else if (p == '<')
		tid_clip(c, v == INT64_MIN ? INT64_MAX : INT64_MIN, v == INT64_MIN ? INT64_MIN : v - 1);
	else
		tid_clip(c, INT64_MIN, v);
}

/* upid = x, as SQL compares x with an INTEGER column: a number, or text that reads as one. */
static void want_upid(struct cmd_cur *c, sqlite3_value *x)
{
	int t = sqlite3_value_numeric_type(x);
	c->upid = -1; /* no row */
	if (t == SQLITE_INTEGER)
		c->upid = 1, c->upid_want = sqlite3_value_int64(x);
	else if (t == SQLITE_FLOAT && real_int64(sqlite3_value_double(x), &c->upid_want))
		c->upid = 1;
	c->skip = 1;
}

/* batch = x (p 'b': the plan hands out batches; 'B': rows): 0 rows, 1 batches,
 * 2 batches in (upid, ts, id) order; NULL no row; else SQLITE_TOOBIG (said by vt_filter). */
static int want_batch(struct cmd_cur *c, char p, sqlite3_value *x)
{
	int t = sqlite3_value_type(x);
	int64_t b = t == SQLITE_INTEGER ? sqlite3_value_int64(x) : -1;
	if (t == SQLITE_NULL) { /* = NULL, IS NULL: the column is never NULL */
		c->hi = INT64_MIN; /* no row */
		return SQLITE_OK;
	}
	if (b < 0 || b > 2)
		return SQLITE_TOOBIG;
	c->batch_req = (int)b;
	c->sorted = b == 2; /* (upid, ts, id) order wanted, batches or rows */
	if (b >= 1 && p == 'b') {
		c->batch = (int)b;
		c->skip = 1; /* a batch is a selection */
	}
	return SQLITE_OK;
}

/* name = x (p 'n') or name IN (list x) ('N'): those names wanted. */
static int want_names(struct cmd_cur *c, const struct store *s, char p, sqlite3_value *x)
{
	if (!c->names) {
		c->nnames = s->d.nnames;
		c->names = sqlite3_malloc64(c->nnames ? c->nnames : 1);
		if (!c->names)
			return SQLITE_NOMEM;
		memset(c->names, 0, c->nnames ? c->nnames : 1);
	}
	c->skip = 1;
	if (p == 'n') {
		want_name(c, s, x);
		return SQLITE_OK;
	}
	sqlite3_value *e;
	int rc;
	for (rc = sqlite3_vtab_in_first(x, &e); rc == SQLITE_OK && e; rc = sqlite3_vtab_in_next(x, &e))
		want_name(c, s, e);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Apply plan letter p with argument x (NULL for T, U). */
int cur_constrain(struct cmd_cur *c, struct store *s, char p, sqlite3_value *x, int64_t *lo)
{
	switch (p) {
	case 'e': *lo = c->hi = sqlite3_value_int64(x); break;
	case 'l': *lo = sqlite3_value_int64(x); break;
	case 'h': c->hi = sqlite3_value_int64(x); break;
	case '0': case '1': case '2': case '3':
		if (sqlite3_value_type(x) == SQLITE_NULL)
			break;
		if (sqlite3_value_type(x) != SQLITE_INTEGER)
			return SQLITE_RANGE; /* said by vt_filter */
		c->wset[p - '0'] = 1;
		c->w[p - '0'] = sqlite3_value_int64(x);
		c->skip = 1;
		if (p == '2' || p == '3') /* win_tlo, win_thi: the trace_id window */
			tid_clip(c, p == '2' ? c->w[2] : INT64_MIN, p == '3' ? c->w[3] : INT64_MAX);
		break;
	case 'p': {
		int rc = want_pool(c, x);
		if (rc != SQLITE_OK)
			return rc;
		c->skip |= c->pool;
		break;
	}
	case 'T': c->tagged = 1; c->skip = 1; break;
	case '>': case ']': case '<': case '[': want_tid(c, p, sqlite3_value_int64(x)); break;
	case 'U': c->tagged = -1; c->skip = 1; break;
	case 'r': c->real = want_real(x); c->skip = 1; break;
	case 'o': c->role = 1; c->role_flag = want_role(x); c->skip = 1; break;
	case 'u': want_upid(c, x); break;
	case 'b': case 'B': return want_batch(c, p, x);
	case 'n': case 'N': return want_names(c, s, p, x);
	}
	return SQLITE_OK;
}

