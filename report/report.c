/* report.c — kvio-report: the metrics pack over a trace.db.
 *
 * Every number comes from a sql/ file (embedded at build time; the same text
 * runs in plain sqlite3 with kvio's extension). The table below names each
 * analysis's file and its formatters; run.c runs the files (binding
 * :batch_gap_ns) on a pool of connections, and the formatters turn each
 * label's rows into a text report and JSON whose keys, units (ns) and
 * meanings are those of the reference kvio_tp_report.py, plus additive keys
 * (see docs/report.md). Adding a metric: one sql/ file, one formatter pair,
 * one line here. */
#include "report.h"
#include "html.h"
#include "compare.h"
#include "metric.h"
#include "multi.h"
#include "sqlfiles.h"
#include "watch.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include "../lib/cli.h"
#include "../lib/outfile.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The analyses, in the order of the report (each label's JSON keys and text
 * lines come out in this order). A file may serve two entries (commands.sql:
 * commands, and throughput after space). weight: the queue starts heavier
 * files first (measured on the bench's 4M-line capture) so the connections finish
 * together; it decides only the scheduling (objects.sql's 14: first beside the
 * shared gathers' connection, done before it reaches qd1.sql: run.c's wide[]). */
static const struct analysis analyses[] = {
	{"info.sql",       text_info,       json_info,       2,  NULL},
	{"commands.sql",   text_commands,   json_commands,   12, "html_commands.sql"},
	{"latency.sql",    text_latency,    json_latency,    11, "html_latency.sql"},
	{"qd1.sql",        text_qd1,        json_qd1,        14, "html_qd1.sql"},
	{"qd.sql",         text_qd,         json_qd,         9,  "html_qd.sql"},
	{"batches.sql",    text_batches,    json_batches,    8,  "html_batches.sql"},
	{"objects.sql",    text_objects,    json_objects,    14, "html_objects.sql"},
	{"failed.sql",     text_failed,     json_failed,     1,  NULL},
	{"tp_barrier.sql", text_tp_barrier, json_tp_barrier, 4,  "html_tp_barrier.sql"},
	{"space.sql",      text_space,      json_space,      13, "html_space.sql"},
	{"commands.sql",   text_throughput, json_throughput, 0,  NULL},
	{"serving.sql",    text_serving,    json_serving,    3,  "html_serving.sql"},
	{"tp_ranks.sql",   text_tp_ranks,   json_tp_ranks,   5,  NULL},
	{"findings.sql",   text_findings,   json_findings,   15, NULL},
	{"capture.sql",    text_capture,    json_capture,    1,  NULL},
	{"ab.sql",         text_ab,         json_ab,         7,  "html_ab.sql"},
};
#define NANALYSES (int)(sizeof analyses / sizeof analyses[0])

/* The distinct files of analyses[], heaviest first, into q; returns how many. */
static int make_queue(const char *q[NANALYSES])
{
	int n = 0;
	for (int i = 0; i < NANALYSES; i++) {
		int seen = 0;
		for (int k = 0; k < n; k++)
			seen |= !strcmp(q[k], analyses[i].sql);
		if (seen)
			continue;
		int at = n++;
		for (; at > 0; at--) { /* insertion by weight, stable */
			int wk = 0;
			for (int a = 0; a < NANALYSES; a++)
				if (!strcmp(analyses[a].sql, q[at - 1]) && analyses[a].weight > wk)
					wk = analyses[a].weight;
			if (wk >= analyses[i].weight)
				break;
			q[at] = q[at - 1];
		}
		q[at] = analyses[i].sql;
	}
	return n;
}

/* The rows of r whose label column is name, into s (s->k is malloc'd). */
static void select_label(struct sel *s, const struct rows *r, const char *name)
{
	s->r = r;
	s->n = 0;
	s->k = xmalloc((r->nrow ? r->nrow : 1) * sizeof *s->k);
	for (size_t k = 0; k < r->nrow; k++) {
		const char *l = cstr(cell(r, k, "label"));
		if (l && !strcmp(l, name))
			s->k[s->n++] = k;
	}
}

/* Every analysis's formatters over every label, in the table's order. 0, or
 * -1 when a file did not run. */
static int format_all(const struct rctx *c)
{
	for (int a = 0; a < NANALYSES; a++) {
		const struct rows *r = report_rows(c, analyses[a].sql);
		if (!r)
			return -1;
		for (int li = 0; li < c->nl; li++) {
			struct sel s;
			select_label(&s, r, c->ls[li].name);
			analyses[a].json(&c->ls[li], &s, c);
			analyses[a].text(&c->ls[li], &s, c);
			free(s.k);
		}
	}
	return 0;
}

/* Whether a reported label's load or store verdict is QD~1 (--fail-on qd1);
 * which ones ("a: load, b: store") into why (n bytes). */
static int qd1_tripped(const struct rctx *c, char *why, size_t n)
{
	const struct rows *r = report_rows(c, "qd1.sql");
	int hit = 0;
	size_t at = 0;
	why[0] = 0;
	for (size_t k = 0; r && k < r->nrow; k++) {
		const char *v = cstr(cell(r, k, "verdict")), *l = cstr(cell(r, k, "label")), *op = cstr(cell(r, k, "op"));
		if (!find_label(c, l) || !v || strncmp(v, "QD~1", 4))
			continue;
		if (at < n) /* "LABEL: OP", joined by ", " */
			at += (size_t)snprintf(why + at, n - at, "%s%s: %s", hit ? ", " : "", l, op ? op : "?");
		hit = 1;
	}
	return hit;
}

static const char report_help[] =
	"usage: kvio-report trace.db [--json [FILE]] [--batch-gap-us 50] [--label L ...]\n"
	"                   [--html FILE] [--base L] [--fail-on SPEC ...] [--jobs N]\n"
	"                   [--time-range S,E | --last S] [--trace-id A[-B]] [--rows FILE.sql]\n"
	"       kvio-report trace.db --watch [SECONDS] [--last S] [--count N] [--json] [options]\n"
	"       kvio-report a.db b.db ... [--json [FILE]] [--csv [FILE]] [options]\n"
	"       kvio-report --compare BASE NEW [NEW2 ...] [--json [FILE]] [--html FILE] [options]\n"
	"                   (a side: one database, or repetitions a.db,b.db,c.db)\n\n"
	"The kvio metrics pack per capture label (A/B arms side by side): QD1 detector,\n"
	"latency percentiles, achieved queue depth, inferred batches, object spans,\n"
	"TP all-rank barrier, space axis, throughput, serving spans, paired A/B diffs.\n"
	"Every metric is defined in its sql/ file (installed under share/kvio/sql).\n\n"
	"options:\n"
	"  --json            print only the JSON (the reference kvio_tp_report.py's keys)\n"
	"  --json FILE       write the JSON to FILE and print the text report. The word\n"
	"                    after --json is FILE when the database was named before\n"
	"                    it, or it ends in .json; else it is the database (so the\n"
	"                    options may come in any order); a word ending in .db is\n"
	"                    never FILE. --json=FILE is always FILE; '-' (--json -) is\n"
	"                    standard output, as --json alone. With several databases:\n"
	"                    a list of their reports, in order\n"
	"  --html FILE       write the report as one self-contained page of charts\n"
	"                    (offline: Chart.js and the data are inside it); FILE -:\n"
	"                    standard output holds the page only (not with --json -);\n"
	"                    with --compare: the comparison's tables and a chart of\n"
	"                    each metric's change and interval (a FILE)\n"
	"  --batch-gap-us N  submit gap that splits inferred batches (default 50)\n"
	"  --label L         report only label L (repeatable; an unknown one is an error)\n"
	"  --base L          the A/B base arm (default: the first label in sorted order,\n"
	"                    the reference's rule); the text report names it\n"
	"  --fail-on SPEC    exit 3 when SPEC fires (repeatable; one line per firing):\n"
	"                    qd1 (a load or store verdict is QD~1), METRIC>VALUE or\n"
	"                    METRIC<VALUE ('read.p99>250us', 'load.span_p50>2ms',\n"
	"                    'qd.pct_time_le1>50%'), regress:METRIC>N% (--compare: NEW is\n"
	"                    significantly worse by more than N%); the metrics are in\n"
	"                    docs/report.md (a wrong name lists them)\n"
	"  --compare BASE NEW [NEW2 ...]  per label and metric: base, new, delta, a 95%\n"
	"                    interval, a p-value and a verdict (faster, slower, no change);\n"
	"                    3 or more runs a side: tested across runs, one run a side:\n"
	"                    within the run (docs/report.md, \"Comparing runs\")\n"
	"  --csv [FILE]      one row per database, label and metric (every value of the\n"
	"                    JSON report by its path), with host, device and options;\n"
	"                    FILE when the next word ends in .csv or is -, or --csv=FILE\n"
	"  --jobs N          database connections running the sql/ files at once, 1-4\n"
	"                    (default: one per core, up to 4; each holds ~100 MB)\n"
	"  --time-range S,E  the metrics of the commands and objects overlapping [S, E]\n"
	"                    seconds of the database's time (and serving spans)\n"
	"  --last S          the metrics of the last S seconds: --time-range END-S,END,\n"
	"                    END the latest command or object end (ts + dur) in the\n"
	"                    database (not with --time-range)\n"
	"  --watch [SECONDS] report the last seconds again every SECONDS (default 1) on a\n"
	"                    database that may be growing (kvio-ingest --follow), until\n"
	"                    SIGINT/SIGTERM (exit 0); --last 10 unless --last is given.\n"
	"                    A terminal: a screen redrawn in place, one block per label\n"
	"                    (cmds/s, MB/s, read/write p50/p99, QD, the QD1 verdicts,\n"
	"                    objects in flight, drops; red where serialized or lossy).\n"
	"                    Otherwise (or with --json): one JSON line per refresh,\n"
	"                    {\"refresh\", \"window\": [start_s, end_s], \"live\", \"report\"}.\n"
	"                    A refresh that cannot read the database says so in one line\n"
	"                    and the next tries again; --fail-on exits 3 at the first firing\n"
	"  --count N         with --watch: stop after N refreshes (the last one's status)\n"
	"  --trace-id A[-B]  the metrics of trace_ids A..B only (no untagged commands)\n"
	"  --rows FILE.sql   print the rows of one sql/ file as kvio-report runs it\n"
	"                    ('|'-separated, like sqlite3), after prelude.sql (an\n"
	"                    html_X.sql after X.sql, whose samples it draws): a bare\n"
	"                    name (qd1.sql) is kvio's own, a path (sql/qd1.sql,\n"
	"                    ./mine.sql) is read from that file\n\n"
	"The sql/ files are built into kvio; KVIO_SQL_DIR=DIR runs the ones in DIR instead\n"
	"(to try an edited metric without rebuilding).\n\n"
	"EXAMPLES\n"
	"  kvio-report trace.db\n"
	"  kvio-report ab.db --json metrics.json --label stock --label batched\n"
	"  kvio-report ab.db --html report.html\n"
	"  kvio-report ab.db --fail-on qd1 --fail-on 'read.p99>250us'\n"
	"  kvio-report trace.db --last 10 --json\n"
	"  kvio-report trace.db --watch              (a live screen; Ctrl-C stops it)\n"
	"  kvio-report trace.db --watch 2 | jq -c '.live'\n"
	"  kvio-report --compare base1.db,base2.db,base3.db new1.db,new2.db,new3.db --json\n"
	"  kvio-report runs/*.db --csv runs.csv\n\n"
	"Warnings that ingest recorded about the data are repeated on standard error.\n\n"
	"exit status: 0 ok; 1 the database (or the --time-range/--trace-id window) holds\n"
	"  no command and no object: nothing to report; 2 usage or I/O error: unreadable/non-kvio\n"
	"  database, an output that could not be written (a full disk); 3 --fail-on\n"
	"  fired; 130/143 interrupted by SIGINT/SIGTERM. With several databases: the\n"
	"  worst of theirs. --watch: 0 at SIGINT/SIGTERM, 3 at the first --fail-on\n"
	"  firing, the last refresh's status after --count N\n";

struct args {
	const char *dbpath, *json_file, *rows_of, *html_file, *base;
	struct outfile *jf; /* --json FILE, open from the start (lib/outfile.h) */
	struct outfile *hf; /* --html FILE, the same way */
	char *chartjs;      /* --html: Chart.js, read before the SQL runs */
	int json, fail_qd1;
	const char *only[64];
	int nonly;
	struct report_opts o;
	char *db[MULTI_MAX]; /* the databases (or, with --compare, the sides) named */
	int ndb, compare, csv;
	const char *csv_file;
	struct gate gates[16]; /* --fail-on */
	int ngates;
	char *pass[64];      /* what each database's report takes, as given (--label, windows, ...) */
	int npass;
	int64_t last_ns;     /* --last SECONDS (0: none) */
	int watch, count_set; /* --watch [SECONDS], --count N given */
	struct watch wt;     /* --watch's loop and its state (watch.h) */
};

/* --json [FILE] (the rule of --help, independent of the other options' order):
 * --json=FILE; or the next word when it is '-', ends in .json, or follows the
 * database's name. FILE '-' is stdout. */
static void arg_json(struct args *g, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	size_t n = v ? strlen(v) : 0;
	g->json = 1;
	if (a[6] == '=') {
		g->json_file = a + 7;
	} else if (v && (!strcmp(v, "-") ||
			 (v[0] != '-' && !(n > 3 && !strcmp(v + n - 3, ".db")) &&
			  ((n > 5 && !strcmp(v + n - 5, ".json")) || g->dbpath)))) {
		g->json_file = v;
		++*i;
	}
	if (g->json_file && !strcmp(g->json_file, "-"))
		g->json_file = NULL; /* standard output: the JSON only */
}

/* An option that takes a value (argv[*i] is one of them): into g. 0, or 2
 * after a one-line usage error. */
static int arg_valued(struct args *g, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	int64_t n;
	if (opt_is(a, "--batch-gap-us")) {
		if (!(v = opt_value(argc, argv, i, "--batch-gap-us")))
			return 2;
		if (parse_i64(v, &n) || n < 0) {
			kvio_err("--batch-gap-us: '%s' is not a non-negative integer", v);
			return 2;
		}
		g->o.batch_gap_ns = n * 1000;
	} else if (opt_is(a, "--label")) {
		if (!(v = opt_value(argc, argv, i, "--label")))
			return 2;
		if (g->nonly < 64)
			g->only[g->nonly++] = v;
	} else if (opt_is(a, "--base")) {
		if (!(g->base = opt_value(argc, argv, i, "--base")))
			return 2;
		g->o.base_label = g->base;
	} else if (opt_is(a, "--rows")) {
		if (!(g->rows_of = opt_value(argc, argv, i, "--rows")))
			return 2;
		if (!sql_text(g->rows_of)) {
			if (strchr(g->rows_of, '/'))
				kvio_err("--rows: %s: cannot read: %s", g->rows_of, strerror(errno));
			else
				kvio_err("--rows: no sql/%s in this kvio (a file of your own: give its path, ./%s)",
					 g->rows_of, g->rows_of);
			return 2;
		}
	} else if (opt_is(a, "--jobs")) {
		if (!(v = opt_value(argc, argv, i, "--jobs")))
			return 2;
		if (parse_i64(v, &n) || n < 1 || n > MAX_CONN) {
			kvio_err("--jobs: '%s' is not a number from 1 to %d", v, MAX_CONN);
			return 2;
		}
		g->o.jobs = (int)n;
	} else if (opt_is(a, "--html")) {
		if (!(g->html_file = opt_value(argc, argv, i, "--html")))
			return 2;
	} else { /* --fail-on */
		if (!(v = opt_value(argc, argv, i, "--fail-on")))
			return 2;
		if (g->ngates == 16) {
			kvio_err("--fail-on: at most 16");
			return 2;
		}
		if (gate_parse(v, &g->gates[g->ngates]))
			return 2;
		g->fail_qd1 |= g->gates[g->ngates++].kind == GATE_QD1;
	}
	return 0;
}

/* The command line into g. -1 to go on, else the exit status (--help: 0). */
/* argv[from..to] are an option each database's report takes: kept for the children. */
static void pass_on(struct args *g, char **argv, int from, int to)
{
	for (int k = from; k <= to && g->npass < 64; k++)
		g->pass[g->npass++] = argv[k];
}

/* --csv [FILE]: FILE when the next word is - or ends in .csv (or --csv=FILE). */
static void arg_csv(struct args *g, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	size_t n = v ? strlen(v) : 0;
	g->csv = 1;
	if (a[5] == '=')
		g->csv_file = a + 6;
	else if (v && (!strcmp(v, "-") || (n > 4 && !strcmp(v + n - 4, ".csv") && v[0] != '-')))
		g->csv_file = argv[++*i];
	if (g->csv_file && !strcmp(g->csv_file, "-"))
		g->csv_file = NULL;
}

/* A positive decimal number of seconds (up to a year) into *v: 0, or -1. */
#define SECONDS_WANT "expected a number of seconds above 0, at most 32000000 (a year)"
static int seconds_arg(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*v) || strpbrk(s, "xXnNiI") || *v <= 0 || *v > 3.2e7 ? -1 : 0;
}

