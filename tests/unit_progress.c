/* unit_progress.c — lib/progress.c on its own, its stderr a file: the share of
 * a regular file's size, no share once the file grows or for a pipe, at most
 * one redraw per 0.1 s however often it ticks, the final line. */
#include "../lib/progress.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit_progress: %s\n", name); \
	else { printf("FAIL - unit_progress: %s\n", name); fails++; } } while (0)

static char errpath[] = "/tmp/kvio-unit-progress.XXXXXX";

/* What stderr got since the last call, \r and ESC[K as they are. */
static char *drawn(void)
{
	static long at;
	static char buf[8192];
	fflush(stderr);
	FILE *f = fopen(errpath, "rb");
	size_t n = 0;
	if (f) {
		fseek(f, at, SEEK_SET);
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	at += (long)n;
	buf[n] = 0;
	return buf;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void nap(void)
{
	struct timespec t = {0, 120 * 1000 * 1000};
	nanosleep(&t, NULL);
}

int main(void)
{
	int efd = mkstemp(errpath);
	if (efd < 0 || dup2(efd, 2) < 0)
		return 2;
	setenv("KVIO_PROGRESS_DELAY_MS", "0", 1);
	char fpath[] = "/tmp/kvio-unit-progress-in.XXXXXX";
	int fd = mkstemp(fpath);
	char block[1000];
	memset(block, 'x', sizeof block);
	if (fd < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block)
		return 2;
	struct progress p;
	progress_start(&p, 1, "in.jsonl", "lines");
	progress_file(&p, fd);
	progress_tick(&p, 7, 500);
	char *s = drawn();
	CHECK("a regular file of 1000 bytes, 500 consumed: 'in.jsonl: 7 lines, 50% (R MB/s, ETA T s)'",
	      strstr(s, ": in.jsonl: 7 lines, 50% (") && strstr(s, " MB/s, ETA "));
	for (uint64_t i = 8; i < 10008; i++)
		progress_tick(&p, i, 500 + i / 1000);
	s = drawn();
	CHECK("10,000 ticks within 0.1 s: no redraw", count(s, "\r") == 0);
	nap();
	progress_tick(&p, 200000, 750);
	progress_tick(&p, 200001, 760);
	s = drawn();
	CHECK("0.1 s later: one redraw, 75%", count(s, "\r") == 1 && strstr(s, ": 200000 lines, 75% ("));
	if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
		return 2;
	nap();
	for (uint64_t i = 200002; i < 200010; i++)
		progress_tick(&p, i, 900);
	s = drawn();
	CHECK("the file grew: the count and the rate, no share, no ETA",
	      strstr(s, ": in.jsonl: 20000") && !strchr(s, '%') && !strstr(s, "ETA") && strstr(s, " MB/s)"));
	progress_end(&p, 300000, 2000, 1);
	s = drawn();
	CHECK("the end, kept: the final count and the time taken, then a newline",
	      strstr(s, ": in.jsonl: 300000 lines (") && strstr(s, " s)\033[K\n"));
	int pp[2];
	if (pipe(pp))
		return 2;
	progress_start(&p, 1, "-", "lines");
	progress_file(&p, pp[0]);
	progress_tick(&p, 5, 100);
	s = drawn();
	CHECK("a pipe: no share", strstr(s, ": -: 5 lines (") && !strchr(s, '%'));
	progress_end(&p, 5, 100, 0);
	s = drawn();
	CHECK("the end, not kept: the line cleared", !strcmp(s, "\r\033[K"));
	progress_start(&p, 1, "t.db", "chunks");
	progress_total(&p, 40, 0);
	progress_tick(&p, 10, 10);
	s = drawn();
	CHECK("units: 't.db: 10 of 40 chunks, 25% (ETA T s)', no rate", strstr(s, ": t.db: 10 of 40 chunks, 25% (ETA ") && !strstr(s, "MB/s"));
	progress_end(&p, 40, 40, 0);
	drawn();
	progress_start(&p, 0, "off", "lines");
	progress_file(&p, fd);
	progress_tick(&p, 1, 1);
	progress_end(&p, 1, 1, 1);
	CHECK("off: nothing drawn, not even at the end", !*drawn());
	unsetenv("KVIO_PROGRESS_DELAY_MS");
	progress_start(&p, 1, "slow", "lines");
	progress_tick(&p, 1, 1);
	progress_end(&p, 1, 1, 1);
	CHECK("the default delay: nothing in the first 0.5 s, nor at the end", !*drawn());
	unlink(errpath);
	unlink(fpath);
	return fails != 0;
}
