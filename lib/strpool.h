/* strpool.h — interned strings: each distinct string gets a dense id
 * (0, 1, 2, ... in first-seen order) and is stored once. Zero-initialize. */
#ifndef KVIO_STRPOOL_H
#define KVIO_STRPOOL_H
#include "u64map.h"
#include "util.h"
#include <stddef.h>
#include <stdint.h>

struct strpool {
	struct arena a;
	struct vec s;    /* const char* by id */
	struct u64map h; /* hash -> latest id with that hash (older ones chained through next) */
	struct vec next; /* uint32 */
};

/* The id of s[0..n); *fresh (if not NULL) says whether it was added now. */
uint32_t strpool_id(struct strpool *p, const char *s, size_t n, int *fresh);
/* The id of s[0..n) if interned already, else -1. */
int64_t strpool_find(const struct strpool *p, const char *s, size_t n);
const char *strpool_str(const struct strpool *p, uint32_t id);
void strpool_free(struct strpool *p);

#endif
