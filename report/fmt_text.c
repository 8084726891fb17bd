/* fmt_text.c — each analysis's text formatter: one label's rows of its sql/
 * file as lines of the text report, in the reference's units (us, ms, GB). */
#include "report.h"
#include <stdio.h>
#include <string.h>

static const char *us(double ns, char *b) { sprintf(b, "%.1fus", ns / 1e3); return b; }
static const char *ms(double ns, char *b) { sprintf(b, "%.2fms", ns / 1e6); return b; }

/* Integer value of column name in row j of s (0 unless an integer). */
static long long iv(const struct sel *s, size_t j, const char *name)
{
	return (long long)col(s, j, name)->i;
}

/* Column name of row j of s, formatted with f (us or ms) into b. */
static const char *t_of(const struct sel *s, size_t j, const char *name, const char *(*f)(double, char *), char *b)
{
	return f(cnum(col(s, j, name)), b);
}

/* Python list repr of strings joined by \x1f: ['EIO', "it's"] */
static void py_list(char *out, size_t n, const char *joined)
{
	size_t o = 0;
	o += snprintf(out + o, n - o, "[");
	const char *p = joined;
	int first = 1;
	while (p && o < n) {
		const char *e = strchr(p, 31);
		size_t l = e ? (size_t)(e - p) : strlen(p);
		int dq = memchr(p, '\'', l) && !memchr(p, '"', l);
		o += snprintf(out + o, n - o, "%s%c%.*s%c", first ? "" : ", ", dq ? '"' : '\'', (int)l, p,
			      dq ? '"' : '\'');
		first = 0;
		p = e ? e + 1 : NULL;
	}
	if (o < n)
		snprintf(out + o, n - o, "]");
}

/* A share (0..1) as a percentage for the text: one decimal, and never
 * rounded up to 100 (only a full 1 reads "100"): 0.9963 is "99.6", 0.99995
 * "99.9", 2/3 "66.7". */
static const char *pct_below(double share, char *b, size_t n)
{
	if (share >= 1)
		snprintf(b, n, "100");
	else if (share * 100 >= 99.95)
		snprintf(b, n, "99.9");
	else
		snprintf(b, n, "%.1f", share * 100);
	return b;
}

/* An integer that may be NULL, as Python prints None. */
static const char *int_or_none(const struct cell *x, char *b, size_t n)
{
	if (x->t == SQLITE_NULL)
		return "None";
	snprintf(b, n, "%lld", (long long)x->i);
	return b;
}

/* A string that may be NULL, as Python prints None. */
static const char *str_or_none(const struct cell *x)
{
	return cstr(x) ? cstr(x) : "None";
}

/* capture: the label's first row of info.sql. */
void text_info(struct label *L, const struct sel *s, const struct rctx *c)
{
	char sch[64], lba[64];
	(void)c;
	if (!s->n)
		return;
	say(L, "  capture : schema=%s host=%s dev=%s lba=%s", int_or_none(col(s, 0, "schema"), sch, sizeof sch),
	    str_or_none(col(s, 0, "hostname")), str_or_none(col(s, 0, "device")),
	    int_or_none(col(s, 0, "lba_bytes"), lba, sizeof lba));
}

/* commands: always, zeros for a label without commands. */
void text_commands(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	long long n = s->n ? iv(s, 0, "n") : 0, tg = s->n ? iv(s, 0, "tagged") : 0,
		  ut = s->n ? iv(s, 0, "untagged") : 0, tb = s->n ? iv(s, 0, "tagged_bytes") : 0,
		  wall = s->n ? iv(s, 0, "wall_ns") : 0;
	double cover = s->n ? cnum(col(s, 0, "real_cover")) : 0;
	char pct[32];
	say(L, "  commands: %lld (%lld tagged / %lld untagged), %.2f GB tagged, wall %.2fs, "
	       "real-duration coverage %s%%", n, tg, ut, tb / 1e9, wall / 1e9, pct_below(cover, pct, sizeof pct));
}

/* latency: one line per op. */
void text_latency(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64], b3[64], b4[64];
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		say(L, "  %-5s latency: p50 %s  p95 %s  p99 %s  max %s  (n=%lld)", cstr(col(s, j, "op")),
		    t_of(s, j, "p50", us, b1), t_of(s, j, "p95", us, b2), t_of(s, j, "p99", us, b3),
		    t_of(s, j, "max", us, b4), iv(s, j, "n"));
}

