/* unit_map.c — lib/u64map: inserts, lookups and deletions checked against a
 * plain array (the second method), with keys that collide on purpose. */
#include "../lib/u64map.h"
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit: %s\n", name); \
	else { printf("FAIL - unit: %s\n", name); fails++; } } while (0)

#define NK 512

int main(void)
{
	struct u64map m = {0};
	uint32_t ref[NK];       /* value per key index; UINT32_MAX absent */
	uint64_t keys[NK];
	for (int i = 0; i < NK; i++) {
		ref[i] = UINT32_MAX;
		/* multiples of a large power of two: few distinct low bits before hashing */
		keys[i] = (uint64_t)i << 40 | (uint64_t)(i % 3);
	}
	uint64_t x = 88172645463325252ull;
	int bad_get = 0, bad_n = 0;
	for (int step = 0; step < 200000; step++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		int k = (int)(x % NK), op = (int)((x >> 20) % 3);
		if (op == 0) {
			int fresh;
			uint32_t *v = map_slot(&m, keys[k], &fresh);
			if (fresh != (ref[k] == UINT32_MAX))
				bad_get++;
			*v = ref[k] = (uint32_t)step;
		} else if (op == 1) {
			map_del(&m, keys[k]);
			ref[k] = UINT32_MAX;
		}
		if (step % 997 == 0) {
			size_t n = 0;
			for (int i = 0; i < NK; i++) {
				uint32_t v;
				int has = map_get(&m, keys[i], &v);
				n += ref[i] != UINT32_MAX;
				if (has != (ref[i] != UINT32_MAX) || (has && v != ref[i]))
					bad_get++;
			}
			if (n != m.n)
				bad_n++;
		}
	}
	CHECK("u64map: 200k random inserts/deletes agree with an array on every key", bad_get == 0);
	CHECK("u64map: its count agrees", bad_n == 0);
	size_t before = m.n;
	map_del(&m, 12345); /* absent: no-op */
	CHECK("u64map: deleting an absent key changes nothing", m.n == before);
	map_free(&m);
	return fails != 0;
}
