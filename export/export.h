/* export.h — trace.db to a Perfetto .pftrace (export.c). */
#ifndef KVIO_EXPORT_H
#define KVIO_EXPORT_H
#include <sqlite3.h>
#include <stdint.h>

struct export_stats {
	uint64_t packets, bytes; /* bytes before compression */
	uint64_t kept;           /* command and object slices written */
	uint64_t slices;         /* slices written, commands included, capture_info not */
};

struct kvio_window;
struct outfile;

/* Write db as a .pftrace into the open outfile o (gzipped when o->path ends in
 * ".gz"); the caller commits or aborts o. With a window (lib/window.h; NULL or
 * empty: everything), only what it keeps. Returns 0, or 2 after a one-line
 * error reading db; a write error stays in o->err for outfile_commit to say. */
int export_db(sqlite3 *db, struct outfile *o, const struct kvio_window *win, struct export_stats *stats);
/* kvio-export's entry (cmd/main.c's table). */
int cmd_export(int argc, char **argv);

#endif
