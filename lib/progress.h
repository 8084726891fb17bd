/* progress.h — the one-line progress display of long work on a terminal
 * (progress.c): "NAME: N lines, 42% (120 MB/s, ETA 3 s)" where the total is
 * known, "NAME: N lines (120 MB/s)" where it is not (a pipe, a growing file),
 * "NAME: 812 of 1953 chunks, 42% (ETA 1 s)" for units. Redrawn on stderr at
 * most ~10 times a second; the caller decides whether it is on (stderr a
 * terminal, not -q, not --follow/--watch: progress_wanted). The callers tick
 * per block of work (a 4 MB read block, a command chunk, an analysis), never
 * per line: off, a tick costs one test; on, a clock read (~30 ns). */
#ifndef KVIO_PROGRESS_H
#define KVIO_PROGRESS_H
#include <stdint.h>

struct progress {
	int on;
	const char *name, *unit; /* "e.jsonl", "lines" */
	uint64_t total;          /* of pos (bytes, or units when !bytes); 0: unknown */
	int bytes;               /* pos counts bytes: a rate in MB/s */
	int fd;                  /* a regular file whose size is the total (-1: none) */
	int64_t size;            /* its size when the total was taken: it grew, no total */
	double t0, next;         /* the start; the next redraw */
	uint64_t count, pos;     /* the last tick's */
	int drawn;               /* a line was drawn */
};

/* Whether a display is wanted: stderr is a terminal, quiet is 0 and
 * KVIO_PROGRESS is not 0 (kvio-report's children for several databases). */
int progress_wanted(int quiet);
/* Start p (on: progress_wanted's answer) for name's unit ("lines", "chunks").
 * The first line is drawn after KVIO_PROGRESS_DELAY_MS (default 500), so that
 * short work shows nothing. */
void progress_start(struct progress *p, int on, const char *name, const char *unit);
/* The total of pos: n units (bytes 0) or n bytes (bytes 1; 0: unknown). */
void progress_total(struct progress *p, uint64_t n, int bytes);
/* pos counts bytes of file fd: its size is the total while it does not grow
 * (a regular file); a pipe or a terminal has none. */
void progress_file(struct progress *p, int fd);
/* The slow half of progress_tick. */
void progress_poll(struct progress *p, uint64_t count, uint64_t pos);
/* count units done; pos of the total consumed (bytes, or units). */
static inline void progress_tick(struct progress *p, uint64_t count, uint64_t pos)
{
	if (p->on)
		progress_poll(p, count, pos);
}
/* The end, at count and pos: with keep, the final line (the count, the time
 * taken) stays, followed by a newline; without, the line is cleared (nothing
 * when no line was drawn). */
void progress_end(struct progress *p, uint64_t count, uint64_t pos, int keep);

#endif
