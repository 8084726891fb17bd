/* fmt_json.c — each analysis's JSON formatter: one label's rows of its sql/
 * file into the label's JSON object, with the reference kvio_tp_report.py's
 * keys and units (ns), plus kvio's additive keys (docs/report.md). */
#include "report.h"
#include <stdio.h>
#include <string.h>

/* JSON value of a cell, typed as SQLite returned it. */
static struct jnode *cell_json(const struct cell *c)
{
	if (!c)
		return jn_null();
	switch (c->t) {
	case SQLITE_INTEGER: return jn_int(c->i);
	case SQLITE_FLOAT: return jn_real(c->d);
	case SQLITE_TEXT: return jn_str(c->s);
	default: return jn_null();
	}
}

/* A ratio or mean: always a JSON float, as Python's division makes it. */
static struct jnode *cell_real(const struct cell *c)
{
	if (!c || c->t == SQLITE_NULL)
		return jn_null();
	return jn_real(c->t == SQLITE_INTEGER ? (double)c->i : c->d);
}

/* Columns keys[0..n) of row j of s into object O, typed as SQLite returned them. */
static void set_cells(struct jnode *O, const struct sel *s, size_t j, const char *const *keys, int n)
{
	for (int q = 0; q < n; q++)
		jn_set(O, keys[q], cell_json(col(s, j, keys[q])));
}
#define SET_CELLS(O, s, j, ...) \
	do { \
		static const char *const keys_[] = {__VA_ARGS__}; \
		set_cells(O, s, j, keys_, (int)(sizeof keys_ / sizeof keys_[0])); \
	} while (0)

/* info: the capture's metadata, from the label's first row. */
void json_info(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	if (s->n)
		SET_CELLS(jn_set(L->R, "info", jn_obj()), s, 0, "schema", "hostname", "device", "lba_bytes",
			  "header_bytes");
}

/* commands: always present, zeros for a label without commands. */
void json_commands(struct label *L, const struct sel *s, const struct rctx *c)
{
	static const char *const keys[] = {"n", "tagged", "untagged", "tagged_bytes", "wall_ns"};
	(void)c;
	struct jnode *C = jn_set(L->R, "commands", jn_obj());
	for (int q = 0; q < 5; q++) {
		const struct cell *x = s->n ? col(s, 0, keys[q]) : NULL;
		jn_set(C, keys[q], jn_int(x ? x->i : 0));
	}
	jn_set(C, "real_cover", jn_real(s->n ? cnum(col(s, 0, "real_cover")) : 0));
}

/* lat_<op>: latency percentiles, one object per op. */
void json_latency(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		const char *op = cstr(col(s, j, "op"));
		char key[32];
		snprintf(key, sizeof key, "lat_%s", op ? op : "");
		SET_CELLS(jn_set(L->R, key, jn_obj()), s, j, "p50", "p99", "p95", "max", "n");
	}
}

/* qd1: the detector per op; the object is always present. */
void json_qd1(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	struct jnode *Q = jn_set(L->R, "qd1", jn_obj());
	for (size_t j = 0; j < s->n; j++) {
		struct jnode *E = jn_set(Q, cstr(col(s, j, "op")), jn_obj());
		SET_CELLS(E, s, j, "gap_p50", "gap_p95");
		jn_set(E, "verdict", jn_str(cstr(col(s, j, "verdict"))));
		SET_CELLS(E, s, j, "svc", "n_objects");
	}
}

/* qd: achieved queue depth. */
void json_qd(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		struct jnode *Q = jn_set(L->R, "qd", jn_obj());
		jn_set(Q, "mean", cell_real(col(s, j, "mean")));
		jn_set(Q, "max", cell_json(col(s, j, "max")));
		jn_set(Q, "pct_time_le1", cell_real(col(s, j, "pct_time_le1")));
	}
}

/* batches: inferred batches at --batch-gap-us. */
void json_batches(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		SET_CELLS(jn_set(L->R, "batches", jn_obj()), s, j, "n", "size_p50", "size_p95");
}

