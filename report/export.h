/* export.h — trace.db to a Perfetto .pftrace (export.c). */
#ifndef KVIO_EXPORT_H
#define KVIO_EXPORT_H
#include <sqlite3.h>
#include <stdint.h>

struct export_stats {
	uint64_t packets, bytes; /* bytes before compression */
};

struct kvio_window;

/* Write db to path (".gz" gzips), atomically (temp file + rename); with a
 * window (lib/window.h; NULL or empty: everything), only what it keeps.
 * Returns 0, or 2 after a one-line error. */
int export_db(sqlite3 *db, const char *path, const struct kvio_window *win, struct export_stats *stats);

#endif
