/* compare.c — kvio-report --compare BASE NEW [NEW2 ...]: each side one database
 * or several repetitions of one configuration (a,b,c), each run reported in a
 * child (multi.c); for each label on both sides and each comparable metric
 * (metric.c): base, new, delta, rel, a 95% interval of the delta, a p-value and
 * a verdict (stats.c). With 3 or more runs a side the samples are the runs'
 * values (a U test and a bootstrap over runs); with one run a side, the values
 * of the run's commands or objects (sql/samples.sql, which each side's report
 * takes after its analyses and sends on a pipe of its own: multi.h), and the
 * output says so.
 * The methods and their assumptions: docs/report.md ("Comparing runs"). */
#include "compare.h"
#include "multi.h"
#include "metric.h"
#include "report.h"
#include "stats.h"
#include "../db/schema.h"
#include "../lib/outfile.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REL_WITHIN 0.02 /* within one run, a change below 2% is no change (docs/report.md) */

/* One run's value sets (samples.sql, as its report sent them: multi.h): per
 * (label, sample), its distinct values ascending and their counts; held so (a
 * 4M-line run's two million command latencies are ~170,000 distinct values)
 * and laid out value by value only for the test at hand (vset_values). */
struct vpair {
	double v;
	int64_t n;
};
struct vset {
	char *label, *sample;
	struct vpair *p;
	size_t np, n; /* distinct values; values */
};
struct samples {
	struct vset *s;
	size_t n;
	const struct vset *laid; /* the set whose values are in v (the last one a test asked for) */
	double *v;               /* room for cap values (kept: fresh pages cost more than the copy) */
	size_t cap;
};

static void samples_free(struct samples *sa)
{
	for (size_t i = 0; i < sa->n; i++) {
		free(sa->s[i].label);
		free(sa->s[i].sample);
		free(sa->s[i].p);
	}
	free(sa->s);
	free(sa->v);
	memset(sa, 0, sizeof *sa);
}

static char *dupn(const char *p, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, p, n);
	d[n] = 0;
	return d;
}

/* The next n bytes of the stream [*at, end) into dst; 0, or -1 when it ends before. */
static int take(const char **at, const char *end, void *dst, size_t n)
{
	if ((size_t)(end - *at) < n)
		return -1;
	memcpy(dst, *at, n);
	*at += n;
	return 0;
}

/* One record of the stream into sa (a new set, or a value of the last one);
 * 1 at its end ('E'), 0 for more, -1 when it is damaged. */
static int samples_record(const char **at, const char *end, struct samples *sa, size_t *cap)
{
	char tag;
	uint32_t ll, sl;
	struct vpair vp;
	if (take(at, end, &tag, 1))
		return -1;
	if (tag == 'E')
		return *at == end ? 1 : -1;
	if (tag == 'G') {
		if (take(at, end, &ll, sizeof ll) || take(at, end, &sl, sizeof sl) || (size_t)(end - *at) < (size_t)ll + sl)
			return -1;
		sa->s = xrealloc(sa->s, ++sa->n * sizeof *sa->s);
		sa->s[sa->n - 1] = (struct vset){dupn(*at, ll), dupn(*at + ll, sl), NULL, 0, 0};
		*at += (size_t)ll + sl;
		*cap = 0;
		return 0;
	}
	if (tag != 'V' || !sa->n || take(at, end, &vp.v, sizeof vp.v) || take(at, end, &vp.n, sizeof vp.n) || vp.n < 1)
		return -1;
	struct vset *x = &sa->s[sa->n - 1];
	if (x->np == *cap)
		x->p = xrealloc(x->p, (*cap = *cap ? *cap * 2 : 64) * sizeof *x->p);
	x->p[x->np++] = vp;
	x->n += (size_t)vp.n;
	return 0;
}

