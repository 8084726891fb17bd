/* export.h — trace.db to a Perfetto .pftrace (export.c). */
#ifndef KVIO_EXPORT_H
#define KVIO_EXPORT_H
#include <sqlite3.h>
#include <stdint.h>

struct export_stats {
	uint64_t packets, bytes; /* bytes before compression */
	uint64_t kept;           /* command and object slices written */
	uint64_t slices;         /* slices written, commands included, capture_info not, findings not */
	uint64_t findings;       /* finding slices written (sql/findings.sql's rows) */
};

struct kvio_window;
struct outfile;

/* What an export writes besides the database's own tracks. */
struct export_opts {
	const struct kvio_window *win; /* --time-range / --trace-id (lib/window.h); NULL or empty: everything */
	int findings;                  /* the report's findings as "kvio findings" tracks (--no-findings: 0) */
	int64_t batch_gap_ns;          /* the findings' inferred batches split here (--batch-gap-us x 1000) */
	const char *progress;          /* the name on a progress line (stderr a terminal, not -q); NULL: none */
};

/* Write db as a .pftrace into the open outfile o (gzipped when o->path ends in
 * ".gz"); the caller commits or aborts o. With a window, only what it keeps;
 * with findings, the rows of sql/findings.sql too (of the window). Returns 0,
 * or 2 after a one-line error reading db; a write error stays in o->err for
 * outfile_commit to say. */
int export_db(sqlite3 *db, struct outfile *o, const struct export_opts *eo, struct export_stats *stats);
/* --no-findings or --batch-gap-us N at argv[*i] into eo (*seen_gap counts the
 * second); 0, or 2 after a one-line usage error. kvio2perfetto's too. */
int export_parse_opt(struct export_opts *eo, int argc, char **argv, int *i, int *seen_gap);
/* kvio-export's entry (cmd/main.c's table). */
int cmd_export(int argc, char **argv);

#endif