/* objects: spans per op; the object is always present. */
void json_objects(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	struct jnode *O = jn_set(L->R, "objects", jn_obj());
	for (size_t j = 0; j < s->n; j++) {
		struct jnode *E = jn_set(O, cstr(col(s, j, "op")), jn_obj());
		SET_CELLS(E, s, j, "n", "span_p50", "span_p99");
		jn_set(E, "eff_mbs_p50", cell_real(col(s, j, "eff_mbs_p50")));
		SET_CELLS(E, s, j, "presubmit_p50", "presubmit_own_p50");
	}
}

/* failed_ops: objects that reported an error. */
void json_failed(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		jn_set(L->R, "failed_ops", cell_json(col(s, j, "failed_ops")));
}

/* tp_barrier: all-rank-ready gaps (fmt heuristic). */
void json_tp_barrier(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		SET_CELLS(jn_set(L->R, "tp_barrier", jn_obj()), s, j, "shards", "gap_p50", "gap_p99");
}

/* space: the space axis. */
void json_space(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		struct jnode *S = jn_set(L->R, "space", jn_obj());
		jn_set(S, "lba_reuse", cell_json(col(s, j, "lba_reuse")));
		jn_set(S, "seq_pct", cell_real(col(s, j, "seq_pct")));
		jn_set(S, "header_cmds", cell_json(col(s, j, "header_cmds")));
	}
}

/* throughput_gbs (commands.sql): only where it is defined. */
void json_throughput(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		const struct cell *t = col(s, j, "throughput_gbs");
		if (t && t->t != SQLITE_NULL)
			jn_set(L->R, "throughput_gbs", cell_real(t));
	}
}

/* serving: spans per op; present only when the label has some. */
void json_serving(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	struct jnode *S = s->n ? jn_set(L->R, "serving", jn_obj()) : NULL;
	for (size_t j = 0; j < s->n; j++) {
		const char *op = cstr(col(s, j, "op"));
		SET_CELLS(jn_set(S, op ? op : "", jn_obj()), s, j, "n", "p50", "p99");
	}
}

/* tp_ranks: all-rank-ready gaps from decoded keys. */
void json_tp_ranks(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		SET_CELLS(jn_set(L->R, "tp_ranks", jn_obj()), s, j, "world_size", "ranks", "gap_p50", "gap_p99",
			  "chunks");
}

const char *const findings_kinds[] = {"qd1_load", "qd1_store", "qd1_load_suspicious", "qd1_store_suspicious", "qd_le1",
				      "batch", "batch_singles", "slow_object", "failed", "tp_barrier", NULL};

/* findings: how many rows of each kind findings.sql has for the label (the
 * slices of the exported trace's "kvio findings" tracks); every kind, 0 when none. */
void json_findings(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	struct jnode *F = jn_set(L->R, "findings", jn_obj());
	for (int q = 0; findings_kinds[q]; q++)
		jn_set(F, findings_kinds[q], jn_int(0));
	for (size_t j = 0; j < s->n; j++) {
		const char *k = cstr(col(s, j, "kind"));
		struct jnode *n = k ? jn_get(F, k) : NULL;
		if (k && !n)
			n = jn_set(F, k, jn_int(0)); /* a kind of an edited findings.sql */
		if (n)
			n->i++;
	}
}

/* A two-element array of cells a and b (as seconds when scale is set), or
 * NULL when either is NULL. */
static struct jnode *pair_json(const struct cell *a, const struct cell *b, int seconds)
{
	if (!a || !b || a->t == SQLITE_NULL || b->t == SQLITE_NULL)
		return NULL;
	struct jnode *v = jn_arr();
	jn_push(v, seconds ? jn_real(cnum(a) / 1e9) : cell_json(a));
	jn_push(v, seconds ? jn_real(cnum(b) / 1e9) : cell_json(b));
	return v;
}

/* capture.follow, additive, in a database kvio-ingest --follow wrote: {commit,
 * final} and, from an interim commit, waiting {cmds, pool_records,
 * unpaired_cmds, unpaired_objects, unpaired_written, unpaired_age_ns, unpaired_oldest_trace_id,
 * device_grew_unix_ms, quiet_commit_after_ms, device_quiet_s, follower_pid, follower_running}
 * (capture.sql's follow_* columns; device_quiet_s the report's clock -
 * device_grew, follower_running whether that pid runs on this host). */