/* Run r's value sets from the stream its report sent. 0, or -1 after a line. */
static int samples_read(const struct dbrun *r, struct samples *sa)
{
	const char *at = r->sout ? r->sout : "", *end = at + r->slen;
	size_t cap = 0;
	int rc = 0;
	memset(sa, 0, sizeof *sa);
	while ((rc = samples_record(&at, end, sa, &cap)) == 0)
		;
	if (rc < 0)
		kvio_err("%s: its report's value sets (for the test within the run) came %s", r->path,
			 r->slen ? "damaged" : "empty");
	return rc < 0 ? -1 : 0;
}

static const struct vset *samples_get(const struct samples *sa, const char *label, const char *sample)
{
	for (size_t i = 0; i < sa->n; i++)
		if (!strcmp(sa->s[i].label, label) && !strcmp(sa->s[i].sample, sample))
			return &sa->s[i];
	return NULL;
}

/* x's values one by one, ascending (x->n of them), in sa's buffer: valid until
 * another set of sa is laid out. */
static const double *vset_values(struct samples *sa, const struct vset *x)
{
	if (sa->laid == x)
		return sa->v;
	if (x->n > sa->cap || !sa->v)
		sa->v = xrealloc(sa->v, (sa->cap = x->n ? x->n : 1) * sizeof *sa->v);
	double *d = sa->v;
	for (size_t i = 0; i < x->np; i++) {
		double v = x->p[i].v;
		for (size_t c = (size_t)x->p[i].n; c; c--)
			*d++ = v;
	}
	sa->laid = x;
	return sa->v;
}

/* The quantile a metric is of, from its name (_p50, .p95, ...); -1: none (a mean, a share). */
static double metric_q(const struct metric *m)
{
	const char *p = strrchr(m->name, 'p');
	if (!p || (p[-1] != '.' && p[-1] != '_') || !strchr("0123456789", p[1]))
		return -1;
	return atof(p + 1) / 100;
}

/* The label report of label in run r (NULL: none). */
static const struct jnode *run_label(const struct dbrun *r, const char *label)
{
	return jn_get(r->doc, label);
}

/* Whether every run of side s has label. */
static int side_has(const struct dbrun *runs, const struct side *s, const char *label)
{
	for (int i = 0; i < s->n; i++)
		if (!run_label(&runs[s->first + i], label))
			return 0;
	return 1;
}

/* The values of metric m in label over side s's runs into v (those that have it). */
static size_t side_values(const struct dbrun *runs, const struct side *s, const char *label, const struct metric *m,
			  double *v)
{
	size_t n = 0;
	for (int i = 0; i < s->n; i++)
		if (metric_value(run_label(&runs[s->first + i], label), m, &v[n]))
			n++;
	return n;
}

/* The test across runs: runs' values, U test new vs base, a bootstrap of the mean. */
static void test_runs(struct cmp_entry *e, const double *b, size_t nb, const double *nw, size_t nn, uint64_t seed)
{
	struct st_ci ci;
	struct st_mwu u;
	e->method = "runs";
	if (st_boot_runs(b, nb, nw, nn, (struct st_stat){ST_MEAN, 0}, (struct st_boot){0, 0, seed}, &ci) == 0) {
		e->base = ci.base, e->new_ = ci.new_, e->delta = ci.delta, e->lo = ci.lo, e->hi = ci.hi;
		e->has_ci = 1;
	}
	if (st_mwu(nw, nn, b, nb, &u) == 0) {
		e->p = u.p;
		e->has_p = 1;
	}
}

/* The test within one run: the value sets of the metric's sample, U test new vs base,
 * a bootstrap of the metric's quantile. */
