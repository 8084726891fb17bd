/* progress.c — see progress.h. */
#include "progress.h"
#include "util.h"
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define REDRAW_S 0.1 /* at most ~10 redraws a second */

int progress_wanted(int quiet)
{
	return !quiet && isatty(2) && env_i64("KVIO_PROGRESS", 1, 0) != 0;
}

void progress_start(struct progress *p, int on, const char *name, const char *unit)
{
	*p = (struct progress){.on = on, .name = name, .unit = unit, .fd = -1};
	p->t0 = now_s();
	p->next = p->t0 + (double)env_i64("KVIO_PROGRESS_DELAY_MS", 500, 0) / 1000;
}

void progress_total(struct progress *p, uint64_t n, int bytes)
{
	p->total = n;
	p->bytes = bytes;
}

void progress_file(struct progress *p, int fd)
{
	struct stat st;
	p->bytes = 1;
	p->total = 0;
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		p->fd = fd;
		p->size = st.st_size;
		p->total = (uint64_t)st.st_size;
	}
}

/* The total, or 0 when there is none any more: the file grew since it was taken. */
static uint64_t total_now(struct progress *p)
{
	struct stat st;
	if (p->fd >= 0 && p->total && (fstat(p->fd, &st) || st.st_size != p->size))
		p->total = 0; /* a growing file: the count and the rate only, from now on */
	return p->total;
}

/* One line: "NAME: N UNIT[, P%] (RATE[, ETA T s])" or, at the end, "(T s)". */
static void draw(struct progress *p, double now, int end)
{
	double dt = now - p->t0, frac = 0;
	uint64_t total = total_now(p);
	char pct[32] = "", paren[80] = "";
	if (total) {
		frac = (double)p->pos / (double)total;
		frac = frac > 1 ? 1 : frac;
		snprintf(pct, sizeof pct, ", %d%%", (int)(100 * frac));
	}
	int n = 0;
	if (p->bytes && dt > 0)
		n = snprintf(paren, sizeof paren, "%.0f MB/s", (double)p->pos / 1e6 / dt);
	if (end)
		snprintf(paren + n, sizeof paren - (size_t)n, "%s%.1f s", n ? ", " : "", dt);
	else if (total && frac > 0 && dt > 0) {
		double eta = dt * (1 - frac) / frac;
		snprintf(paren + n, sizeof paren - (size_t)n, "%sETA %.*f s", n ? ", " : "", eta < 10 ? 1 : 0, eta);
	}
	char of[32] = "";
	if (!p->bytes && total)
		snprintf(of, sizeof of, " of %llu", (unsigned long long)total);
	fprintf(stderr, "\r%s: %s: %llu%s %s%s%s%s%s\033[K", kvio_prog, p->name, (unsigned long long)p->count, of,
		p->unit, pct, *paren ? " (" : "", paren, *paren ? ")" : "");
	fflush(stderr);
	p->drawn = 1;
	kvio_err_progress(1);
}

void progress_poll(struct progress *p, uint64_t count, uint64_t pos)
{
	p->count = count;
	p->pos = pos;
	double now = now_s();
	if (now < p->next)
		return;
	p->next = now + REDRAW_S;
	draw(p, now, 0);
}

void progress_end(struct progress *p, uint64_t count, uint64_t pos, int keep)
{
	if (!p->on || !p->drawn)
		return;
	p->count = count;
	p->pos = pos;
	if (keep) {
		draw(p, now_s(), 1);
		fputc('\n', stderr);
	} else
		fputs("\r\033[K", stderr);
	fflush(stderr);
	kvio_err_progress(0);
	p->on = 0;
}
