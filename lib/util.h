/* util.h — small shared helpers: growable arrays, string arena, errors. */
#ifndef KVIO_UTIL_H
#define KVIO_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Growable array of fixed-size items. Zero-initialize before use. */
struct vec {
	void *v;
	size_t n, cap, sz;
};
void *vec_push(struct vec *a, size_t itemsz); /* returns an uninitialized slot; aborts on OOM */
void vec_free(struct vec *a);
/* Make room for at least n items in total. */
void vec_reserve(struct vec *a, size_t n, size_t itemsz);
#define VEC_AT(a, T, i) (((T *)(a)->v)[i])

/* String arena: strings live until arena_free. */
struct arena {
	char *blk;
	size_t used, cap;
	struct vec blocks; /* char* of retired blocks */
};
char *arena_dup(struct arena *a, const char *s, size_t n); /* NUL-terminated copy */
void arena_free(struct arena *a);
/* from's blocks become to's (freed with it; from is left empty). */
void arena_adopt(struct arena *to, struct arena *from);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
/* Stable LSD radix sort of idx[0..n) by key[idx[i]] (non-negative keys);
 * tmp holds n entries. */
void radix_sort_idx(uint32_t *idx, uint32_t *tmp, size_t n, const uint64_t *key);
/* Fault in the pages of p[0..n) now, in one system call (a buffer about to
 * be filled: one trap per page costs more, in a VM most of all); a kernel
 * without MADV_POPULATE_WRITE leaves them to fault as they are touched. */
void mem_prefault(void *p, size_t n);
char *xstrdup(const char *s);

/* Program name used in messages ("kvio-ingest"). */
extern const char *kvio_prog;
/* Print "prog: message\n" on stderr. */
void kvio_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A progress line (lib/progress.c) is on stderr (1) or not (0): kvio_err clears
 * it before its message, and the next redraw draws it again. */
void kvio_err_progress(int on);

/* Parse a whole decimal integer argument; returns 0 on success. */
int parse_i64(const char *s, int64_t *out);
/* The integer in environment variable name when set, valid and >= min, else dflt
 * (tuning and test knobs: KVIO_BLOCK_BYTES, KVIO_POOL_MAX). */
int64_t env_i64(const char *name, int64_t dflt, int64_t min);

/* Current time, seconds (monotonic). */
double now_s(void);
double wall_s(void); /* Unix time (s), CLOCK_REALTIME */
double thread_cpu_s(void); /* the calling thread's CPU time (s), for KVIO_TIMING's lines */
double wall_since_ms(int64_t unix_ms); /* s from a Unix time in ms to now, to the ms; >= 0 */
/* d as an int64 the way a C cast truncates it, saturated where the cast
 * is undefined: past the range the nearest end, a NaN 0 (a semantic
 * record's 1e300 bytes is a value, not undefined behaviour). */
int64_t i64_of_double(double d);
/* snprintf(buf, n, "%.1f", bytes / 1048576.0) (MiB with one decimal, as
 * printf rounds: the exact value, ties to even) without printf's float
 * path, in integers where that is exact (0 <= bytes < 2^53). Its length. */
int mib1_text(char *buf, size_t n, int64_t bytes);
/* The strings of the NULL-terminated list parts, one after another, into
 * buf (n bytes; cut at n - 1, as snprintf cuts). The length written. */
size_t str_cat(char *buf, size_t n, const char *const *parts);
/* ns as people read a latency: 812ns, 139.6us, 2.41ms, 1.20s; "-" for NaN or < 0. */
const char *ns_text(char *buf, size_t n, double ns);
/* Whether process pid runs on this host: 1, 0 (no such process), -1 (not a pid). */
int pid_running(int64_t pid);
/* qsort's comparison of two int64_t, ascending. */
int i64_cmp(const void *x, const void *y);

/* s, or "" for NULL: a database's text (a NULL column, or an empty blob's
 * sqlite3_column_text) where a string is needed. */
static inline const char *nz(const void *s)
{
	return s ? (const char *)s : "";
}

/* The first index of the ascending v[0..n) whose value is >= key (n when none). */
static inline size_t i64_lower_bound(const int64_t *v, size_t n, int64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
