/* stats_drv.c — a driver of report/stats.c for tests/stats_check.py and for
 * timing. Reads cases from stdin, one header line and then one line of
 * values per sample (space-separated, as %.17g or hex floats):
 *   mwu                       x line, y line      -> "u1 p method z"
 *   runs STAT B SEED          base line, new line -> "base new delta lo hi method k_base k_new"
 *   within STAT B SEED        base line, new line -> the same (samples sorted here)
 *   time N SEED               (no lines): two samples of N latency-like values,
 *                             timed: sort, U, p50/p95/p99 CIs, mean CI (B = 2000)
 * STAT is "mean" or "qX" (kvio's quantile X, e.g. q0.99). Output: %.17g. */
#include "../report/stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One line of numbers into a growing array; -1 at end of input. */
static long read_values(double **v, size_t *cap)
{
	static char *line;
	static size_t lcap;
	if (getline(&line, &lcap, stdin) < 0)
		return -1;
	size_t n = 0;
	char *p = line, *e;
	for (;;) {
		double x = strtod(p, &e);
		if (e == p)
			break;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			*v = realloc(*v, *cap * sizeof **v);
			if (!*v)
				exit(2);
		}
		(*v)[n++] = x;
		p = e;
	}
	return (long)n;
}

static struct st_stat parse_stat(const char *s)
{
	struct st_stat st = {ST_MEAN, 0};
	if (s[0] == 'q') {
		st.kind = ST_QUANTILE;
		st.q = strtod(s + 1, NULL);
	}
	return st;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Two samples of n integral "latencies" (lognormal around 20 us, one in
 * 10^4 a slow outlier near 5 ms), new 2% slower; times each step. */
static int timing(size_t n, uint64_t seed)
{
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	if (!a || !b)
		return 2;
	struct st_rng r;
	st_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double o = st_rng_unif(&r) < 1e-4 ? 250 : 1;
		a[i] = floor(20000 * o * exp(0.5 * st_rng_normal(&r)));
		b[i] = floor(20400 * o * exp(0.5 * st_rng_normal(&r)));
	}
	double t0 = now();
	if (st_sort(a, n) || st_sort(b, n))
		return 2;
	double t1 = now();
	struct st_mwu m;
	st_mwu_sorted(a, n, b, n, &m);
	double t2 = now();
	static const double qs[3] = {0.50, 0.95, 0.99};
	struct st_ci ci[4];
	struct st_boot bo = {0, 0, 0};
	for (int k = 0; k < 3; k++) {
		bo.seed = st_seed_for(ST_SEED, "q") + (uint64_t)k;
		st_boot_within(a, n, b, n, (struct st_stat){ST_QUANTILE, qs[k]}, bo, &ci[k]);
	}
	double t3 = now();
	bo.seed = st_seed_for(ST_SEED, "mean");
	st_boot_within(a, n, b, n, (struct st_stat){ST_MEAN, 0}, bo, &ci[3]);
	double t4 = now();
	printf("n=%zu per side: sort both %.3f s, U %.3f s (p=%.3g), 3 quantile CIs %.4f s, "
	       "mean CI %.4f s (k=%zu/%zu), total %.3f s\n", n, t1 - t0, t2 - t1, m.p, t3 - t2,
	       t4 - t3, ci[3].k_base, ci[3].k_new, t4 - t0);
	for (int k = 0; k < 4; k++)
		printf("  %s: delta %.6g CI [%.6g, %.6g]\n", k == 3 ? "mean" : k == 0 ? "p50" : k == 1 ? "p95" : "p99",
		       ci[k].delta, ci[k].lo, ci[k].hi);
	free(a);
	free(b);
	return 0;
}

int main(void)
{
	char *hdr = NULL;
	size_t hcap = 0, ca = 0, cb = 0;
	double *a = NULL, *b = NULL;
	while (getline(&hdr, &hcap, stdin) > 0) {
		char kind[16], stat[32];
		int B;
		unsigned long long seed;
		size_t n;
		if (sscanf(hdr, "time %zu %llu", &n, &seed) == 2) {
			free(hdr);
			return timing(n, seed);
		}
		if (sscanf(hdr, "%15s", kind) != 1)
			continue;
		long na = read_values(&a, &ca), nb = read_values(&b, &cb);
		if (na <= 0 || nb <= 0)
			return 2;
		if (!strcmp(kind, "mwu")) {
			struct st_mwu m;
			if (st_mwu(a, (size_t)na, b, (size_t)nb, &m))
				return 3;
			printf("%.17g %.17g %s %.17g\n", m.u1, m.p, m.method == ST_MWU_EXACT ? "exact" : "asymptotic", m.z);
		} else if (sscanf(hdr, "%15s %31s %d %llu", kind, stat, &B, &seed) == 4) {
			struct st_boot bo = {B, 0.95, seed};
			struct st_ci ci;
			int rc;
			if (!strcmp(kind, "runs"))
				rc = st_boot_runs(a, (size_t)na, b, (size_t)nb, parse_stat(stat), bo, &ci);
			else {
				st_sort(a, (size_t)na), st_sort(b, (size_t)nb);
				rc = st_boot_within(a, (size_t)na, b, (size_t)nb, parse_stat(stat), bo, &ci);
			}
			if (rc)
				return 3;
			static const char *mn[] = {"resample", "beta", "tailnorm"};
			printf("%.17g %.17g %.17g %.17g %.17g %s %zu %zu\n", ci.base, ci.new_, ci.delta, ci.lo, ci.hi,
			       mn[ci.method], ci.k_base, ci.k_new);
		} else
			return 2;
		fflush(stdout);
	}
	free(hdr), free(a), free(b);
	return 0;
}
