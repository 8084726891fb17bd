/* jsonl.c — see jsonl.h. The jsmn implementation is compiled here once; the
 * fast path is simdjson's (sjline.cc). */
#define JSMN_STRICT
#include <jsmn.h>
#include "jsonl.h"
#include "../lib/util.h"
#include "sjline.h"
#include "jsonl_int.h"
#include <limits.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *jl_err_str(enum jl_err e)
{
	switch (e) {
	case JL_OK: return "ok";
	case JL_BLANK: return "blank line";
	case JL_SYNTAX: return "not valid JSON";
	case JL_NOTOBJ: return "JSON but not an object";
	case JL_UTF8: return "invalid UTF-8 or raw control character";
	case JL_DEEP: return "arrays or objects nested more than 64 deep";
	}
	return "?";
}

int utf8_check(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		/* ASCII fast path, 8 bytes at a time */
		while (p + 8 <= e) {
			uint64_t w;
			memcpy(&w, p, 8);
			/* any byte >= 0x80 or < 0x20 ? */
			if ((w & 0x8080808080808080ull) ||
			    ((w - 0x2020202020202020ull) & ~w & 0x8080808080808080ull))
				break;
			p += 8;
		}
		if (p >= e)
			break;
		unsigned c = *p;
		if (c < 0x80) {
			if (c < 0x20 && c != '\t')
				return -1;
			p++;
			continue;
		}
		int len;
		unsigned min;
		if ((c & 0xe0) == 0xc0) { len = 2; min = 0x80; c &= 0x1f; }
		else if ((c & 0xf0) == 0xe0) { len = 3; min = 0x800; c &= 0x0f; }
		else if ((c & 0xf8) == 0xf0) { len = 4; min = 0x10000; c &= 0x07; }
		else return -1;
		if (p + len > e)
			return -1;
		for (int i = 1; i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return -1;
			c = (c << 6) | (p[i] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return -1;
		p += len;
	}
	return 0;
}

/* A line that is not an object: JL_NOTOBJ if it is some other JSON value
 * (checked by parsing it inside brackets), else JL_SYNTAX. Rare path. */
static enum jl_err not_object(struct jline *j, const char *s, size_t n)
{
	char *w = xmalloc(n + 2);
	w[0] = '[';
	memcpy(w + 1, s, n);
	w[n + 1] = ']';
	jsmn_init(&j->p);
	int r = jsmn_parse(&j->p, w, n + 2, j->tok, j->cap);
	int whole = r >= 2 && j->tok[0].end == (int)n + 2 && j->tok[0].size == 1;
	free(w);
	j->ntok = 0;
	return whole ? JL_NOTOBJ : JL_SYNTAX;
}

/* Nesting deeper than JL_MAX_DEPTH anywhere (brackets inside strings do not count). */
static int too_deep(const char *s, size_t n)
{
	/* a line with at most JL_MAX_DEPTH opening brackets cannot be too deep:
	 * counted with memchr, that is all a normal record costs */
	size_t opens = 0;
	const char *e = s + n;
	for (const char *p = s; opens <= JL_MAX_DEPTH && (p = memchr(p, '{', (size_t)(e - p))); p++)
		opens++;
	for (const char *p = s; opens <= JL_MAX_DEPTH && (p = memchr(p, '[', (size_t)(e - p))); p++)
		opens++;
	if (opens <= JL_MAX_DEPTH)
		return 0;
	int depth = 0, in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > JL_MAX_DEPTH)
				return 1;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Every primitive token is a JSON literal or number (check_primitive). 0 = ok. */
static int bad_primitive(struct jline *j, const char *pad)
{
	plain_reserve(j, j->ntok);
	memset(j->plain, 0, j->ntok);
	/* a flat object's values are tokens 2, 4, ...; the full parser's may be anywhere */
	for (int i = j->fast ? 2 : 0; i < j->ntok; i += j->fast ? 2 : 1) {
		const jsmntok_t *t = &j->tok[i];
		if (t->type == JSMN_PRIMITIVE &&
		    check_primitive((pad ? pad : j->s) + t->start, t->end - t->start, pad != NULL, &j->uval[i], &j->plain[i]))
			return -1;
	}
	return 0;
}

static void index_members(struct jline *j)
{
	members_reset(j);
	if (j->fast) { /* a flat object: its keys are tokens 1, 3, 5, ... */
		int nm = j->ntok / 2;
		if (nm > j->memcap) {
			j->memcap = nm > 32 ? nm : 32;
			j->mem = xrealloc(j->mem, j->memcap * sizeof *j->mem);
		}
		const jsmntok_t *t = j->tok + 1;
		for (int i = 0; i < nm; i++, t += 2) {
			j->mem[i] = (struct jmember){j->s + t->start, t->end - t->start, 2 * i + 2};
			if (i < JL_HASHED)
				hash_member(j, i);
		}
		j->nmem = nm;
		return;
	}
	int it = 1, k;
	while ((k = jl_next_member(j, &it)) >= 0) {
		if (j->nmem == j->memcap) {
			j->memcap = j->memcap ? j->memcap * 2 : 32;
			j->mem = xrealloc(j->mem, j->memcap * sizeof *j->mem);
		}
		j->mem[j->nmem] = (struct jmember){j->s + j->tok[k].start, j->tok[k].end - j->tok[k].start, k + 1};
		if (j->nmem < JL_HASHED)
			hash_member(j, j->nmem);
		j->nmem++;
	}
}

/* 1 when s[0..n) has no backslash and no control character but TAB: the
 * lines the fast path takes (the others, rare, go to the full parser, which
 * checks escapes and refuses control characters); 2 when it is ASCII too.
 * 16 bytes at a time (SSE2, every x86-64 has it), else 8 (SWAR). */
static int plain_bytes(const char *s, size_t n)
{
	size_t i = 0;
	unsigned hi = 0;
#ifdef __SSE2__
	const __m128i lim = _mm_set1_epi8(0x20), tab = _mm_set1_epi8('\t'), bs = _mm_set1_epi8('\\');
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* v < 0x20 (unsigned) where 0x20 - v does not saturate to 0 */
		__m128i ctl = _mm_andnot_si128(_mm_cmpeq_epi8(_mm_subs_epu8(lim, v), _mm_setzero_si128()),
					       _mm_set1_epi8(-1));
		__m128i bad = _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, tab), ctl), _mm_cmpeq_epi8(v, bs));
		if (_mm_movemask_epi8(bad))
			return 0;
		hi |= (unsigned)_mm_movemask_epi8(v); /* a byte of 0x80 or more */
	}
