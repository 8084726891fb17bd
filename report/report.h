/* report.h — kvio-report's parts. run.c runs the sql/ files on a pool of
 * connections and keeps their rows; report.c holds the table of analyses
 * (each: its sql/ file, its text formatter, its JSON formatter) and the
 * command; fmt_text.c and fmt_json.c hold the formatters, one short function
 * per analysis beside its siblings. */
#ifndef KVIO_REPORT_H
#define KVIO_REPORT_H
#include "json.h"
#include "../lib/progress.h"
#include "../lib/util.h"
#include "../lib/window.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>

/* ---- query results (run.c) ------------------------------------------------ */

struct cell {
	int t; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_NULL */
	int64_t i;
	double d;
	char *s;
};

struct rows {
	int ncol;
	char **col;
	struct cell *v; /* nrow * ncol */
	size_t nrow;
};

void rows_free(struct rows *r);
/* The cell of column name in row, or NULL when the file has no such column. */
const struct cell *cell(const struct rows *r, size_t row, const char *name);
/* A cell as a number (0 for NULL, text or no cell) and as text (NULL unless text). */
double cnum(const struct cell *c);
const char *cstr(const struct cell *c);

struct report_opts {
	int64_t batch_gap_ns;
	int progress; /* stderr is a terminal: the progress line of the analyses */
	int jobs;     /* connections; 0: one per core, up to MAX_CONN */
	struct kvio_window win; /* --time-range / --trace-id: bound as :win_lo, :win_hi, :win_tlo, :win_thi */
	const char *base_label; /* --base (bound to :base_label), NULL: the first label */
};

/* Run every statement of sql/<name>; the rows of the last one that returns
 * rows land in out. Returns 0, or -1 after a one-line error. */
int run_sql(sqlite3 *db, const char *name, const struct report_opts *o, struct rows *out);
/* Set up a connection for the analyses and run prelude.sql on it. 0 or -1. */
int prepare_conn(sqlite3 *db, const struct report_opts *o);
/* A new report of the process (a --watch refresh): its first failure is said
 * again, once. */
void run_reset(void);
/* Print rows '|'-separated, as the sqlite3 shell does. */
void rows_print(const struct rows *r);
/* A --compare side's report (multi.c's child): once its analyses have run,
 * sql/samples.sql's value sets on the same connection into fd (the stream:
 * multi.h), then fd closed. -1: none (the default). */
void run_send_samples(int fd);

/* ---- the pool of connections (run.c) -------------------------------------- */

#define MAX_CONN 4

struct result {
	struct rows rows;
	int done;
	struct rows html; /* the rows of the file's html follower (--html) */
};

struct runner;
struct worker {
	struct runner *rn;
	sqlite3 *db;           /* NULL: open rn->dbpath */
	sqlite3 *live;         /* the connection it runs on, under rn->mu: an early exit interrupts it */
	int which;
	int rc;
	pthread_t th;
	int threaded;
	char *snap;            /* snapshot_id of its read transaction (its own connection), or NULL */
};

struct runner {
	const char *dbpath;
	struct report_opts o;
	const char *const *files; /* the queue, in the order the files are started */
	const char *const *html;  /* per file, the sql/html_*.sql run after it, or NULL; NULL: no --html */
	int nfiles;
	struct result *res;       /* one per file */
	pthread_mutex_t mu;
	pthread_mutex_t wide;     /* held while a file of run.c's wide[] runs: never two at once */
	int next;                 /* next index into files[] */
	int stop;                 /* an early exit: running statements are interrupted */
	int nw, started;
	struct worker w[MAX_CONN];
	int ndone;                /* files run (an --html file counts too): the progress line's count */
	struct progress prog;     /* on a terminal (report_opts.progress): analyses done of the queue's */
	char *snap;               /* the caller's connection's snapshot_id (set by the caller), or NULL */
};

/* Start the other connections on the queue files[0..n) (res has n slots):
 * each opens dbpath, runs prelude.sql, then takes files in order. */
void analyses_start(struct runner *rn, const char *dbpath, const struct report_opts *o,
		    const char *const *files, const char *const *html, int n, struct result *res);
/* Run the queue on main too (prelude.sql already run there) and wait for the
 * others; run_main 0 is an early exit: nothing more starts, what runs is
 * interrupted. 0; -1 after an error (reported); SNAPSHOT_MOVED when another
 * connection read a later snapshot than main's (rn->snap) of a database being
 * written: the rows mix two states, the report must run again (on one connection). */
#define SNAPSHOT_MOVED (-2)
int analyses_finish(struct runner *rn, sqlite3 *main, int run_main);

/* ---- the analyses and their formatters ------------------------------------ */

/* One capture label's report as it is built: its JSON object, its lines of
 * the text report, and lines printed after every label's (the A/B diffs). */
struct label {
	char *name;
	struct jnode *R;
	struct vec text; /* char* lines */
	struct vec tail; /* char* lines */
};

/* The rows of one analysis that belong to one label, in the file's order. */
struct sel {
	const struct rows *r;
	size_t *k; /* row indexes into r */
	size_t n;
};

/* What a formatter may read besides its own rows. */
struct rctx {
	const struct report_opts *o;
	struct label *ls;
	int nl;
	const struct runner *rn; /* every file's rows (space's text reads commands.sql's) */
};

/* Formats one label's rows of one analysis into L (its JSON or its text). */
typedef void fmt_fn(struct label *L, const struct sel *s, const struct rctx *c);

struct analysis {
	const char *sql;  /* its sql/ file */
	fmt_fn *text;     /* fmt_text.c */
	fmt_fn *json;     /* fmt_json.c */
	int weight;       /* queue rank: heavier files start first (0: shares a file listed before) */
	const char *html; /* --html: its chart family, sql/html_*.sql, run right after sql on the same
			     connection (it draws the samples sql leaves in its temp tables), or NULL */
};

/* Cell name of the j-th row of s. */
static inline const struct cell *col(const struct sel *s, size_t j, const char *name)
{
	return cell(s->r, s->k[j], name);
}

/* The rows of sql/<file> (NULL if it is not in the queue); the label named name. */
const struct rows *report_rows(const struct rctx *c, const char *file);
struct label *find_label(const struct rctx *c, const char *name);
/* Append one line to L's text report (say) or to the lines after every label's (say_tail). */
void say(struct label *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void say_tail(struct label *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* capture.sql's counter columns, NULL-terminated (a database may lack some). */
extern const char *const capture_keys[];
/* findings.sql's kinds, NULL-terminated: the keys of "findings" (each present, 0 when none). */
extern const char *const findings_kinds[];

fmt_fn text_info, text_commands, text_latency, text_qd1, text_qd, text_batches, text_objects, text_failed,
	text_tp_barrier, text_space, text_throughput, text_serving, text_tp_ranks, text_findings, text_capture, text_ab;
fmt_fn json_info, json_commands, json_latency, json_qd1, json_qd, json_batches, json_objects, json_failed,
	json_tp_barrier, json_space, json_throughput, json_serving, json_tp_ranks, json_findings, json_capture, json_ab;

/* kvio-report's entry (cmd/main.c's table). */
int cmd_report(int argc, char **argv);

#endif