static void json_follow(struct jnode *C, const struct sel *s, size_t j)
{
	static const char *const cols[][2] = {
		{"follow_waiting_cmds", "cmds"},
		{"follow_pool_records", "pool_records"},
		{"follow_unpaired_cmds", "unpaired_cmds"},
		{"follow_unpaired_objects", "unpaired_objects"},
		{"follow_unpaired_written", "unpaired_written"},
		{"follow_unpaired_age_ns", "unpaired_age_ns"},
		{"follow_unpaired_oldest_tid", "unpaired_oldest_trace_id"},
		{"follow_device_grew_ms", "device_grew_unix_ms"},
		{"follow_quiet_ms", "quiet_commit_after_ms"},
	};
	const struct cell *fc = col(s, j, "follow_commit"), *wc = col(s, j, "follow_waiting_cmds");
	if (!fc || fc->t == SQLITE_NULL)
		return;
	struct jnode *F = jn_set(C, "follow", jn_obj());
	jn_set(F, "commit", cell_json(fc));
	jn_set(F, "final", cell_json(col(s, j, "follow_final")));
	if (!wc || wc->t == SQLITE_NULL)
		return;
	struct jnode *W = jn_set(F, "waiting", jn_obj());
	for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
		const struct cell *x = col(s, j, cols[k][0]);
		if (x && x->t != SQLITE_NULL)
			jn_set(W, cols[k][1], cell_json(x));
	}
	const struct cell *g = col(s, j, "follow_device_grew_ms"), *p = col(s, j, "follow_pid");
	if (g && g->t == SQLITE_INTEGER)
		jn_set(W, "device_quiet_s", jn_real(wall_since_ms(g->i)));
	if (p && p->t == SQLITE_INTEGER && pid_running(p->i) >= 0) {
		jn_set(W, "follower_pid", jn_int(p->i));
		jn_set(W, "follower_running", jn_bool(pid_running(p->i)));
	}
}

/* The additive keys: join, time_range [start_s, end_s], trace_id [lo, hi]. */
static void json_window(struct jnode *C, const struct sel *s, size_t j)
{
	const char *jk = cstr(col(s, j, "join_kind"));
	struct jnode *v;
	if (jk)
		jn_set(C, "join", jn_str(jk));
	if ((v = pair_json(col(s, j, "time_start_ns"), col(s, j, "time_end_ns"), 1)))
		jn_set(C, "time_range", v);
	if ((v = pair_json(col(s, j, "tid_lo"), col(s, j, "tid_hi"), 0)))
		jn_set(C, "trace_id", v);
	static const char *const off[] = {"unique", "cross_object", "gap_spill", "unmatched", "cookie_cmds",
					  "parity_agree", "parity_total", NULL};
	const struct cell *u = col(s, j, "off_unique");
	if (!u || u->t == SQLITE_NULL)
		return;
	struct jnode *O = jn_set(C, "offset_join", jn_obj());
	for (int q = 0; off[q]; q++) {
		char name[32];
		snprintf(name, sizeof name, "off_%s", off[q]);
		jn_set(O, off[q], jn_int((int64_t)cnum(col(s, j, name))));
	}
}

void json_capture(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		struct jnode *C = jn_set(L->R, "capture", jn_obj());
		for (int q = 0; capture_keys[q]; q++) {
			const struct cell *x = col(s, j, capture_keys[q]);
			if (x && x->t != SQLITE_NULL)
				jn_set(C, capture_keys[q], cell_json(x));
		}
		json_window(C, s, j);
		json_follow(C, s, j);
	}
}

/* ab: paired diffs against the base label, when the base is reported too. */
void json_ab(struct label *L, const struct sel *s, const struct rctx *c)
{
	for (size_t j = 0; j < s->n; j++) {
		const char *vs = cstr(col(s, j, "vs"));
		if (!find_label(c, vs))
			continue; /* a --label selection without the base: nothing to pair */
		struct jnode *A = jn_get(L->R, "ab");
		if (!A) {
			A = jn_set(L->R, "ab", jn_obj());
			jn_set(A, "vs", jn_str(vs));
		}
		SET_CELLS(jn_set(A, cstr(col(s, j, "op")), jn_obj()), s, j, "n", "delta_p50", "delta_p95", "ci_low",
			  "ci_high", "p_value", "rel", "verdict");
	}
}
