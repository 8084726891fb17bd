/* ingest.c — kvio-ingest: JSONL captures (one or more arms) into trace.db. */
#include "ingest.h"
#include "../db/schema.h"
#include "write.h"
#include "sjline.h" /* sj_kernel: named in the timing line */
#include "../lib/cli.h"
#include "../lib/outfile.h"
#include "../lib/progress.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char ingest_options_help[] =
	"  --sem FILE            LMCache semantic JSONL (LMCACHE_KVIO_TRACE); '-' (here and\n"
	"                        for --ebpf, --serving): standard input, for one of them\n"
	"  --ebpf FILE           nvme_uring_cmd_monitor JSONL (commands, completions)\n"
	"  --serving FILE        serving-layer request spans JSONL (optional)\n"
	"  --label L             label of the single arm (default: capture; at most 128 bytes, as --merge's)\n"
	"  --merge L=SEM,EBPF[,SERVING]\n"
	"                        add an arm (repeatable; '-' omits a component)\n"
	"  --no-rebase           keep absolute CLOCK_MONOTONIC ns (same-boot arms only)\n"
	"  --lba-bytes N         capture-time --lba-size (default 4096; inferred from\n"
	"                        store headers when N matches none)\n"
	"  --nominal-dur-ns N    slice length of a command without completion (default 8000)\n"
	"  --pair-horizon N      records after which a command's completion is given up\n"
	"                        (default 500000; memory grows with it only while\n"
	"                        completions are missing)\n"
	"  --device NAME         device label in process names (default: ng; at most 128 bytes)\n"
	"  --time-range S,E      write only what overlaps [S, E] seconds after the arm's\n"
	"                        rebase (absolute seconds with --no-rebase)\n"
	"  --trace-id A[-B]      write only the commands and objects of trace_id A..B\n"
	"                        (untagged commands are left out)\n"
	"  --no-slba-counter     no per-command 'writes slba'/'reads slba' counter tracks\n"
	"  --join-by-key         join on the NVMe KV key (the tracer's --kv key_hex; the\n"
	"                        semantic key_hex, else the hex of key), not user_data\n"
	"  --join-by-offset      attribute commands to objects by byte range (slot_offset)\n"
	"                        and time window, no cookie needed; with cookies, parity\n"
	"  -q, --quiet           no summary on stdout, no progress line on stderr\n";

void ingest_defaults(struct ingest_args *a)
{
	memset(a, 0, sizeof *a);
	a->o.lba_bytes = 4096;
	a->o.nominal_dur_ns = 8000;
	a->o.pair_horizon = 500000;
	a->o.device = "ng";
	a->o.progress = progress_wanted(0);
}

const char ingest_exit_help[] =
	"exit status: 0 ok (unusable lines are counted and reported); 1 the database was\n"
	"  written but is unusable: an arm without any device command or semantic record,\n"
	"  or whose --time-range/--trace-id window holds no command or object;\n"
	"  2 usage or I/O error, or an input that is not a JSONL capture (nothing written);\n"
	"  130/143 interrupted by SIGINT/SIGTERM (nothing written; under --follow SIGINT and\n"
	"  SIGTERM end the follow: the final commit, then the status above); --follow: 1\n"
	"  also when an input shrank under it (the database stays as of its last commit)\n";

static const char *g_label = "capture", *g_sem, *g_ebpf, *g_serving;

/* An input path: '-' is standard input, for one input at most. NULL after a
 * usage error. */
static const char *in_path(const char *opt, const char *v)
{
	static const char *stdin_opt;
	if (strcmp(v, "-"))
		return v;
	if (stdin_opt) {
		kvio_err("%s -: standard input is already %s's input", opt, stdin_opt);
		return NULL;
	}
	stdin_opt = opt;
	return "/dev/stdin";
}

/* --merge LABEL=SEM,EBPF[,SERVING] (a file '' or '-': none) as one more arm,
 * split in place (spec points into argv, whose strings the program may
 * modify). 1, or -1 after a usage error. */
