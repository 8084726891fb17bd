/* watch.h — kvio-report --last and --watch (watch.c): the window of the last
 * seconds of a database, and the loop that reports it again every few seconds
 * as a screen redrawn in place (a terminal) or one JSON line per refresh. */
#ifndef KVIO_WATCH_H
#define KVIO_WATCH_H
#include "report.h"

struct watch {
	double every_s;   /* --watch SECONDS (default 1) */
	int64_t count;    /* --count N: stop after N refreshes; 0: at SIGINT/SIGTERM */
	int json;         /* one JSON line per refresh (standard output is no terminal, or --json) */
	/* the loop's state */
	int64_t n;        /* this refresh, from 1 */
	int64_t start_ns; /* the capture's first command or object, at this refresh */
	int64_t last_hi;  /* the window's end at the refresh before (INT64_MIN: none) */
	int64_t same;     /* refreshes in a row whose end did not move */
	int warned;       /* the ingest's warnings were repeated once */
};

/* --last: the window [end - last_ns, end] into w's time bounds, end the latest
 * command or object end (ts + dur) in db; *start the earliest begin. 0; 1 when
 * the database holds no command and no object (said); 2 after a one-line error. */
int last_window(sqlite3 *db, const char *dbpath, int64_t last_ns, struct kvio_window *w, int64_t *start);

/* One refresh: the report of the window, shown through watch_show; its exit
 * status (0 ok, 3 a --fail-on gate fired, else it failed and said why). */
typedef int watch_refresh(void *ctx);

/* Refresh every w->every_s seconds until SIGINT/SIGTERM (0), a gate fires
 * (3) or w->count refreshes (the last one's status). */
int watch_loop(struct watch *w, watch_refresh *fn, void *ctx);

/* A refresh's report (ls[0..nl), formatted; db: its main connection, prelude
 * run) on standard output: the screen or the JSON line. 0, or 2 after an error. */
int watch_show(struct watch *w, sqlite3 *db, const struct report_opts *o, const char *dbpath, struct label *ls,
	       int nl);

#endif
