/* window.c — parsing of --time-range and --trace-id (see window.h). */
#include "window.h"
#include "cli.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole finite decimal number of seconds, as ns. 0 ok, -1 not a number. */
static int parse_seconds(const char *s, size_t n, int64_t *ns)
{
	char buf[64], *end;
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	double v = strtod(buf, &end);
	/* strtod takes "inf", "nan" and hex floats: only plain decimals pass */
	if (errno || end == buf || *end || !isfinite(v) || strpbrk(buf, "xXnN") || fabs(v) > 9.2e9)
		return -1;
	*ns = (int64_t)(v * 1e9);
	return 0;
}

/* A whole unsigned decimal integer. 0 ok, -1 not one. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (s[k] < '0' || s[k] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[k] - '0');
	}
	*out = v;
	return 0;
}

static int time_range(struct kvio_window *w, const char *v)
{
	const char *comma = strchr(v, ',');
	if (!comma || parse_seconds(v, (size_t)(comma - v), &w->lo_ns) ||
	    parse_seconds(comma + 1, strlen(comma + 1), &w->hi_ns)) {
		kvio_err("--time-range '%s': expected START_S,END_S (two numbers of seconds)", v);
		return -1;
	}
	if (w->lo_ns > w->hi_ns) {
		kvio_err("--time-range '%s': START is after END", v);
		return -1;
	}
	if (w->lo_ns == w->hi_ns) {
		kvio_err("--time-range '%s': an empty window (START equals END)", v);
		return -1;
	}
	w->has_time = 1;
	return 1;
}

static int trace_id(struct kvio_window *w, const char *v)
{
	const char *dash = strchr(v, '-');
	size_t n = dash ? (size_t)(dash - v) : strlen(v);
	if (parse_u64(v, n, &w->tid_lo) || (dash && parse_u64(dash + 1, strlen(dash + 1), &w->tid_hi))) {
		kvio_err("--trace-id '%s': expected A or A-B (non-negative integers)", v);
		return -1;
	}
	if (!dash)
		w->tid_hi = w->tid_lo;
	if (w->tid_lo > w->tid_hi) {
		kvio_err("--trace-id '%s': A is greater than B (an empty range)", v);
		return -1;
	}
	w->has_tid = 1;
	return 1;
}

int window_parse_opt(struct kvio_window *w, int argc, char **argv, int *i)
{
	const char *v;
	int t = opt_is(argv[*i], "--time-range"), d = !t && opt_is(argv[*i], "--trace-id");
	if ((t && w->has_time) || (d && w->has_tid)) { /* a second window would silently replace the first */
		kvio_err("%s given twice (see --help)", t ? "--time-range" : "--trace-id");
		return -1;
	}
	if (t)
		return (v = opt_value(argc, argv, i, "--time-range")) ? time_range(w, v) : -1;
	if (d)
		return (v = opt_value(argc, argv, i, "--trace-id")) ? trace_id(w, v) : -1;
	return 0;
}

/* The window as the options that give it ("--time-range 100,200", "--trace-id
 * 5-9", both joined by " and ") into buf of n bytes; "" without a window. */
const char *window_desc(const struct kvio_window *w, char *buf, size_t n)
{
	int k = 0;
	buf[0] = 0;
	if (w->has_time)
		k = snprintf(buf, n, "--time-range %.9g,%.9g", (double)w->lo_ns / 1e9, (double)w->hi_ns / 1e9);
	if (w->has_tid && k >= 0 && (size_t)k < n) {
		const char *sep = k ? " and " : "";
		if (w->tid_lo == w->tid_hi)
			snprintf(buf + k, n - k, "%s--trace-id %llu", sep, (unsigned long long)w->tid_lo);
		else
			snprintf(buf + k, n - k, "%s--trace-id %llu-%llu", sep, (unsigned long long)w->tid_lo,
				 (unsigned long long)w->tid_hi);
	}
	return buf;
}