/* Whether s is a decimal number as a whole (0, -1, 1e9: not "2026-12-04.db", a
 * database's name after --watch). */
static int is_number(const char *s)
{
	char *end;
	(void)strtod(s, &end);
	return end != s && !*end && !strpbrk(s, "xXnNiI");
}

/* --last S, --watch [S], --count N at argv[*i]: 1 when consumed, 0 when it is
 * none of them, -1 after a one-line usage error. */
static int arg_live(struct args *g, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	double d;
	int64_t n;
	if (opt_is(a, "--last")) {
		if (g->last_ns || !(v = opt_value(argc, argv, i, "--last"))) {
			if (g->last_ns)
				kvio_err("--last given twice (see --help)");
			return -1;
		}
		if (seconds_arg(v, &d)) {
			kvio_err("--last '%s': " SECONDS_WANT, v);
			return -1;
		}
		g->last_ns = llround(d * 1e9) > 0 ? llround(d * 1e9) : 1;
	} else if (opt_is(a, "--watch")) {
		if (g->watch++) {
			kvio_err("--watch given twice (see --help)");
			return -1;
		}
		g->wt.every_s = 1;
		if (a[7] == '=' && seconds_arg(a + 8, &g->wt.every_s)) {
			kvio_err("--watch '%s': " SECONDS_WANT, a + 8);
			return -1;
		}
		const char *nx = !a[7] && *i + 1 < argc ? argv[*i + 1] : NULL; /* the optional SECONDS */
		if (nx && !seconds_arg(nx, &d)) {
			g->wt.every_s = d, ++*i;
		} else if (nx && is_number(nx)) {
			kvio_err("--watch '%s': " SECONDS_WANT, nx); /* a number, not a database's name */
			return -1;
		}
	} else if (opt_is(a, "--count")) {
		if (g->count_set++ || !(v = opt_value(argc, argv, i, "--count"))) {
			if (g->count_set > 1)
				kvio_err("--count given twice (see --help)");
			return -1;
		}
		if (parse_i64(v, &n) || n < 1) {
			kvio_err("--count: '%s' is not a positive integer", v);
			return -1;
		}
		g->wt.count = n;
	} else {
		return 0;
	}
	return 1;
}