/* qd1: the detector's heading, then one line per op. */
void text_qd1(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64];
	(void)c;
	say(L, "  --- QD1 detector (per-object submission gaps) ---");
	if (!s->n) /* qd1.sql judges a trace_id by the gaps of its >= 4 tagged commands */
		say(L, "    no trace_id has 4 or more tagged commands: no gaps to judge");
	for (size_t j = 0; j < s->n; j++)
		say(L, "    %-5s: gap p50 %s  p95 %s  -> %s", cstr(col(s, j, "op")), t_of(s, j, "gap_p50", us, b1),
		    t_of(s, j, "gap_p95", us, b2), cstr(col(s, j, "verdict")));
}

/* qd: achieved queue depth. */
void text_qd(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		say(L, "  achieved QD: mean %.1f  max %lld  %%time QD<=1: %.0f%%", cnum(col(s, j, "mean")),
		    iv(s, j, "max"), 100 * cnum(col(s, j, "pct_time_le1")));
}

/* batches: at --batch-gap-us. */
void text_batches(struct label *L, const struct sel *s, const struct rctx *c)
{
	for (size_t j = 0; j < s->n; j++)
		say(L, "  inferred batches (gap>%lldus): %lld batches, size p50 %.0f p95 %.0f max %lld",
		    (long long)(c->o->batch_gap_ns / 1000), iv(s, j, "n"), cnum(col(s, j, "size_p50")),
		    cnum(col(s, j, "size_p95")), iv(s, j, "size_max"));
}

/* objects: the heading, then one line per op. */
void text_objects(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64], b3[64], line[512];
	(void)c;
	say(L, "  --- objects (span = op-start..op-end when schema-2) ---");
	for (size_t j = 0; j < s->n; j++) {
		int w = snprintf(line, sizeof line, "    %-6s: n=%4lld  span p50 %s  p99 %s", cstr(col(s, j, "op")),
				 iv(s, j, "n"), t_of(s, j, "span_p50", ms, b1), t_of(s, j, "span_p99", ms, b2));
		if (col(s, j, "eff_mbs_p50")->t != SQLITE_NULL)
			w += snprintf(line + w, sizeof line - w, "  eff %.0f MB/s", cnum(col(s, j, "eff_mbs_p50")));
		if (col(s, j, "presubmit_p50")->t != SQLITE_NULL)
			snprintf(line + w, sizeof line - w, "  pre-submit p50 %s", t_of(s, j, "presubmit_p50", ms, b3));
		say(L, "%s", line);
	}
}

/* failed: the count and the distinct errors. */
void text_failed(struct label *L, const struct sel *s, const struct rctx *c)
{
	char list[1024];
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		py_list(list, sizeof list, cstr(col(s, j, "errors")));
		say(L, "    FAILED ops: %lld (%s)", iv(s, j, "failed_ops"), list);
	}
}

/* tp_barrier: fmt heuristic. */
void text_tp_barrier(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64];
	(void)c;
	for (size_t j = 0; j < s->n; j++)
		say(L, "  TP barrier (%lld shards): all-rank-ready gap p50 %s  p99 %s  (n=%lld chunks)",
		    iv(s, j, "shards"), t_of(s, j, "gap_p50", ms, b1), t_of(s, j, "gap_p99", ms, b2),
		    iv(s, j, "chunks"));
}

/* findings: the count of each kind of findings.sql's rows (the exported
 * trace's "kvio findings" slices), the kinds it has. */
void text_findings(struct label *L, const struct sel *s, const struct rctx *c)
{
	static const char *const words[] = {"QD~1 load", "QD~1 store", "QD~1? load", "QD~1? store", "QD<=1",
					    "batches", "runs of 1-cmd batches", "slow objects", "failed", "TP barrier"};
	char line[512];
	int w = snprintf(line, sizeof line, "  findings:"), any = 0;
	(void)c;
	for (int q = 0; findings_kinds[q] && q < (int)(sizeof words / sizeof words[0]); q++) {
		long long n = 0;
		for (size_t j = 0; j < s->n; j++) {
			const char *k = cstr(col(s, j, "kind"));
			n += k && !strcmp(k, findings_kinds[q]);
		}
		if (n && w < (int)sizeof line)
			w += snprintf(line + w, sizeof line - w, "%s %lld %s", any++ ? "," : "", n, words[q]);
	}
	say(L, "%s%s", line, any ? " (kvio-export: the 'kvio findings' tracks)" : " none");
}

