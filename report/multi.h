/* multi.h — kvio-report over several databases (multi.c: the runs, --csv and
 * --json lists), the comparable metrics and gates (metric.c), --compare
 * (compare.c). */
#ifndef KVIO_MULTI_H
#define KVIO_MULTI_H
#include "json.h"
#include <stdio.h>
#include <sys/types.h>

#define MULTI_MAX 256 /* databases on one command line */

/* One database's report, run in a child. */
struct dbrun {
	const char *path;
	pid_t pid;
	int fd;       /* the child's stdout, read until its end */
	char *out;    /* what it wrote (NUL-terminated), len bytes */
	size_t len, ocap;
	int status;   /* its exit status (128 + N: killed by signal N) */
	struct jnode *doc;   /* its JSON report (multi_parse), NULL otherwise */
	int sfd;      /* with multi_job.samples: the child's value sets, read until their end */
	char *sout;   /* what it sent (the stream below), slen bytes */
	size_t slen, scap;
};

/* The value sets a --compare side's report sends (run.c writes them after its
 * analyses, on their connection; compare.c reads them), one record after
 * another, in the machine's byte order (the two ends are one fork):
 *   'G' u32 label length, u32 sample length, the label, the sample: a new set
 *   'V' double v, int64 n: a value and how many times it occurs (ascending in a set)
 *   'E' the end (a stream without it was cut short) */

/* How each database's report runs: report(argc, argv) in a forked child (the
 * caller's one-database kvio-report, given so this file needs nothing above it)
 * on argv = kvio-report PATH [--json -] --jobs 1 pass[0..npass), up to jobs at once. */
struct multi_job {
	int (*report)(int argc, char **argv);
	char **pass;
	int npass, jobs, json;
	int samples; /* each report also sends its value sets (the stream above) on a pipe of its own */
};
/* Run j's report on each r[i].path. The worst exit status (0 when every report ran). */
int multi_run(struct dbrun *r, int n, const struct multi_job *j);
/* The worse of two exit statuses: an error (2, a signal) over a gate that
 * fired (3) over nothing to report (1) over ok (0). */
int multi_worse(int a, int b);
/* kvio-report over dbs[0..n): their text reports one after the other, a JSON
 * list, or the CSV (mode) on out. The worst exit status. */
enum { MULTI_TEXT = 0, MULTI_JSON = 1, MULTI_CSV = 2 };
int multi_report(FILE *out, char **dbs, int n, struct multi_job j, int mode);
/* Read each successful run's output as JSON into r[i].doc. 0, or -1 after a line. */
int multi_parse(struct dbrun *r, int n);
void multi_free(struct dbrun *r, int n);
/* The runs' reports as one JSON list, in order (each exactly as its database's
 * --json, one level deeper, as python3's json.dump(indent=1) lays out a list). */
void multi_json_list(FILE *f, const struct dbrun *r, int n);
/* --csv: one row per (database, label, metric): every scalar of the report
 * by its JSON path, with the database's host, device and ingest options. */
int multi_csv(FILE *f, const struct dbrun *r, int n);

#endif
