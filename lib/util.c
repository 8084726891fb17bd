/* util.c — see util.h. */
#include "util.h"
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

const char *kvio_prog = "kvio";

/* Large arrays are walked many times: ask for transparent huge pages (fewer
 * TLB misses; on these virtual machines a TLB miss is dear). Best effort. */
static void *huge(void *p, size_t n)
{
	if (p && n >= (8u << 20)) {
		uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
		uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);
		if (e > a)
			madvise((void *)a, e - a, MADV_HUGEPAGE);
	}
	return p;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		kvio_err("out of memory (%zu bytes)", n);
		exit(2);
	}
	return huge(p, n);
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p) {
		kvio_err("out of memory (%zu x %zu bytes)", n, sz);
		exit(2);
	}
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		kvio_err("out of memory (%zu bytes)", n);
		exit(2);
	}
	return huge(p, n);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s);
	char *d = xmalloc(n + 1);
	memcpy(d, s, n + 1);
	return d;
}

void *vec_push(struct vec *a, size_t itemsz)
{
	if (a->sz == 0)
		a->sz = itemsz;
	if (a->n == a->cap) {
		size_t old = a->cap * a->sz;
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, a->cap * a->sz);
		if (old >= (1u << 20)) /* the new half of a big vector: its pages at once */
			mem_prefault((char *)a->v + old, a->cap * a->sz - old);
	}
	return (char *)a->v + a->n++ * a->sz;
}

void vec_reserve(struct vec *a, size_t n, size_t itemsz)
{
	a->sz = itemsz;
	if (n > a->cap) {
		a->cap = n;
		a->v = xrealloc(a->v, a->cap * a->sz);
	}
}

void vec_free(struct vec *a)
{
	free(a->v);
	memset(a, 0, sizeof *a);
}

char *arena_dup(struct arena *a, const char *s, size_t n)
{
	if (a->used + n + 1 > a->cap) {
		if (a->blk)
			*(char **)vec_push(&a->blocks, sizeof(char *)) = a->blk;
		a->cap = n + 1 > 65536 ? n + 1 : 65536;
		a->blk = xmalloc(a->cap);
		a->used = 0;
	}
	char *d = a->blk + a->used;
	if (n)
		memcpy(d, s, n);
	d[n] = 0;
	a->used += n + 1;
	return d;
}

void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->blocks.n; i++)
		free(VEC_AT(&a->blocks, char *, i));
	vec_free(&a->blocks);
	free(a->blk);
	memset(a, 0, sizeof *a);
}

void arena_adopt(struct arena *to, struct arena *from)
{
	for (size_t i = 0; i < from->blocks.n; i++)
		*(char **)vec_push(&to->blocks, sizeof(char *)) = VEC_AT(&from->blocks, char *, i);
	if (from->blk)
		*(char **)vec_push(&to->blocks, sizeof(char *)) = from->blk;
	vec_free(&from->blocks);
	memset(from, 0, sizeof *from);
}

static atomic_int progress_line;

void kvio_err_progress(int on)
{
	atomic_store(&progress_line, on);
}

void kvio_err(const char *fmt, ...)
{
	va_list ap;
	if (atomic_exchange(&progress_line, 0))
		fputs("\r\033[K", stderr);
	fprintf(stderr, "%s: ", kvio_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

int64_t env_i64(const char *name, int64_t dflt, int64_t min)
{
	const char *e = getenv(name);
	int64_t v;
	return e && !parse_i64(e, &v) && v >= min ? v : dflt;
}

int64_t i64_of_double(double d)
{
	if (d != d)
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	if (d < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

size_t str_cat(char *buf, size_t n, const char *const *parts)
{
	size_t k = 0;
	for (; *parts && k + 1 < n; parts++) {
		size_t l = strlen(*parts);
		l = l < n - 1 - k ? l : n - 1 - k;
		memcpy(buf + k, *parts, l);
		k += l;
	}
	if (n)
		buf[k] = 0;
	return k;
}

int mib1_text(char *buf, size_t n, int64_t bytes)
{
	if (bytes < 0 || bytes >= (int64_t)1 << 53)
		return snprintf(buf, n, "%.1f", (double)bytes / 1048576.0);
	uint64_t x = (uint64_t)bytes * 10, q = x >> 20, r = x & 0xfffff; /* tenths, and the rest */
	q += r > 0x80000 || (r == 0x80000 && (q & 1));
	char d[24];
	int k = (int)sizeof d;
	d[--k] = (char)('0' + q % 10);
	d[--k] = '.';
	q /= 10;
	do
		d[--k] = (char)('0' + q % 10);
	while (q /= 10);
	int len = (int)sizeof d - k;
	if (n) {
		size_t m = (size_t)len < n ? (size_t)len : n - 1;
		memcpy(buf, d + k, m);
		buf[m] = 0;
	}
	return len;
}

double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

double wall_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

double wall_since_ms(int64_t unix_ms)
{
	double d = wall_s() - (double)unix_ms / 1e3;
	return d > 0 ? (double)(int64_t)(d * 1e3 + 0.5) / 1e3 : 0;
}

const char *ns_text(char *buf, size_t n, double v)
{
	if (isnan(v) || v < 0)
		snprintf(buf, n, "-");
	else if (v < 1e3)
		snprintf(buf, n, "%.0fns", v);
	else if (v < 1e6)
		snprintf(buf, n, "%.1fus", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, n, "%.2fms", v / 1e6);
	else
		snprintf(buf, n, "%.2fs", v / 1e9);
	return buf;
}

int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

int pid_running(int64_t pid)
{
	if (pid <= 0 || pid > INT_MAX)
		return -1;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

void mem_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t pg = 4096, a = ((uintptr_t)p + pg - 1) & ~(pg - 1), e = ((uintptr_t)p + n) & ~(pg - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

void radix_sort_idx(uint32_t *idx, uint32_t *tmp, size_t n, const uint64_t *key)
{
	uint64_t mx = 0;
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		if (key[idx[i]] > mx) mx = key[idx[i]];
		if (i && key[idx[i]] < key[idx[i - 1]]) sorted = 0;
	}
	if (sorted)
		return;
	size_t cnt[2048];
	for (int shift = 0; shift < 64 && (mx >> shift); shift += 11) {
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(key[idx[i]] >> shift) & 2047]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(key[idx[i]] >> shift) & 2047]++] = idx[i];
		memcpy(idx, tmp, n * sizeof *idx);
	}
}