static int merge_spec(struct ingest_args *a, char *spec)
{
	if (a->narms >= MAX_ARMS) {
		kvio_err("--merge: at most %d arms", MAX_ARMS);
		return -1;
	}
	char *eq = strchr(spec, '=');
	if (!eq || eq == spec) {
		kvio_err("--merge '%s': expected LABEL=SEM,EBPF[,SERVING]", spec);
		return -1;
	}
	*eq = 0;
	struct arm_spec *s = &a->arms[a->narms++];
	s->label = spec;
	char *parts[3] = {0};
	char *p = eq + 1;
	for (int k = 0; k < 3 && p; k++) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		parts[k] = (*p && strcmp(p, "-")) ? p : NULL;
		p = c ? c + 1 : NULL;
	}
	if (p) {
		kvio_err("--merge %s=...: more than three files", spec);
		return -1;
	}
	s->sem = parts[0];
	s->ebpf = parts[1];
	s->serving = parts[2];
	if (!s->sem && !s->ebpf && !s->serving) {
		kvio_err("--merge %s=...: no file given", spec);
		return -1;
	}
	return 1;
}

int ingest_parse_opt(struct ingest_args *a, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *v;
	int64_t n;
	/* a single-valued option given twice is a usage error: the second silently won
	 * (--sem A --sem B ingested B alone, as if the files had been merged) */
	static const char *const once[sizeof a->given] = {"--sem", "--ebpf", "--serving", "--label", "--device",
							  "--pftrace", "--lba-bytes", "--nominal-dur-ns", "--pair-horizon"};
	for (size_t k = 0; k < sizeof a->given; k++)
		if (opt_is(arg, once[k]) && a->given[k]++) {
			kvio_err("%s given twice (see --help)", once[k]);
			return -1;
		}
#define VAL(name) if (!(v = opt_value(argc, argv, i, name))) return -1
	if (opt_is(arg, "--sem")) { VAL("--sem"); return (g_sem = in_path("--sem", v)) ? 1 : -1; }
	if (opt_is(arg, "--ebpf")) { VAL("--ebpf"); return (g_ebpf = in_path("--ebpf", v)) ? 1 : -1; }
	if (opt_is(arg, "--serving")) { VAL("--serving"); return (g_serving = in_path("--serving", v)) ? 1 : -1; }
	if (opt_is(arg, "--label")) { VAL("--label"); g_label = v; return 1; }
	if (opt_is(arg, "--device")) { VAL("--device"); a->o.device = v; return 1; }
	if (opt_is(arg, "--pftrace")) { VAL("--pftrace"); a->pftrace = v; return 1; }
	if (!strcmp(arg, "--no-rebase")) { a->o.no_rebase = 1; return 1; }
	if (!strcmp(arg, "--no-slba-counter")) { a->o.no_slba_counter = 1; return 1; }
	if (!strcmp(arg, "--join-by-key") || !strcmp(arg, "--join-by-offset")) {
		int j = arg[10] == 'k' ? JOIN_KEY : JOIN_OFFSET;
		if (a->o.join && a->o.join != j) {
			kvio_err("--join-by-key and --join-by-offset exclude each other");
			return -1;
		}
		a->o.join = j;
		return 1;
	}
	int r = window_parse_opt(&a->o.win, argc, argv, i);
	if (r)
		return r;
	if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) { a->quiet = 1; a->o.progress = 0; return 1; }
	static const char *const num_opts[] = {"--lba-bytes", "--nominal-dur-ns", "--pair-horizon"};
	for (int k = 0; k < 3; k++) {
		if (!opt_is(arg, num_opts[k]))
			continue;
		VAL(num_opts[k]);
		if (parse_i64(v, &n) || n <= 0) {
			kvio_err("%s: '%s' is not a positive integer", num_opts[k], v);
			return -1;
		}
		*(k == 0 ? &a->o.lba_bytes : k == 1 ? &a->o.nominal_dur_ns : &a->o.pair_horizon) = n;
		return 1;
	}
	if (opt_is(arg, "--merge")) {
		VAL("--merge");
		return merge_spec(a, (char *)v);
	}
