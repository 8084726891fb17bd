/* unit_stats.c — report/stats.c on values computed by hand: the PRNGs'
 * first outputs, kvio's ranks, U and exact p-values of tiny samples (the
 * counts of the U distribution written out below), the normal approximation
 * on a tied sample where z comes out as sqrt(2), bootstrap intervals whose
 * answer is known, and every branch of the verdict rule.
 * tests/stats_check.py checks the same functions against scipy and numpy. */
#include "../report/stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit: stats: %s\n", name); \
	else { printf("FAIL - unit: stats: %s\n", name); fails++; } } while (0)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* |a - b| <= 1e-12 relative (or both 0). */
static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) || a == b;
}

/* U1 and p of x against y, and the method, as expected. */
static int mwu_is(const double *x, size_t n1, const double *y, size_t n2,
		  double u1, double p, enum st_mwu_method meth)
{
	struct st_mwu m;
	if (st_mwu(x, n1, y, n2, &m))
		return 0;
	if (!(m.u1 == u1 && near(m.p, p) && m.method == meth))
		printf("#   got U1 %.17g p %.17g method %d; want %.17g %.17g %d\n", m.u1, m.p, m.method, u1, p, meth);
	return m.u1 == u1 && near(m.p, p) && m.method == meth;
}

static void test_rng(void)
{
	/* splitmix64 from 0: the reference implementation's first three outputs */
	uint64_t x = 0, a = st_splitmix64(&x), b = st_splitmix64(&x), c = st_splitmix64(&x);
	CHECK("splitmix64 from 0 gives e220a8397b1dcdaf 6e789e6aa1b965f4 06c45d188009454f",
	      a == 0xe220a8397b1dcdafull && b == 0x6e789e6aa1b965f4ull && c == 0x06c45d188009454full);
	/* xoshiro256** from state {1,2,3,4}: rotl(2*5,7)*9 = 11520; then s1 = 2^2 = 0
	 * gives 0; then s1 = 262149 gives 262149*5*128*9 = 1509978240 */
	struct st_rng r = {{1, 2, 3, 4}, 0, 0};
	uint64_t o1 = st_rng_next(&r), o2 = st_rng_next(&r), o3 = st_rng_next(&r);
	CHECK("xoshiro256** from {1,2,3,4} gives 11520, 0, 1509978240", o1 == 11520 && o2 == 0 && o3 == 1509978240);
	struct st_rng r1, r2;
	st_rng_seed(&r1, 42);
	st_rng_seed(&r2, 42);
	int same = 1, inrange = 1;
	for (int i = 0; i < 1000; i++) {
		double u = st_rng_unif(&r1);
		same &= u == st_rng_unif(&r2);
		inrange &= u > 0 && u < 1 && st_rng_below(&r1, 7) < 7;
		st_rng_below(&r2, 7);
	}
	CHECK("a seed gives the same stream twice; uniforms in (0,1), below(7) < 7", same && inrange);
	CHECK("per-metric seeds differ by name and are stable",
	      st_seed_for(ST_SEED, "lat_read p99") != st_seed_for(ST_SEED, "lat_read p50") &&
	      st_seed_for(ST_SEED, "x") == st_seed_for(ST_SEED, "x"));
	/* Beta(3, 7) has mean 0.3 and sd sqrt(21 / 1100) = 0.138: 20000 draws' mean
	 * within 0.005 (5 standard errors) */
	double s = 0;
	for (int i = 0; i < 20000; i++)
		s += st_rng_beta(&r1, 3, 7);
	CHECK("20000 Beta(3,7) draws average 0.3 +- 0.005", fabs(s / 20000 - 0.3) < 0.005);
	s = 0;
	for (int i = 0; i < 20000; i++)
		s += st_rng_gamma(&r1, 0.5);
	CHECK("20000 Gamma(0.5) draws average 0.5 +- 0.025 (sd 0.71)", fabs(s / 20000 - 0.5) < 0.025);
}

