/* u64map.h — a u64 -> u32 open-addressing hash map. Zero-initialize;
 * UINT32_MAX is reserved (marks empty slots) and cannot be stored. */
#ifndef KVIO_U64MAP_H
#define KVIO_U64MAP_H
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *k;
	uint32_t *v;
	size_t cap, n;
};

/* The value slot of key, inserted (*fresh = 1, value unset) if absent. */
uint32_t *map_slot(struct u64map *m, uint64_t key, int *fresh);
/* 1 and *out when key is present, else 0. */
int map_get(const struct u64map *m, uint64_t key, uint32_t *out);
/* Remove key (no-op when absent). */
void map_del(struct u64map *m, uint64_t key);
void map_free(struct u64map *m);
/* Size the table for n keys up front (no rehashing while they go in). */
void map_reserve(struct u64map *m, size_t n);

#endif