#undef VAL
	return 0;
}

int ingest_finish_args(struct ingest_args *a)
{
	if (a->pftrace) {
		if (a->narms || g_sem || g_ebpf || g_serving) {
			kvio_err("--pftrace cannot be combined with --sem/--ebpf/--serving/--merge");
			return -1;
		}
		return 0;
	}
	if (a->narms && (g_sem || g_ebpf || g_serving)) {
		kvio_err("use either --merge or --sem/--ebpf/--serving, not both");
		return -1;
	}
	if (a->narms && strcmp(g_label, "capture")) { /* --merge names its arms itself */
		kvio_err("--label names the one arm of --sem/--ebpf; under --merge each LABEL= names its arm");
		return -1;
	}
	if (!a->narms) {
		if (!g_sem && !g_ebpf && !g_serving) {
			kvio_err("need --sem/--ebpf/--serving or --merge (see --help)");
			return -1;
		}
		a->arms[0] = (struct arm_spec){g_label, g_sem, g_ebpf, g_serving, {0}};
		a->narms = 1;
	}
	for (int i = 0; i <= a->narms; i++) {
		const char *v = i < a->narms ? a->arms[i].label : a->o.device;
		if (strlen(v) > KVIO_LABEL_MAX) {
			kvio_err("%s '%.32s...' is %zu bytes: at most %d (it names the processes in every report)",
				 i < a->narms ? (a->narms > 1 ? "--merge: label" : "--label") : "--device", v, strlen(v),
				 KVIO_LABEL_MAX);
			return -1;
		}
	}
	for (int i = 0; i < a->narms; i++)
		for (int k = 0; k < i; k++)
			if (!strcmp(a->arms[i].label, a->arms[k].label)) {
				kvio_err("--merge: label '%s' given twice", a->arms[i].label);
				return -1;
			}
	return 0;
}

static void summary(const struct arm *a, const struct ingest_opts *o)
{
	printf("[%s]\n", a->label);
	printf("  semantic: %zu records, %llu malformed, %llu truncated tail, dup trace_id %llu\n",
	       arm_nobjs(a), (unsigned long long)a->sem_f.malformed,
	       (unsigned long long)a->sem_f.truncated_tail, (unsigned long long)a->dup_trace_id);
	printf("  device  : %zu nvme_cmd (%llu without a completion), %zu nvme_cmp (%llu unpaired), %llu malformed,"
	       " %llu truncated tail, %llu other", (size_t)a->n_cmd_lines, (unsigned long long)a->cmd_no_cmp,
	       (size_t)a->n_cmp_lines, (unsigned long long)a->cmp_unpaired,
	       (unsigned long long)a->ebpf_f.malformed, (unsigned long long)a->ebpf_f.truncated_tail,
	       (unsigned long long)a->ebpf_f.other);
	if (a->has_drops)
		printf(", drops %llu", (unsigned long long)a->drops);
	printf("\n");
	if (a->serving.n || strcmp(a->serving_f.path, "-"))
		printf("  serving : %zu spans, %llu malformed\n", a->serving.n,
		       (unsigned long long)a->serving_f.malformed);
	printf("  tagged bytes %llu | untagged bytes %llu | header cmds %llu | object lanes %d |"
	       " lba_bytes %lld | clock anomalies %llu\n",
	       (unsigned long long)a->tagged_bytes, (unsigned long long)a->untagged_bytes,
	       (unsigned long long)a->header_cmds, a->nlanes_obj, (long long)a->lba_bytes,
	       (unsigned long long)a->clock_anomalies);
	if (o->join == JOIN_KEY)
		printf("  key join: %llu commands with key_hex, %llu claimed by a semantic record\n",
		       (unsigned long long)a->key_cmds, (unsigned long long)a->key_matched);
	if (o->join == JOIN_OFFSET) {
		printf("  offset join: unique %llu, cross_object %llu, gap_spill %llu, unmatched %llu\n",
		       (unsigned long long)a->off_unique, (unsigned long long)a->off_cross,
		       (unsigned long long)a->off_gap, (unsigned long long)a->off_unmatched);
		if (a->off_total) /* as the reference prints it */
			printf("  offset-join parity vs user_data cookies: %llu/%llu (%.2f%%) agree%s | offset-attributed "
			       "cookieless cmds: %llu\n", (unsigned long long)a->off_agree, (unsigned long long)a->off_total,
			       100.0 * (double)a->off_agree / (double)a->off_total,
			       a->off_agree == a->off_total ? "" : "  <-- INVESTIGATE",
			       (unsigned long long)(a->off_unique - a->off_total));
	}
	if (o->win.has_time || o->win.has_tid) /* the counts above describe the input, these the window */
		printf("  emitted : %llu object spans, %llu object instants, %llu command slices, %llu serving spans\n",
		       (unsigned long long)a->emitted_spans, (unsigned long long)a->emitted_instants,
		       (unsigned long long)a->emitted_cmds, (unsigned long long)a->emitted_serving);
	if (a->warnings.n)
		printf("  %zu warning(s), on standard error\n", a->warnings.n);
}