/* The combinations --last, --watch and --count refuse: 0, or 2 after a usage line. */
static int live_check(struct args *g)
{
	const char *why = NULL;
	if (g->last_ns && g->o.win.has_time)
		why = "--last and --time-range: one time window at a time";
	else if (g->last_ns && g->compare)
		why = "--last: not with --compare (give each side's --time-range)";
	else if (g->count_set && !g->watch)
		why = "--count: only with --watch";
	else if (g->watch && (g->compare || g->ndb > 1 || g->csv))
		why = "--watch: one database at a time";
	else if (g->watch && (g->rows_of || g->html_file || g->json_file))
		why = "--watch: its output is standard output (not --rows, --html or --json FILE)";
	if (why) {
		kvio_err("%s (see --help)", why);
		return 2;
	}
	if (g->watch && !g->last_ns)
		g->last_ns = 10000000000; /* --last 10 */
	g->wt.json = g->json || !isatty(1);
	if (g->watch)
		g->o.progress = 0;
	return 0;
}

static int parse_args(struct args *g, int argc, char **argv)
{
	static const char *const valued[] = {"--batch-gap-us", "--label", "--rows", "--jobs", "--fail-on", "--html",
					     "--base"};
	int seen[7] = {0}, json_seen = 0; /* each option but --label and --fail-on once: a second --json FILE silently won */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int is_valued = 0, w, at = i;
		for (int k = 0; k < 7; k++)
			if (opt_is(a, valued[k])) {
				is_valued = 1;
				if (k != 1 && k != 4 && seen[k]++) {
					kvio_err("%s given twice (see --help)", valued[k]);
					return 2;
				}
			}
		if (!strcmp(a, "--compare")) {
			g->compare = 1;
			continue;
		}
		if (opt_is(a, "--csv")) {
			arg_csv(g, argc, argv, &i);
			continue;
		}
		if (opt_is(a, "--json") && json_seen++) {
			kvio_err("--json given twice (see --help)");
			return 2;
		}
		if ((w = window_parse_opt(&g->o.win, argc, argv, &i)) != 0 || (w = arg_live(g, argc, argv, &i)) != 0) {
			if (w < 0)
				return 2;
			if (!opt_is(a, "--watch") && !opt_is(a, "--count"))
				pass_on(g, argv, at, i);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(report_help, stdout);
			return 0;
		} else if (opt_is(a, "--json")) {
			arg_json(g, argc, argv, &i);
		} else if (is_valued) {
			if (arg_valued(g, argc, argv, &i))
				return 2;
			if (opt_is(a, "--label") || opt_is(a, "--batch-gap-us") || opt_is(a, "--base"))
				pass_on(g, argv, at, i);
		} else if (a[0] == '-' && a[1]) {
			kvio_err("unknown option '%s' (see --help)", a);
			return 2;
		} else if (g->ndb < MULTI_MAX) {
			g->db[g->ndb++] = argv[i];
			g->dbpath = g->db[0];
		} else {
			kvio_err("at most %d databases (see --help)", MULTI_MAX);
			return 2;
		}
	}
	if (!g->dbpath) {
		kvio_err(g->compare ? "--compare needs BASE NEW (see --help)" : "need a trace.db (see --help)");
		return 2;
	}
	if ((g->ndb > 1 || g->csv || g->compare) && (g->rows_of || (g->html_file && (!g->compare || g->csv)))) {
		kvio_err("%s: one database at a time, or --compare (see --help)", g->rows_of ? "--rows" : "--html");
		return 2;
	}
	if (g->compare && g->html_file && !strcmp(g->html_file, "-")) {
		kvio_err("--compare --html: a FILE (standard output holds the comparison's text or JSON)");
		return 2;
	}
	for (int k = 0; k < g->ngates && !g->compare; k++)
		if (g->gates[k].kind == GATE_REGRESS) {
			kvio_err("--fail-on '%s': regress: needs --compare", g->gates[k].spec);
			return 2;
		}
	if (g->html_file && !strcmp(g->html_file, "-") && g->json && !g->json_file) { /* as two equal FILEs are */
		kvio_err("--json - and --html -: standard output can take one of them (nothing written)");
		return 2;
	}
	return live_check(g) ? 2 : -1;
}

