/* stats.c — the statistics core of kvio-report --compare (see stats.h and
 * docs/statistics.md). C11, libc and libm only. */
#include "stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h> /* madvise(MADV_HUGEPAGE): a hint, nothing else */
#endif

/* ------------------------------------------------------------------ PRNG */

/* splitmix64 (Steele, Lea, Flood): one step of the sequence *x. */
uint64_t st_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill the xoshiro256** state from splitmix64(seed), as its authors advise
 * (the state is then never all zero). */
void st_rng_seed(struct st_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = st_splitmix64(&seed);
	r->has_spare = 0;
	r->spare = 0;
}

/* Rotate left by k, 0 < k < 64. */
static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman, Vigna): the next 64 random bits. */
uint64_t st_rng_next(struct st_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* (k + 0.5) / 2^53 for 53 random bits k: never 0 nor 1, so log() is safe. */
double st_rng_unif(struct st_rng *r)
{
	return ((double)(st_rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

/* Uniform in [0, n): Lemire's multiply-and-reject on 32 bits when n fits,
 * else rejection above the largest multiple of n. n > 0. */
uint64_t st_rng_below(struct st_rng *r, uint64_t n)
{
	if (n <= UINT32_MAX) {
		uint64_t m = (st_rng_next(r) >> 32) * n;
		uint32_t l = (uint32_t)m;
		if (l < n) {
			uint32_t t = (uint32_t)(-(uint32_t)n) % (uint32_t)n;
			while (l < t) {
				m = (st_rng_next(r) >> 32) * n;
				l = (uint32_t)m;
			}
		}
		return m >> 32;
	}
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
	do
		x = st_rng_next(r);
	while (x >= lim);
	return x % n;
}

/* A standard normal by Marsaglia's polar method (the pair's second value is
 * kept for the next call). */
double st_rng_normal(struct st_rng *r)
{
	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	double u, v, s;
	do {
		u = 2 * st_rng_unif(r) - 1;
		v = 2 * st_rng_unif(r) - 1;
		s = u * u + v * v;
	} while (s >= 1 || s == 0);
	double f = sqrt(-2 * log(s) / s);
	r->spare = v * f;
	r->has_spare = 1;
	return u * f;
}

/* Gamma(a, 1) by Marsaglia and Tsang (2000); a < 1 through Gamma(a + 1) *
 * U^(1/a). Exact rejection sampler; a > 0. */
double st_rng_gamma(struct st_rng *r, double a)
{
	if (a < 1)
		return st_rng_gamma(r, a + 1) * pow(st_rng_unif(r), 1 / a);
	double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
	for (;;) {
		double x = st_rng_normal(r), v = 1 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = st_rng_unif(r), x2 = x * x;
		if (u < 1 - 0.0331 * x2 * x2)
			return d * v;
		if (log(u) < 0.5 * x2 + d * (1 - v + log(v)))
			return d * v;
	}
}

/* Beta(a, b) = G_a / (G_a + G_b); a, b > 0. */
double st_rng_beta(struct st_rng *r, double a, double b)
{
	double x = st_rng_gamma(r, a), y = st_rng_gamma(r, b);
	return x / (x + y);
}

/* FNV-1a of name, xor the base seed, through one splitmix64 step: a
 * different, reproducible stream per metric. name may be NULL. */
uint64_t st_seed_for(uint64_t base, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)name; p && *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h ^= base;
	return st_splitmix64(&h);
}

/* ------------------------------------------------------- quantile, sort */

/* min(n-1, floor(q*n)) computed as kvio_pct does ((int64_t)(q * (double)n)),
 * so the rank is the report's to the last bit; n >= 1, q in [0, 1]. */
size_t st_rank(double q, size_t n)
{
	double x = q * (double)n;
	size_t r = x > 0 ? (size_t)(int64_t)x : 0;
	return r < n - 1 ? r : n - 1;
}

/* v sorted ascending, n >= 1. */
double st_quantile_sorted(const double *v, size_t n, double q)
{
	return v[st_rank(q, n)];
}

/* The order-preserving key of a double: flip all bits of a negative, the
 * sign bit of a positive; -0.0 is keyed as +0.0. */
static uint64_t dkey(double d)
{
	uint64_t b;
	memcpy(&b, &d, 8);
	if (b == 0x8000000000000000ull)
		b = 0;
	return (b >> 63) ? ~b : b | 0x8000000000000000ull;
}

/* The double of a dkey key. */
static double dunkey(uint64_t k)
{
	uint64_t b = (k >> 63) ? k & 0x7fffffffffffffffull : ~k;
	double d;
	memcpy(&d, &b, 8);
	return d;
}

#define RBITS 11
#define RPASS 6
#define RSIZE (1u << RBITS)

/* Keys live in the caller's double array too: read and written through
 * memcpy (no aliasing of double storage as uint64_t). */
static uint64_t kget(const void *p, size_t i)
{
	uint64_t k;
	memcpy(&k, (const char *)p + 8 * i, 8);
	return k;
}

static void kput(void *p, size_t i, uint64_t k)
{
	memcpy((char *)p + 8 * i, &k, 8);
}

/* LSD radix sort of n keys, 6 passes of 11 bits, skipping a pass where all
 * keys share the digit (integral nanoseconds share their low bits). Keys
 * start in a and end in a; b is n keys of scratch. */
static void radix_keys(void *a, void *b, size_t n)
{
	size_t cnt[RPASS][RSIZE] = {{0}};
	for (size_t i = 0; i < n; i++) {
		uint64_t k = kget(a, i);
		for (int p = 0; p < RPASS; p++)
			cnt[p][(k >> (p * RBITS)) & (RSIZE - 1)]++;
	}
	void *src = a, *dst = b;
	for (int p = 0; p < RPASS; p++) {
		size_t *c = cnt[p], sum = 0;
		int sh = p * RBITS;
		if (c[(kget(src, 0) >> sh) & (RSIZE - 1)] == n)
			continue;
		for (size_t d = 0; d < RSIZE; d++) {
			size_t t = c[d];
			c[d] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t k = kget(src, i);
			kput(dst, c[(k >> sh) & (RSIZE - 1)]++, k);
		}
		void *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * 8);
}

/* Sort v ascending with the caller's scratch of n uint64_t (reusing one
 * scratch across metrics saves the page faults of a fresh one). */
void st_sort_scratch(double *v, size_t n, uint64_t *scratch)
{
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		kput(v, i, dkey(v[i]));
	radix_keys(v, scratch, n);
	for (size_t i = 0; i < n; i++)
		v[i] = dunkey(kget(v, i));
}

/* Scratch of n uint64_t, on 2 MB pages where Linux allows (page faults are
 * much of a sort's time on fresh memory). Free with free(). */
uint64_t *st_scratch(size_t n)
{
	size_t bytes = (n ? n : 1) * sizeof(uint64_t);
#ifdef MADV_HUGEPAGE
	if (bytes >= (4u << 20)) {
		size_t al = (size_t)2 << 20, sz = (bytes + al - 1) / al * al;
		uint64_t *p = aligned_alloc(al, sz);
		if (p)
			madvise(p, sz, MADV_HUGEPAGE);
		return p;
	}
#endif
	return malloc(bytes);
}

/* Sort v ascending (a scratch of n uint64_t made and freed here). */
int st_sort(double *v, size_t n)
{
	if (n < 2)
		return 0;
	uint64_t *k = st_scratch(n);
	if (!k)
		return -1;
	st_sort_scratch(v, n, k);
	free(k);
	return 0;
}

/* ------------------------------------------------------ Mann-Whitney U */

/* One merge of sorted x and y: 2*U1 (U1 = sum over x of #y below + half the
 * equal y) and the tie term sum(t^3 - t) over groups of equal values. */
static void mwu_merge(const double *x, size_t n1, const double *y, size_t n2,
		      uint64_t *twice_u1, double *tie)
{
	size_t i = 0, j = 0;
	uint64_t tu = 0;
	double tt = 0;
	while (i < n1 || j < n2) {
		double v = (j >= n2 || (i < n1 && x[i] <= y[j])) ? x[i] : y[j];
		size_t a = 0, b = 0, below = j;
		while (i < n1 && x[i] == v)
			i++, a++;
		while (j < n2 && y[j] == v)
			j++, b++;
		tu += (uint64_t)a * (2 * (uint64_t)below + b);
		double t = (double)(a + b);
		if (a + b > 1)
			tt += t * t * t - t;
	}
	*twice_u1 = tu;
	*tie = tt;
}

/* P(U <= k) for sizes m, n without ties: the coefficients of the Gaussian
 * binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i),
 * truncated at degree k, summed, over C(m+n, m). O(m k) time, k + 1 doubles.
 * Returns -1 when memory fails. */
static double mwu_exact_cdf(uint64_t k, size_t m, size_t n)
{
	double *c = calloc((size_t)k + 1, sizeof *c);
	if (!c)
		return -1;
	c[0] = 1;
	double binom = 1;
	for (size_t i = 1; i <= m; i++) {
		uint64_t e = (uint64_t)n + i;
		for (uint64_t j = k; j >= e; j--) /* e >= 2: no wrap */
			c[j] -= c[j - e];
		for (uint64_t j = i; j <= k; j++)
			c[j] += c[j - i];
		binom = binom * (double)(n + i) / (double)i;
	}
	double s = 0;
	for (uint64_t j = 0; j <= k; j++)
		s += c[j];
	free(c);
	return s / binom;
}

/* scipy.special.ndtr as cephes computes it: the normal CDF at a. */
static double ndtr(double a)
{
	if (isnan(a))
		return NAN;
	double x = a * M_SQRT1_2, z = fabs(x), y;
	if (z < M_SQRT1_2)
		y = 0.5 + 0.5 * erf(x);
	else {
		y = 0.5 * erfc(z);
		if (x > 0)
			y = 1 - y;
	}
	return y;
}

/* The test on sorted inputs. scipy 1.10's method='auto' rule
 * (_mwu_choose_method): exact when n1 <= 8 or n2 <= 8 and no value occurs
 * twice in x and y together; else the normal approximation with the tie
 * correction and the continuity correction 0.5, z = (max(U1,U2) - n1 n2/2 -
 * 0.5) / s; p = 2 sf(...), clipped to 1. */
int st_mwu_sorted(const double *x, size_t n1, const double *y, size_t n2, struct st_mwu *out)
{
	if (!x || !y || !out || n1 == 0 || n2 == 0)
		return -1;
	uint64_t tu, nn = (uint64_t)n1 * n2;
	double tie;
	mwu_merge(x, n1, y, n2, &tu, &tie);
	out->u1 = (double)tu / 2;
	out->effect = out->u1 / (double)nn;
	out->ties = tie > 0;
	double u = fmax(out->u1, (double)nn - out->u1);
	if ((n1 <= 8 || n2 <= 8) && !out->ties) {
		uint64_t ui = (uint64_t)u;
		double cdf = mwu_exact_cdf(nn - ui, n1 < n2 ? n1 : n2, n1 < n2 ? n2 : n1);
		if (cdf < 0)
			return -2;
		out->method = ST_MWU_EXACT;
		out->z = NAN;
		out->p = fmin(1, 2 * cdf);
		return 0;
	}
	double n = (double)n1 + (double)n2;
	double s = sqrt((double)nn / 12 * ((n + 1) - tie / (n * (n - 1))));
	double num = u - (double)nn / 2 - 0.5;
	out->method = ST_MWU_ASYMPTOTIC;
	out->z = s > 0 ? num / s : num < 0 ? -INFINITY : num > 0 ? INFINITY : NAN;
	out->p = fmin(1, fmax(0, 2 * ndtr(-out->z)));
	return 0;
}

/* Copy, sort, test. */
int st_mwu(const double *x, size_t n1, const double *y, size_t n2, struct st_mwu *out)
{
	if (!x || !y || !out || n1 == 0 || n2 == 0)
		return -1;
	double *a = malloc((n1 + n2) * sizeof *a);
	if (!a)
		return -2;
	memcpy(a, x, n1 * sizeof *a);
	memcpy(a + n1, y, n2 * sizeof *a);
	int rc = st_sort(a, n1) || st_sort(a + n1, n2) ? -2
		: st_mwu_sorted(a, n1, a + n1, n2, out);
	free(a);
	return rc;
}

/* 2 / C(n1+n2, n1) on the exact path; on the asymptotic one, the p of total
 * separation (no ties). */
double st_mwu_min_p(size_t n1, size_t n2)
{
	if (n1 == 0 || n2 == 0)
		return 1;
	if (n1 <= 8 || n2 <= 8) {
		size_t m = n1 < n2 ? n1 : n2, n = n1 < n2 ? n2 : n1;
		double b = 1;
		for (size_t i = 1; i <= m; i++)
			b = b * (double)(n + i) / (double)i;
		return fmin(1, 2 / b);
	}
	double nn = (double)n1 * (double)n2, n = (double)n1 + (double)n2;
	double z = (nn / 2 - 0.5) / sqrt(nn / 12 * (n + 1));
	return fmin(1, 2 * ndtr(-z));
}

/* ------------------------------------------------------------ bootstrap */

/* qsort order of doubles (no NaN). */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The percentile interval of d[0..B-1] (sorted here): numpy's default
 * 'linear' quantiles at (1 - level)/2 and (1 + level)/2. */
static void ci_of(double *d, int B, double level, struct st_ci *out)
{
	qsort(d, (size_t)B, sizeof *d, cmp_d);
	double a[2] = {(1 - level) / 2, (1 + level) / 2}, r[2];
	for (int e = 0; e < 2; e++) {
		double h = (B - 1) * a[e];
		int i = (int)floor(h);
		if (i >= B - 1)
			r[e] = d[B - 1];
		else
			r[e] = d[i] + (h - i) * (d[i + 1] - d[i]);
	}
	out->lo = r[0];
	out->hi = r[1];
}

/* statistic st of v[0..n-1] sorted ascending. */
static double stat_sorted(const double *v, size_t n, struct st_stat st)
{
	if (st.kind == ST_QUANTILE)
		return st_quantile_sorted(v, n, st.q);
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

/* The resample's order statistic of rank r1 (1-based) among n draws from v
 * (sorted): draws are v[floor(n V_i)], V_i uniform, and floor(n .) keeps the
 * order, so it is v[floor(n V_(r1))] with V_(r1) ~ Beta(r1, n - r1 + 1). */
static double beta_order_stat(const double *v, size_t n, size_t r1, struct st_rng *r)
{
	double u = st_rng_beta(r, (double)r1, (double)(n - r1 + 1));
	size_t i = (size_t)(u * (double)n);
	return v[i < n ? i : n - 1];
}

/* statistic st of one resample (n draws with replacement) of v, sorted; buf
 * holds n. A quantile of more than 64 values goes through the Beta order
 * statistic (the same distribution) instead of an O(n^2) insertion sort. */
static double stat_resample(const double *v, size_t n, struct st_stat st,
			    struct st_rng *r, double *buf)
{
	if (st.kind == ST_MEAN) {
		double s = 0;
		for (size_t i = 0; i < n; i++)
			s += v[st_rng_below(r, n)];
		return s / (double)n;
	}
	if (n > 64)
		return beta_order_stat(v, n, st_rank(st.q, n) + 1, r);
	for (size_t i = 0; i < n; i++) {
		double x = v[st_rng_below(r, n)];
		size_t j = i;
		for (; j > 0 && buf[j - 1] > x; j--)  /* insertion: n is a few runs */
			buf[j] = buf[j - 1];
		buf[j] = x;
	}
	return st_quantile_sorted(buf, n, st.q);
}

/* Fill bo's defaults (B, level); -1 when the sizes, B, level or q are out of range. */
static int boot_args(size_t nb, size_t nn, struct st_stat st, struct st_boot *bo)
{
	if (bo->B == 0)
		bo->B = ST_B_DEFAULT;
	if (bo->level == 0)
		bo->level = 0.95;
	if (nb == 0 || nn == 0 || bo->B < 2 || !(bo->level > 0 && bo->level < 1))
		return -1;
	if (st.kind == ST_QUANTILE && !(st.q >= 0 && st.q <= 1))
		return -1;
	return st.kind == ST_QUANTILE || st.kind == ST_MEAN ? 0 : -1;
}

/* Across runs: B resamples of the runs; point values on sorted copies. A
 * mean costs O(n) per resample: meant for runs, not commands. */
int st_boot_runs(const double *base, size_t nb, const double *new_, size_t nn,
		 struct st_stat st, struct st_boot bo, struct st_ci *out)
{
	if (!base || !new_ || !out || boot_args(nb, nn, st, &bo))
		return -1;
	double *sb = malloc((nb + nn) * sizeof *sb), *buf = malloc((nb + nn) * sizeof *buf);
	double *d = malloc((size_t)bo.B * sizeof *d);
	if (!sb || !buf || !d) {
		free(sb), free(buf), free(d);
		return -2;
	}
	memcpy(sb, base, nb * sizeof *sb);
	memcpy(sb + nb, new_, nn * sizeof *sb);
	qsort(sb, nb, sizeof *sb, cmp_d);
	qsort(sb + nb, nn, sizeof *sb, cmp_d);
	out->base = stat_sorted(sb, nb, st);
	out->new_ = stat_sorted(sb + nb, nn, st);
	out->delta = out->new_ - out->base;
	struct st_rng r;
	st_rng_seed(&r, bo.seed);
	for (int b = 0; b < bo.B; b++) {
		double xb = stat_resample(sb, nb, st, &r, buf);
		d[b] = stat_resample(sb + nb, nn, st, &r, buf) - xb;
	}
	ci_of(d, bo.B, bo.level, out);
	out->method = ST_CI_RESAMPLE;
	out->k_base = out->k_new = 0;
	free(sb), free(buf), free(d);
	return 0;
}

/* ------------------------------------------------- bootstrap within a run */

#define ST_TAIL_MAX 4096   /* extreme values resampled exactly, at most */
#define ST_TAIL_TOL 0.005  /* allowed O(1/n) error of the bulk's normal, in sd units */

/* One side of the mean's within-run bootstrap: the k = kl + kh most extreme
 * values are resampled exactly, the bulk between them by its CLT. */
struct tailside {
	const double *v;
	size_t n, kl, kh;     /* tail: v[0..kl-1] and v[n-kh..n-1] */
	double c;             /* centre of the sums (the final bulk mean) */
	double s[5];          /* s[k] = sum over the bulk of (v - c)^k */
	double mu, sd, skew;  /* bulk per value: mean - c, sd, skewness */
	double *cdf;          /* T ~ Bin(n, k/n) on t0..t0+nt-1, cumulative */
	size_t t0, nt;
};

/* s[0..4] = power sums of (v[i] - c) over v[l..h]. */
static void bulk_sums(struct tailside *t, size_t l, size_t h, double c)
{
	double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
	for (size_t i = l; i <= h; i++) {
		double d = t->v[i] - c, d2 = d * d;
		s1 += d, s2 += d2, s3 += d2 * d, s4 += d2 * d2;
	}
	t->c = c;
	t->s[0] = (double)(h - l + 1), t->s[1] = s1, t->s[2] = s2, t->s[3] = s3, t->s[4] = s4;
}

/* Central moments m[1] = mean - c, m[2..4] of the bulk from its power sums. */
static void bulk_moments(const double *s, double *m)
{
	double M = s[0], a = s[1] / M, b = s[2] / M, c = s[3] / M, d = s[4] / M;
	m[1] = a;
	m[2] = fmax(0, b - a * a);
	m[3] = c - 3 * a * b + 2 * a * a * a;
	m[4] = d - 4 * a * c + 6 * a * a * b - 3 * a * a * a * a;
}

/* 1 when the bulk's mean over n draws is normal enough: the Cornish-Fisher
 * terms past the skewness one, at z = 1.96, cost under ST_TAIL_TOL sd. */
static int bulk_ok(const double *s, size_t n)
{
	double m[5];
	bulk_moments(s, m);
	if (m[2] <= 0)
		return 1;
	double g1sq = m[3] * m[3] / (m[2] * m[2] * m[2]), g2 = m[4] / (m[2] * m[2]) - 3;
	return (0.069 * fabs(g2) + 0.146 * g1sq) / (double)n <= ST_TAIL_TOL;
}

/* Peel the value farthest from the bulk's mean, one end or the other, until
 * bulk_ok or ST_TAIL_MAX (or n/2). The running sums lose digits when an
 * outlier dominates them: each stop is checked on sums made afresh. */
static void tail_peel(struct tailside *t)
{
	size_t n = t->n, l = 0, h = n - 1, cap = n / 2 < ST_TAIL_MAX ? n / 2 : ST_TAIL_MAX;
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += t->v[i];
	bulk_sums(t, 0, n - 1, mean / (double)n);
	for (int fresh = 1, checks = 0;;) {
		if (bulk_ok(t->s, n) || l + (n - 1 - h) >= cap) {
			if (fresh || ++checks > 16 || l + (n - 1 - h) >= cap)
				break;
			bulk_sums(t, l, h, t->c + t->s[1] / t->s[0]);
			fresh = 1;
			continue;
		}
		double m = t->c + t->s[1] / t->s[0];
		size_t i = t->v[h] - m >= m - t->v[l] ? h-- : l++;
		double d = t->v[i] - t->c, d2 = d * d;
		t->s[0] -= 1, t->s[1] -= d, t->s[2] -= d2, t->s[3] -= d2 * d, t->s[4] -= d2 * d2;
		fresh = 0;
	}
	t->kl = l, t->kh = n - 1 - h;
	bulk_sums(t, l, h, t->c + t->s[1] / t->s[0]); /* around the bulk mean */
	bulk_sums(t, l, h, t->c + t->s[1] / t->s[0]);
	double m[5];
	bulk_moments(t->s, m);
	t->mu = m[1], t->sd = sqrt(m[2]);
	t->skew = m[2] > 0 ? m[3] / (m[2] * t->sd) : 0;
}

/* The table of T ~ Binomial(n, k/n), the draws that land in the tail, on
 * mode +- (12 sd + 12) (the mass outside is below 1e-30), from pmf ratios.
 * Returns -2 when memory fails. */
static int tail_table(struct tailside *t)
{
	size_t k = t->kl + t->kh, n = t->n;
	t->nt = 0;
	if (k == 0)
		return 0;
	double p = (double)k / (double)n, q = 1 - p, sd = sqrt((double)n * p * q);
	size_t mode = (size_t)floor(((double)n + 1) * p), w = (size_t)(12 * sd + 12);
	mode = mode < n ? mode : n;
	t->t0 = mode > w ? mode - w : 0;
	size_t t1 = n - mode > w ? mode + w : n;
	t->nt = t1 - t->t0 + 1;
	double *c = t->cdf = malloc(t->nt * sizeof *c);
	if (!c)
		return -2;
	c[mode - t->t0] = 1;
	for (size_t x = mode; x < t1; x++)
		c[x + 1 - t->t0] = c[x - t->t0] * (double)(n - x) / (double)(x + 1) * (p / q);
	for (size_t x = mode; x > t->t0; x--)
		c[x - 1 - t->t0] = c[x - t->t0] * (double)x / (double)(n - x + 1) * (q / p);
	for (size_t i = 1; i < t->nt; i++)
		c[i] += c[i - 1];
	return 0;
}

/* One bootstrap mean: T tail draws taken exactly (uniform over the k tail
 * values), the other n - T from the bulk as a normal sum with its skewness
 * (Cornish-Fisher: z + g (z^2 - 1) / 6, g = skew / sqrt(n - T)). */
static double tail_mean(const struct tailside *t, struct st_rng *r)
{
	size_t T = 0, k = t->kl + t->kh, n = t->n;
	double s = 0;
	if (t->nt) {
		double u = st_rng_unif(r) * t->cdf[t->nt - 1];
		size_t lo = 0, hi = t->nt - 1;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		T = t->t0 + lo;
		for (size_t j = 0; j < T; j++) {
			size_t i = (size_t)st_rng_below(r, k);
			s += t->v[i < t->kl ? i : n - k + i] - t->c;
		}
	}
	double M = (double)(n - T);
	s += M * t->mu;
	if (M > 0 && t->sd > 0) {
		double z = st_rng_normal(r), g = t->skew / sqrt(M);
		s += sqrt(M) * t->sd * (z + g * (z * z - 1) / 6);
	}
	return t->c + s / (double)n;
}

/* Set up one side of the mean (sorted v, n values). */
static int tail_init(struct tailside *t, const double *v, size_t n)
{
	memset(t, 0, sizeof *t);
	t->v = v, t->n = n;
	tail_peel(t);
	return tail_table(t);
}

/* The deltas of the mean: tail-exact + bulk-normal on both sides. */
static int within_mean_tail(const double *base, size_t nb, const double *new_, size_t nn,
			    int B, struct st_rng *r, double *d, struct st_ci *out)
{
	struct tailside tb = {0}, tn = {0};
	int rc = tail_init(&tb, base, nb);
	if (rc == 0)
		rc = tail_init(&tn, new_, nn);
	for (int b = 0; rc == 0 && b < B; b++) {
		double xb = tail_mean(&tb, r);
		d[b] = tail_mean(&tn, r) - xb;
	}
	out->k_base = tb.kl + tb.kh;
	out->k_new = tn.kl + tn.kh;
	free(tb.cdf);
	free(tn.cdf);
	return rc;
}

/* Within one run: quantiles through Beta order statistics (exact, O(B)); a
 * mean by plain resampling while (nb + nn) B <= ST_EXACT_DRAWS, else by the
 * tail-exact, bulk-normal scheme above. base and new_ sorted ascending. */
int st_boot_within(const double *base, size_t nb, const double *new_, size_t nn,
		   struct st_stat st, struct st_boot bo, struct st_ci *out)
{
	if (!base || !new_ || !out || boot_args(nb, nn, st, &bo))
		return -1;
	double *d = malloc((size_t)bo.B * sizeof *d);
	if (!d)
		return -2;
	out->base = stat_sorted(base, nb, st);
	out->new_ = stat_sorted(new_, nn, st);
	out->delta = out->new_ - out->base;
	out->k_base = out->k_new = 0;
	struct st_rng r;
	st_rng_seed(&r, bo.seed);
	int rc = 0;
	if (st.kind == ST_QUANTILE) {
		size_t rb = st_rank(st.q, nb) + 1, rn = st_rank(st.q, nn) + 1;
		for (int b = 0; b < bo.B; b++) {
			double xb = beta_order_stat(base, nb, rb, &r);
			d[b] = beta_order_stat(new_, nn, rn, &r) - xb;
		}
		out->method = ST_CI_BETA;
	} else if ((double)(nb + nn) * bo.B <= ST_EXACT_DRAWS) {
		for (int b = 0; b < bo.B; b++) {
			double xb = stat_resample(base, nb, st, &r, NULL);
			d[b] = stat_resample(new_, nn, st, &r, NULL) - xb;
		}
		out->method = ST_CI_RESAMPLE;
	} else {
		rc = within_mean_tail(base, nb, new_, nn, bo.B, &r, d, out);
		out->method = ST_CI_TAILNORM;
	}
	if (rc == 0)
		ci_of(d, bo.B, bo.level, out);
	free(d);
	return rc;
}

/* ---------------------------------------------------------------- verdict */

/* The rule (docs/statistics.md): changed when the CI excludes 0 and p <
 * alpha and delta lies on the CI's side of 0; the side and bigger_is_worse
 * name it slower or faster, unless |delta| < min_rel |base| (negligible).
 * The CI and p disagreeing is no change, flagged unconfirmed. A NaN p (no
 * test) never confirms; p = 0 judges on the CI alone. */
struct st_judgement st_judge(struct st_judge_in in)
{
	struct st_judgement j = {ST_NO_CHANGE, 0, 0, 0};
	double alpha = in.alpha > 0 ? in.alpha : 0.05;
	int up = in.lo > 0, down = in.hi < 0, excl = up || down, sig = in.p < alpha;
	j.within_noise = !excl;
	if (excl != sig) {
		j.unconfirmed = 1;
	} else if (excl) {
		if ((up && !(in.delta > 0)) || (down && !(in.delta < 0)))
			j.unconfirmed = 1;
		else if (in.min_rel > 0 && fabs(in.delta) < in.min_rel * fabs(in.base))
			j.negligible = 1;
		else
			j.verdict = (up == (in.bigger_is_worse != 0)) ? ST_SLOWER : ST_FASTER;
	}
	return j;
}

/* "faster", "slower" or "no change". */
const char *st_verdict_name(enum st_verdict v)
{
	return v == ST_FASTER ? "faster" : v == ST_SLOWER ? "slower" : "no change";
}