/* The data warnings of every arm, on stderr (kept by -q and by a redirected
 * stdout); 1 when an arm holds neither a device command nor a semantic record
 * or serving span, or when the window (--time-range / --trace-id) let no
 * command or object through (said: the database is unusable), else 0. */
static int warn_arms(const struct arm *arms, int narms, const struct ingest_opts *o, const char *path, int written)
{
	int empty = 0;
	char wd[128], what[600];
	window_desc(&o->win, wd, sizeof wd);
	snprintf(what, sizeof what, written ? "%s holds nothing to report" : "nothing to convert, %s not written", path);
	for (int i = 0; i < narms; i++) {
		const struct arm *a = &arms[i];
		for (size_t k = 0; k < a->warnings.n; k++)
			kvio_err("[%s] WARNING: %s", a->label, VEC_AT(&a->warnings, const char *, k));
		if (!a->n_cmd_lines && !arm_nobjs(a) && !a->serving.n) {
			kvio_err("[%s] no device command and no semantic record in its inputs: %s (exit 1)", a->label, what);
			empty = 1;
		} else if (*wd && !a->emitted_cmds && !a->emitted_spans && !a->emitted_instants) {
			/* the input had something, the window let nothing through */
			kvio_err("[%s] the %s window holds no command or object: %s (exit 1)", a->label, wd, what);
			empty = 1;
		}
	}
	return empty;
}

int pftrace_import(const char *path, sqlite3 *db);

/* VmHWM of this process, KB (for KVIO_TIMING), or -1. */
static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

size_t ingest_inputs(const struct ingest_args *a, const char **in, size_t cap)
{
	size_t n = 0;
	if (a->pftrace && n < cap)
		in[n++] = a->pftrace;
	for (int i = 0; i < a->narms; i++) {
		const char *p[3] = {a->arms[i].sem, a->arms[i].ebpf, a->arms[i].serving};
		for (int k = 0; k < 3; k++)
			if (p[k] && n < cap)
				in[n++] = p[k];
	}
	return n;
}

int ingest_inputs_readable(const struct ingest_args *a)
{
	for (int i = 0; i < a->narms; i++) {
		const char *p[3] = {a->arms[i].sem, a->arms[i].ebpf, a->arms[i].serving};
		for (int k = 0; k < 3; k++)
			if (p[k] && access(p[k], R_OK) != 0) {
				kvio_err("%s: cannot open: %s", p[k], strerror(errno));
				return 2;
			}
	}
	return 0;
}

/* KVIO_TIMING: how busy each thread was over the ingest's wall time, and
 * the device files' MB per second of CPU (make bench prints it). */
