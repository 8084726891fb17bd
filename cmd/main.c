/* main.c — one binary, several commands: dispatch on argv[0] (kvio-ingest,
 * kvio-report, kvio-export, kvio2perfetto, installed as links) or on the first
 * argument (`kvio ingest ...`). */
#include "cmd.h"
#include "../lib/outfile.h"
#include "../lib/util.h"
#include <sqlite3.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

static const struct builtin {
	const char *name; /* as installed */
	const char *sub;  /* as `kvio SUB` */
	int (*fn)(int, char **);
	const char *what;
	int pages; /* SQLite pages in the huge-page cache (page_cache_init); 0: none */
} builtins[] = {
	{"kvio-ingest", "ingest", cmd_ingest, "load kvio JSONL captures into a trace.db", 0},
	{"kvio-report", "report", cmd_report, "the metrics report over a trace.db (text or --json)", 512},
	{"kvio-export", "export", cmd_export, "write a trace.db as a Perfetto .pftrace", 512},
	{"kvio2perfetto", "2perfetto", cmd_kvio2perfetto, "ingest + export in one step", 512},
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

/* SQLite's page cache (64 KiB pages) in one region of huge pages where the
 * kernel allows them (madvise), for the commands whose connections read a
 * whole database into their caches (a report's two: 256 pages each): a trap
 * per 2 MiB, not per 4 KiB (page faults were a fifth of a small report's
 * time on a VM). SQLite touches every slot at start (34 MB of RSS for 512),
 * so the ingest, whose cache is 4 MiB, goes without. More pages than it
 * holds come from malloc, as without it. */
static void page_cache_init(int pages)
{
	int hdr = 0;
	if (pages <= 0 || sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK || hdr <= 0)
		return;
	size_t sz = (65536 + (size_t)hdr + 63) & ~(size_t)63, n = (size_t)pages, len = sz * n;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);
#endif
	if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, p, (int)sz, (int)n) != SQLITE_OK)
		munmap(p, len);
}

int main(int argc, char **argv)
{
	/* no global memory statistics: they take a process-wide mutex on every
	 * allocation, which serializes the report's two connections */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* a signal removes the temp files of outputs being written, exits 128+N */
	outfile_signals_init();
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(base, builtins[i].name)) {
			kvio_prog = builtins[i].name;
			page_cache_init(builtins[i].pages);
			return finish(builtins[i].fn(argc, argv));
		}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(argv[1], builtins[i].sub) || !strcmp(argv[1], builtins[i].name)) {
			kvio_prog = builtins[i].name;
			page_cache_init(builtins[i].pages);
			return finish(builtins[i].fn(argc - 1, argv + 1));
		}
	kvio_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
