/* compare.c — kvio-report --compare BASE NEW [NEW2 ...]: each side one database
 * or several repetitions of one configuration (a,b,c), each run reported in a
 * child (multi.c); for each label on both sides and each comparable metric
 * (metric.c): base, new, delta, rel, a 95% interval of the delta, a p-value and
 * a verdict (stats.c). With 3 or more runs a side the samples are the runs'
 * values (a U test and a bootstrap over runs); with one run a side, the values
 * of the run's commands or objects (sql/samples.sql), and the output says so.
 * The methods and their assumptions: docs/report.md ("Comparing runs"). */
#include "compare.h"
#include "multi.h"
#include "metric.h"
#include "report.h"
#include "stats.h"
#include "../db/schema.h"
#include "../lib/outfile.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REL_WITHIN 0.02 /* within one run, a change below 2% is no change (docs/report.md) */

/* One run's value sets (samples.sql): per (label, sample), values ascending. */
struct vset {
	char *label, *sample;
	double *v;
	size_t n;
};
struct samples {
	struct vset *s;
	size_t n;
};

static void samples_free(struct samples *sa)
{
	for (size_t i = 0; i < sa->n; i++) {
		free(sa->s[i].label);
		free(sa->s[i].sample);
		free(sa->s[i].v);
	}
	free(sa->s);
	memset(sa, 0, sizeof *sa);
}

/* Read path's value sets with sql/samples.sql (rows label, sample, v, n in
 * order). 0, or -1 after a line. */
static int samples_load(const char *path, const struct report_opts *o, struct samples *sa)
{
	memset(sa, 0, sizeof *sa);
	sqlite3 *db = db_open_ro(path);
	struct rows r = {0};
	if (!db || prepare_conn(db, o) || run_sql(db, "samples.sql", o, &r)) {
		sqlite3_close(db);
		return -1;
	}
	size_t cap = 0;
	for (size_t i = 0; i < r.nrow; i++) {
		const char *l = cstr(cell(&r, i, "label")), *s = cstr(cell(&r, i, "sample"));
		int64_t cnt = (int64_t)cnum(cell(&r, i, "n"));
		if (!l || !s || cnt < 1)
			continue;
		struct vset *x = sa->n ? &sa->s[sa->n - 1] : NULL;
		if (!x || strcmp(x->label, l) || strcmp(x->sample, s)) {
			sa->s = xrealloc(sa->s, ++sa->n * sizeof *sa->s);
			x = &sa->s[sa->n - 1];
			*x = (struct vset){xstrdup(l), xstrdup(s), NULL, 0};
			cap = 0;
		}
		if (x->n + (size_t)cnt > cap) {
			cap = (x->n + (size_t)cnt) * 2;
			x->v = xrealloc(x->v, cap * sizeof *x->v);
		}
		for (int64_t k = 0; k < cnt; k++)
			x->v[x->n++] = cnum(cell(&r, i, "v"));
	}
	rows_free(&r);
	sqlite3_close(db);
	return 0;
}

struct sload {
	pthread_t th;
	const char *path;
	const struct report_opts *o;
	struct samples *sa;
	int rc;
};

static void *sload_main(void *arg)
{
	struct sload *l = arg;
	l->rc = samples_load(l->path, l->o, l->sa);
	return NULL;
}

/* Every side's value sets (one run a side), up to o->jobs sides at once, each on
 * a connection of its own (the sets are as big as the runs: at 4M lines a side
 * takes about as long as its report). 0, or -1 after a line. */
static int samples_all(const struct dbrun *runs, const struct side *sides, int nsides, const struct report_opts *o,
		       struct samples *sa)
{
	struct sload l[16];
	int par = o->jobs > 0 ? o->jobs : 2, rc = 0;
	for (int k0 = 0; k0 < nsides; k0 += par) {
		int k1 = k0 + par < nsides ? k0 + par : nsides;
		for (int k = k0; k < k1; k++) {
			l[k] = (struct sload){.path = runs[sides[k].first].path, .o = o, .sa = &sa[k]};
			if (k > k0 && pthread_create(&l[k].th, NULL, sload_main, &l[k]) != 0)
				l[k].th = pthread_self(), l[k].rc = 1; /* no thread: loaded below, in this one */
		}
		sload_main(&l[k0]);
		for (int k = k0 + 1; k < k1; k++) {
			if (l[k].rc == 1 && pthread_equal(l[k].th, pthread_self()))
				sload_main(&l[k]);
			else
				pthread_join(l[k].th, NULL);
		}
		for (int k = k0; k < k1; k++)
			rc |= l[k].rc;
	}
	return rc ? -1 : 0;
}

static const struct vset *samples_get(const struct samples *sa, const char *label, const char *sample)
{
	for (size_t i = 0; i < sa->n; i++)
		if (!strcmp(sa->s[i].label, label) && !strcmp(sa->s[i].sample, sample))
			return &sa->s[i];
	return NULL;
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
static void test_within(struct cmp_entry *e, const struct vset *b, const struct vset *nw, double q, uint64_t seed)
{
	struct st_ci ci;
	struct st_mwu u;
	e->method = "within-run";
	struct st_stat st = q >= 0 ? (struct st_stat){ST_QUANTILE, q} : (struct st_stat){ST_MEAN, 0};
	if (st_boot_within(b->v, b->n, nw->v, nw->n, st, (struct st_boot){0, 0, seed}, &ci) == 0) {
		e->lo = ci.lo, e->hi = ci.hi;
		e->has_ci = 1;
	}
	if (st_mwu_sorted(nw->v, nw->n, b->v, b->n, &u) == 0) {
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
		 const struct samples *sb, const struct samples *sn, const char *label, const struct metric *m)
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
				test_within(e, xb, xn, metric_q(m), seed);
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
	struct multi_job j = {co->report, pass, npass, o->jobs > 0 ? o->jobs : 2, 1};
	int worst = multi_run(runs, nruns, &j);
	if (worst || multi_parse(runs, nruns)) /* a run that failed said why: the comparison would miss it */
		goto out;
	if (sides[0].n == 1 && samples_all(runs, sides, nsides, o, sa))
		goto out;
	ne = entries(&es, runs, sides, nsides, sa);
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
