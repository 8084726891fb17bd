/* strpool.c — see strpool.h. */
#include "strpool.h"
#include <string.h>

#define CHAIN_END (UINT32_MAX - 1) /* UINT32_MAX is the map's empty marker */

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int64_t lookup(const struct strpool *p, uint32_t head, const char *s, size_t n)
{
	for (uint32_t i = head; i != CHAIN_END; i = VEC_AT(&p->next, uint32_t, i)) {
		const char *x = VEC_AT(&p->s, const char *, i);
		if (strlen(x) == n && !memcmp(x, s, n))
			return i;
	}
	return -1;
}

uint32_t strpool_id(struct strpool *p, const char *s, size_t n, int *fresh)
{
	if (!s) /* an absent string (a protobuf bytes field left out): the empty one */
		s = "", n = 0;
	int new_hash;
	uint32_t *head = map_slot(&p->h, fnv(s, n), &new_hash);
	if (!new_hash) {
		int64_t id = lookup(p, *head, s, n);
		if (id >= 0) {
			if (fresh)
				*fresh = 0;
			return (uint32_t)id;
		}
	}
	uint32_t id = (uint32_t)p->s.n;
	*(const char **)vec_push(&p->s, sizeof(char *)) = arena_dup(&p->a, s, n);
	*(uint32_t *)vec_push(&p->next, sizeof(uint32_t)) = new_hash ? CHAIN_END : *head;
	*head = id;
	if (fresh)
		*fresh = 1;
	return id;
}

int64_t strpool_find(const struct strpool *p, const char *s, size_t n)
{
	uint32_t head;
	return map_get(&p->h, fnv(s, n), &head) ? lookup(p, head, s, n) : -1;
}

const char *strpool_str(const struct strpool *p, uint32_t id)
{
	return VEC_AT(&p->s, const char *, id);
}

void strpool_free(struct strpool *p)
{
	arena_free(&p->a);
	vec_free(&p->s);
	vec_free(&p->next);
	map_free(&p->h);
}
