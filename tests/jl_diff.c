/* jl_diff.c — the fuzz target "parser" (scripts/fuzz.py): every line of FILE
 * parsed by the full parser (jsmn) and by the fast path (simdjson, in place,
 * the rest of the file as its padding), which must agree: the same verdict,
 * the same tokens, the same number and string values read from them. The
 * fast path runs twice: line by line, and by regions of lines (stage 1 once
 * over many lines, as kvio-ingest reads a block: jsonl.h's many_end).
 *
 *   jl-diff FILE      exit 0: all agree; 1: the first disagreement printed; 2: I/O
 */
#include "../ingest/jsonl.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the field getters read from token t (so both parsers' values compare). */
static void values(const struct jline *j, int t, char *out, size_t cap, char *sbuf)
{
	uint64_t u = 0;
	int64_t i = 0;
	double d = 0;
	int ru = jl_u64(j, t, &u), ri = jl_i64(j, t, &i), rd = jl_f64(j, t, &d);
	long rs = jl_str(j, t, sbuf);
	snprintf(out, cap, "%d:%" PRIu64 " %d:%" PRId64 " %d:%.17g %ld:%s %d%d%d", ru, ru ? 0 : u, ri, ri ? 0 : i,
		 rd, rd ? 0 : d, rs, rs < 0 ? "" : sbuf, jl_is_null(j, t), jl_is_str(j, t), jl_is_num(j, t));
}

/* 0 when both parsers agree on s[0..n), else prints why and returns 1. */
static int compare(struct jline *full, struct jline *fast, const char *s, size_t n, unsigned long lineno)
{
	jl_fast = 0;
	int e0 = jl_parse(full, s, n);
	jl_fast = 1;
	int e1 = jl_parse(fast, s, n);
	const char *why = NULL;
	if (e0 != e1)
		why = "verdict";
	else if (e0 == JL_OK && (full->ntok != fast->ntok || full->nmem != fast->nmem))
		why = "token count";
	for (int t = 0; !why && e0 == JL_OK && t < full->ntok; t++) {
		const jsmntok_t *a = &full->tok[t], *b = &fast->tok[t];
		if (a->type != b->type || a->start != b->start || a->end != b->end || a->size != b->size) {
			why = "tokens";
			break;
		}
		char va[256], vb[256];
		char *sa = malloc((size_t)(a->end - a->start) + 1), *sb = malloc((size_t)(b->end - b->start) + 1);
		if (!sa || !sb) {
			free(sa);
			free(sb);
			fputs("jl-diff: out of memory\n", stderr);
			exit(2);
		}
		values(full, t, va, sizeof va, sa);
		values(fast, t, vb, sizeof vb, sb);
		free(sa);
		free(sb);
		if (strcmp(va, vb))
			why = "values";
	}
	for (int m = 0; !why && e0 == JL_OK && m < full->nmem; m++) /* each key finds the same (last) member */
		if (jl_find(full, full->mem[m].key, (size_t)full->mem[m].klen) !=
		    jl_find(fast, full->mem[m].key, (size_t)full->mem[m].klen))
			why = "key lookup";
	if (!why)
		return 0;
	printf("jl-diff: line %lu: the parsers disagree (%s): full %s, fast %s: %.*s\n", lineno, why, jl_err_str(e0),
	       jl_err_str(e1), (int)(n > 300 ? 300 : n), s);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: jl-diff FILE\n", stderr);
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap + JL_PADDING);
	while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += k) == cap && !(buf = realloc(buf, (cap *= 2) + JL_PADDING)))
			break;
	fclose(f);
	if (!buf) {
		fputs("jl-diff: out of memory\n", stderr);
		return 2;
	}
	memset(buf + n, 'x', JL_PADDING); /* padding whose content must not matter */
	struct jline full = {0}, fast = {0};
	fast.pad_end = buf + n + JL_PADDING;
	int rc = 0;
	const char *last = n ? memrchr(buf, '\n', n) : NULL;
	for (int regions = 0; regions < 2 && !rc; regions++) {
		fast.many_end = regions && last ? last + 1 : NULL; /* the whole lines */
		fast.many_stop = fast.many_skip = NULL;
		unsigned long lineno = 0;
		for (const char *p = buf, *e = buf + n; p < e && !rc;) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
			rc = compare(&full, &fast, p, len, ++lineno);
			p += len + 1;
		}
		if (rc)
			printf("jl-diff: (the fast path %s)\n", regions ? "by regions of lines" : "line by line");
	}
	jl_free(&full);
	jl_free(&fast);
	free(buf);
	return rc;
}
