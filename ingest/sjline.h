/* sjline.h — the fast path of jsonl.c: one flat JSON object tokenized by
 * simdjson's On-Demand parser (sjline.cc, the one C++ file), into the same
 * jsmn tokens the full parser (jsmn) makes. C interface. */
#ifndef KVIO_SJLINE_H
#define KVIO_SJLINE_H
#define JSMN_STRICT
#define JSMN_HEADER
#include <jsmn.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes simdjson may read past the end of a line: the caller of sj_flat
 * guarantees them readable (their content does not matter). */
#define SJ_PADDING 64

struct sjline; /* one parser (its buffers are reused line after line) */

/* A new parser, or NULL when out of memory. */
struct sjline *sj_new(void);
void sj_free(struct sjline *p);

/* Tokenize s[0..n) when it is one object whose values are all strings,
 * numbers, true, false or null (no nested object or array), with no trailing
 * text; s[n..n+SJ_PADDING) must be readable. Fills tok[0] (the object) and a
 * key token and a value token per member, as jsmn would (a string token spans
 * the text between its quotes). Returns the number of tokens; 0 when the line
 * is not of that shape or simdjson refuses it (the caller then parses it with
 * the full parser, which decides); -1 when tokcap is too small. The caller
 * checks the scalars' text (numbers, literals) and that s has no backslash or
 * control character: simdjson checks structure and UTF-8 only. */
int sj_flat(struct sjline *p, const char *s, size_t n, jsmntok_t *tok, int tokcap);

/* A region of lines: simdjson's stage 1 (the run-time chosen kernel) once
 * over s[0..n) (whole lines, the first starting at s; SJ_PADDING readable
 * bytes after it): 0, or -1 when simdjson refuses the region (invalid UTF-8
 * or a control character anywhere in it, an unclosed string: its lines go
 * one at a time). sj_many_index then gives the offsets (from s) of its
 * structural characters (each { } [ ] : , the opening quote of a string,
 * the first byte of any other scalar), *n of them, followed by n + 1
 * readable entries (the first equal to the region's length). jsonl.c walks
 * them line by line. */
int sj_many_begin(struct sjline *p, const char *s, size_t n);
const uint32_t *sj_many_index(const struct sjline *p, uint32_t *n);

/* The name of the stage-1 kernel simdjson chose for this CPU (KVIO_TIMING=1 kvio-ingest prints it). */
const char *sj_kernel(void);

#ifdef __cplusplus
}
#endif
#endif
