/* check.c — kvio-check: every check kvio makes of a trace.db, a line each
 * (db/check.c), for a database that was copied, archived or attached to a bug. */
#include "cmd.h"
#include "../db/check.h"
#include "../db/schema.h"
#include "../lib/util.h"
#include <stdio.h>
#include <string.h>

static const char check_help[] =
	"usage: kvio-check trace.db\n\n"
	"Checks everything kvio trusts about a database before it believes it, and prints a\n"
	"line per check: SQLite's quick_check of the pages and indexes; kvio_schema_version;\n"
	"the schema (kvio's own tables and views, no trigger); every table's checksum\n"
	"(kvio_sum); the chunks' directory and every command chunk (its checksum and each\n"
	"command's values); the invariants across tables the readers rely on (flows and args\n"
	"pointing at slices, tracks at processes). kvio-report and kvio-export make the same\n"
	"checks on what they read and stop at the first failure; this makes them all.\n\n"
	"EXAMPLES\n"
	"  kvio-check trace.db\n"
	"  kvio-check ab.db && kvio-report ab.db --json > ab.json\n\n"
	"exit status: 0 every check passed; 2 a check failed (the database is damaged or\n"
	"  was not written by kvio: ingest the capture again), or usage or I/O error\n";

int cmd_check(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(check_help, stdout);
			return 0;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			kvio_err("unknown option '%s' (see --help)", argv[i]);
			return 2;
		}
		if (path) {
			kvio_err("unexpected argument '%s' (one database; see --help)", argv[i]);
			return 2;
		}
		path = argv[i];
	}
	if (!path) {
		kvio_err("need a trace.db (see --help)");
		return 2;
	}
	sqlite3 *db = db_open_input(path);
	if (!db)
		return 2;
	printf("kvio-check: %s\n", path);
	int bad = db_check_all(db, stdout);
	sqlite3_close(db);
	if (bad)
		printf("%s: DAMAGED (%d check%s failed): ingest the capture again\n", path, bad, bad == 1 ? "" : "s");
	else
		printf("%s: clean\n", path);
	return bad ? 2 : 0;
}
