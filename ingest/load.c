/* load.c — read one arm's JSONL files into struct arm: the semantic and
 * serving files whole, the device file in blocks parsed by worker threads and
 * handed to the stream in file order. Lines become records in records.c;
 * bytes come from input.c. Nothing here is fatal except an unreadable file. */
#include "records.h"
#include "input.h"
#include "../lib/progress.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>


/* Take a parsed block's names, threads, counters and meta into the arm.
 * The block keeps its commands, completions and KV strings (stream.c uses
 * them); strings the arm keeps are copied into the arm's arena. */
static const char *dup_str(struct arm *a, const char *s)
{
	return s ? arena_dup(&a->strs, s, strlen(s)) : NULL;
}

static struct jv dup_jv(struct arm *a, struct jv v)
{
	if (v.t == JV_STR)
		v.s = dup_str(a, v.s);
	return v;
}

void arm_absorb(struct arm *a, struct arm *p, uint16_t *remap)
{
	for (size_t i = 0; i < p->names.n; i++) {
		const char *nm = VEC_AT(&p->names, const char *, i);
		remap[i] = arm_intern(a, nm, strlen(nm));
	}
	for (size_t i = 0; i < p->threads.n; i++) {
		const struct thread_name *t = &VEC_AT(&p->threads, struct thread_name, i);
		int fresh;
		uint32_t *ix = map_slot(&a->thread_ix, (uint64_t)t->pid << 32 | t->tid, &fresh);
		if (!fresh) {
			const struct thread_name *o = &VEC_AT(&a->threads, struct thread_name, *ix);
			if (o->rawlen == t->rawlen && !memcmp(o->raw, t->raw, t->rawlen))
				continue;
		}
		struct thread_name c = *t;
		c.comm = dup_str(a, t->comm);
		c.raw = arena_dup(&a->strs, t->raw, t->rawlen);
		*ix = (uint32_t)a->threads.n;
		*(struct thread_name *)vec_push(&a->threads, sizeof c) = c;
	}
	a->cq_overflow += p->cq_overflow;
	a->anchors += p->anchors;
	a->off_unique += p->off_unique; /* --join-by-offset: the block's classes and parity */
	a->off_cross += p->off_cross;
	a->off_gap += p->off_gap;
	a->off_unmatched += p->off_unmatched;
	a->off_cookie += p->off_cookie;
	a->off_agree += p->off_agree;
	a->off_total += p->off_total;
	if (p->has_drops) {
		a->has_drops = 1;
		a->drops = p->drops;
	}
	if (!a->has_meta && p->has_meta) {
		a->has_meta = 1;
		a->meta_schema = dup_jv(a, p->meta_schema);
		a->meta_hostname = dup_jv(a, p->meta_hostname);
		a->meta_device_path = dup_jv(a, p->meta_device_path);
		a->meta_io_engine = dup_jv(a, p->meta_io_engine);
		a->meta_block_align = dup_jv(a, p->meta_block_align);
		a->meta_header_bytes = dup_jv(a, p->meta_header_bytes);
		a->meta_mdts = dup_jv(a, p->meta_mdts);
	}
}

/* Print the first unusable lines of a file (absolute line numbers). */
static void report_lines(const char *path, const struct badline *bad, uint64_t reported, uint64_t *shown)
{
	for (uint64_t i = 0; i < reported && i < MAX_REPORTED && *shown < MAX_REPORTED; i++, (*shown)++)
		kvio_err(bad[i].tail ? "%s:%llu: %s" : "%s:%llu: %s (line skipped)", path,
			 (unsigned long long)bad[i].line, bad[i].why);
}

static void add_stats(struct file_stats *to, const struct file_stats *from)
{
	to->lines += from->lines;
	to->blank += from->blank;
	to->malformed += from->malformed;
	to->truncated_tail += from->truncated_tail;
	to->other += from->other;
	to->records += from->records;
}

