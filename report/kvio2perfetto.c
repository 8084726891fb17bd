/* kvio2perfetto.c — ingest + export in one step, a drop-in for the reference
 * converter's quickstart line: the same options as kvio-ingest, -o FILE.pftrace. */
#include "export.h"
#include "../ingest/ingest.h"
#include "../ingest/schema.h"
#include "../lib/cli.h"
#include "../lib/util.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
	"usage: kvio2perfetto --sem S --ebpf E [--serving V] [--label L] -o kv.pftrace[.gz]\n"
	"       kvio2perfetto --merge L=SEM,EBPF[,SERVING] [--merge ...] -o ab.pftrace\n\n"
	"kvio-ingest and kvio-export in one step (the database is temporary).\n\n"
	"options:\n"
	"  -o, --out FILE        the .pftrace to write (.gz suffix gzips)\n"
	"%s\n"
	"EXAMPLES\n"
	"  kvio2perfetto --sem sem.jsonl --ebpf ebpf.jsonl -o kv.pftrace\n"
	"  kvio2perfetto --merge stock=s1,e1 --merge batched=s2,e2 -o ab.pftrace\n\n"
	"exit status: 0 ok; 1 an arm without any device command or semantic record\n"
	"  (nothing written); 2 usage or I/O error, or an input that is not a JSONL\n"
	"  capture; 130/143 interrupted by SIGINT/SIGTERM (nothing written)\n";

int cmd_kvio2perfetto(int argc, char **argv)
{
	struct ingest_args a;
	int rc = ingest_cmdline(&a, argc, argv, help, "kv.pftrace");
	if (rc >= 0)
		return rc;
	const char *out = a.out;
	if (a.pftrace) {
		kvio_err("--pftrace belongs to kvio-ingest");
		return 2;
	}
	size_t n = strlen(out) + 32;
	char *dbpath = xmalloc(n);
	snprintf(dbpath, n, "%s.db-%d", out, (int)getpid());
	rc = ingest_to_db(&a, dbpath);
	if (!rc) {
		sqlite3 *db = db_open_ro(dbpath);
		struct export_stats s;
		rc = db ? export_db(db, out, NULL, &s) : 2;
		if (db)
			sqlite3_close(db);
		if (!rc && !a.quiet)
			printf("kvio2perfetto: wrote %s (%llu packets)\n", out, (unsigned long long)s.packets);
	}
	unlink(dbpath);
	free(dbpath);
	return rc;
}