static int no_labels(sqlite3 *db, const struct args *g, int nl);

/* The labels with commands or objects, in string order, keeping only those
 * of --label when given, into *ls and *nl; the A/B base (--base, else the
 * first label) into base. 0, 1 when there is no label at all (said), or 2
 * after a one-line error (an unknown --label or --base is a usage error, not
 * a shorter report). */
static int load_labels(sqlite3 *db, const struct args *g, struct label **ls, int *nl, char base[256])
{
	sqlite3_stmt *st;
	char all[512] = ""; /* every label, for the message about an unknown --label */
	int found[64] = {0}, unknown = 0, base_found = 0;
	if (sqlite3_prepare_v2(db, "SELECT p.label FROM kvio_cmd_proc c JOIN kvio_proc p ON p.upid = c.lid"
			       " UNION SELECT label FROM kvio_object ORDER BY 1",
			       -1, &st, NULL) != SQLITE_OK) {
		kvio_err("%s: %s", g->dbpath, sqlite3_errmsg(db));
		return 2;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = nz(sqlite3_column_text(st, 0));
		if (!*base && (!g->base || !strcmp(g->base, name)))
			snprintf(base, 256, "%s", name); /* --base, else the first in string order */
		base_found |= g->base && !strcmp(g->base, name);
		size_t used = strlen(all);
		snprintf(all + used, sizeof all - used, "%s%s", used ? ", " : "", name);
		int keep = !g->nonly;
		for (int k = 0; k < g->nonly; k++)
			if (!strcmp(g->only[k], name))
				keep = found[k] = 1;
		if (!keep)
			continue;
		*ls = xrealloc(*ls, (*nl + 1) * sizeof **ls);
		struct label *L = &(*ls)[(*nl)++];
		memset(L, 0, sizeof *L);
		L->name = xstrdup(name);
		L->R = jn_obj();
		jn_set(L->R, "label", jn_str(name));
	}
	if (sqlite3_finalize(st) != SQLITE_OK) { /* a read error: not fewer labels */
		kvio_err("%s: %s", g->dbpath, sqlite3_errmsg(db));
		return 2;
	}
	for (int k = 0; k < g->nonly; k++)
		if (!found[k] && ++unknown)
			kvio_err("%s: no label '%s' (labels: %s)", g->dbpath, g->only[k], *all ? all : "none");
	if (g->base && !base_found && ++unknown)
		kvio_err("%s: --base: no label '%s' (labels: %s)", g->dbpath, g->base, *all ? all : "none");
	if (unknown)
		return 2;
	return no_labels(db, g, *nl);
}