static void test_within(struct cmp_entry *e, struct samples *sb, const struct vset *b, struct samples *sn,
			const struct vset *nw, double q, uint64_t seed)
{
	struct st_ci ci;
	struct st_mwu u;
	e->method = "within-run";
	struct st_stat st = q >= 0 ? (struct st_stat){ST_QUANTILE, q} : (struct st_stat){ST_MEAN, 0};
	const double *vb = vset_values(sb, b), *vn = vset_values(sn, nw);
	if (st_boot_within(vb, b->n, vn, nw->n, st, (struct st_boot){0, 0, seed}, &ci) == 0) {
		e->lo = ci.lo, e->hi = ci.hi;
		e->has_ci = 1;
	}
	if (st_mwu_sorted(vn, nw->n, vb, b->n, &u) == 0) {
		e->p = u.p;
		e->has_p = 1;
	}
	e->n_base = b->n, e->n_new = nw->n;
}

/* The verdict of e: on the interval (the metric itself), negligible under 2%
 * within a run; the U test's p printed beside it, not confirming it (3 runs a
 * side cannot reach p < 0.05). Without an interval: untested. */
static void judge(struct cmp_entry *e, const struct metric *m)
{
	e->rel = e->base != 0 ? e->delta / fabs(e->base) : (e->delta == 0 ? 0 : NAN);
	if (!e->has_ci) {
		e->verdict = "untested";
		return;
	}
	struct st_judgement j = st_judge((struct st_judge_in){e->base, e->delta, e->lo, e->hi, 0, m->worse > 0, 0,
							     !strcmp(e->method, "within-run") ? MIN_REL_WITHIN : 0});
	e->verdict = st_verdict_name(j.verdict);
	e->within_noise = j.within_noise;
	e->negligible = j.negligible;
}

/* One entry: label, metric m, base side b against new side s. 0 when it has no values. */
static int entry(struct cmp_entry *e, const struct dbrun *runs, const struct side *b, const struct side *s,
		 struct samples *sb, struct samples *sn, const char *label, const struct metric *m)
{
	double *vb = xmalloc(((size_t)b->n + 1) * sizeof *vb), *vn = xmalloc(((size_t)s->n + 1) * sizeof *vn);
	size_t nb = side_values(runs, b, label, m, vb), nn = side_values(runs, s, label, m, vn);
	int ok = nb && nn;
	if (ok) {
		*e = (struct cmp_entry){.label = label, .m = m, .n_base = nb, .n_new = nn, .p = NAN, .lo = NAN, .hi = NAN};
		char key[256];
		snprintf(key, sizeof key, "%s\n%s", label, m->name);
		uint64_t seed = st_seed_for(ST_SEED, key);
		if (b->n == 1 && s->n == 1) { /* one run each: the run's own values */
			e->method = "within-run", e->base = vb[0], e->new_ = vn[0], e->delta = vn[0] - vb[0];
			const struct vset *xb = m->sample ? samples_get(sb, label, m->sample) : NULL;
			const struct vset *xn = m->sample ? samples_get(sn, label, m->sample) : NULL;
			if (xb && xn)
				test_within(e, sb, xb, sn, xn, metric_q(m), seed);
		} else {
			test_runs(e, vb, nb, vn, nn, seed);
		}
		judge(e, m);
	}
	free(vb);
	free(vn);
	return ok;
}

/* Split a side's argument (a.db,b.db) into runs[*n ...]. */
static int side_parse(char *arg, struct side *s, struct dbrun *runs, int *n)
{
	s->arg = xstrdup(arg);
	s->first = *n;
	for (char *p = arg, *c; p; p = c ? c + 1 : NULL) {
		if ((c = strchr(p, ',')))
			*c = 0;
		if (!*p)
			continue;
		if (*n >= MULTI_MAX) {
			kvio_err("--compare: at most %d databases", MULTI_MAX);
			return -1;
		}
		runs[(*n)++].path = p;
	}
	s->n = *n - s->first;
	if (!s->n) {
		kvio_err("--compare: a side names no database ('%s')", s->arg);
		return -1;
	}
	return 0;
}

/* One run on every side (the test within the run) or 3 and more on every side
 * (across runs): 2 runs give no usable test (the smallest p of 2 v 2 is 0.33),
 * one run against several mixes the two kinds. 0, or -1 after a usage line. */
