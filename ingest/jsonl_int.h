/* jsonl_int.h — jlshape.c's functions that jsonl.c calls (scalars, member
 * tables, key layouts and their templates: the arrow points from jsonl.c to
 * jlshape.c); not for the rest of kvio (jsonl.h is its interface). */
#ifndef KVIO_JSONL_INT_H
#define KVIO_JSONL_INT_H
#include "jsonl.h"
#include <stdint.h>
#include <string.h>

/* 1 when the 8 bytes of w (the first in its low byte: a little-endian load)
 * are decimal digits, their value in *v (SWAR: checked, then combined in
 * pairs, fours, eights). */
static inline int digits8(uint64_t w, uint64_t *v)
{
	/* every byte in '0'..'9': high nibble 3, and adding 6 keeps it 3 */
	if (((w & 0xf0f0f0f0f0f0f0f0ull) | (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) !=
	    0x3333333333333333ull)
		return 0;
	w -= 0x3030303030303030ull;
	w = (w * 10 + (w >> 8)) & 0x00ff00ff00ff00ffull;   /* pairs */
	w = (w * 100 + (w >> 16)) & 0x0000ffff0000ffffull; /* fours */
	*v = (w * 10000 + (w >> 32)) & 0xffffffffull;      /* eight */
	return 1;
}

static inline uint64_t load8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* The primitive token p[0..l) is a JSON literal or number: 0 (its value in
 * *u and *plain = 1 when a plain non-negative integer), -1 when not a JSON
 * scalar. padded: 8 bytes past the token are readable. */
int check_primitive(const char *p, size_t l, int padded, uint64_t *u, unsigned char *plain);
/* Room for ntok tokens' plain values. */
void plain_reserve(struct jline *j, int ntok);
/* Room for ntok tokens (and their plain values) and nmem members. */
void jl_reserve(struct jline *j, int ntok, int nmem);
/* Member i in the hash table slot (entries of generation gen are the line's). */
void hash_insert(const struct jmember *mem, uint32_t *slot, uint32_t gen, int i);
void hash_member(struct jline *j, int i);
/* A new line's members: none yet, every hash slot stale. */
void members_reset(struct jline *j);

/* The table of the line's members (nmem flat keys, a walked line)
 * from a known key layout, or a new layout learned with its template. */
void shape_index(struct jline *j);
/* The line by the template of a known layout: 1 when one took it (its
 * tokens and members ready), 0 otherwise. s[n..n+JL_PADDING) readable. */
int template_parse(struct jline *j, const char *s, size_t n);

#endif