/* When there are no labels to report (nl 0): one line saying why and 1 (the
 * result is unusable): the report's window, the ingest's window (its metadata)
 * or an empty input selected nothing. 0 when nl > 0. */
static int no_labels(sqlite3 *db, const struct args *g, int nl)
{
	char wd[128];
	struct kvio_window iw = {0};
	sqlite3_stmt *st;
	if (nl)
		return 0;
	if (g->o.win.has_time || g->o.win.has_tid) {
		kvio_err("%s: the %s window holds no command or object slice%s: nothing to report", g->dbpath,
			 window_desc(&g->o.win, wd, sizeof wd), g->nonly ? " for those labels" : "");
		return 1;
	}
	if (sqlite3_prepare_v2(db, "SELECT name, int_value FROM metadata WHERE name LIKE 'kvio_time_range_%'"
			       " OR name LIKE 'kvio_trace_id_%'", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *n = nz(sqlite3_column_text(st, 0));
			int64_t v = sqlite3_column_int64(st, 1);
			if (!strcmp(n, "kvio_time_range_start_ns"))
				iw.has_time = 1, iw.lo_ns = v;
			else if (!strcmp(n, "kvio_time_range_end_ns"))
				iw.has_time = 1, iw.hi_ns = v;
			else if (!strcmp(n, "kvio_trace_id_lo"))
				iw.has_tid = 1, iw.tid_lo = (uint64_t)v;
			else if (!strcmp(n, "kvio_trace_id_hi"))
				iw.has_tid = 1, iw.tid_hi = (uint64_t)v;
		}
		sqlite3_finalize(st);
	}
	if (iw.has_time || iw.has_tid) /* an ingest whose window was empty (it exited 1 too) */
		kvio_err("%s: no kvio command or object slices: the ingest's %s window held none", g->dbpath,
			 window_desc(&iw, wd, sizeof wd));
	else /* an ingest of empty inputs (which exited 1 too): unusable, not a usage error */
		kvio_err("%s: no kvio command or object slices: nothing to report (was the ingest's input empty?)",
			 g->dbpath);
	return 1;
	return 0;
}