/* space: the header share is the header commands' own bytes over
 * commands.sql's tagged bytes (the JSON keeps the reference's keys). */
void text_space(struct label *L, const struct sel *s, const struct rctx *c)
{
	const struct rows *t = report_rows(c, "commands.sql");
	double tb = 0;
	for (size_t q = 0; t && q < t->nrow; q++) {
		const char *name = cstr(cell(t, q, "label"));
		if (name && !strcmp(name, L->name))
			tb = cnum(cell(t, q, "tagged_bytes"));
	}
	for (size_t j = 0; j < s->n; j++) {
		double hb = cnum(col(s, j, "header_cmd_bytes"));
		long long hc = iv(s, j, "header_cmds");
		say(L, "  space: %lld/%lld write-LBA reuses, sequentiality %.0f%%, header cmds %lld (%.1f%% of bytes)",
		    iv(s, j, "lba_reuse"), iv(s, j, "writes"), 100 * cnum(col(s, j, "seq_pct")), hc,
		    100 * hb / (tb > 1 ? tb : 1));
	}
}

/* throughput (commands.sql): only where it is defined. */
void text_throughput(struct label *L, const struct sel *s, const struct rctx *c)
{
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		const struct cell *t = col(s, j, "throughput_gbs");
		if (t && t->t != SQLITE_NULL)
			say(L, "  throughput: %.2f GB/s tagged aggregate", cnum(t));
	}
}

/* serving: a heading and one line per op, when the label has spans. */
void text_serving(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64];
	(void)c;
	if (s->n)
		say(L, "  --- serving spans ---");
	for (size_t j = 0; j < s->n; j++) {
		const char *op = cstr(col(s, j, "op"));
		say(L, "    %-12s: n=%3lld  p50 %s  p99 %s", op ? op : "", iv(s, j, "n"), t_of(s, j, "p50", ms, b1),
		    t_of(s, j, "p99", ms, b2));
	}
}

/* tp_ranks: decoded keys; the world size may be unknown. */
void text_tp_ranks(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64], world[32];
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		snprintf(world, sizeof world, "?");
		if (col(s, j, "world_size")->t == SQLITE_INTEGER)
			snprintf(world, sizeof world, "%lld", iv(s, j, "world_size"));
		say(L, "  TP ranks (decoded keys, %lld of world %s): all-rank-ready gap p50 %s  p99 %s  (n=%lld chunks)",
		    iv(s, j, "ranks"), world, t_of(s, j, "gap_p50", ms, b1), t_of(s, j, "gap_p99", ms, b2),
		    iv(s, j, "chunks"));
	}
}

/* capture: the ingest's counters that the database has. */
/* The window the metrics describe, when there is one: so nobody mistakes it
 * for the whole run. */
static void text_window(struct label *L, const struct sel *s, size_t j)
{
	const struct cell *t0 = col(s, j, "time_start_ns"), *d0 = col(s, j, "tid_lo");
	char t[96] = "", d[96] = "";
	if (t0 && t0->t != SQLITE_NULL)
		snprintf(t, sizeof t, "time [%.9g, %.9g] s", cnum(t0) / 1e9, cnum(col(s, j, "time_end_ns")) / 1e9);
	if (d0 && d0->t != SQLITE_NULL)
		snprintf(d, sizeof d, "%strace_id [%lld, %lld]", *t ? ", " : "", iv(s, j, "tid_lo"), iv(s, j, "tid_hi"));
	if (*t || *d)
		say(L, "  window  : %s%s (the metrics describe this window only)", t, d);
	const struct cell *u = col(s, j, "off_unique");
	if (!u || u->t == SQLITE_NULL)
		return;
	say(L, "  offset join: unique %lld, cross_object %lld, gap_spill %lld, unmatched %lld", iv(s, j, "off_unique"),
	    iv(s, j, "off_cross_object"), iv(s, j, "off_gap_spill"), iv(s, j, "off_unmatched"));
	long long ag = iv(s, j, "off_parity_agree"), gt = iv(s, j, "off_parity_total");
	if (gt) /* the reference's line */
		say(L, "  offset-join parity vs user_data cookies: %lld/%lld (%.2f%%) agree%s | offset-attributed "
		       "cookieless cmds: %lld", ag, gt, 100.0 * (double)ag / (double)gt, ag == gt ? "" : "  <-- INVESTIGATE",
		    iv(s, j, "off_unique") - gt);
}

/* An interim --follow commit: which one, and what the follower held that
 * the database does not show yet (capture.sql's follow_* columns). */