static void test_rank_sort(void)
{
	CHECK("rank: p50 of 4 is sorted[2] (the upper middle), of 3 sorted[1], of 1 sorted[0]",
	      st_rank(0.5, 4) == 2 && st_rank(0.5, 3) == 1 && st_rank(0.5, 1) == 0);
	CHECK("rank: p95 of 10 is floor(9.5) = 9; p99 of 1000 is 990; p99 of 100 is min(99, 99)",
	      st_rank(0.95, 10) == 9 && st_rank(0.99, 1000) == 990 && st_rank(0.99, 100) == 99);
	CHECK("rank: q = 1 is the max, q = 0 the min", st_rank(1, 7) == 6 && st_rank(0, 7) == 0);
	double v[5] = {1, 2, 3, 4, 5};
	CHECK("quantile: p50 of 1..5 is 3, p99 is 5", st_quantile_sorted(v, 5, 0.5) == 3 && st_quantile_sorted(v, 5, 0.99) == 5);

	enum { NS = 100003 };
	double *a = malloc(NS * sizeof *a);
	struct st_rng r;
	st_rng_seed(&r, 7);
	for (int i = 0; i < NS; i++) {
		double u = st_rng_unif(&r);
		a[i] = i % 11 == 0 ? floor(u * 50) - 25 : (u - 0.5) * pow(10, (double)(i % 40) - 20);
	}
	a[3] = -0.0, a[4] = 0.0, a[5] = INFINITY, a[6] = -INFINITY, a[7] = -5e-324;
	st_sort(a, NS);
	int ordered = 1;
	for (int i = 1; i < NS; i++)
		ordered &= a[i - 1] <= a[i];
	CHECK("sort: 100003 values of every magnitude and sign, ties, -0.0, +-inf, a subnormal, come out ascending",
	      ordered && a[0] == -INFINITY && a[NS - 1] == INFINITY);
	free(a);
}

static void test_mwu_exact(void)
{
	/* C(4,2) = 6 arrangements; U = 0 happens once: p = 2 * 1/6 */
	double x1[] = {1, 2}, y1[] = {3, 4};
	CHECK("exact: [1,2] vs [3,4]: U1 = 0, p = 2/6", mwu_is(x1, 2, y1, 2, 0, 1.0 / 3, ST_MWU_EXACT));
	CHECK("exact: [3,4] vs [1,2]: U1 = 4 (U of the first sample), p = 2/6", mwu_is(y1, 2, x1, 2, 4, 1.0 / 3, ST_MWU_EXACT));
	/* [1,3] vs [2,4]: U1 = 1, U = max(1, 3) = 3, P(U <= 4 - 3 = 1) = (1 + 1) / 6 */
	double x2[] = {1, 3}, y2[] = {2, 4};
	CHECK("exact: [1,3] vs [2,4]: U1 = 1, p = 2 * 2/6", mwu_is(x2, 2, y2, 2, 1, 2.0 / 3, ST_MWU_EXACT));
	double x3[] = {1, 2, 3}, y3[] = {4, 5, 6};
	CHECK("exact: 3 runs vs 3 runs, fully separated: p = 2/C(6,3) = 0.1, never below 0.05",
	      mwu_is(x3, 3, y3, 3, 0, 0.1, ST_MWU_EXACT) && near(st_mwu_min_p(3, 3), 0.1));
	double x4[] = {1, 2, 3, 4}, y4[] = {5, 6, 7, 8};
	CHECK("exact: 4 vs 4 separated: p = 2/70", mwu_is(x4, 4, y4, 4, 0, 2.0 / 70, ST_MWU_EXACT) &&
	      near(st_mwu_min_p(4, 4), 2.0 / 70));
	/* 4 vs 4, U = 10, k = 16 - 10 = 6: counts of U = 0..6 are 1,1,2,3,5,5,7 (partitions
	 * of j into <= 4 parts <= 4): 24 of 70; degree 6 >= n + 1 = 5 uses the (1 - q^5) factor */
	double x5[] = {1, 2, 5, 8}, y5[] = {3, 4, 6, 7};
	CHECK("exact: [1,2,5,8] vs [3,4,6,7]: U1 = 6, p = 2 * 24/70", mwu_is(x5, 4, y5, 4, 6, 48.0 / 70, ST_MWU_EXACT));
	/* m = 2: #{U = j} = floor(j/2) + 1 for j <= n; U1 = 0 + 10, U = 1990, k = 10:
	 * sum_{j<=10} = 36 of C(1002, 2) = 501501 */
	double x6[] = {0.5, 10.5}, y6[1000];
	for (int i = 0; i < 1000; i++)
		y6[i] = i + 1;
	CHECK("exact: 2 values vs 1000 (scipy: exact while either side <= 8): U1 = 10, p = 72/501501",
	      mwu_is(x6, 2, y6, 1000, 10, 72.0 / 501501, ST_MWU_EXACT));
	/* 1 vs 9: U of [2] is 1 (1 below), U = 8, k = 1: 2 of 10 arrangements */
	double x7[] = {2}, y7[] = {1, 3, 4, 5, 6, 7, 8, 9, 10};
	CHECK("exact: [2] vs 9 others: U1 = 1, p = 2 * 2/10", mwu_is(x7, 1, y7, 9, 1, 0.4, ST_MWU_EXACT));
	double x8[] = {1}, y8[] = {2};
	CHECK("exact: [1] vs [2]: p = 2 * 1/2 clipped to 1", mwu_is(x8, 1, y8, 1, 0, 1, ST_MWU_EXACT));
	double x9[8], y9[9];
	for (int i = 0; i < 8; i++)
		x9[i] = i;
	for (int i = 0; i < 9; i++)
		y9[i] = 100 + i;
	CHECK("exact: 8 vs 9 is still exact (scipy: asymptotic only when both > 8): p = 2/C(17,8)",
	      mwu_is(x9, 8, y9, 9, 0, 2.0 / 24310, ST_MWU_EXACT));
}