#else
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	for (; i + 8 <= n; i += 8) {
		uint64_t w = load8(s + i), b = w ^ (0x5c * ones); /* a zero byte where w has a backslash */
		hi |= (w & high) != 0;
		/* a byte below 0x20 (of those below 0x80), or a backslash */
		if (!((((w - 0x20 * ones) & ~w) | ((b - ones) & ~b)) & high))
			continue;
		break; /* the bytewise loop below decides (a TAB is fine) */
	}
#endif
	for (; i < n; i++) {
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == '\\')
			return 0;
		hi |= (unsigned char)s[i] >= 0x80;
	}
	return hi ? 1 : 2;
}

int jl_fast = 1;
_Static_assert(JL_PADDING >= SJ_PADDING, "padding");

/* Line s[0..n) of the current region, its first structural (a '{') at
 * index i: walked on the structural indexes into the tokens a flat object
 * makes (as sj_flat would), its members indexed and its primitives checked,
 * in one pass. 1 when done; 0 when the line is not a flat object alone on
 * its line or holds a scalar that is not JSON (it then goes alone, and the
 * region stays in step: the next line's start is looked for). */
static int walk_line(struct jline *j, const char *s, size_t n, uint32_t i)
{
	const uint32_t *ix = j->many_ix;
	const char *b = j->many_base;
	uint32_t end = (uint32_t)(s - b + n), last = j->many_n, close;
	int nt = 1, nm = 0;
	i++; /* past the '{' */
	if (i < last && ix[i] < end && b[ix[i]] == '}') {
		close = ix[i++];
	} else {
		for (;;) { /* "key" : value then , or } */
			if (i + 2 >= last || ix[i + 2] >= end || b[ix[i]] != '"' || b[ix[i + 1]] != ':')
				return 0;
			uint32_t ks = ix[i] + 1, vs = ix[i + 2], nx = ix[i + 3]; /* ix[last]: a sentinel */
			const char *ke = b + ix[i + 1] - 1; /* the key's closing quote: back from the colon */
			while (ke >= b + ks && (*ke == ' ' || *ke == '\t'))
				ke--;
			char c = b[vs];
			if (ke < b + ks || *ke != '"' || nx >= end || c == '{' || c == '[' || c == '}' || c == ']' ||
			    c == ',' || c == ':' || (b[nx] != ',' && b[nx] != '}'))
				return 0;
			const char *ve = b + nx; /* the value's end: back over whitespace */
			while (ve > b + vs + 1 && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			j->tok[nt] = (jsmntok_t){JSMN_STRING, (int)(b + ks - s), (int)(ke - s), 1};
			j->plain[nt++] = 0;
			if (c == '"') {
				if (ve - (b + vs) < 2 || ve[-1] != '"')
					return 0;
				j->tok[nt] = (jsmntok_t){JSMN_STRING, (int)(b + vs + 1 - s), (int)(ve - 1 - s), 0};
				j->plain[nt] = 0;
			} else {
				j->tok[nt] = (jsmntok_t){JSMN_PRIMITIVE, (int)(b + vs - s), (int)(ve - s), 0};
				if (check_primitive(b + vs, (size_t)(ve - (b + vs)), 1, &j->uval[nt], &j->plain[nt]))
					return 0;
			}
			j->mem[nm++] = (struct jmember){b + ks, (int)(ke - (b + ks)), nt++};
			i += 4;
			if (b[nx] == '}') {
				close = nx;
				break;
			}
		}
	}
	j->many_cur = i;
	for (const char *c = b + close + 1; c < b + end; c++) /* the line holds this object alone */
		if (*c != ' ' && *c != '\t')
			return 0;
	j->tok[0] = (jsmntok_t){JSMN_OBJECT, 0, (int)n, nm};
	j->ntok = nt;
	j->nmem = nm;
	j->fast = 1;
	shape_index(j);
	return 1;
}

/* Begin a region of lines at s (up to JL_REGION bytes of whole lines). */
static int region_begin(struct jline *j, const char *s)
{
	size_t len = (size_t)(j->many_end - s);
	if (len > JL_REGION) { /* cut after a newline */
		const char *nl = memrchr(s, '\n', JL_REGION);
		len = nl ? (size_t)(nl + 1 - s) : len;
	}
	j->many_base = s;
	j->many_stop = s + len;
	j->many_cur = 0;
	if (sj_many_begin(j->sj, s, len)) {
		j->many_skip = j->many_stop; /* refused: its lines go alone */
		return -1;
	}
	j->many_ix = sj_many_index(j->sj, &j->many_n);
	return 0;
}

/* The line s[0..n) parsed in its region of lines (jline's many_end): 1 when
 * done, else the line goes alone (sj_flat). A string never spans lines in a
 * region simdjson accepts (a raw newline in a string is refused), so its
 * lines start where a fresh parse of each would; a line that still finds no
 * structural where it starts (the region out of step) sends the rest of the
 * region's lines alone. */
static int region_parse(struct jline *j, const char *s, size_t n)
{
	if (s < j->many_skip || s + n >= j->many_end)
		return 0;
	int need = (int)(n / 2 + 4); /* a member takes 5 bytes at least: 2 tokens */
	jl_reserve(j, need, need / 2);
	if ((!j->many_stop || s >= j->many_stop) && region_begin(j, s))
		return 0;
	uint32_t off = (uint32_t)(s - j->many_base), i = j->many_cur;
	while (i < j->many_n && j->many_ix[i] < off) /* the structurals of lines that went alone */
		i++;
	j->many_cur = i;
	if (i < j->many_n && j->many_ix[i] == off)
		return j->walked = walk_line(j, s, n, i);
	j->many_skip = j->many_stop;
	return 0;
}

/* The fast path: a flat object tokenized by simdjson (sjline.cc). 2 when
 * its tokens and members are ready (its region's walk), 1 when its tokens
 * are, 0 when the full parser must decide. */
static int fast_tokens(struct jline *j, const char *s, size_t n)
{
	int pb;
	if (*s != '{' || n > INT_MAX / 2)
		return 0;
	/* the line has JL_PADDING readable bytes after it where it lies */
	int in_place = j->pad_end && j->pad_end >= s && (size_t)(j->pad_end - s) >= n + JL_PADDING;
	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && j->nshape && in_place && template_parse(j, s, n))
		return 2; /* tokens and members ready (the template checks every byte plain_bytes would) */
	if (!(pb = plain_bytes(s, n)))
		return 0;
	j->ascii = pb == 2;
	if (!j->sj && !(j->sj = sj_new()))
		return 0;
	if (j->many_end && j->pad_end && j->pad_end - j->many_end >= JL_PADDING && region_parse(j, s, n))
		return 2; /* tokens and members ready */
	const char *p = s;
	if (!in_place) { /* no readable padding after the line: parse a copy */
		if (j->padcap < n + SJ_PADDING) {
			j->padcap = 2 * n + SJ_PADDING;
			j->pad = xrealloc(j->pad, j->padcap);
		}
		memcpy(j->pad, s, n);
		p = j->pad;
	}
	int r;
	while ((r = sj_flat(j->sj, p, n, j->tok, j->cap)) < 0) {
		j->cap *= 2;
		j->tok = xrealloc(j->tok, sizeof(jsmntok_t) * j->cap);
	}
	j->ntok = r;
	if (r <= 0)
		return 0;
	j->fast = 1;
	if (!bad_primitive(j, p))
		return 1;
	j->fast = 0;
	j->ntok = 0; /* the full parser starts afresh */
	return 0;
}

