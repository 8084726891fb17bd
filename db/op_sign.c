/* op_sign.c — the sign test of paired differences, for ab.sql's interval and
 * verdict: two scalar functions over counts (the SQL file picks the values).
 *
 *   kvio_sign_p(pos, neg)    the exact two-sided sign test: with m = pos + neg
 *                            pairs that differ (ties dropped), X ~ Binomial(m, 1/2),
 *                            p = min(1, 2 P(X <= min(pos, neg))); m = 0: 1.
 *                            (scipy.stats.binomtest(min, m).pvalue gives the same.)
 *   kvio_sign_rank(n, conf)  the rank l (1-based) such that the l-th and the
 *                            (n+1-l)-th smallest of n paired differences bound
 *                            their median with confidence >= conf (the
 *                            distribution-free order-statistic interval, the
 *                            sign test's dual): the largest l with
 *                            P(X <= l-1) <= (1-conf)/2, X ~ Binomial(n, 1/2);
 *                            0 when there is none (n too small: n <= 5 at 0.95).
 *
 * The binomial terms are computed in logs (lgamma), so n may be millions;
 * only the terms that count are summed (O(sqrt(n)) of them near the middle). */
#include "kvio_int.h"
#include <math.h>

/* log P(X = i), X ~ Binomial(m, 1/2). */
static double lpmf(double m, double i)
{
	return lgamma(m + 1) - lgamma(i + 1) - lgamma(m - i + 1) - m * M_LN2;
}

/* P(X <= k), X ~ Binomial(m, 1/2), k <= m / 2: the terms shrink going down
 * from k (ratio i / (m - i + 1) < 1), summed until they no longer count. */
static double lower_tail(int64_t m, int64_t k)
{
	double c = 0;
	for (int64_t i = k; i >= 0; i--) {
		double t = exp(lpmf((double)m, (double)i));
		c += t;
		if (t < c * 1e-18)
			break;
	}
	return c;
}

static void sign_p(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return; /* NULL */
	int64_t pos = sqlite3_value_int64(argv[0]), neg = sqlite3_value_int64(argv[1]);
	if (pos < 0 || neg < 0 || pos > (INT64_C(1) << 40) || neg > (INT64_C(1) << 40)) {
		sqlite3_result_error(ctx, "kvio_sign_p(pos, neg): counts from 0 to 2^40", -1);
		return;
	}
	int64_t m = pos + neg, k = pos < neg ? pos : neg;
	if (m == 0 || 2 * k == m) {
		sqlite3_result_double(ctx, 1.0);
		return;
	}
	double p = 2 * lower_tail(m, k);
	sqlite3_result_double(ctx, p < 1 ? p : 1);
}

static void sign_rank(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	int64_t n = sqlite3_value_int64(argv[0]);
	double conf = sqlite3_value_double(argv[1]);
	if (n < 0 || n > (INT64_C(1) << 40) || !(conf > 0 && conf < 1)) {
		sqlite3_result_error(ctx, "kvio_sign_rank(n, conf): n from 0 to 2^40, conf in (0, 1)", -1);
		return;
	}
	double half = (1 - conf) / 2, c = 0;
	/* below n/2 - 20 sqrt(n) (40 standard deviations) the tail is under 1e-300: start there */
	int64_t i0 = (int64_t)floor((double)n / 2 - 20 * sqrt((double)n)), l;
	l = i0 = i0 > 0 ? i0 : 0;
	for (int64_t i = i0; 2 * i < n; i++) { /* c = P(X <= i) */
		c += exp(lpmf((double)n, (double)i));
		if (c > half)
			break;
		l = i + 1;
	}
	sqlite3_result_int64(ctx, l);
}

int op_sign_register(sqlite3 *db)
{
	int f = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	int rc = sqlite3_create_function_v2(db, "kvio_sign_p", 2, f, NULL, sign_p, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "kvio_sign_rank", 2, f, NULL, sign_rank, NULL, NULL, NULL);
	return rc;
}
