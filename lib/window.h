/* window.h — the --time-range START_S,END_S and --trace-id A[-B] filters,
 * shared by kvio-ingest, kvio2perfetto, kvio-export and kvio-report.
 *
 * A time window keeps an event whose span [ts, ts + dur] overlaps
 * [lo_ns, hi_ns] (both ends inclusive; a point at ts when dur is 0); times are
 * the database's (rebased per arm, or absolute CLOCK_MONOTONIC ns under
 * --no-rebase). A trace_id range keeps tags lo..hi inclusive; an untagged
 * command (trace_id 0) is never kept. */
#ifndef KVIO_WINDOW_H
#define KVIO_WINDOW_H
#include <stddef.h>
#include <stdint.h>

struct kvio_window {
	int has_time;
	int64_t lo_ns, hi_ns;  /* (int64)(seconds * 1e9), as the semantic times */
	int has_tid;
	uint64_t tid_lo, tid_hi;
};

/* Parse --time-range / --trace-id at argv[*i] (either "--opt V" or
 * "--opt=V"). Returns 1 when consumed, 0 when argv[*i] is neither, -1 after a
 * one-line usage error. */
int window_parse_opt(struct kvio_window *w, int argc, char **argv, int *i);

/* The window as the options that give it ("--time-range 100,200", "--trace-id
 * 5-9", both joined by " and ") into buf (n > 0 bytes); "" without one. */
const char *window_desc(const struct kvio_window *w, char *buf, size_t n);

/* A slice [ts, ts + dur] (dur < 0: never ended, open to the right) or a
 * point (dur 0) is inside the time window (always, without one). */
static inline int window_span(const struct kvio_window *w, int64_t ts, int64_t dur)
{
	if (!w->has_time)
		return 1;
	int64_t end;
	if (ts > w->hi_ns)
		return 0;
	if (dur < 0 || __builtin_add_overflow(ts, dur, &end))
		return 1;
	return end >= w->lo_ns;
}

/* An object's trace_id is in the range (always, without one). */
static inline int window_obj_tid(const struct kvio_window *w, uint64_t tid)
{
	return !w->has_tid || (tid >= w->tid_lo && tid <= w->tid_hi);
}

/* A command's trace_id (0 = untagged) is in the range (always, without one). */
static inline int window_cmd_tid(const struct kvio_window *w, uint64_t tid)
{
	return !w->has_tid || (tid != 0 && tid >= w->tid_lo && tid <= w->tid_hi);
}

#endif