static double thread_cpu(void)
{
	struct timespec ts;
	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void timing_threads(double wall, const struct ingest_args *a, double writer_cpu, double cpu0)
{
	double main_cpu = thread_cpu() - cpu0, waited, mb = 0;
	int nw;
	double parse_cpu = arm_parse_cpu(&nw, &waited);
	for (int i = 0; i < a->narms; i++) {
		struct stat st;
		if (a->arms[i].ebpf && !stat(a->arms[i].ebpf, &st) && S_ISREG(st.st_mode))
			mb += (double)st.st_size / 1e6;
	}
	double cpu = main_cpu + parse_cpu + writer_cpu;
	kvio_err("timing: threads: main %.3fs CPU (%.0f%% of wall, %.3fs waiting for parsed blocks), %d parse "
		 "threads %.3fs CPU (%.0f%% of wall each), chunk writer %.3fs CPU (%.0f%%); device %.1f MB, %.0f MB/s "
		 "per core used (%.2f cores)",
		 main_cpu, 100 * main_cpu / wall, waited, nw, parse_cpu, nw ? 100 * parse_cpu / nw / wall : 0,
		 writer_cpu, 100 * writer_cpu / wall, mb, cpu > 0 ? mb / cpu : 0, cpu / wall);
}

int ingest_arm(struct ingest_args *a, int i, struct dbw *w, struct arm *arm, double t0)
{
	int timing = getenv("KVIO_TIMING") != NULL;
	struct arm_out t;
	arm->label = a->arms[i].label;
	if (a->arms[i].ebpf) /* its first blocks parse while the semantic file is read */
		arm_device_start(arm, a->arms[i].ebpf, &a->o);
	int status = arm_load(arm, a->arms[i].sem, a->arms[i].serving, &a->o);
	if (timing) kvio_err("timing: +%.3fs semantic/serving read", now_s() - t0);
	arm->ebpf_f.path = a->arms[i].ebpf ? a->arms[i].ebpf : "-";
	const struct arm_spec *sp = &a->arms[i];
	if (sp->shown[0] && sp->sem) /* --follow: a pipe read from its spool, named as given */
		arm->sem_f.path = sp->shown[0];
	if (sp->shown[1] && sp->ebpf)
		arm->ebpf_f.path = sp->shown[1];
	if (sp->shown[2] && sp->serving)
		arm->serving_f.path = sp->shown[2];
	if (status) {
		arm_device_stop(arm);
		return status;
	}
	if (a->o.join == JOIN_KEY)
		arm_key_join(arm);
	else if (a->o.join == JOIN_OFFSET)
		arm_offset_prepare(arm);
	arm_prepare(arm);
	write_arm_begin(w, arm, i, &a->o, &t);
	if (a->arms[i].ebpf)
		status = arm_stream(arm, w, &t, a->arms[i].ebpf, &a->o);
	arm_device_stop(arm); /* a stream that did not start (no device file read) */
	if (timing) kvio_err("timing: +%.3fs device stream", now_s() - t0);
	arm_finish(arm, &a->o);
	if (arm->swapped) { /* a result of nothing: a usage error, not a database */
		kvio_err("%s and %s look swapped: --sem takes LMCache's trace, --ebpf the monitor's "
			 "(nothing written)", arm->sem_f.path, arm->ebpf_f.path);
		return 2;
	}
	write_arm_end(w, arm, &a->o, &t);
	if (timing) kvio_err("timing: +%.3fs arm end", now_s() - t0);
	write_threads(w, arm);
	write_stats(w, arm, &a->o);
	return status;
}

/* The JSONL arms into db; *armsp gets the arms (the caller frees them). */
int ingest_arms(struct ingest_args *a, sqlite3 *db, struct arm **armsp)
{
	int status = 0;
	int timing = getenv("KVIO_TIMING") != NULL;
	double t0 = now_s(), cpu0 = timing ? thread_cpu() : 0;
	struct arm *arms = *armsp = xcalloc(a->narms, sizeof *arms);
	struct dbw w;
	if (dbw_begin(&w, db) != SQLITE_OK)
		return 2;
	dbw_sum_rows(&w); /* the big tables' sums as they are written (write.c writes them through dbw) */
	for (int i = 0; i < a->narms && !status && w.rc == SQLITE_OK; i++)
		status = ingest_arm(a, i, &w, &arms[i], t0);
	if (!status)
		write_options_meta(&w, &a->o);
	if (status)
		w.rc = status == 2 ? SQLITE_ERROR : w.rc;
	if (dbw_end(&w, a->narms) != SQLITE_OK && !status)
		status = 2;
	if (timing)
		kvio_err("timing: +%.3fs dbw_end", now_s() - t0);
	if (timing)
		timing_threads(now_s() - t0, a, w.writer_cpu, cpu0);
	if (timing)
		kvio_err("timing: ingest %.3fs (peak RSS %ld KB, simdjson kernel %s)", now_s() - t0, peak_rss_kb(), sj_kernel());
	return status;
}

int ingest_into(struct ingest_args *a, struct outfile *o, struct arm **armsp)
{
	sqlite3 *db = NULL;
	int status = 0;
	*armsp = NULL;
	outfile_sqlite(o);
	if (db_create(o->tmp, &db) != SQLITE_OK)
		return 2;
	if (a->pftrace)
		status = pftrace_import(a->pftrace, db) != 0 ? 2 : 0;
	else
		status = ingest_arms(a, db, armsp);
	int crc = sqlite3_close(db);
	if (crc != SQLITE_OK && !status) {
		kvio_err("writing %s: closing the database: %s", o->path, sqlite3_errstr(crc));
		status = 2;
	}
	return status;
}

int ingest_summary(const struct ingest_args *a, struct arm *arms, const char *path, int written)
{
	for (int i = 0; !a->quiet && arms && i < a->narms; i++)
		summary(&arms[i], &a->o);
	return arms && warn_arms(arms, a->narms, &a->o, path, written);
}

void ingest_free(const struct ingest_args *a, struct arm *arms)
{
	for (int i = 0; arms && i < a->narms; i++)
		arm_free(&arms[i]);
	free(arms);
}

int ingest_to_db(struct ingest_args *a, const char *path)
{
	/* temp file next to the target, renamed into place only when complete */
	const char *in[3 * MAX_ARMS + 1];
	size_t nin = ingest_inputs(a, in, sizeof in / sizeof in[0]);
	struct outfile o;
	struct arm *arms = NULL;
	if (ingest_inputs_readable(a) || outfile_open(&o, path, in, nin))
		return 2;
	int status = ingest_into(a, &o, &arms);
	if (status)
		outfile_abort(&o);
	else
		status = outfile_commit(&o);
	if (!status && !a->quiet && arms)
		printf("kvio-ingest: wrote %s\n", path);
	if (!status && arms && ingest_summary(a, arms, path, 1))
		status = 1;
	if (!status && !a->quiet && !arms) {
		printf("kvio-ingest: wrote %s (from %s)\n", path, a->pftrace);
	}
	ingest_free(a, arms);
	return status;
}

int ingest_cmdline(struct ingest_args *a, int argc, char **argv, const char *help, const char *out_what)
{
	ingest_defaults(a);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf(help, ingest_options_help, ingest_exit_help);
			return 0;
		}
		if (!strcmp(argv[i], "-o") || opt_is(argv[i], "--out")) {
			if (a->out) {
				kvio_err("-o given twice (see --help)");
				return 2;
			}
			if (!(a->out = opt_value(argc, argv, &i, argv[i][1] == 'o' ? "-o" : "--out")))
				return 2;
			continue;
		}
		int r = ingest_parse_opt(a, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r == 0) {
			kvio_err("unknown option '%s' (see --help)", argv[i]);
			return 2;
		}
	}
	if (!a->out) {
		kvio_err("need -o %s (see --help)", out_what);
		return 2;
	}
	return ingest_finish_args(a) ? 2 : -1;
}