enum jl_err jl_parse(struct jline *j, const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	j->s = s;
	j->n = n;
	j->ntok = 0;
	j->nmem = 0;
	j->fast = 0;
	j->tab = j->slot;
	j->tgen = UINT32_MAX; /* no key is found in a refused line */
	j->walked = 0;
	j->templ = 0;
	if (n == 0)
		return JL_BLANK;
	if (!j->tok) {
		j->cap = 128;
		j->tok = xmalloc(sizeof(jsmntok_t) * j->cap);
	}
	int fast = jl_fast ? fast_tokens(j, s, n) : 0;
	if (fast) {
		if (fast == 1)
			index_members(j);
		return JL_OK;
	}
	if (utf8_check(s, n))
		return JL_UTF8;
	if (n > 2 * JL_MAX_DEPTH && too_deep(s, n)) /* shorter lines cannot be */
		return JL_DEEP;
	for (;;) {
		jsmn_init(&j->p);
		int r = jsmn_parse(&j->p, s, n, j->tok, j->cap);
		if (r == JSMN_ERROR_NOMEM) {
			j->cap *= 2;
			j->tok = xrealloc(j->tok, sizeof(jsmntok_t) * j->cap);
			continue;
		}
		if (r < 1)
			return *s == '{' ? JL_SYNTAX : not_object(j, s, n);
		j->ntok = r;
		break;
	}
	/* exactly one top-level value spanning the whole line */
	enum jl_err e = JL_OK;
	if ((size_t)j->tok[0].end != n || j->tok[0].start != 0)
		e = JL_SYNTAX;
	else if (j->tok[0].type != JSMN_OBJECT)
		e = JL_NOTOBJ;
	else if (bad_primitive(j, NULL))
		e = JL_SYNTAX;
	if (e != JL_OK) {
		j->ntok = 0; /* no tokens of a refused line are read */
		return e;
	}
	index_members(j);
	return JL_OK;
}

