/* metric.c — the metrics campaigns decide with (metric.h): their names, as
 * --fail-on and --compare name them, where each is in a label's JSON report,
 * which way is worse, its unit, and the value set behind it (sql/samples.sql)
 * for a within-run test; and the --fail-on gates. */
#include "metric.h"
#include "report.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* worse: +1 bigger is worse (latency, span, gap, share of time at QD<=1), -1
 * bigger is better (throughput, queue depth, batch size). compare: in --compare's
 * table (presubmit_p50 is the reference's rule, negative for a repeated
 * trace_id: presubmit_own_p50 is compared). */
const struct metric metrics[] = {
	{"read.p50", "lat_read.p50", 1, U_NS, "read", 1},
	{"read.p95", "lat_read.p95", 1, U_NS, "read", 1},
	{"read.p99", "lat_read.p99", 1, U_NS, "read", 1},
	{"write.p50", "lat_write.p50", 1, U_NS, "write", 1},
	{"write.p95", "lat_write.p95", 1, U_NS, "write", 1},
	{"write.p99", "lat_write.p99", 1, U_NS, "write", 1},
	{"load.span_p50", "objects.load.span_p50", 1, U_NS, "load.span", 1},
	{"load.span_p99", "objects.load.span_p99", 1, U_NS, "load.span", 1},
	{"store.span_p50", "objects.store.span_p50", 1, U_NS, "store.span", 1},
	{"store.span_p99", "objects.store.span_p99", 1, U_NS, "store.span", 1},
	{"delete.span_p50", "objects.delete.span_p50", 1, U_NS, "delete.span", 1},
	{"delete.span_p99", "objects.delete.span_p99", 1, U_NS, "delete.span", 1},
	{"load.gap_p50", "qd1.load.gap_p50", 1, U_NS, "load.gap", 1},
	{"store.gap_p50", "qd1.store.gap_p50", 1, U_NS, "store.gap", 1},
	{"load.presubmit_own_p50", "objects.load.presubmit_own_p50", 1, U_NS, "load.own", 1},
	{"store.presubmit_own_p50", "objects.store.presubmit_own_p50", 1, U_NS, "store.own", 1},
	{"load.presubmit_p50", "objects.load.presubmit_p50", 1, U_NS, NULL, 0},
	{"store.presubmit_p50", "objects.store.presubmit_p50", 1, U_NS, NULL, 0},
	{"qd.mean", "qd.mean", -1, U_NUM, NULL, 1},
	{"qd.pct_time_le1", "qd.pct_time_le1", 1, U_FRAC, NULL, 1},
	{"throughput_gbs", "throughput_gbs", -1, U_NUM, NULL, 1},
	{"batches.size_p50", "batches.size_p50", -1, U_NUM, "batch.size", 1},
	{"failed_ops", "failed_ops", 1, U_NUM, NULL, 0},
	{NULL, NULL, 0, 0, NULL, 0},
};

const struct metric *metric_named(const char *name, size_t len)
{
	for (const struct metric *m = metrics; m->name; m++)
		if (strlen(m->name) == len && !strncmp(m->name, name, len))
			return m;
	return NULL;
}

int metric_value(const struct jnode *label, const struct metric *m, double *v)
{
	char path[128];
	snprintf(path, sizeof path, "%s", m->path);
	const struct jnode *o = label;
	for (char *s = path, *dot; o && s; s = dot ? dot + 1 : NULL) {
		if ((dot = strchr(s, '.')))
			*dot = 0;
		o = jn_get(o, s);
	}
	return jn_num(o, v);
}

void metric_fmt(char *buf, size_t n, const struct metric *m, double v)
{
	if (m->unit == U_NS && fabs(v) >= 1e6)
		snprintf(buf, n, "%.3f ms", v / 1e6);
	else if (m->unit == U_NS && fabs(v) >= 1e3)
		snprintf(buf, n, "%.1f us", v / 1e3);
	else if (m->unit == U_NS)
		snprintf(buf, n, "%.0f ns", v);
	else if (m->unit == U_FRAC)
		snprintf(buf, n, "%.2f%%", 100 * v);
	else
		snprintf(buf, n, "%.6g", v);
}

