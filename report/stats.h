/* stats.h — the statistics core of kvio-report --compare (issue 23): a seeded
 * PRNG, kvio's nearest-rank quantile, a radix sort of doubles, the two-sided
 * Mann-Whitney U test as scipy.stats.mannwhitneyu (1.10, method='auto')
 * computes it, percentile-bootstrap CIs of statistic(new) - statistic(base)
 * across runs and within one run, and the verdict rule. libc + libm only.
 * Methods, assumptions and the verdict rule: docs/statistics.md.
 * No function accepts NaN among the values (scipy refuses them too). */
#ifndef KVIO_STATS_H
#define KVIO_STATS_H
#include <stddef.h>
#include <stdint.h>

/* ---- PRNG: xoshiro256** seeded through splitmix64 ---- */
struct st_rng {
	uint64_t s[4];
	double spare;     /* the second normal of a polar pair */
	int has_spare;
};
/* splitmix64 step: advances *x and returns the next output. */
uint64_t st_splitmix64(uint64_t *x);
/* Seed r from one 64-bit seed (any value, 0 included). */
void st_rng_seed(struct st_rng *r, uint64_t seed);
uint64_t st_rng_next(struct st_rng *r);
/* Uniform on the open interval (0, 1), 53 random bits. */
double st_rng_unif(struct st_rng *r);
/* Uniform integer in [0, n), unbiased (Lemire); n > 0. */
uint64_t st_rng_below(struct st_rng *r, uint64_t n);
double st_rng_normal(struct st_rng *r);
/* Gamma(a, 1), a > 0 (Marsaglia-Tsang). */
double st_rng_gamma(struct st_rng *r, double a);
/* Beta(a, b), a, b > 0, as G_a / (G_a + G_b). */
double st_rng_beta(struct st_rng *r, double a, double b);
/* A per-metric seed: base seed mixed with the metric's name (FNV-1a). */
uint64_t st_seed_for(uint64_t base, const char *name);
#define ST_SEED 0x6b76696f32330000ull /* "kvio23": the default base seed */

/* ---- kvio's quantile (docs/report.md): sorted[min(n-1, floor(q*n))] ---- */
/* The 0-based rank of quantile q among n >= 1 values, as kvio_pct computes it. */
size_t st_rank(double q, size_t n);
/* kvio's quantile q of v[0..n-1], sorted ascending, n >= 1. */
double st_quantile_sorted(const double *v, size_t n, double q);
/* Sort v ascending (LSD radix on the IEEE bits; -0.0 becomes +0.0).
 * Returns 0, or -1 when the n-double scratch buffer cannot be allocated. */
int st_sort(double *v, size_t n);
/* The same with the caller's scratch of n uint64_t (st_scratch(n) makes one
 * on huge pages where it can; one scratch serves every metric). */
void st_sort_scratch(double *v, size_t n, uint64_t *scratch);
uint64_t *st_scratch(size_t n);

/* ---- Mann-Whitney U, two-sided ---- */
enum st_mwu_method { ST_MWU_EXACT, ST_MWU_ASYMPTOTIC };
struct st_mwu {
	double u1;        /* U of the first sample (scipy's statistic) */
	double p;         /* two-sided p-value, in [0, 1] */
	double z;         /* asymptotic: the standardized statistic scipy uses (NAN when exact) */
	double effect;    /* u1 / (n1 n2): P(x > y) + P(x = y)/2 */
	enum st_mwu_method method;
	int ties;         /* 1 when any value occurs more than once in x and y together */
};
/* U test of x (n1 >= 1 values) against y (n2 >= 1), both sorted ascending:
 * O(n1 + n2), plus O(min(n1,n2) * n1*n2/2) time and n1*n2/2 doubles for an
 * exact p. Returns 0, -1 on bad input, -2 when memory fails. */
int st_mwu_sorted(const double *x, size_t n1, const double *y, size_t n2, struct st_mwu *out);
/* The same on unsorted inputs (copied and sorted; the inputs are not changed). */
int st_mwu(const double *x, size_t n1, const double *y, size_t n2, struct st_mwu *out);
/* The smallest two-sided p the test can give for sizes n1, n2 without ties
 * (2 / C(n1+n2, n1) on the exact path; 3 vs 3 runs can never reach 0.05). */
double st_mwu_min_p(size_t n1, size_t n2);

/* ---- Bootstrap CI of statistic(new) - statistic(base) ---- */
enum st_stat_kind { ST_QUANTILE, ST_MEAN };
struct st_stat {
	enum st_stat_kind kind;
	double q;         /* ST_QUANTILE: kvio's quantile q in [0, 1] */
};
enum st_ci_method {
	ST_CI_RESAMPLE,   /* plain resampling of the values */
	ST_CI_BETA,       /* quantile: order statistic through a Beta variate (exact) */
	ST_CI_TAILNORM    /* mean: exact resampling of the extreme values, CLT for the rest */
};
struct st_ci {
	double base, new_, delta;  /* statistic(base), statistic(new), new - base */
	double lo, hi;             /* the percentile interval of the bootstrap deltas */
	enum st_ci_method method;
	size_t k_base, k_new;      /* ST_CI_TAILNORM: extreme values resampled exactly */
};
struct st_boot {
	int B;            /* resamples (>= 2); 0 means ST_B_DEFAULT */
	double level;     /* 0 means 0.95 */
	uint64_t seed;
};
#define ST_B_DEFAULT 2000
/* (a) Across runs: base[0..nb-1], new_[0..nn-1] are per-run values (nb, nn
 * >= 1, unsorted, small). Each resample draws nb and nn runs with replacement.
 * Returns 0, -1 on bad input, -2 when memory fails. */
int st_boot_runs(const double *base, size_t nb, const double *new_, size_t nn,
		 struct st_stat st, struct st_boot bo, struct st_ci *out);
/* (b) Within one run: base and new_ sorted ascending, any size. Same resampling
 * scheme (n values with replacement, each side), computed without drawing the
 * n values: O(B) per quantile, and for a mean O((nb + nn) * B) while that is
 * at most ST_EXACT_DRAWS, else O(n + B * k) (docs/statistics.md). */
int st_boot_within(const double *base, size_t nb, const double *new_, size_t nn,
		   struct st_stat st, struct st_boot bo, struct st_ci *out);
#define ST_EXACT_DRAWS (1u << 23)

/* ---- Verdict ---- */
enum st_verdict { ST_NO_CHANGE, ST_FASTER, ST_SLOWER };
struct st_judge_in {
	double base, delta, lo, hi, p;
	int bigger_is_worse;  /* 1: latency, span, gap, QD, %time at QD<=1; 0: throughput, batch size */
	double alpha;         /* 0 means 0.05 */
	double min_rel;       /* |delta| below min_rel * |base| is no change (0: off) */
};
struct st_judgement {
	enum st_verdict verdict;
	int within_noise;     /* the CI holds 0 */
	int unconfirmed;      /* the CI and the p-value disagree (so: no change) */
	int negligible;       /* both say changed, but |delta| < min_rel * |base| */
};
/* faster/slower only when the CI excludes 0 and p < alpha, on the same side
 * as delta; see docs/statistics.md for every case. */
struct st_judgement st_judge(struct st_judge_in in);
const char *st_verdict_name(enum st_verdict v);

#endif