/* The text report: every label's lines, then the A/B diffs against base. */
static void print_text(const char *dbpath, const struct label *ls, int nl, const char *base, int base_opt)
{
	size_t ntail = 0;
	printf("=== kvio report: %s (%d capture label(s)) ===\n", dbpath, nl);
	for (int li = 0; li < nl; li++) {
		printf("===== [%s] =====\n", ls[li].name);
		for (size_t q = 0; q < ls[li].text.n; q++)
			printf("%s\n", VEC_AT(&ls[li].text, char *, q));
		ntail += ls[li].tail.n;
	}
	if (ntail)
		printf("===== A/B paired object diff: base %s (%s) =====\n", base,
		       base_opt ? "--base" : "the first label in sorted order; --base L to change");
	for (int li = 0; li < nl; li++)
		for (size_t q = 0; q < ls[li].tail.n; q++)
			printf("%s\n", VEC_AT(&ls[li].tail, char *, q));
}

/* The JSON of every label to stdout (jf NULL) or into jf, committed here. 0 or 2. */
static int print_json(struct label *ls, int nl, struct outfile *jf)
{
	int status = 0;
	struct jnode *root = jn_obj();
	for (int li = 0; li < nl; li++) {
		jn_set(root, ls[li].name, ls[li].R);
		ls[li].R = NULL;
	}
	if (!jf) {
		jn_print(stdout, root, 1);
	} else {
		FILE *f = outfile_stdio(jf);
		if (f)
			jn_print(f, root, 1);
		if (!f || outfile_commit(jf))
			status = 2;
		else
			printf("(json -> %s)\n", jf->path);
	}
	jn_free(root);
	return status;
}

/* The warnings ingest recorded (kvio_warning) for the reported labels, on
 * stderr: a redirected --json keeps them in sight. */
static void print_warnings(sqlite3 *db, const struct label *ls, int nl)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT label, message FROM main.kvio_warning", -1, &st, NULL) != SQLITE_OK)
		return; /* a database without the table has none */
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *l = (const char *)sqlite3_column_text(st, 0), *m = (const char *)sqlite3_column_text(st, 1);
		for (int i = 0; l && m && i < nl; i++)
			if (!strcmp(ls[i].name, l))
				kvio_err("[%s] WARNING: %s", l, m);
	}
	sqlite3_finalize(st);
}

static void free_lines(struct vec *v)
{
	for (size_t q = 0; q < v->n; q++)
		free(VEC_AT(v, char *, q));
	vec_free(v);
}

/* The html follower of each queued file q[0..nq) (NULL: none), into h. */
static void html_queue(const char *const *q, int nq, const char *h[NANALYSES])
{
	for (int i = 0; i < nq; i++) {
		h[i] = NULL;
		for (int a = 0; a < NANALYSES; a++)
			if (analyses[a].html && !strcmp(analyses[a].sql, q[i]))
				h[i] = analyses[a].html;
	}
}

/* --html FILE: the page of every label (formatted) and the rows of every html
 * follower that ran. 0, or 2 after a one-line error. */
static int write_html(const struct args *g, const struct runner *rn, const struct label *ls, int nl)
{
	const struct rows *series[NANALYSES];
	int n = 0;
	for (int i = 0; i < rn->nfiles; i++)
		if (rn->html && rn->html[i] && rn->res[i].done)
			series[n++] = &rn->res[i].html;
	struct html_page p = {g->dbpath, ls, nl, series, n, g->o.batch_gap_ns, g->chartjs};
	int status = html_write(g->hf, &p);
	if (!status && !(g->json && !g->json_file) && strcmp(g->html_file, "-"))
		printf("(html -> %s)\n", g->html_file);
	return status;
}