static int sides_counts(const struct side *sides, int nsides)
{
	for (int k = 0; k < nsides; k++) {
		const char *how = "one run on every side (a test within the run) or 3 and more on every side (across runs)";
		if (sides[k].n == 2) {
			kvio_err("--compare: '%s' has 2 runs: %s", sides[k].arg, how);
			return -1;
		}
		if ((sides[k].n == 1) != (sides[0].n == 1)) {
			kvio_err("--compare: '%s' has %d run%s, '%s' %d: %s", sides[0].arg, sides[0].n, sides[0].n == 1 ? "" : "s",
				 sides[k].arg, sides[k].n, how);
			return -1;
		}
	}
	return 0;
}

/* The comparison of every label both sides have, metric by metric. */
static size_t entries(struct cmp_entry **out, const struct dbrun *runs, const struct side *sides, int nsides,
		      struct samples *sa)
{
	size_t n = 0, cap = 0;
	const struct side *b = &sides[0];
	const struct jnode *first = runs[b->first].doc;
	for (int k = 1; k < nsides; k++)
		for (int li = 0; first && li < first->n; li++) {
			const char *label = first->keys[li];
			if (!side_has(runs, b, label) || !side_has(runs, &sides[k], label))
				continue;
			for (const struct metric *m = metrics; m->name; m++) {
				if (!m->compare)
					continue;
				if (n == cap)
					*out = xrealloc(*out, (cap = cap ? cap * 2 : 64) * sizeof **out);
				if (entry(&(*out)[n], runs, b, &sides[k], &sa[0], &sa[k], label, m)) {
					(*out)[n].side = k;
					n++;
				}
			}
		}
	return n;
}

int cmd_compare(char **args, int nargs, char **pass, int npass, const struct report_opts *o, const struct cmp_out *co)
{
	struct dbrun *runs = xcalloc(MULTI_MAX, sizeof *runs);
	struct side sides[16];
	int nruns = 0, nsides = 0, status = 2, html_ended = 0;
	struct samples sa[16];
	memset(sa, 0, sizeof sa);
	struct cmp_entry *es = NULL;
	size_t ne = 0;
	if (nargs < 2 || nargs > 16) {
		kvio_err("--compare needs BASE NEW [NEW2 ...] (at most 16 sides), each a.db or a.db,b.db,c.db");
		goto out;
	}
	for (int i = 0; i < nargs; i++)
		if (side_parse(args[i], &sides[nsides++], runs, &nruns))
			goto out;
	if (sides_counts(sides, nsides))
		goto out;
	/* one run a side: each report also sends its value sets (the test within the run) */
	struct multi_job j = {co->report, pass, npass, o->jobs > 0 ? o->jobs : 2, 1, sides[0].n == 1};
	double t0 = now_s();
	int worst = multi_run(runs, nruns, &j);
	if (worst || multi_parse(runs, nruns)) /* a run that failed said why: the comparison would miss it */
		goto out;
	for (int k = 0; sides[0].n == 1 && k < nsides; k++)
		if (samples_read(&runs[sides[k].first], &sa[k]))
			goto out;
	double t1 = now_s();
	ne = entries(&es, runs, sides, nsides, sa);
	if (getenv("KVIO_TIMING"))
		kvio_err("timing: --compare: the reports %.2fs, the tests %.2fs", t1 - t0, now_s() - t1);
	status = compare_print(co, es, ne, runs, sides, nsides);
	if (!status && co->html) {
		html_ended = 1; /* committed, or removed on a failure */
		status = compare_html(co->html, co->chartjs, es, ne, sides, nsides);
	}
	if (!status)
		status = compare_gates(co, es, ne, runs, sides, nsides);
out:
	if (co->html && !html_ended)
		outfile_abort(co->html); /* nothing to show: no page */
	for (int k = 0; k < nsides; k++) {
		samples_free(&sa[k]);
		free((char *)sides[k].arg);
	}
	free(es);
	multi_free(runs, nruns);
	free(runs);
	return status;
}