static void text_follow(struct label *L, const struct sel *s, size_t j)
{
	const struct cell *fc = col(s, j, "follow_commit"), *ff = col(s, j, "follow_final"),
			  *wc = col(s, j, "follow_waiting_cmds"), *g = col(s, j, "follow_device_grew_ms");
	char a[32], q[64] = "";
	if (!fc || fc->t != SQLITE_INTEGER || !ff || ff->t != SQLITE_INTEGER || ff->i != 0)
		return;
	const struct cell *p = col(s, j, "follow_pid");
	if (p && p->t == SQLITE_INTEGER && pid_running(p->i) == 0)
		say(L, "  live    : kvio-ingest --follow's commit %lld, not its last, and its follower (pid %lld) is not "
		       "running on this host: the database stays as of this commit (kvio-ingest of the files gives "
		       "the whole capture)", (long long)fc->i, (long long)p->i);
	else
		say(L, "  live    : kvio-ingest --follow's commit %lld, not its last: the capture so far (a little "
		       "behind the files)", (long long)fc->i);
	if (!wc || wc->t != SQLITE_INTEGER)
		return;
	if (g && g->t == SQLITE_INTEGER)
		snprintf(q, sizeof q, "; the device file last grew %.1fs ago", wall_since_ms(g->i));
	long long un = iv(s, j, "follow_unpaired_cmds");
	if (!un) {
		say(L, "  waiting : %lld command(s) read, not written yet, none of them lacks its completion%s", (long long)wc->i, q);
		return;
	}
	long long wr = iv(s, j, "follow_unpaired_written");
	char d[96] = "";
	if (wr > 0)
		snprintf(d, sizeof d, ", %lld of them drawn with the nominal duration (the device went quiet)", wr);
	say(L, "  waiting : %lld command(s) read, not written yet; %lld without a completion so far (%lld object(s))%s, "
	       "the oldest (trace_id %lld) submitted %s before the latest device record%s",
	    (long long)wc->i, un, iv(s, j, "follow_unpaired_objects"), d, iv(s, j, "follow_unpaired_oldest_tid"),
	    ns_text(a, sizeof a, (double)iv(s, j, "follow_unpaired_age_ns")), q);
}

void text_capture(struct label *L, const struct sel *s, const struct rctx *c)
{
	char line[512];
	(void)c;
	for (size_t j = 0; j < s->n; j++) {
		int w = snprintf(line, sizeof line, "  ingest  :");
		for (int q = 0; capture_keys[q]; q++) {
			const struct cell *x = col(s, j, capture_keys[q]);
			if (x && x->t != SQLITE_NULL)
				w += snprintf(line + w, sizeof line - w, " %s %lld", capture_keys[q], (long long)x->i);
		}
		const char *jk = cstr(col(s, j, "join_kind"));
		if (jk)
			snprintf(line + w, sizeof line - w, " | join %s", jk);
		say(L, "%s", line);
		text_window(L, s, j);
		text_follow(L, s, j);
		const struct cell *p = col(s, j, "completion_probe");
		if (p && p->t == SQLITE_INTEGER && p->i == 0)
			say(L, "  WARNING: the device file has no nvme_cmp line (no completion probe): latency and queue "
			       "depth are unavailable");
	}
}

/* ab: one line per op after every label's report, when the base is reported too. */
void text_ab(struct label *L, const struct sel *s, const struct rctx *c)
{
	char b1[64], b2[64], b3[64];
	for (size_t j = 0; j < s->n; j++) {
		const char *vs = cstr(col(s, j, "vs"));
		if (!find_label(c, vs))
			continue;
		const char *v = cstr(col(s, j, "verdict"));
		char ci[192] = "";
		if (col(s, j, "ci_low")->t != SQLITE_NULL)
			snprintf(ci, sizeof ci, ", 95%% CI [%s, %s] p=%.2g", t_of(s, j, "ci_low", ms, b2), t_of(s, j, "ci_high", ms, b3),
				 cnum(col(s, j, "p_value")));
		say_tail(L, "  %s vs %s [%s]: span delta p50 %s (n=%lld paired; negative = %s faster)%s: %s", L->name, vs,
			 cstr(col(s, j, "op")), t_of(s, j, "delta_p50", ms, b1), iv(s, j, "n"), L->name, ci,
			 v && !strcmp(v, "untested") ? "untested (under 6 pairs)" : v ? v : "?");
	}
}