/* --json FILE and --html FILE: refused when one is the database; created (as
 * temp files) before the minutes of SQL, renamed into place at the end; and
 * Chart.js read for --html. 0, or 2 after a one-line error (nothing left). */
static int open_outputs(struct args *g, struct outfile *jf, struct outfile *hf)
{
	const char *in[] = {g->dbpath};
	if (g->html_file && !(g->chartjs = html_chartjs()))
		return 2;
	if (g->json_file && outfile_open(g->jf = jf, g->json_file, in, 1))
		return 2;
	if (g->html_file && outfile_open(g->hf = hf, g->html_file, in, 1)) {
		outfile_abort(jf);
		return 2;
	}
	return 0;
}

/* --rows FILE: its rows after prelude.sql, '|'-separated; an html_X.sql runs
 * after X.sql, whose temp tables it reads. 0, or 2 after a one-line error. */
/* The sums of the tables of mask (db/valid.h) a report reads, beyond those
 * db_open_ro checked: 0, or 2 after the one line saying what is damaged. */
static int check_tables(sqlite3 *db, const char *dbpath, int mask)
{
	char *why = NULL;
	int rc = db_check_tables(db, "main", mask, &why);
	if (rc != SQLITE_OK)
		kvio_err("%s: %s", dbpath, why ? why : sqlite3_errmsg(db));
	sqlite3_free(why);
	return rc == SQLITE_OK ? 0 : 2;
}

static int print_rows(sqlite3 *db, const struct args *g, struct rows *r)
{
	if (check_tables(db, g->dbpath, DB_TABLES)) /* a file of one's own may read any table */
		return 2;
	for (int a = 0; a < NANALYSES; a++)
		if (analyses[a].html && !strcmp(analyses[a].html, g->rows_of) && run_sql(db, analyses[a].sql, &g->o, r))
			return 2;
	rows_free(r);
	if (run_sql(db, g->rows_of, &g->o, r))
		return 2;
	rows_print(r);
	return 0;
}

/* The value gates (--fail-on METRIC>VALUE) on every label's report: 1 when
 * one fired (each said on its line). */
static int value_gates(const struct args *g, const struct label *ls, int nl)
{
	int fired = 0;
	for (int li = 0; li < nl; li++) {
		char *buf = NULL;
		size_t len = 0;
		struct jnode *lab = NULL;
		for (int k = 0; k < g->ngates; k++) {
			if (g->gates[k].kind != GATE_VALUE)
				continue;
			if (!lab) { /* the label's JSON as a driver reads it */
				FILE *m = open_memstream(&buf, &len);
				if (!m)
					break;
				jn_print(m, ls[li].R, 1);
				fclose(m);
				lab = jn_parse(buf, len);
			}
			fired |= gate_value(&g->gates[k], g->dbpath, ls[li].name, lab);
		}
		jn_free(lab);
		free(buf);
	}
	return fired;
}

/* Run the queue (rn started), format every label, print. The exit status. */
static int report(struct args *g, sqlite3 *db, struct runner *rn, struct label **ls, int *nl)
{
	char base[256] = "";
	int status = load_labels(db, g, ls, nl, base);
	if (status)
		return status;
	if (!g->wt.warned++) /* once a process (a --watch's first refresh, not a report run again) */
		print_warnings(db, *ls, *nl);
	/* the objects', slices' and args' sums, on this connection while the other runs analyses */
	if (check_tables(db, g->dbpath, DB_REPORT))
		return 2;
	int af = analyses_finish(rn, db, 1);
	if (af)
		return af == SNAPSHOT_MOVED ? 4 : 2; /* 4: report_db runs it again */
	struct rctx c = {.o = &g->o, .ls = *ls, .nl = *nl, .rn = rn};
	if (format_all(&c))
		return 2;
	int fired = value_gates(g, *ls, *nl);
	/* standard output holds the JSON (--json -) or the page (--html -) only */
	char why[512];
	int tripped = qd1_tripped(&c, why, sizeof why), json_only = g->json && !g->json_file;
	if (g->watch) /* the screen or the JSON line (watch.c) */
		status = watch_show(&g->wt, db, &g->o, g->dbpath, *ls, *nl);
	else if (!json_only && !(g->html_file && !strcmp(g->html_file, "-")))
		print_text(g->dbpath, *ls, *nl, base, g->base != NULL);
	if (g->html_file)
		status = write_html(g, rn, *ls, *nl);
	if (g->json && !status)
		status = print_json(*ls, *nl, g->jf);
	if (!status && g->fail_qd1 && tripped) {
		kvio_err("--fail-on qd1: %s looks serialized (QD~1)", why);
		status = 3;
	}
	if (!status && fired)
		status = 3;
	return status;
}

/* Several databases (--csv, a --json list, their text reports one after the
 * other) or --compare: each report in a child (multi.c). The exit status. */