static void test_mwu_asymptotic(void)
{
	/* ranks of 1,2,2,2,3,3 are 1,3,3,3,5.5,5.5: R1 = 7, U1 = 7 - 6 = 1, U = 8;
	 * ties: (27 - 3) + (8 - 2) = 30 = n(n - 1), s = sqrt(9/12 * (7 - 1)) = sqrt(4.5);
	 * z = (8 - 4.5 - 0.5) / sqrt(4.5) = sqrt(2); p = 2 sf(sqrt 2) = erfc(1) */
	double x[] = {1, 2, 2}, y[] = {2, 3, 3};
	CHECK("asymptotic (ties in a small sample): [1,2,2] vs [2,3,3]: U1 = 1, z = sqrt 2, p = erfc(1) = 0.157299207050285",
	      mwu_is(x, 3, y, 3, 1, erfc(1), ST_MWU_ASYMPTOTIC) && near(erfc(1), 0.157299207050285));
	double e1[] = {7, 7}, e2[] = {7, 7, 7};
	CHECK("asymptotic: all values equal: U1 = 2 * 3 * 0.5 = 3, p = 1", mwu_is(e1, 2, e2, 3, 3, 1, ST_MWU_ASYMPTOTIC));
	/* 1..9 vs 10..18: U = 81, mu = 40.5, s = sqrt(81/12 * 19) */
	double a[9], b[9];
	for (int i = 0; i < 9; i++)
		a[i] = i + 1, b[i] = i + 10;
	double z = 40 / sqrt(81.0 / 12 * 19);
	CHECK("asymptotic: 9 vs 9 separated: U1 = 0, p = erfc(z / sqrt 2), z = 40 / sqrt(128.25)",
	      mwu_is(a, 9, b, 9, 0, erfc(z / sqrt(2)), ST_MWU_ASYMPTOTIC));
	struct st_mwu m;
	st_mwu(b, 9, a, 9, &m);
	CHECK("asymptotic: U1 of the other order is 81, the same p, effect 1", m.u1 == 81 && near(m.p, erfc(z / sqrt(2))) && m.effect == 1);
	double c[] = {1, 2, 3};
	CHECK("bad input: an empty sample is refused", st_mwu(c, 0, c, 3, &m) == -1);
}

