/* jlshape.c — the parts of jsonl.c's fast path below it: scalars checked
 * and read (plain integers 8 digits a step), member hash tables, key layouts
 * (shapes) and their templates. A capture's lines come in a few layouts (a command, a
 * completion): a line of a known layout reuses its member hash table, and a
 * line whose text between its values is byte for byte that of the line the
 * layout was learned from is tokenized by the layout's template alone (no
 * simdjson stage 1, no structural walk): the same JSON object shape, so the
 * same tokens the full parser makes, each value still checked (a string's
 * bytes, a scalar's grammar). tests/unit_jsonl.c and the fuzz target
 * "parser" hold it to the full parser. */
#include "jsonl_int.h"
#include "../lib/util.h"
#include <stdlib.h>
#include <string.h>

/* 1 when p[0..l) is a plain non-negative integer (digits, no leading zero, at
 * most 19 of them: it fits), its value in *out. padded: 8 bytes past the
 * token are readable (the fast path's lines), so short numbers are read 8
 * bytes at a time too. */
static int read_plain(const char *p, size_t l, int padded, uint64_t *out)
{
	static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
	if (l == 0 || l > 19 || (p[0] == '0' && l > 1))
		return 0;
	uint64_t v = 0, x;
	size_t k = 0;
	if (padded && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		for (; l - k >= 8; k += 8) {
			if (!digits8(load8(p + k), &x))
				return 0;
			v = v * 100000000 + x;
		}
		if (k < l) { /* the last 1..7 digits moved up, '0's below them */
			size_t r = l - k;
			if (!digits8(load8(p + k) << (8 * (8 - r)) | 0x3030303030303030ull >> (8 * r), &x))
				return 0;
			v = v * pow10[r] + x;
		}
		*out = v;
		return 1;
	}
	if (l >= 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && digits8(load8(p), &x))
		v = x, k = 8;
	while (k < l && (unsigned char)(p[k] - '0') <= 9)
		v = v * 10 + (unsigned)(p[k++] - '0');
	*out = v;
	return k == l;
}

/* The first index from k on in p[0..l) that is not a decimal digit. */
static size_t skip_digits(const char *p, size_t l, size_t k)
{
	while (k < l && p[k] >= '0' && p[k] <= '9')
		k++;
	return k;
}

/* The primitive token p[0..l) is a JSON literal or number: 0, its value in
 * *u and *plain = 1 when it is a plain non-negative integer (read_plain);
 * -1 when it is not a JSON scalar (jsmn strict accepts bare words made of
 * primitive characters, simdjson leaves the scalars it is not asked to read
 * unchecked). */
int check_primitive(const char *p, size_t l, int padded, uint64_t *u, unsigned char *plain)
{
	*plain = 0;
	if (read_plain(p, l, padded, u)) { /* the common case: its value read now */
		*plain = 1;
		return 0;
	}
	if ((l == 4 && !memcmp(p, "true", 4)) || (l == 5 && !memcmp(p, "false", 5)) ||
	    (l == 4 && !memcmp(p, "null", 4)))
		return 0;
	/* number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	size_t k = 0, d;
	if (k < l && p[k] == '-')
		k++;
	if (k < l && p[k] == '0')
		k++;
	else if (k < l && p[k] >= '1' && p[k] <= '9')
		k = skip_digits(p, l, k);
	else
		return -1;
	if (k < l && p[k] == '.') {
		d = k + 1;
		if ((k = skip_digits(p, l, d)) == d)
			return -1; /* a point needs digits after it */
	}
	if (k < l && (p[k] == 'e' || p[k] == 'E')) {
		k++;
		if (k < l && (p[k] == '+' || p[k] == '-'))
			k++;
		d = k;
		if ((k = skip_digits(p, l, d)) == d)
			return -1; /* so does an exponent */
	}
	return k == l ? 0 : -1;
}

/* Room for ntok tokens' plain values. */
void plain_reserve(struct jline *j, int ntok)
{
	if (j->ucap < ntok) {
		j->ucap = j->cap > ntok ? j->cap : ntok;
		j->uval = xrealloc(j->uval, j->ucap * sizeof *j->uval);
		j->plain = xrealloc(j->plain, j->ucap);
	}
}