void jl_free(struct jline *j)
{
	free(j->tok);
	free(j->mem);
	free(j->pad);
	free(j->uval);
	free(j->plain);
	sj_free(j->sj);
	free(j->shape);
	j->shape = NULL;
	j->nshape = 0;
	j->uval = NULL;
	j->plain = NULL;
	j->ucap = 0;
	j->tok = NULL;
	j->mem = NULL;
	j->pad = NULL;
	j->sj = NULL;
	j->cap = j->memcap = j->nmem = 0;
	j->padcap = 0;
}

int jl_skip(const struct jline *j, int t)
{
	int end = j->tok[t].end;
	t++;
	while (t < j->ntok && j->tok[t].start < end)
		t++;
	return t;
}

int jl_next_member(const struct jline *j, int *it)
{
	int k = *it;
	if (k >= j->ntok)
		return -1;
	int v = k + 1;
	if (v >= j->ntok)
		return -1;
	*it = jl_skip(j, v);
	return k;
}

int jl_find(const struct jline *j, const char *key, size_t keylen)
{
	return jl_find_h(j, key, keylen, jl_key_hash(key, keylen));
}

/* jl_find by a scan of the members: a line with more than JL_HASHED. */
int jl_find_scan(const struct jline *j, const char *key, size_t keylen)
{
	for (int i = j->nmem - 1; i >= 0; i--) /* the last duplicate wins */
		if ((size_t)j->mem[i].klen == keylen && !memcmp(j->mem[i].key, key, keylen))
			return j->mem[i].val;
	return -1;
}

int jl_is_null(const struct jline *j, int t)
{
	return t >= 0 && j->tok[t].type == JSMN_PRIMITIVE && j->s[j->tok[t].start] == 'n';
}

int jl_is_str(const struct jline *j, int t)
{
	return t >= 0 && j->tok[t].type == JSMN_STRING;
}

int jl_is_num(const struct jline *j, int t)
{
	if (t < 0 || j->tok[t].type != JSMN_PRIMITIVE)
		return 0;
	char c = j->s[j->tok[t].start];
	return c == '-' || (c >= '0' && c <= '9');
}

