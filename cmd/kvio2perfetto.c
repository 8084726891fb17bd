/* kvio2perfetto.c — ingest + export in one step, a drop-in for the reference
 * converter's quickstart line: the same options as kvio-ingest, -o FILE.pftrace. */
#include "pcache.h"
#include "../export/export.h"
#include "../ingest/ingest.h"
#include "../db/schema.h"
#include "../lib/cli.h"
#include "../lib/outfile.h"
#include "../lib/util.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
	"usage: kvio2perfetto --sem S --ebpf E [--serving V] [--label L] -o kv.pftrace[.gz]\n"
	"       kvio2perfetto --merge L=SEM,EBPF[,SERVING] [--merge ...] -o ab.pftrace\n\n"
	"kvio-ingest and kvio-export in one step (the database is temporary).\n\n"
	"options:\n"
	"  -o, --out FILE        the .pftrace to write (.gz suffix gzips; '-': standard\n"
	"                        output, plain, without the summary)\n"
	"  --no-findings         leave the 'kvio findings' tracks out (kvio-export's)\n"
	"  --batch-gap-us N      submit gap that splits the findings' inferred batches\n"
	"                        (kvio-report's --batch-gap-us; default 50)\n"
	"%s\n"
	"EXAMPLES\n"
	"  kvio2perfetto --sem sem.jsonl --ebpf ebpf.jsonl -o kv.pftrace\n"
	"  kvio2perfetto --merge stock=s1,e1 --merge batched=s2,e2 -o ab.pftrace\n\n"
	"exit status: 0 ok; 1 an arm without any device command or semantic record,\n"
	"  or whose --time-range/--trace-id window holds none (nothing written); 2 usage or I/O error, or an input that is not a JSONL\n"
	"  capture; 130/143 interrupted by SIGINT/SIGTERM (nothing written)\n";

/* The export's own options (--no-findings, --batch-gap-us N) out of argv into
 * eo; the others stay, in order, for the ingest's parser. The new argc, or -1
 * after a one-line usage error. */
static int take_export_opts(struct export_opts *eo, int argc, char **argv)
{
	int n = 1, seen_gap = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-findings") || opt_is(argv[i], "--batch-gap-us")) {
			if (export_parse_opt(eo, argc, argv, &i, &seen_gap))
				return -1;
		} else {
			argv[n++] = argv[i];
		}
	}
	argv[n] = NULL;
	return n;
}

/* The export's page cache (pcache.h) for a's device files: their database is
 * about a sixth of their bytes (a 200k-line capture's 38.5 MB: 6.9 MB), read by
 * the findings' two connections (256 pages each at most) and the export's;
 * 512 pages (as kvio-export's) when a size is unknown (a pipe). */
static int export_pages(const struct ingest_args *a)
{
	double bytes = 0;
	for (int i = 0; i < a->narms; i++) {
		struct stat st;
		if (!a->arms[i].ebpf)
			continue;
		if (stat(a->arms[i].ebpf, &st) || !S_ISREG(st.st_mode))
			return 512;
		bytes += (double)st.st_size;
	}
	double pages = 2 * (bytes / 6 / 65536) + 32;
	return pages > 512 ? 512 : (int)pages;
}

int cmd_kvio2perfetto(int argc, char **argv)
{
	struct ingest_args a;
	struct export_opts eo = {NULL, 1, 50000, NULL};
	if ((argc = take_export_opts(&eo, argc, argv)) < 0)
		return 2;
	int rc = ingest_cmdline(&a, argc, argv, help, "kv.pftrace");
	if (rc >= 0)
		return rc;
	if (a.pftrace) {
		kvio_err("--pftrace belongs to kvio-ingest");
		return 2;
	}
	if (!strcmp(a.out, "-"))
		a.quiet = 1; /* -o -: standard output holds the trace, the summary stays off it */
	/* the output beside its final name; the database in $TMPDIR, removed on
	 * every way out (a signal too: lib/outfile.h) */
	const char *in[3 * MAX_ARMS + 1];
	size_t nin = ingest_inputs(&a, in, sizeof in / sizeof in[0]);
	struct outfile out, tdb;
	if (ingest_inputs_readable(&a) || outfile_open(&out, a.out, in, nin))
		return 2;
	if (outfile_scratch(&tdb, "kvio2perfetto.db", in, nin)) {
		outfile_abort(&out);
		return 2;
	}
	struct arm *arms = NULL;
	struct export_stats s;
	struct pcache pc; /* faulted in while the ingest runs (SQLite's own pages come from malloc) */
	pcache_prepare(&pc, export_pages(&a));
	rc = ingest_into(&a, &tdb, &arms);
	pcache_install(&pc); /* the ingest's connection is closed: the export's connections get it */
	if (!rc && ingest_summary(&a, arms, a.out, 0)) /* an arm holds nothing: no trace */
		rc = 1;
	if (!rc) {
		sqlite3 *db = db_open_ro(tdb.tmp);
		eo.progress = a.o.progress ? a.out : NULL; /* kvio-ingest's choice (a terminal, not -q) */
		rc = db ? export_db(db, &out, &eo, &s) : 2;
		if (db)
			sqlite3_close(db);
	}
	outfile_abort(&tdb);
	if (rc)
		outfile_abort(&out);
	else
		rc = outfile_commit(&out);
	if (!rc && !a.quiet)
		printf("kvio2perfetto: wrote %s (%llu packets)\n", a.out, (unsigned long long)s.packets);
	ingest_free(&a, arms);
	return rc;
}