static void test_boot(void)
{
	struct st_ci ci, c2;
	struct st_boot bo = {500, 0.95, 9};
	double base[] = {10, 10, 10}, nw[] = {12, 12, 12, 12};
	st_boot_runs(base, 3, nw, 4, (struct st_stat){ST_MEAN, 0}, bo, &ci);
	CHECK("runs: constant sides 10 and 12: delta 2, CI [2, 2]", ci.delta == 2 && ci.lo == 2 && ci.hi == 2);
	double b2[] = {30, 10, 20, 40}, n2[] = {25, 15, 35};
	st_boot_runs(b2, 4, n2, 3, (struct st_stat){ST_QUANTILE, 0.5}, bo, &ci);
	CHECK("runs: the point delta is of kvio's p50s: new sorted[1] of 3 = 25 minus base sorted[2] of 4 = 30",
	      ci.base == 30 && ci.new_ == 25 && ci.delta == -5 && ci.lo <= ci.hi);
	st_boot_runs(b2, 4, n2, 3, (struct st_stat){ST_QUANTILE, 0.5}, bo, &c2);
	CHECK("runs: the same seed gives the same interval, bit for bit", ci.lo == c2.lo && ci.hi == c2.hi);
	/* resample medians of 3 values can only be one of them: the deltas are
	 * differences of the values */
	CHECK("runs: the CI of a p50 delta lies within [min new - max base, max new - min base] = [-25, 25]",
	      ci.lo >= -25 && ci.hi <= 25);

	enum { NW = 100000 };
	double *u = malloc(NW * sizeof *u);
	for (int i = 0; i < NW; i++)
		u[i] = i;
	/* var of 0..n-1 is (n^2 - 1)/12; the delta of two resampled means has sd
	 * sqrt(2 var / n) = 129.1; the 95% CI is +- 1.96 of that (MC error ~3% at B = 2000) */
	double se = sqrt(2 * ((double)NW * NW - 1) / 12 / NW);
	struct st_boot b2k = {2000, 0.95, 3};
	st_boot_within(u, NW, u, NW, (struct st_stat){ST_MEAN, 0}, b2k, &ci);
	CHECK("within, mean of 0..99999 twice (the fast path): delta 0, CI +- 1.96 * 129.1 within 8%",
	      ci.method == ST_CI_TAILNORM && ci.delta == 0 && fabs(ci.hi / (1.96 * se) - 1) < 0.08 &&
	      fabs(-ci.lo / (1.96 * se) - 1) < 0.08);
	/* the resample median of n uniform-spaced values: order statistic rank n/2 + 1,
	 * sd of the index ~ sqrt(n)/2 = 158: the p50 delta's CI is +- 1.96 * sqrt 2 * 158 */
	st_boot_within(u, NW, u, NW, (struct st_stat){ST_QUANTILE, 0.5}, b2k, &ci);
	double sq = sqrt(2) * sqrt((double)NW) / 2;
	CHECK("within, p50 of 0..99999 twice (Beta order statistics): CI +- 1.96 * 223.6 within 8%",
	      ci.method == ST_CI_BETA && ci.delta == 0 && fabs(ci.hi / (1.96 * sq) - 1) < 0.08 &&
	      fabs(-ci.lo / (1.96 * sq) - 1) < 0.08);
	double one = 5;
	st_boot_within(&one, 1, u, NW, (struct st_stat){ST_QUANTILE, 0.99}, b2k, &ci);
	CHECK("within: p99 of one base value 5 against 0..99999: base 5, new sorted[99000]",
	      ci.base == 5 && ci.new_ == 99000 && ci.delta == 98995);
	/* 1000 zeros and 1000 ones: the p50 (sorted[1000]) is 1, and a resample's is 0
	 * when it draws 1001+ zeros: P ~ 0.49, so the delta takes -1, 0, 1 each with
	 * P > 0.025: CI [-1, 1] */
	for (int i = 0; i < 2000; i++)
		u[i] = i >= 1000;
	st_boot_within(u, 2000, u, 2000, (struct st_stat){ST_QUANTILE, 0.5}, b2k, &ci);
	CHECK("within: p50 of 1000 zeros and 1000 ones: delta 0, CI [-1, 1]", ci.delta == 0 && ci.lo == -1 && ci.hi == 1);
	st_boot_within(u, 2000, u, 2000, (struct st_stat){ST_MEAN, 0}, b2k, &ci);
	CHECK("within: a mean of 2000 + 2000 values at B = 2000 resamples them plainly",
	      ci.method == ST_CI_RESAMPLE && ci.lo < 0 && ci.hi > 0);
	CHECK("bad input: B = 1 is refused", st_boot_within(u, 10, u, 10, (struct st_stat){ST_MEAN, 0},
							     (struct st_boot){1, 0.95, 1}, &ci) == -1);
	free(u);
}

