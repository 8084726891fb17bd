/* u64map.c — see u64map.h. */
#include "u64map.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

static void map_grow(struct u64map *m);

static size_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}


uint32_t *map_slot(struct u64map *m, uint64_t key, int *fresh)
{
	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	size_t i = hash64(key) & (m->cap - 1);
	while (m->v[i] != UINT32_MAX) {
		if (m->k[i] == key) {
			*fresh = 0;
			return &m->v[i];
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->k[i] = key;
	m->n++;
	*fresh = 1;
	return &m->v[i];
}

static void map_grow(struct u64map *m)
{
	struct u64map o = *m;
	m->cap = o.cap ? o.cap * 2 : 64;
	m->n = 0;
	m->k = xmalloc(m->cap * sizeof *m->k);
	m->v = xmalloc(m->cap * sizeof *m->v);
	memset(m->v, 0xff, m->cap * sizeof *m->v);
	for (size_t i = 0; i < o.cap; i++)
		if (o.v[i] != UINT32_MAX) {
			int f;
			*map_slot(m, o.k[i], &f) = o.v[i];
		}
	free(o.k);
	free(o.v);
}

int map_get(const struct u64map *m, uint64_t key, uint32_t *out)
{
	if (!m->cap)
		return 0;
	size_t i = hash64(key) & (m->cap - 1);
	while (m->v[i] != UINT32_MAX) {
		if (m->k[i] == key) {
			*out = m->v[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}

/* Linear probing: close the gap by moving back every later entry of the
 * cluster whose home slot is not between the gap and its position. */
void map_del(struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, i = hash64(key) & mask;
	while (m->v[i] != UINT32_MAX && m->k[i] != key)
		i = (i + 1) & mask;
	if (m->v[i] == UINT32_MAX)
		return;
	m->n--;
	for (size_t j = (i + 1) & mask; m->v[j] != UINT32_MAX; j = (j + 1) & mask) {
		size_t h = hash64(m->k[j]) & mask;
		/* entry j may fill gap i unless its home h lies cyclically in (i, j] */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			m->k[i] = m->k[j];
			m->v[i] = m->v[j];
			i = j;
		}
	}
	m->v[i] = UINT32_MAX;
}

void map_free(struct u64map *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}


void map_reserve(struct u64map *m, size_t n)
{
	if (m->cap || !n)
		return;
	size_t cap = 64;
	while (cap < 2 * n + 2)
		cap *= 2;
	m->cap = cap;
	m->k = xmalloc(cap * sizeof *m->k);
	m->v = xmalloc(cap * sizeof *m->v);
	memset(m->v, 0xff, cap * sizeof *m->v);
}
