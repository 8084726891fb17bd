/* compare_out.c — what kvio-report --compare prints: a table per NEW side and
 * label (text), or one JSON document (the entries under "compare", each side's
 * own reports under "base", "new", "new2", ...), and the --fail-on gates on it. */
#include "compare.h"
#include "json.h"
#include "report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The sentence that says what the test of side k is. */
static void method_line(FILE *f, const struct side *b, const struct side *s)
{
	if (b->n == 1 && s->n == 1) {
		fputs("one run each: run-to-run variance not measured; the test is within the run, over its commands or\n"
		      "  objects (as if independent: they are not), and a change under 2% is no change\n", f);
		return;
	}
	fprintf(f, "%d vs %d runs: the test is across runs (each run's value one sample): Mann-Whitney U and a\n"
		   "  bootstrap of the mean over runs; the verdict rests on the interval", b->n, s->n);
	if (b->n < 4 || s->n < 4)
		fputs(" (with 3 runs a side the U test's p cannot go below 0.10)", f);
	fputs("\n", f);
	if (b->n < 3 || s->n < 3)
		fputs("  fewer than 3 runs on a side: its interval is the runs' own spread, not a measure of noise\n", f);
}

void cmp_signed(char *buf, size_t n, const struct metric *m, double v)
{
	char t[40];
	metric_fmt(t, sizeof t, m, fabs(v));
	snprintf(buf, n, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", t);
}

void cmp_cells(const struct cmp_entry *e, struct cmp_cells *c)
{
	char lo[48], hi[48];
	metric_fmt(c->base, sizeof c->base, e->m, e->base);
	metric_fmt(c->new_, sizeof c->new_, e->m, e->new_);
	cmp_signed(c->delta, sizeof c->delta, e->m, e->delta);
	strcpy(c->ci, "-");
	strcpy(c->p, "-");
	strcpy(c->rel, "-");
	if (e->has_ci) {
		cmp_signed(lo, sizeof lo, e->m, e->lo);
		cmp_signed(hi, sizeof hi, e->m, e->hi);
		snprintf(c->ci, sizeof c->ci, "[%s, %s]", lo, hi);
	}
	if (e->has_p)
		snprintf(c->p, sizeof c->p, e->p < 1e-4 ? "%.1e" : "%.4f", e->p);
	if (isfinite(e->rel))
		snprintf(c->rel, sizeof c->rel, "%+.1f%%", 100 * e->rel);
}

/* One entry's line of the table. */
static void entry_line(FILE *f, const struct cmp_entry *e)
{
	struct cmp_cells c;
	cmp_cells(e, &c);
	fprintf(f, "  %-24s %12s %12s %12s %8s  %-28s %8s  %s%s%s\n", e->m->name, c.base, c.new_, c.delta, c.rel, c.ci,
		c.p, e->verdict,
		e->within_noise ? " (within noise)" : "", e->negligible ? " (under 2%)" : "");
}

static void print_text(FILE *f, const struct cmp_entry *e, size_t n, const struct side *sides, int nsides)
{
	for (int k = 1; k < nsides; k++) {
		char nm[16];
		snprintf(nm, sizeof nm, k == 1 ? "new" : "new%d", k);
		fprintf(f, "=== kvio-report --compare: base %s (%d run%s) vs %s %s (%d run%s) ===\n", sides[0].arg,
			sides[0].n, sides[0].n == 1 ? "" : "s", nm, sides[k].arg, sides[k].n, sides[k].n == 1 ? "" : "s");
		method_line(f, &sides[0], &sides[k]);
		const char *label = NULL;
		for (size_t i = 0; i < n; i++) {
			if (e[i].side != k)
				continue;
			if (!label || strcmp(label, e[i].label)) {
				label = e[i].label;
				fprintf(f, "[%s]  %-20s %12s %12s %12s %8s  %-28s %8s  %s\n", label, "metric", "base", "new",
					"delta", "rel", "95% CI of the delta", "p", "verdict");
			}
			entry_line(f, &e[i]);
		}
		if (!label)
			fputs("  no label on both sides\n", f);
	}
}

static struct jnode *num_or_null(double v)
{
	return isfinite(v) ? (v == (double)(int64_t)v && fabs(v) < 9e15 ? jn_int((int64_t)v) : jn_real(v)) : jn_null();
}

/* The entries as the "compare" list. */
static struct jnode *json_entries(const struct cmp_entry *e, size_t n)
{
	struct jnode *a = jn_arr();
	for (size_t i = 0; i < n; i++) {
		struct jnode *o = jn_push(a, jn_obj());
		char side[16];
		snprintf(side, sizeof side, e[i].side == 1 ? "new" : "new%d", e[i].side);
		jn_set(o, "label", jn_str(e[i].label));
		jn_set(o, "metric", jn_str(e[i].m->name));
		jn_set(o, "base", num_or_null(e[i].base));
		jn_set(o, "new", num_or_null(e[i].new_));
		jn_set(o, "delta", num_or_null(e[i].delta));
		jn_set(o, "rel", isfinite(e[i].rel) ? jn_real(e[i].rel) : jn_null());
		jn_set(o, "ci_low", e[i].has_ci ? num_or_null(e[i].lo) : jn_null());
		jn_set(o, "ci_high", e[i].has_ci ? num_or_null(e[i].hi) : jn_null());
		jn_set(o, "p_value", e[i].has_p ? jn_real(e[i].p) : jn_null());
		jn_set(o, "verdict", jn_str(e[i].verdict));
		jn_set(o, "method", jn_str(e[i].method));
		jn_set(o, "n_base", jn_int((int64_t)e[i].n_base));
		jn_set(o, "n_new", jn_int((int64_t)e[i].n_new));
		jn_set(o, "within_noise", jn_int(e[i].within_noise)); /* additive */
		jn_set(o, "side", jn_str(side));                      /* additive: which NEW side */
	}
	return a;
}

/* Each run's report of side s as a list at depth 2 (its text, one level deeper). */
static void side_reports(FILE *f, const struct dbrun *runs, const struct side *s)
{
	fputs("[", f);
	for (int i = 0; i < s->n; i++) {
		const struct dbrun *r = &runs[s->first + i];
		fputs(i ? ",\n  " : "\n  ", f);
		for (const char *p = r->out ? r->out : "{}\n"; *p; p++) {
			if (*p == '\n' && !p[1])
				break;
			fputc(*p, f);
			if (*p == '\n')
				fputs("  ", f);
		}
	}
	fputs(s->n ? "\n ]" : "]", f);
}

static void print_json(FILE *f, const struct cmp_entry *e, size_t n, const struct dbrun *runs, const struct side *sides,
		       int nsides)
{
	struct jnode *a = json_entries(e, n);
	fputs("{\n \"compare\": ", f);
	jn_print(f, a, 1);
	jn_free(a);
	for (int k = 0; k < nsides; k++) {
		if (k == 0)
			fputs(",\n \"base\": ", f);
		else if (k == 1)
			fputs(",\n \"new\": ", f);
		else
			fprintf(f, ",\n \"new%d\": ", k);
		side_reports(f, runs, &sides[k]);
	}
	fputs("\n}\n", f);
}

int compare_print(const struct cmp_out *co, const struct cmp_entry *e, size_t n, const struct dbrun *runs,
		  const struct side *sides, int nsides)
{
	FILE *f = co->json ? co->json : stdout;
	if (co->json)
		print_json(f, e, n, runs, sides, nsides);
	else
		print_text(f, e, n, sides, nsides);
	return ferror(f) ? 2 : 0;
}

int compare_gates(const struct cmp_out *co, const struct cmp_entry *e, size_t n, const struct dbrun *runs,
		  const struct side *sides, int nsides)
{
	int fired = 0;
	for (int g = 0; g < co->ngates; g++) {
		const struct gate *gt = &co->gates[g];
		for (size_t i = 0; gt->kind == GATE_REGRESS && i < n; i++) {
			if (e[i].m != gt->m || strcmp(e[i].verdict, "slower") ||
			    !(fabs(e[i].rel) > gt->limit))
				continue;
			char d[48];
			cmp_signed(d, sizeof d, gt->m, e[i].delta);
			kvio_err("--fail-on '%s' fired: [%s] %s worse by %s (%+.1f%%, significantly; more than %.1f%%)", gt->spec,
				 e[i].label, gt->m->name, d, 100 * e[i].rel, 100 * gt->limit);
			fired = 1;
		}
		for (int k = 1; gt->kind != GATE_REGRESS && k < nsides; k++) /* value and qd1 gates: the NEW sides' runs */
			for (int r = 0; r < sides[k].n; r++) {
				const struct dbrun *x = &runs[sides[k].first + r];
				for (int li = 0; x->doc && li < x->doc->n; li++) {
					const char *label = x->doc->keys[li];
					const struct jnode *l = x->doc->vals[li];
					fired |= gt->kind == GATE_QD1 ? gate_qd1(gt, x->path, label, l) : gate_value(gt, x->path, label, l);
				}
			}
	}
	return fired ? 3 : 0;
}