/* Read one whole file into arm a (the semantic and serving files: small). */
static int read_file(struct arm *a, enum ftype ft, struct file_stats *fs, const struct ingest_opts *o)
{
	struct input in;
	if (input_open(&in, fs->path))
		return 2;
	char *buf = NULL;
	size_t have = 0, cap = 0;
	ssize_t got;
	/* A regular file is read in one go into a buffer of its size; a pipe or a
	 * gzip file doubles its buffer, so even a large input (a device capture
	 * passed as --sem by mistake) costs linear time. */
	struct stat st;
	size_t hint = 1 << 20;
	if (!in.gz && !fstat(in.fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		hint = (size_t)st.st_size + 1;
	while ((got = read_more(&in, &buf, &have, &cap, have < hint ? hint - have : have > hint ? have : hint)) > 0)
		;
	input_close(&in);
	if (got < 0) {
		free(buf);
		return 2;
	}
	struct reader r = {.a = a, .ft = ft, .fs = fs, .o = o};
	r.j.pad_end = buf ? buf + cap : NULL;
	parse_text(&r, buf ? buf : "", have, 1, 0);
	free(buf);
	uint64_t shown = 0;
	report_lines(fs->path, r.bad, r.reported, &shown);
	if (r.reported > shown)
		kvio_err("%s: %llu more unusable lines not shown", fs->path, (unsigned long long)(r.reported - shown));
	jl_free(&r.j);
	free(r.sc.buf);
	return 0;
}

/* ---- the device file: read in order in blocks of about block_bytes cut after
 * a newline (plain reads: a file still being written, a pipe or a process
 * substitution all work; the last block may end in an unterminated line),
 * parsed by worker threads, handed to the caller in file order. */
struct dblock {
	struct arm part;
	struct file_stats fs;
	uint64_t reported;
	struct badline bad[MAX_REPORTED];
	int rc;
	int ready;
	int64_t pos;  /* the input's offset after the block (gzip: compressed), -1: a pipe */
	size_t nbytes; /* the block's bytes */
};

#define MAX_WORKERS 4

struct devread {
	struct input in;
	const char *path;
	size_t bs;
	const struct ingest_opts *o;
	const struct offset_index *offx;
	pthread_mutex_t mu, read_mu; /* read_mu: one reader at a time, in block order */
	pthread_cond_t cv;
	int64_t next_take, next_consume, nblocks; /* nblocks: known once the last block is read */
	int nslot, stop, eof;
	char *carry;                 /* bytes after the last newline of the previous block */
	size_t ncarry, carry_cap;
	struct dblock *slot;         /* block i in slot i % nslot */
	pthread_t th[MAX_WORKERS];
	int started, rc;
};

/* Read the next block (under read_mu) into the worker's buffer: the carried
 * bytes, then about bs more, cut after the last newline. *final at the end of
 * the file. *overlong: lines longer than max_line() that were dropped unread
 * at the start of the block (the block's text follows them). Returns the
 * block's length. A newline is looked for only in bytes not searched before,
 * so a long line costs linear time. */
static size_t read_block(struct devread *d, char **buf, size_t *cap, int *final, int *rc, uint64_t *overlong)
{
	size_t have = 0, scan_from = 0;
	int skipping = 0;
	*overlong = 0;
	if (d->ncarry) { /* the start of a line: it has no newline */
		if (d->ncarry > *cap) {
			*cap = d->ncarry;
			*buf = xrealloc(*buf, *cap);
		}
		memcpy(*buf, d->carry, d->ncarry);
		have = scan_from = d->ncarry;
		d->ncarry = 0;
	}
	*final = 0;
	*rc = 0;
	for (;;) {
		ssize_t got = read_more(&d->in, buf, &have, cap, d->bs);
		if (got < 0) {
			*rc = 2;
			*final = 1;
			return have;
		}
		if (got == 0) {
			*final = 1;
			return skipping ? 0 : have;
		}
		if (skipping) { /* drop the overlong line up to its newline */
			char *nl1 = memchr(*buf + have - (size_t)got, '\n', (size_t)got);
			if (!nl1) {
				have = 0;
				continue;
			}
			size_t rest = have - (size_t)(nl1 + 1 - *buf);
			memmove(*buf, nl1 + 1, rest);
			have = rest;
			scan_from = 0;
			skipping = 0;
		}
		char *nl = have > scan_from ? memrchr(*buf + scan_from, '\n', have - scan_from) : NULL;
		if (nl) { /* the rest starts the next block */
			size_t keep = (size_t)(nl + 1 - *buf);
			d->ncarry = have - keep;
			if (d->ncarry > d->carry_cap) {
				d->carry_cap = d->ncarry * 2;
				d->carry = xrealloc(d->carry, d->carry_cap);
			}
			if (d->ncarry)
				memcpy(d->carry, nl + 1, d->ncarry);
			return keep;
		}
		scan_from = have; /* no newline yet: one line longer than a block, read on */
		if (have > max_line()) {
			(*overlong)++;
			skipping = 1;
			have = scan_from = 0;
		}
	}
}

/* Empty a block's part for the next block, keeping the capacity of its
 * command and completion arrays (no fresh pages to fault in per block). */
static void part_reset(struct arm *p)
{
	struct vec c = p->cmds, q = p->cmps, r = p->order;
	memset(&p->cmds, 0, sizeof p->cmds);
	memset(&p->cmps, 0, sizeof p->cmps);
	memset(&p->order, 0, sizeof p->order);
	arm_free(p);
	memset(p, 0, sizeof *p);
	c.n = q.n = r.n = 0;
	p->cmds = c;
	p->cmps = q;
	p->order = r;
}

/* Sort scratch of a parse thread, kept across blocks. */
struct sortbuf {
	uint64_t *key;
	uint32_t *tmp;
	size_t cap;
};

/* The block's records in the order the stream's pool takes them (model.h's
 * order), sorted here on the parse thread: the stream then merges. A block
 * whose times span more than 2^62 ns is left unsorted (the stream sorts). */
static void order_block(struct arm *p, struct sortbuf *sb)
{
	size_t nc = p->cmds.n, n = nc + p->cmps.n;
	const struct cmd *cs = p->cmds.v;
	const struct cmp *ps = p->cmps.v;
	p->order.n = 0;
	if (!n || n > UINT32_MAX)
		return;
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t ts = i < nc ? cs[i].ts : ps[i - nc].ts;
		if (ts < mn) mn = ts;
		if (ts > mx) mx = ts;
	}
	if ((uint64_t)mx - (uint64_t)mn >= (1ull << 62))
		return;
	if (n > sb->cap) {
		sb->cap = n + n / 2;
		sb->key = xrealloc(sb->key, sb->cap * sizeof *sb->key);
		sb->tmp = xrealloc(sb->tmp, sb->cap * sizeof *sb->tmp);
	}
	vec_reserve(&p->order, n, sizeof(uint32_t));
	uint32_t *idx = p->order.v;
	for (size_t i = 0; i < n; i++) {
		int64_t ts = i < nc ? cs[i].ts : ps[i - nc].ts;
		sb->key[i] = ((uint64_t)ts - (uint64_t)mn) << 1 | (i >= nc);
		idx[i] = (uint32_t)i;
	}
	radix_sort_idx(idx, sb->tmp, n, sb->key);
	p->order.n = n;
}

static void *dev_worker(void *arg)
{
	struct devread *d = arg;
	struct reader r = {.ft = F_EBPF, .o = d->o, .offx = d->offx};
	char *text = NULL; /* this worker's block buffer, reused */
	size_t cap = 0;
	struct sortbuf sb = {0};
	for (;;) {
		pthread_mutex_lock(&d->read_mu);
		pthread_mutex_lock(&d->mu);
		while (!d->stop && !d->eof && d->next_take - d->next_consume >= d->nslot)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop || d->eof) {
			pthread_mutex_unlock(&d->mu);
			pthread_mutex_unlock(&d->read_mu);
			break;
		}
		int64_t i = d->next_take++;
		pthread_mutex_unlock(&d->mu);
		int final, rc;
		uint64_t overlong;
		size_t n = read_block(d, &text, &cap, &final, &rc, &overlong);
		int64_t pos = !d->o->progress ? -1 : d->in.gz ? (int64_t)gzoffset(d->in.gz) : (int64_t)lseek(d->in.fd, 0, SEEK_CUR);
		if (final) {
			pthread_mutex_lock(&d->mu);
			d->eof = 1;
			d->nblocks = i + 1;
			pthread_cond_broadcast(&d->cv);
			pthread_mutex_unlock(&d->mu);
		}
		pthread_mutex_unlock(&d->read_mu);
		struct dblock *b = &d->slot[i % d->nslot];
		part_reset(&b->part);
		memset(&b->fs, 0, sizeof b->fs);
		b->fs.path = d->path;
		r.a = &b->part;
		r.fs = &b->fs;
		r.reported = 0;
		for (uint64_t k = 0; k < overlong; k++) { /* the block's first lines, dropped unread */
			b->fs.lines++;
			overlong_line(&r, k + 1);
		}
		r.j.pad_end = text ? text + cap : NULL;
		if (!rc) {
			parse_text(&r, text ? text : "", n, final, overlong);
			order_block(&b->part, &sb);
		}
		b->rc = rc;
		b->pos = pos;
		b->nbytes = n;
		b->reported = r.reported;
		memcpy(b->bad, r.bad, sizeof b->bad);
		pthread_mutex_lock(&d->mu);
		b->ready = 1;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
	}
	free(text);
	free(sb.key);
	free(sb.tmp);
	jl_free(&r.j);
	free(r.sc.buf);
	return NULL;
}

