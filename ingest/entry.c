/* entry.c — kvio-ingest's entry (cmd/main.c's table): its help, --follow's
 * options, and the dispatch to a one-shot ingest (ingest.c) or a follow
 * (follow.c). */
#include "kvio_prefix.h" /* KVIO_LIBDIR: where make install put the extension */
#include "ingest.h"
#include "../lib/cli.h"
#include <stdio.h>
#include <string.h>

static const char ingest_help[] =
	"usage: kvio-ingest -o trace.db --sem S --ebpf E [--serving V] [--label L]\n"
	"       kvio-ingest -o trace.db --merge L=SEM,EBPF[,SERVING] [--merge ...]\n"
	"       kvio-ingest -o trace.db --pftrace kv.pftrace\n"
	"       kvio-ingest -o trace.db --sem S --ebpf E --follow [--interval MS] [--idle SECONDS]\n\n"
	"Joins the device stream (user_data >> 32 = trace_id) to the semantic objects\n"
	"and writes a SQLite database shaped like trace_processor's tables. Inputs are\n"
	"JSONL, plain or gzip, files or pipes (zstd: --ebpf <(zstdcat ebpf.jsonl.zst)).\n\n"
	"options:\n"
	"  -o, --out FILE        output database (written atomically)\n"
	"%s"
	"  --pftrace FILE        read a TrackEvent .pftrace (kvio's or kvio2perfetto.py's)\n"
	"  --follow              keep trace.db current while the inputs grow (also --merge,\n"
	"                        --ebpf - from a pipe): written in place in WAL mode, one\n"
	"                        commit per --interval with what arrived (readers see the\n"
	"                        last commit); stops on SIGINT/SIGTERM (exit 0: stopping\n"
	"                        is how a follow ends), --idle, the tracer's drops line or the\n"
	"                        end of a pipe, then writes what a one-shot ingest would\n"
	"  --interval MS         --follow: look at the inputs every MS ms (default 1000)\n"
	"  --idle SECONDS        --follow: stop after SECONDS without a new byte\n"
	"  --force               --follow: replace an existing output (else refused)\n\n"
	"EXAMPLES\n"
	"  kvio-ingest -o trace.db --sem sem.jsonl --ebpf ebpf.jsonl\n"
	"  kvio-ingest -o ab.db --merge stock=s1.jsonl,e1.jsonl --merge batched=s2.jsonl,e2.jsonl\n"
	"  sqlite3 trace.db -cmd '.load " KVIO_LIBDIR "/kvio' \\\n"
	"      \"select count(*) from slice where extract_arg(arg_set_id,'debug.trace_id')=42\"\n\n"
	"Warnings about the data go to standard error, also with -q.\n\n"
	"%s";

/* kvio-ingest's own options (--follow and its knobs) taken out of argv;
 * the rest is ingest_cmdline's. 0, or 2 after a usage error. */
static int follow_opts(struct ingest_args *a, int *argc, char **argv)
{
	int n = 1, seen = 0;
	a->interval_ms = 1000;
	for (int i = 1; i < *argc; i++) {
		const char *arg = argv[i], *v;
		int64_t x;
		if (!strcmp(arg, "--")) { /* the rest is not options */
			while (i < *argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(arg, "--follow") || !strcmp(arg, "--force")) {
			*(arg[4] == 'l' ? &a->follow : &a->force) = 1;
			continue;
		}
		if (opt_is(arg, "--interval") || opt_is(arg, "--idle")) {
			int iv = arg[3] == 'n';
			if (!(v = opt_value(*argc, argv, &i, iv ? "--interval" : "--idle")))
				return 2;
			if (parse_i64(v, &x) || x <= 0 || x > 86400000) {
				kvio_err("%s: '%s' is not a positive integer", iv ? "--interval" : "--idle", v);
				return 2;
			}
			*(iv ? &a->interval_ms : &a->idle_ms) = iv ? x : x * 1000;
			seen = 1;
			continue;
		}
		argv[n++] = argv[i];
	}
	*argc = n;
	argv[n] = NULL;
	if ((seen || a->force) && !a->follow) {
		kvio_err("--interval, --idle and --force go with --follow");
		return 2;
	}
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_args a;
	struct ingest_args f = {0};
	if (follow_opts(&f, &argc, argv))
		return 2;
	int rc = ingest_cmdline(&a, argc, argv, ingest_help, "trace.db");
	if (rc >= 0)
		return rc;
	a.follow = f.follow;
	a.force = f.force;
	a.interval_ms = f.interval_ms;
	a.idle_ms = f.idle_ms;
	if (!strcmp(a.out, "-")) {
		kvio_err("-o -: a database cannot be written to standard output (SQLite needs a file): name one");
		return 2;
	}
	return a.follow ? ingest_follow(&a, a.out) : ingest_to_db(&a, a.out);
}