/* The metric names, for a usage line. */
static void names(char *buf, size_t n)
{
	size_t w = 0;
	for (const struct metric *m = metrics; m->name && w < n; m++)
		w += (size_t)snprintf(buf + w, n - w, "%s%s", w ? ", " : "", m->name);
}

/* The number of "VALUE[unit]" for metric m into *v (its unit's base); 0, or -1. */
static int threshold(const char *s, const struct metric *m, int rel, double *v)
{
	char *end;
	double x = strtod(s, &end);
	if (end == s || !isfinite(x))
		return -1;
	static const struct { const char *u; double f; int unit; } units[] = {
		{"ns", 1, U_NS}, {"us", 1e3, U_NS}, {"ms", 1e6, U_NS}, {"s", 1e9, U_NS}, {"%", 0.01, -1},
	};
	if (!*end) {
		*v = rel ? -1 : x; /* regress: needs a % */
		return rel ? -1 : 0;
	}
	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
		if (!strcmp(end, units[k].u) && (units[k].unit == -1 ? rel || m->unit == U_FRAC : !rel && m->unit == U_NS)) {
			*v = x * units[k].f;
			return 0;
		}
	return -1;
}

int gate_parse(const char *spec, struct gate *g)
{
	memset(g, 0, sizeof *g);
	g->spec = spec;
	if (!strcmp(spec, "qd1")) {
		g->kind = GATE_QD1;
		return 0;
	}
	const char *s = spec;
	if (!strncmp(s, "regress:", 8)) {
		g->kind = GATE_REGRESS;
		s += 8;
	} else
		g->kind = GATE_VALUE;
	size_t l = strcspn(s, "<>");
	char list[1024];
	if (!(g->m = metric_named(s, l))) {
		names(list, sizeof list);
		kvio_err("--fail-on '%s': no metric '%.*s' (the metrics: %s; or qd1)", spec, (int)l, s, list);
		return -1;
	}
	g->op = s[l];
	const char *t = s + l + (s[l] ? 1 : 0);
	if (!s[l] || (g->kind == GATE_REGRESS && g->op != '>') ||
	    threshold(t, g->m, g->kind == GATE_REGRESS, &g->limit) != 0) {
		kvio_err("--fail-on '%s': expected METRIC>VALUE or METRIC<VALUE (a time in ns, us, ms or s; a share"
			 " in %%), or regress:METRIC>N%% (with --compare)", spec);
		return -1;
	}
	return 0;
}

int gate_value(const struct gate *g, const char *db, const char *label, const struct jnode *lab)
{
	double v;
	if (g->kind != GATE_VALUE || !metric_value(lab, g->m, &v))
		return 0; /* a label without the metric (no reads, say) fires nothing */
	if (!(g->op == '>' ? v > g->limit : v < g->limit))
		return 0;
	char a[48], b[48];
	metric_fmt(a, sizeof a, g->m, v);
	metric_fmt(b, sizeof b, g->m, g->limit);
	kvio_err("--fail-on '%s' fired: %s%s[%s] %s = %s %c %s", g->spec, db ? db : "", db ? " " : "", label,
		 g->m->name, a, g->op, b);
	return 1;
}

int gate_qd1(const struct gate *g, const char *db, const char *label, const struct jnode *lab)
{
	const struct jnode *q = jn_get(lab, "qd1");
	char why[64] = "";
	static const char *const ops[] = {"load", "store"};
	for (int i = 0; g->kind == GATE_QD1 && i < 2; i++) {
		const struct jnode *v = jn_get(jn_get(q, ops[i]), "verdict");
		if (v && v->t == J_STR && !strncmp(v->s, "QD~1", 4))
			snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s", *why ? ", " : "", ops[i]);
	}
	if (!*why)
		return 0;
	kvio_err("--fail-on qd1: %s%s[%s] %s looks serialized (QD~1)", db ? db : "", db ? " " : "", label, why);
	return 1;
}
