/* main.c — one binary, several commands: dispatch on argv[0] (kvio-ingest,
 * kvio-report, kvio-export, kvio2perfetto, installed as links) or on the first
 * argument (`kvio ingest ...`). */
#include "cmd.h"
#include "hugemem.h"
#include "../lib/outfile.h"
#include "../lib/util.h"
#include <sqlite3.h>
#include <stdio.h>
#include <errno.h>
#include <malloc.h>
#include <string.h>

static const struct builtin {
	const char *name; /* as installed */
	const char *sub;  /* as `kvio SUB` */
	int (*fn)(int, char **);
	const char *what;
	int one_arena; /* malloc's threads share one arena (see start) */
} builtins[] = {
	{"kvio-ingest", "ingest", cmd_ingest, "load kvio JSONL captures into a trace.db", 0},
	{"kvio-report", "report", cmd_report, "the metrics report over a trace.db (text or --json)", 1},
	{"kvio-export", "export", cmd_export, "write a trace.db as a Perfetto .pftrace", 1},
	{"kvio2perfetto", "2perfetto", cmd_kvio2perfetto, "ingest + export in one step", 0},
	{"kvio-check", "check", cmd_check, "check a trace.db: every checksum, chunk and invariant", 0},
};
#define NBUILTIN (sizeof builtins / sizeof builtins[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: kvio <command> [options]   (or run the command by its own name)\n\n");
	for (size_t i = 0; i < NBUILTIN; i++)
		fprintf(f, "  %-14s %s\n", builtins[i].name, builtins[i].what);
	fprintf(f, "\nEach command takes --help.\n"
		   "exit status (every command): 0 ok; 1 the result is unusable or suspect (e.g. no\n"
		   "  command at all); 2 usage or I/O error; 3 kvio-report --fail-on fired;\n"
		   "  130/143 interrupted by SIGINT/SIGTERM\n");
}

/* A report piped or redirected to a full disk must not end "ok": stdout is
 * flushed and closed here, and a failure there fails the command. */
static int finish(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		kvio_err("writing standard output: %s", strerror(errno ? errno : EIO));
		return rc ? rc : 2;
	}
	return rc;
}

/* Run command b. kvio-report's connections and kvio-export's findings run
 * on threads of their own; each thread would get a malloc arena of its own,
 * and the memory one thread frees (the QD1 gather's, some 100 MB at 16M
 * lines) would stay in its arena while the other's grows. In one arena the
 * peak is what is live at once: the 16M report's peak RSS 176 -> 139-146 MB
 * (by hand, same times). The ingest's parse threads allocate per block and
 * keep their arenas. */
static int start(const struct builtin *b, int argc, char **argv)
{
	kvio_prog = b->name;
	if (b->one_arena)
		(void)mallopt(M_ARENA_MAX, 1);
	return b->fn(argc, argv);
}

int main(int argc, char **argv)
{
	hugemem_reexec(argv); /* returns where it does not start over */
	/* no global memory statistics: they take a process-wide mutex on every
	 * allocation, which serializes the report's two connections */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* a signal removes the temp files of outputs being written, exits 128+N */
	outfile_signals_init();
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(base, builtins[i].name))
			return finish(start(&builtins[i], argc, argv));
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(argv[1], builtins[i].sub) || !strcmp(argv[1], builtins[i].name))
			return finish(start(&builtins[i], argc - 1, argv + 1));
	kvio_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