static void test_verdict(void)
{
	struct st_judgement j;
	j = st_judge((struct st_judge_in){100, 5, 1, 9, 0.01, 1, 0, 0});
	CHECK("verdict: latency up, CI [1,9], p 0.01: slower", j.verdict == ST_SLOWER && !j.within_noise && !j.unconfirmed);
	j = st_judge((struct st_judge_in){100, 5, 1, 9, 0.01, 0, 0, 0});
	CHECK("verdict: throughput up, CI [1,9], p 0.01: faster", j.verdict == ST_FASTER);
	j = st_judge((struct st_judge_in){100, -5, -9, -1, 0.001, 1, 0, 0});
	CHECK("verdict: latency down, CI [-9,-1]: faster", j.verdict == ST_FASTER);
	j = st_judge((struct st_judge_in){100, 3, -3, 9, 0.3, 1, 0, 0});
	CHECK("verdict: CI [-3,9], p 0.3: no change, within noise", j.verdict == ST_NO_CHANGE && j.within_noise && !j.unconfirmed);
	j = st_judge((struct st_judge_in){100, 5, 1, 9, 0.1, 1, 0, 0});
	CHECK("verdict: CI [1,9] but p 0.1 (3 vs 3 runs): no change, unconfirmed, not within noise",
	      j.verdict == ST_NO_CHANGE && j.unconfirmed && !j.within_noise);
	j = st_judge((struct st_judge_in){100, 5, -1, 9, 0.01, 1, 0, 0});
	CHECK("verdict: CI [-1,9] but p 0.01: no change, unconfirmed, within noise",
	      j.verdict == ST_NO_CHANGE && j.unconfirmed && j.within_noise);
	j = st_judge((struct st_judge_in){1000, 5, 1, 9, 0.001, 1, 0, 0.01});
	CHECK("verdict: significant but 0.5% under min_rel 1%: no change, negligible", j.verdict == ST_NO_CHANGE && j.negligible);
	j = st_judge((struct st_judge_in){100, -1, 1, 9, 0.001, 1, 0, 0});
	CHECK("verdict: delta -1 outside its own CI [1,9]: no change, unconfirmed", j.verdict == ST_NO_CHANGE && j.unconfirmed);
	j = st_judge((struct st_judge_in){100, 5, 1, 9, NAN, 1, 0, 0});
	CHECK("verdict: no test (p NaN) never confirms", j.verdict == ST_NO_CHANGE && j.unconfirmed);
	j = st_judge((struct st_judge_in){100, 5, 1, 9, 0, 1, 0, 0});
	CHECK("verdict: p = 0 judges on the CI alone", j.verdict == ST_SLOWER);
	j = st_judge((struct st_judge_in){100, 5, 1, 9, 0.04, 1, 0.01, 0});
	CHECK("verdict: alpha 0.01: p 0.04 does not confirm", j.verdict == ST_NO_CHANGE && j.unconfirmed);
	CHECK("verdict names", !strcmp(st_verdict_name(ST_SLOWER), "slower") && !strcmp(st_verdict_name(ST_FASTER), "faster") &&
	      !strcmp(st_verdict_name(ST_NO_CHANGE), "no change"));
}

int main(void)
{
	test_rng();
	test_rank_sort();
	test_mwu_exact();
	test_mwu_asymptotic();
	test_boot();
	test_verdict();
	return fails != 0;
}
