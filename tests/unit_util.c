/* unit_util.c — lib/util.c's text helpers against snprintf (the second
 * method): mib1_text is snprintf's "%.1f" of bytes / 1048576.0, str_cat its
 * "%s%s..." (cut where snprintf cuts). */
#include "../lib/util.h"
#include <stdio.h>
#include <stdint.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit: %s\n", name); \
	else { printf("FAIL - unit: %s\n", name); fails++; } } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The first bytes value where mib1_text and snprintf differ (text or length), or -1. */
static int64_t mib_differs(int64_t b, int64_t *first)
{
	char want[64], got[64];
	int wl = snprintf(want, sizeof want, "%.1f", (double)b / 1048576.0);
	int gl = mib1_text(got, sizeof got, b);
	if (wl != gl || strcmp(want, got)) {
		if (*first == -1)
			*first = b;
		return 1;
	}
	return 0;
}

int main(void)
{
	int64_t first = -1;
	int bad = 0;
	for (int64_t b = 0; b <= 3000000; b++) /* every value up to ~2.9 MiB */
		bad += mib_differs(b, &first);
	CHECK("mib1_text = snprintf %.1f for 0..3,000,000 bytes", !bad);
	if (bad)
		printf("# first difference at %lld\n", (long long)first);
	bad = 0, first = -1;
	/* exact ties of the tenths (bytes x 10 = odd x 2^19): bytes = 5m x 2^18 */
	for (int64_t m = 0; m < 200000; m++) {
		bad += mib_differs(m * 5 * 262144, &first);
		bad += mib_differs(m * 5 * 262144 + 1, &first);
		bad += mib_differs(m * 5 * 262144 - 1, &first);
	}
	CHECK("mib1_text = snprintf on the ties of the tenths and their neighbours", !bad);
	bad = 0, first = -1;
	for (int i = 0; i < 1000000; i++) { /* every magnitude, below 2^53 and above, negative */
		uint64_t x = next();
		int64_t b = (int64_t)(x >> (x & 63));
		bad += mib_differs(b, &first) + mib_differs(-b, &first);
	}
	bad += mib_differs(INT64_MAX, &first) + mib_differs(INT64_MIN, &first);
	bad += mib_differs(((int64_t)1 << 53) - 1, &first) + mib_differs((int64_t)1 << 53, &first);
	CHECK("mib1_text = snprintf on random values of every magnitude and sign", !bad);
	char small[4];
	CHECK("mib1_text cuts as snprintf does", mib1_text(small, sizeof small, 123456789) == 5 &&
	      !strcmp(small, "117"));
	bad = 0;
	const char *parts[] = {"store", " ", "kv", " ", "12.5", "MiB", " FAILED", NULL};
	for (size_t n = 1; n <= 40; n++) {
		char want[64], got[64];
		int wl = snprintf(want, n, "%s%s%s%s%s%s%s", parts[0], parts[1], parts[2], parts[3], parts[4], parts[5],
				  parts[6]);
		size_t gl = str_cat(got, n, parts);
		bad += strcmp(want, got) != 0 || gl != ((size_t)wl < n ? (size_t)wl : n - 1);
	}
	CHECK("str_cat = snprintf %s... at every buffer size (cut at n - 1)", !bad);
	return fails != 0;
}
