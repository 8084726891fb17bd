/* jsonl.h — one JSON Lines record: exact tokenizing and typed field access.
 *
 * Two parsers make the same tokens: a flat object (every value a string,
 * number, true, false or null; no backslash, no control character) goes
 * through simdjson's On-Demand parser (sjline.cc, the fast path); any other
 * line, and any line simdjson refuses, through jsmn with kvio's own checks
 * (UTF-8, depth, number grammar), which decides what the line is. So a line is
 * counted the same whichever parser saw it: the fast path accepts only lines
 * the full parser accepts, with the same tokens (tests/unit_jsonl.c and the
 * fuzz target "parser" hold the two to that).
 *
 * Numbers are read from their text with strtoull/strtoll/strtod, so a 64-bit
 * user_data survives exactly (a double-based parser silently rounds it). */
#ifndef KVIO_JSONL_H
#define KVIO_JSONL_H
#define JSMN_STRICT
#define JSMN_HEADER
#include <jsmn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sjline;

/* Why a line could not be used. */
enum jl_err {
	JL_OK = 0,
	JL_BLANK,     /* empty or whitespace only: skipped, counted */
	JL_SYNTAX,    /* not JSON */
	JL_NOTOBJ,    /* JSON, but not an object */
	JL_UTF8,      /* invalid UTF-8 or a raw control character */
	JL_DEEP,      /* arrays/objects nested deeper than JL_MAX_DEPTH */
};

/* kvio's records are flat; deep nesting is garbage, and jsmn's cost grows with
 * the square of the depth (each close bracket searches back for its opener). */
#define JL_MAX_DEPTH 64

/* A top-level member: key text and the token index of its value. */
struct jmember {
	const char *key;
	int klen, val;
};

/* Keys of up to JL_HASHED members are found through a hash table. */
#define JL_HASH 128
#define JL_HASHED 64
/* Key layouts remembered: a capture's lines come in a few (a command, a
 * completion), and a line of a known layout reuses its table. */
#define JL_SHAPES 4

struct jline {
	const char *s; /* line text, not NUL-terminated */
	size_t n;
	jsmntok_t *tok;
	int ntok, cap;
	jsmn_parser p;
	struct jmember *mem; /* top-level members, built by jl_parse */
	int nmem, memcap;
	/* slot[h] = gen << 8 | member index for this line's keys (an older
	 * generation: empty); the last duplicate of a key owns its slot */
	uint32_t gen, slot[JL_HASH];
	/* the table the line's lookups use: slot (tgen = gen), or that of a
	 * line of the same keys in the same order before it (a shape) */
	const uint32_t *tab;
	uint32_t tgen;
	struct jshape *shape; /* JL_SHAPES recent key layouts and their tables */
	int nshape;
	/* uval[t], when plain[t]: token t is a plain non-negative integer of at
	 * most 19 digits, of that value (read once by jl_parse) */
	uint64_t *uval;
	unsigned char *plain;
	int ucap;
	/* Set by the caller (or NULL): the end of the readable memory the lines
	 * passed to jl_parse lie in. A line with JL_PADDING readable bytes after
	 * it is parsed where it is; else a copy is (pad). */
	const char *pad_end;
	char *pad;
	size_t padcap;
	/* Set by the caller (or NULL): the end of the whole lines of the buffer
	 * the lines passed to jl_parse lie in (in order), before pad_end; the
	 * fast path then runs simdjson's stage 1 once per region of lines of up
	 * to JL_REGION bytes, not once per line, and walks its structural
	 * indexes line by line. */
	const char *many_end;
	const char *many_base, *many_stop; /* the current region (many_stop NULL: none) */
	const char *many_skip; /* lines before this one go one at a time */
	const uint32_t *many_ix; /* its structural indexes (sjline.h) */
	uint32_t many_n, many_cur;
	int walked;            /* the last line came from its region's walk */
	int templ;             /* the last line came from a shape's template */
	int tshape;            /* the shape whose template took the last such line */
	int ascii;             /* the last line is ASCII (fast path) */
	struct sjline *sj; /* the fast path's parser, made on first use */
	int fast;          /* the last line's tokens came from the fast path */
};

/* Bytes of one region of lines (see many_end). */
#define JL_REGION (256 * 1024)

/* Bytes the fast path may read past a line (simdjson's padding). */
#define JL_PADDING 64

/* 1 (the default): flat objects take the fast path; 0: every line goes to the
 * full parser (the tests and the fuzz target compare the two). */
extern int jl_fast;

/* Tokenize s[0..n) (no trailing newline; a trailing CR is trimmed by the caller).
 * Returns JL_OK when the line is exactly one JSON object. j starts zeroed. */
enum jl_err jl_parse(struct jline *j, const char *s, size_t n);
void jl_free(struct jline *j);
const char *jl_err_str(enum jl_err e);

/* Top-level member lookup: token index of the value, or -1. The last duplicate wins. */
int jl_find(const struct jline *j, const char *key, size_t keylen);

/* A key's slot in the member hash table, before probing: its length and three
 * of its bytes (inline, so JL_FIND's hash of a literal is a constant). */
static inline unsigned jl_key_hash(const char *k, size_t n)
{
	if (!n)
		return 0;
	const unsigned char *u = (const unsigned char *)k;
	return (unsigned)n * 7u + u[0] * 31u + u[n - 1] * 131u + u[n / 2] * 17u;
}

int jl_find_scan(const struct jline *j, const char *key, size_t keylen);

/* jl_find with the key's hash h = jl_key_hash(key, keylen) given. */
static inline int jl_find_h(const struct jline *j, const char *key, size_t keylen, unsigned h)
{
	if (j->nmem > JL_HASHED)
		return jl_find_scan(j, key, keylen);
	for (;; h++) {
		h &= JL_HASH - 1;
		uint32_t e = j->tab[h];
		if (e >> 8 != j->tgen)
			return -1;
		const struct jmember *m = &j->mem[e & 0xff];
		if ((size_t)m->klen == keylen && !memcmp(m->key, key, keylen))
			return m->val;
	}
}
#define JL_FIND(j, lit) jl_find_h((j), (lit), sizeof(lit) - 1, jl_key_hash((lit), sizeof(lit) - 1))

/* Iterate top-level members: call with *it = 1 first; returns key token index, -1 at end. */
int jl_next_member(const struct jline *j, int *it);
/* Token index after the subtree rooted at t. */
int jl_skip(const struct jline *j, int t);

int jl_is_null(const struct jline *j, int t);
int jl_is_str(const struct jline *j, int t);
int jl_is_num(const struct jline *j, int t);
/* Number getters: 0 on success, -1 if the token is not a number of that kind.
 * jl_i64 accepts an integer or a float (truncated toward zero, as Python's int()). */
int jl_u64(const struct jline *j, int t, uint64_t *out);
int jl_i64(const struct jline *j, int t, int64_t *out);
int jl_f64(const struct jline *j, int t, double *out);
/* Unescape a string token into buf (UTF-8, NUL-terminated). Returns the length,
 * or -1 on a bad escape / not a string. buf must hold token length + 1 bytes. */
long jl_str(const struct jline *j, int t, char *buf);
/* Compare a string token (raw, escapes not decoded) with a literal. */
int jl_streq(const struct jline *j, int t, const char *lit, size_t litlen);
#define JL_STREQ(j, t, lit) jl_streq((j), (t), (lit), sizeof(lit) - 1)

/* Validate UTF-8 and reject raw control characters other than TAB. 0 = ok. */
int utf8_check(const char *s, size_t n);

#endif