/* CPU seconds of the parse threads that have ended (KVIO_TIMING). */
static double g_parse_cpu;
static int g_parse_threads;
static double g_stream_wait; /* seconds the stream waited for a parsed block */
static pthread_mutex_t g_cpu_mu = PTHREAD_MUTEX_INITIALIZER;

double arm_parse_cpu(int *nthreads, double *waited)
{
	pthread_mutex_lock(&g_cpu_mu);
	*waited = g_stream_wait;
	double v = g_parse_cpu;
	*nthreads = g_parse_threads;
	pthread_mutex_unlock(&g_cpu_mu);
	return v;
}

static void *dev_thread(void *arg)
{
	void *r = dev_worker(arg);
	struct timespec ts;
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) {
		pthread_mutex_lock(&g_cpu_mu);
		g_parse_cpu += (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
		g_parse_threads++;
		pthread_mutex_unlock(&g_cpu_mu);
	}
	return r;
}

/* Open path and start the parse threads; NULL when it cannot be opened (said). */
static struct devread *dev_open(const char *path, const struct ingest_opts *o, const struct offset_index *offx)
{
	struct devread *d = xcalloc(1, sizeof *d);
	*d = (struct devread){.path = path, .o = o, .offx = offx, .nblocks = -1};
	/* what the threads read, set before they start (the semantic file's
	 * parse on this thread meanwhile only reads them) */
	jl_fast = !env_i64("KVIO_JSMN", 0, 0); /* 1: the full parser only (measuring it) */
	(void)max_line();
	if (input_open(&d->in, path)) {
		free(d);
		return NULL;
	}
	d->bs = (size_t)env_i64("KVIO_BLOCK_BYTES", 4 << 20, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nw = ncpu > MAX_WORKERS ? MAX_WORKERS : ncpu < 2 ? 2 : (int)ncpu;
	/* blocks parsed ahead of the stream: the threads run while the
	 * semantic file is read and the database set up */
	d->nslot = nw + 4;
	d->slot = xcalloc((size_t)d->nslot, sizeof *d->slot);
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->read_mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	for (int k = 0; k < nw; k++)
		if (pthread_create(&d->th[d->started], NULL, dev_thread, d) == 0)
			d->started++;
	if (!d->started) {
		kvio_err("%s: cannot start a reader thread", path);
		d->rc = 2;
	}
	return d;
}

/* Stop and join the threads, free the reader. */
static void dev_close(struct devread *d)
{
	pthread_mutex_lock(&d->mu);
	d->stop = 1;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	for (int k = 0; k < d->started; k++)
		pthread_join(d->th[k], NULL);
	for (int k = 0; k < d->nslot; k++)
		arm_free(&d->slot[k].part);
	free(d->slot);
	free(d->carry);
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->read_mu);
	pthread_cond_destroy(&d->cv);
	input_close(&d->in);
	free(d);
}