static int is_int_text(const char *p, size_t l)
{
	for (size_t i = 0; i < l; i++)
		if (p[i] == '.' || p[i] == 'e' || p[i] == 'E')
			return 0;
	return 1;
}

int jl_u64(const struct jline *j, int t, uint64_t *out)
{
	if (t >= 0 && t < j->ntok && j->plain[t]) {
		*out = j->uval[t];
		return 0;
	}
	if (!jl_is_num(j, t))
		return -1;
	const char *p = j->s + j->tok[t].start;
	size_t l = j->tok[t].end - j->tok[t].start;
	if (*p == '-' || !is_int_text(p, l)) {
		int64_t v;
		if (jl_i64(j, t, &v) || v < 0)
			return -1;
		*out = (uint64_t)v;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < l; i++) {
		unsigned d = p[i] - '0';
		if (v > (UINT64_MAX - d) / 10)
			return -1; /* overflow */
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* A number token copied into buf as a C string (for strtoll/strtod); NULL when
 * t is not a number or is longer than any number kvio reads. */
static const char *num_text(const struct jline *j, int t, char buf[64], size_t *len)
{
	if (!jl_is_num(j, t))
		return NULL;
	size_t l = j->tok[t].end - j->tok[t].start;
	if (l >= 64)
		return NULL;
	memcpy(buf, j->s + j->tok[t].start, l);
	buf[l] = 0;
	*len = l;
	return buf;
}

int jl_i64(const struct jline *j, int t, int64_t *out)
{
	if (t >= 0 && t < j->ntok && j->plain[t] && j->uval[t] <= INT64_MAX) {
		*out = (int64_t)j->uval[t];
		return 0;
	}
	char buf[64];
	size_t l;
	const char *p = num_text(j, t, buf, &l);
	if (!p)
		return -1;
	errno = 0;
	if (is_int_text(p, l)) {
		if (*p != '-' && l <= 18) { /* fits: no overflow check needed */
			int64_t v = 0;
			for (size_t i = 0; i < l; i++)
				v = v * 10 + (p[i] - '0');
			*out = v;
			return 0;
		}
		long long v = strtoll(buf, NULL, 10);
		if (errno)
			return -1;
		*out = v;
		return 0;
	}
	double d = strtod(buf, NULL);
	if (!isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
		return -1;
	*out = (int64_t)d;
	return 0;
}

int jl_f64(const struct jline *j, int t, double *out)
{
	char buf[64];
	size_t l;
	if (!num_text(j, t, buf, &l))
		return -1;
	*out = strtod(buf, NULL);
	return isfinite(*out) ? 0 : -1;
}

int jl_streq(const struct jline *j, int t, const char *lit, size_t litlen)
{
	if (t < 0 || j->tok[t].type != JSMN_STRING)
		return 0;
	return (size_t)(j->tok[t].end - j->tok[t].start) == litlen &&
	       !memcmp(j->s + j->tok[t].start, lit, litlen);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned c)
{
	if (c < 0x80) { o[0] = c; return 1; }
	if (c < 0x800) { o[0] = 0xc0 | c >> 6; o[1] = 0x80 | (c & 0x3f); return 2; }
	if (c < 0x10000) {
		o[0] = 0xe0 | c >> 12; o[1] = 0x80 | ((c >> 6) & 0x3f); o[2] = 0x80 | (c & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | c >> 18; o[1] = 0x80 | ((c >> 12) & 0x3f);
	o[2] = 0x80 | ((c >> 6) & 0x3f); o[3] = 0x80 | (c & 0x3f);
	return 4;
}

long jl_str(const struct jline *j, int t, char *buf)
{
	if (t < 0 || j->tok[t].type != JSMN_STRING)
		return -1;
	const char *p = j->s + j->tok[t].start, *e = j->s + j->tok[t].end;
	char *o = buf;
	while (p < e) {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		if (p + 1 >= e)
			return -1;
		char c = p[1];
		p += 2;
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned u;
			if (p + 4 > e || hex4(p, &u))
				return -1;
			p += 4;
			if (u >= 0xd800 && u <= 0xdbff) {
				unsigned lo;
				if (p + 6 <= e && p[0] == '\\' && p[1] == 'u' && !hex4(p + 2, &lo) &&
				    lo >= 0xdc00 && lo <= 0xdfff) {
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				} else {
					u = 0xfffd; /* lone surrogate: replacement char */
				}
			} else if (u >= 0xdc00 && u <= 0xdfff) {
				u = 0xfffd;
			}
			o += put_utf8(o, u);
			break;
		}
		default:
			return -1;
		}
	}
	*o = 0;
	return o - buf;
}