/* Room for ntok tokens (and their plain values) and nmem members. */
void jl_reserve(struct jline *j, int ntok, int nmem)
{
	if (j->cap < ntok) {
		j->cap = ntok;
		j->tok = xrealloc(j->tok, sizeof(jsmntok_t) * j->cap);
	}
	plain_reserve(j, ntok);
	if (j->memcap < nmem) {
		j->memcap = nmem;
		j->mem = xrealloc(j->mem, j->memcap * sizeof *j->mem);
	}
}

/* Put member i (of the first JL_HASHED) in the hash table slot (entries of
 * generation gen are this line's); a later duplicate of a key takes the
 * earlier one's slot. */
void hash_insert(const struct jmember *mem, uint32_t *slot, uint32_t gen, int i)
{
	const struct jmember *m = &mem[i];
	uint32_t tag = gen << 8;
	for (unsigned h = jl_key_hash(m->key, (size_t)m->klen);; h++) {
		h &= JL_HASH - 1;
		uint32_t e = slot[h];
		if ((e & ~0xffu) != tag || (mem[e & 0xff].klen == m->klen &&
					    !memcmp(mem[e & 0xff].key, m->key, (size_t)m->klen))) {
			slot[h] = tag | (uint32_t)i;
			return;
		}
	}
}

void hash_member(struct jline *j, int i)
{
	hash_insert(j->mem, j->slot, j->gen, i);
}

/* A new line's members: none yet, every hash slot stale. */
void members_reset(struct jline *j)
{
	j->nmem = 0;
	if (++j->gen >= 1u << 24) { /* the generation wraps: every slot is made stale */
		memset(j->slot, 0, sizeof j->slot);
		j->gen = 1;
	}
	j->tab = j->slot;
	j->tgen = j->gen;
}

/* Bytes of a template's text between values (a longer one: no template). */
#define TMPL_MAX 2048

/* A key layout: its members' keys (in order) and the hash table they make
 * (generation 1). */
struct jshape {
	int nm;
	uint32_t klen[JL_HASHED], koff[JL_HASHED];
	char keys[1024 + 16]; /* 16: key_eq reads words */
	uint32_t slot[JL_HASH];
	/* Its template (tmpl 1): the text between the values of the line it
	 * was learned from, lit[loff[i] .. + llen[i]) before value i (member
	 * i's key at kpos[i] in it), the last (i = nm) from the last value to
	 * the line's end. A later line of the same text between its values is
	 * the same JSON object shape (template_line). */
	int tmpl;
	uint32_t loff[JL_HASHED + 1], llen[JL_HASHED + 1], kpos[JL_HASHED];
	char lit[TMPL_MAX + 16];
};