void arm_device_start(struct arm *a, const char *path, const struct ingest_opts *o)
{
	struct stat st;
	/* the threads attribute commands by the semantic objects under the
	 * offset join: later; a pipe may block its reader for ever, and a
	 * semantic file that cannot be read must still end the ingest: later */
	if (o->join == JOIN_OFFSET || stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	a->dev = dev_open(path, o, NULL);
	a->dev_failed = !a->dev;
}

void arm_device_stop(struct arm *a)
{
	if (a->dev)
		dev_close(a->dev);
	a->dev = NULL;
}

int arm_read_device(struct arm *a, const char *path, const struct ingest_opts *o,
		    void (*consume)(void *ctx, struct arm *part), void *ctx)
{
	struct file_stats *fs = &a->ebpf_f;
	struct devread *d = a->dev ? a->dev : a->dev_failed ? NULL : dev_open(path, o, a->offx);
	a->dev = NULL;
	if (!d)
		return 2;
	int rc = d->rc;
	uint64_t shown = 0, total_bad = 0, pos = 0;
	struct progress pg; /* on a terminal: lines, the share of the file's bytes, the rate */
	progress_start(&pg, o->progress, path, "lines");
	progress_file(&pg, d->in.fd);
	for (int64_t i = 0; !rc; i++) {
		struct dblock *b = &d->slot[i % d->nslot];
		pthread_mutex_lock(&d->mu);
		double w0 = b->ready ? 0 : now_s();
		while (!b->ready && !(d->eof && i >= d->nblocks))
			pthread_cond_wait(&d->cv, &d->mu);
		if (w0 > 0)
			g_stream_wait += now_s() - w0;
		int more = b->ready;
		pthread_mutex_unlock(&d->mu);
		if (!more)
			break; /* every block consumed */
		if (b->rc)
			rc = b->rc;
		for (uint64_t k = 0; k < b->reported && k < MAX_REPORTED; k++)
			b->bad[k].line += fs->lines;
		report_lines(path, b->bad, b->reported, &shown);
		total_bad += b->reported;
		add_stats(fs, &b->fs);
		if (!rc)
			consume(ctx, &b->part); /* takes the block's KV strings; the rest is copied */
		pos = b->pos >= 0 ? (uint64_t)b->pos : pos + b->nbytes;
		progress_tick(&pg, fs->lines, pos);
		pthread_mutex_lock(&d->mu);
		b->ready = 0;
		d->next_consume++;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
	}
	progress_end(&pg, fs->lines, pos, 1); /* before the close: it looks at the file's size */
	dev_close(d);
	if (total_bad > shown)
		kvio_err("%s: %llu more unusable lines not shown", path, (unsigned long long)(total_bad - shown));
	return rc;
}

int arm_load(struct arm *a, const char *sem, const char *serving, const struct ingest_opts *o)
{
	const char *paths[2] = {sem, serving};
	struct file_stats *fss[2] = {&a->sem_f, &a->serving_f};
	enum ftype fts[2] = {F_SEM, F_SERVING};
	int rc = 0;
	if (!a->dev) /* else set before its parse threads started (dev_open) */
		jl_fast = !env_i64("KVIO_JSMN", 0, 0);
	for (int i = 0; i < 2 && !rc; i++) {
		fss[i]->path = paths[i] ? paths[i] : "-";
		if (paths[i])
			rc = read_file(a, fts[i], fss[i], o);
	}
	return rc;
}

