/* compare.h — kvio-report --compare (compare.c: the runs and the tests;
 * compare_out.c: the text, the JSON, the gates). */
#ifndef KVIO_COMPARE_H
#define KVIO_COMPARE_H
#include "metric.h"
#include "multi.h"
#include <stddef.h>
#include <stdio.h>

struct report_opts;
struct outfile;

/* One side: its argument (a.db or a.db,b.db,c.db) and its runs in the run list. */
struct side {
	const char *arg;
	int first, n;
};

/* One (label, metric) of a NEW side against BASE. */
struct cmp_entry {
	const char *label;
	const struct metric *m;
	int side;                 /* 1: the first NEW side, 2: NEW2, ... */
	double base, new_, delta, rel;
	double lo, hi, p;         /* NAN without them */
	int has_ci, has_p;
	const char *verdict;      /* faster | slower | no change | untested */
	int within_noise;         /* the interval holds 0 */
	int negligible;           /* significant but under the within-run threshold */
	const char *method;       /* runs | within-run */
	size_t n_base, n_new;     /* runs (runs) or values (within-run) */
};

/* What --compare writes and checks. */
struct cmp_out {
	FILE *json;               /* --json's stream, or NULL: text on stdout */
	const struct gate *gates; /* --fail-on */
	int ngates;
	int (*report)(int argc, char **argv); /* the one-database report each run is (multi.h) */
	struct outfile *html;                 /* --html FILE (open), or NULL */
	const char *chartjs;                  /* with html: Chart.js's text */
};

/* kvio-report --compare: args[0] BASE, args[1..] NEW sides; pass: the options
 * each run's report takes (--label, --time-range, ...). The exit status. */
int cmd_compare(char **args, int nargs, char **pass, int npass, const struct report_opts *o, const struct cmp_out *co);
/* compare_out.c: the comparison as text or JSON (with each side's reports); 0 or 2. */
int compare_print(const struct cmp_out *co, const struct cmp_entry *e, size_t n, const struct dbrun *runs,
		  const struct side *sides, int nsides);
/* compare_html.c: the comparison as one self-contained page into o, committed
 * (it appears whole or not at all). 0, or 2 after a one-line error. */
int compare_html(struct outfile *o, const char *chartjs, const struct cmp_entry *e, size_t n, const struct side *sides,
		 int nsides);
/* compare_out.c: the gates on the comparison (regress:) and on the NEW sides'
 * reports (values); 3 when one fired (each said), else 0. */
int compare_gates(const struct cmp_out *co, const struct cmp_entry *e, size_t n, const struct dbrun *runs,
		  const struct side *sides, int nsides);

/* An entry's cells as the table shows them (text and --html alike): base, new,
 * delta, relative change, interval, p ("-" where there is none). */
struct cmp_cells {
	char base[48], new_[48], delta[48], rel[24], ci[100], p[24];
};
void cmp_cells(const struct cmp_entry *e, struct cmp_cells *c);
/* v in m's unit with its sign (+, - or none for 0). */
void cmp_signed(char *buf, size_t n, const struct metric *m, double v);

#endif