/* a[0..n) == b[0..n), both readable 16 bytes on: a short key in one or two words */
static inline int key_eq(const char *a, const char *b, size_t n)
{
	if (n > 16 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return !memcmp(a, b, n);
	uint64_t x0 = load8(a) ^ load8(b), x1 = load8(a + 8) ^ load8(b + 8);
	if (n < 8)
		return !(x0 & ((1ull << (8 * n)) - 1));
	return !x0 && (n == 8 || !(x1 & (~0ull >> (8 * (16 - n)))));
}

static void shape_template(const struct jline *j, struct jshape *sh);

/* The table of the line's members (nmem, all flat keys): that of a known
 * layout when the keys are the same in the same order, else built (and the
 * layout remembered, in place of the oldest). */
void shape_index(struct jline *j)
{
	int nm = j->nmem;
	if (nm > JL_HASHED) {
		members_reset(j);
		j->nmem = nm;
		for (int i = 0; i < JL_HASHED; i++)
			hash_member(j, i);
		return;
	}
	if (!j->shape)
		j->shape = xcalloc(JL_SHAPES, sizeof *j->shape);
	for (int k = 0; k < JL_SHAPES && k < j->nshape; k++) {
		const struct jshape *sh = &j->shape[k];
		int i = 0;
		if (sh->nm != nm)
			continue;
		while (i < nm && (uint32_t)j->mem[i].klen == sh->klen[i] &&
		       key_eq(j->mem[i].key, sh->keys + sh->koff[i], sh->klen[i]))
			i++;
		if (i == nm) {
			j->tab = sh->slot;
			j->tgen = 1;
			return;
		}
	}
	struct jshape *sh = &j->shape[j->nshape++ % JL_SHAPES];
	size_t off = 0;
	sh->nm = -1;
	sh->tmpl = 0;
	for (int i = 0; i < nm; i++) {
		if (off + (size_t)j->mem[i].klen > sizeof sh->keys) { /* long keys: not remembered */
			members_reset(j);
			j->nmem = nm;
			for (int q = 0; q < nm; q++)
				hash_member(j, q);
			return;
		}
		sh->klen[i] = (uint32_t)j->mem[i].klen;
		sh->koff[i] = (uint32_t)off;
		memcpy(sh->keys + off, j->mem[i].key, (size_t)j->mem[i].klen);
		off += (size_t)j->mem[i].klen;
	}
	memset(sh->slot, 0, sizeof sh->slot);
	for (int i = 0; i < nm; i++)
		hash_insert(j->mem, sh->slot, 1, i);
	sh->nm = nm;
	shape_template(j, sh);
	j->tab = sh->slot;
	j->tgen = 1;
}

/* n bytes at a equal those at b, both readable 16 bytes past a short one */
static inline int lit_eq(const char *a, const char *b, size_t n)
{
	return n <= 16 ? key_eq(a, b, n) : !memcmp(a, b, n);
}

/* p[0..) starts with a plain non-negative integer (no leading zero, at most
 * 19 digits) followed by a byte that is not a digit: its length, its value
 * in *out; else 0. p is ASCII and readable 8 bytes past the digits (SWAR:
 * eight digits a step, the first non-digit found by its lowest bit). */
static size_t digit_run(const char *p, uint64_t *out)
{
	static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
	uint64_t v = 0, x = 0;
	for (size_t k = 0; k <= 16; k += 8) {
		uint64_t w = load8(p + k);
		/* 0x33 in each digit's byte (ASCII: adding 6 carries out of no byte) */
		uint64_t nd = ((w & 0xf0f0f0f0f0f0f0f0ull) | (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ^
			      0x3333333333333333ull;
		size_t r = nd ? (size_t)__builtin_ctzll(nd) >> 3 : 8;
		if (r == 8) {
			digits8(w, &x);
			v = v * 100000000 + x;
			continue;
		}
		if (r)
			digits8(w << (8 * (8 - r)) | 0x3030303030303030ull >> (8 * r), &x), v = v * pow10[r] + x;
		size_t l = k + r;
		if (l == 0 || l > 19 || (p[0] == '0' && l > 1))
			return 0;
		*out = v;
		return l;
	}
	return 0; /* 24 digits or more */
}

/* Learn sh's template from the line its keys came from (a flat object of
 * the fast path, its tokens in j): none when the line is not ASCII (a
 * template line is checked for ASCII alone) or its text between values is
 * longer than TMPL_MAX. */
static void shape_template(const struct jline *j, struct jshape *sh)
{
	int nm = sh->nm;
	uint32_t off = 0, prev = 0;
	sh->tmpl = 0;
	if (!j->ascii || nm < 1 || nm > JL_HASHED)
		return;
	for (int i = 0; i <= nm; i++) {
		const jsmntok_t *v = i < nm ? &j->tok[2 * i + 2] : NULL;
		uint32_t vs = v ? (uint32_t)v->start - (v->type == JSMN_STRING) : (uint32_t)j->n;
		if (vs < prev || off + (vs - prev) > TMPL_MAX)
			return;
		if (v)
			sh->kpos[i] = (uint32_t)j->tok[2 * i + 1].start - prev;
		sh->loff[i] = off;
		sh->llen[i] = vs - prev;
		memcpy(sh->lit + off, j->s + prev, vs - prev);
		off += vs - prev;
		if (v)
			prev = (uint32_t)v->end + (v->type == JSMN_STRING);
	}
	sh->tmpl = 1;
}

/* The closing quote of a string whose text starts at q, before e: NULL
 * when a byte before it is a backslash, a control character but TAB or not
 * ASCII (the line then goes the other ways, which decide). Eight bytes a
 * step (SWAR; the line is padded): the lowest flagged byte is the first
 * special one (a borrow flags only bytes above a true one). */
static const char *str_close(const char *q, const char *e)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	while (q < e) {
		uint64_t w = load8(q), quo = w ^ (0x22 * ones), bs = w ^ (0x5c * ones);
		uint64_t m = (((w - 0x20 * ones) & ~w) | ((quo - ones) & ~quo) | ((bs - ones) & ~bs) | w) & high;
		if (!m) {
			q += 8;
			continue;
		}
		q += __builtin_ctzll(m) >> 3;
		if (q >= e || *q != '\t')
			return q < e && *q == '"' ? q : NULL;
		q++; /* a TAB: the full parser takes it in a string */
	}
	return NULL;
}

/* c ends a scalar of a template line: a separator, a brace or a blank */
static inline int scalar_end(char c)
{
	return c == ',' || c == '}' || c == ' ' || c == '\t';
}

/* Value token nt of a template line at *pp (before e): a string (to the next
 * quote: the line has no backslash) or a JSON scalar (to the next ',', '}'
 * or blank, checked as the full parser does). 0 when it is neither. */
static int template_value(struct jline *j, const char *s, const char **pp, const char *e, int nt)
{
	const char *p = *pp, *q;
	j->plain[nt] = 0;
	if (*p == '"') {
		if (!(q = str_close(p + 1, e)))
			return 0;
		j->tok[nt] = (jsmntok_t){JSMN_STRING, (int)(p + 1 - s), (int)(q - s), 0};
		*pp = q + 1;
		return 1;
	}
	size_t l = digit_run(p, &j->uval[nt]);
	if (l && p + l < e && scalar_end(p[l])) {
		j->plain[nt] = 1; /* the common case: a plain integer */
	} else {
		for (l = 0; p + l < e && !scalar_end(p[l]); l++)
			;
		if (!l || check_primitive(p, l, 1, &j->uval[nt], &j->plain[nt]))
			return 0;
	}
	j->tok[nt] = (jsmntok_t){JSMN_PRIMITIVE, (int)(p - s), (int)(p + l - s), 0};
	*pp = p + l;
	return 1;
}

/* s[0..n) (JL_PADDING readable bytes past it) parsed by sh's template: its
 * text between values byte for byte that of the template's line (ASCII, no
 * backslash or control character), each value an ASCII string without
 * backslash or control character but TAB, or a JSON scalar.
 * Such a line is the same JSON object shape as the template's, so the full
 * parser would make these tokens (no stage 1, no structural index). 1 when
 * done, its tokens and members ready (the shape's table); 0: not this shape. */
static int template_line(struct jline *j, const struct jshape *sh, const char *s, size_t n)
{
	const char *p = s, *e = s + n;
	int nm = sh->nm, nt = 1;
	for (int i = 0; i < nm; i++) {
		uint32_t ll = sh->llen[i];
		if ((size_t)(e - p) <= ll || !lit_eq(p, sh->lit + sh->loff[i], ll))
			return 0;
		const char *k = p + sh->kpos[i];
		j->tok[nt] = (jsmntok_t){JSMN_STRING, (int)(k - s), (int)(k - s) + (int)sh->klen[i], 1};
		j->plain[nt++] = 0;
		p += ll;
		if (!template_value(j, s, &p, e, nt))
			return 0;
		j->mem[i] = (struct jmember){k, (int)sh->klen[i], nt++};
	}
	if ((size_t)(e - p) != sh->llen[nm] || !lit_eq(p, sh->lit + sh->loff[nm], sh->llen[nm]))
		return 0;
	j->tok[0] = (jsmntok_t){JSMN_OBJECT, 0, (int)n, nm};
	j->ntok = nt;
	j->nmem = nm;
	j->fast = 1;
	j->tab = sh->slot;
	j->tgen = 1;
	return 1;
}

/* The line by the template of a known shape (the one that took the last
 * template line first): 1 when one took it. */
int template_parse(struct jline *j, const char *s, size_t n)
{
	int ns = j->nshape < JL_SHAPES ? j->nshape : JL_SHAPES;
	jl_reserve(j, 2 * JL_HASHED + 1, JL_HASHED); /* a template's layout has at most JL_HASHED members */
	for (int q = 0; q < ns; q++) {
		int k = (j->tshape + q) % ns;
		const struct jshape *sh = &j->shape[k];
		if (!sh->tmpl || (size_t)sh->llen[0] >= n)
			continue;
		if (template_line(j, sh, s, n)) {
			j->tshape = k;
			j->ascii = 1;
			return j->templ = 1;
		}
	}
	return 0;
}