static int report_many(struct args *g)
{
	struct outfile of = {.slot = -1, .fd = -1};
	const char *file = g->csv ? g->csv_file : g->json_file, *in[MULTI_MAX];
	size_t nin = 0;
	char *copy[MULTI_MAX]; /* the databases named, --compare's sides split at their commas */
	for (int k = 0; k < g->ndb; k++) {
		copy[k] = xstrdup(g->db[k]);
		for (char *p = copy[k], *c; p && nin < MULTI_MAX; p = c ? c + 1 : NULL) {
			if ((c = strchr(p, ',')))
				*c = 0;
			in[nin++] = p;
		}
	}
	struct outfile hf = {.slot = -1, .fd = -1};
	int opened = !file || !outfile_open(&of, file, in, nin);
	if (opened && g->html_file && (!(g->chartjs = html_chartjs()) || outfile_open(&hf, g->html_file, in, nin))) {
		if (file)
			outfile_abort(&of);
		opened = 0;
	}
	for (int k = 0; k < g->ndb; k++)
		free(copy[k]);
	if (!opened) {
		free(g->chartjs);
		return 2;
	}
	FILE *out = file ? outfile_stdio(&of) : stdout;
	int status;
	if (g->compare) {
		struct cmp_out co = {g->json ? out : NULL, g->gates, g->ngates, cmd_report, g->html_file ? &hf : NULL,
				     g->chartjs};
		status = cmd_compare(g->db, g->ndb, g->pass, g->npass, &g->o, &co); /* ends hf, either way */
		free(g->chartjs);
	} else {
		char *pass[80];
		int np = 0;
		for (int k = 0; k < g->npass; k++)
			pass[np++] = g->pass[k];
		for (int k = 0; k < g->ngates && np < 78; k++) /* each database's report checks its own gates */
			pass[np++] = (char *)"--fail-on", pass[np++] = (char *)g->gates[k].spec;
		struct multi_job j = {cmd_report, pass, np, g->o.jobs, 0, 0};
		status = multi_report(out, g->db, g->ndb, j, g->json ? MULTI_JSON : g->csv ? MULTI_CSV : 0);
	}
	if (file && (status == 0 || status == 3) && (!out || outfile_commit(&of)))
		status = 2;
	else if (file && status != 0 && status != 3)
		outfile_abort(&of);
	return status;
}

/* One database's report, once (report_db). The exit status; 4: the
 * connections read different snapshots. */
static int report_db1(struct args *g)
{
	struct outfile jf = {.slot = -1, .fd = -1}, hf = {.slot = -1, .fd = -1};
	sqlite3 *db = NULL;
	int status = 0;
	run_reset();
	if (open_outputs(g, &jf, &hf) || !(db = db_open_ro(g->dbpath))) {
		outfile_abort(&jf);
		outfile_abort(&hf);
		free(g->chartjs);
		return 2;
	}
	/* one read transaction: the connection reads one snapshot of a database
	 * that another process may be writing (kvio-ingest --follow) */
	if (db_exec(db, "BEGIN", "starting a read transaction") != SQLITE_OK)
		status = 2;
	if (!status && g->last_ns) { /* the window of --last, at this snapshot */
		g->o.win.has_time = 0;
		status = last_window(db, g->dbpath, g->last_ns, &g->o.win, &g->wt.start_ns);
	}
	struct label *ls = NULL;
	int nl = 0;
	const char *queue[NANALYSES], *hq[NANALYSES];
	int nq = make_queue(queue);
	html_queue(queue, nq, hq);
	struct result res[NANALYSES];
	memset(res, 0, sizeof res);
	struct runner rn = {0};
	struct rows r = {0};
	if (!status && !g->rows_of && !(rn.snap = db_snapshot_id(db, 1)))
		status = 2;
	if (!status && !g->rows_of)
		analyses_start(&rn, g->dbpath, &g->o, queue, g->html_file ? hq : NULL, nq, res);
	if (status)
		;
	else if (prepare_conn(db, &g->o))
		status = 2;
	else if (g->rows_of)
		status = print_rows(db, g, &r);
	else
		status = report(g, db, &rn, &ls, &nl);
	outfile_abort(&jf); /* after a commit: nothing to do */
	outfile_abort(&hf);
	free(g->chartjs);
	g->chartjs = NULL;
	analyses_finish(&rn, NULL, 0); /* an early exit still waits for the other connections */
	sqlite3_free(rn.snap);
	rows_free(&r);
	for (int i = 0; i < nq; i++) {
		rows_free(&res[i].rows);
		rows_free(&res[i].html);
	}
	for (int li = 0; li < nl; li++) {
		jn_free(ls[li].R);
		free_lines(&ls[li].text);
		free_lines(&ls[li].tail);
		free(ls[li].name);
	}
	free(ls);
	sqlite3_close(db); /* ends the read transaction */
	fflush(stdout);
	return status;
}

/* One database's report (the command's usual case; a refresh of --watch):
 * when another process wrote the database between the connections' read
 * transactions, again on one connection (one snapshot). The exit status. */
static int report_db(struct args *g)
{
	int status = report_db1(g);
	if (status == 4) {
		int jobs = g->o.jobs;
		g->o.jobs = 1;
		status = report_db1(g);
		g->o.jobs = jobs;
	}
	return status;
}

static int refresh(void *ctx)
{
	return report_db(ctx);
}

int cmd_report(int argc, char **argv)
{
	struct args g = {.o = {.batch_gap_ns = 50000, .progress = isatty(2)}};
	int status = parse_args(&g, argc, argv);
	if (status >= 0)
		return status;
	if (g.compare || g.ndb > 1 || g.csv)
		return report_many(&g);
	if (g.watch)
		return watch_loop(&g.wt, refresh, &g);
	return report_db(&g);
}
