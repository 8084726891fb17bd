/* livesrv.c — kvio-ingest --follow's serving spans (live.c calls it).
 *
 * A serving record (a request) is final once read and rebased: each interim
 * commit appends the new ones once, on interim lanes (greedy, in file order,
 * as the objects' are) of the arm's Serving process, whose tracks it writes
 * again with the other interim tracks (after every arm's object lanes: when
 * those grow, live.c moves the spans' rows with their tracks). Written, a
 * record leaves memory with its read's strings, so a follow holds what
 * arrived since the last commit, not every request of the run. At the stop
 * the serving file is read again up to where the follow read it (its records
 * are the same bytes) and the one-shot's lanes and ids are written from them
 * (write_arm_end). */
#include "live.h"
#include "records.h"
#include "write.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lsrv_init(struct lsrv *v)
{
	memset(v, 0, sizeof *v);
	v->base = -1;
}

/* A record's span as the one-shot writes it: rebased, at least 1 ns long. */
static struct serving rebased(const struct serving *s, int64_t base)
{
	struct serving r = *s;
	r.start -= base;
	r.end -= base;
	if (r.end <= r.start)
		r.end = r.start + 1;
	return r;
}

void lsrv_ready(struct lsrv *v, const struct arm *a)
{
	v->lane.n = 0;
	for (size_t i = 0; a->base_set && i < a->serving.n; i++) {
		struct serving r = rebased(&VEC_AT(&a->serving, struct serving, i), a->base_ns);
		*(uint32_t *)vec_push(&v->lane, sizeof(uint32_t)) = lanes_add(&v->lanes, r.start, r.end);
	}
}

void lsrv_write(struct lsrv *v, struct dbw *w, struct arm *a, int ai, int64_t *id, int64_t *upid)
{
	if (!v->lanes.n)
		return;
	int64_t track = w->next_track, up = w->next_upid, end = w->track_end;
	w->next_track = v->base;
	w->next_upid = *upid;
	w->track_end = 0;
	write_serving_tracks(w, a->label, ai, (int)v->lanes.n, NULL);
	*upid = w->next_upid;
	w->next_track = track;
	w->next_upid = up;
	w->track_end = end;
	v->nl = v->lanes.n;
	for (size_t k = 0; k < v->lane.n; k++) {
		struct serving r = rebased(&VEC_AT(&a->serving, struct serving, k), a->base_ns);
		write_serving_span(w, (*id)++, &r, v->base + 1 + VEC_AT(&v->lane, uint32_t, k));
	}
	size_t n = v->lane.n; /* (the records before the base is set wait) */
	memmove(a->serving.v, &VEC_AT(&a->serving, struct serving, n), (a->serving.n - n) * sizeof(struct serving));
	a->serving.n -= n;
	a->serving_base += n;
	v->lane.n = 0;
	lgens_release(&v->gens, a->serving_base);
}

/* The serving records of fd's first pos bytes into t (a scratch arm), read
 * in pieces cut after a newline. 0, or -1 when the file is short. */
static int reread(int fd, long long pos, const struct ingest_opts *o, struct arm *t)
{
	struct file_stats fs = {0};
	struct reader r = {.a = t, .ft = F_SERVING, .fs = &fs, .o = o};
	size_t cap = 4 << 20;
	char *buf = xmalloc(cap + JL_PADDING);
	long long at = 0;
	int rc = 0;
	while (at < pos && !rc) {
		size_t want = pos - at > (long long)cap ? cap : (size_t)(pos - at);
		ssize_t got = pread(fd, buf, want, (off_t)at);
		const char *nl = got > 0 ? memrchr(buf, '\n', (size_t)got) : NULL;
		if (got <= 0 || !nl) {
			if (got > 0 && (size_t)got == cap) { /* a line longer than a piece */
				cap *= 2;
				buf = xrealloc(buf, cap + JL_PADDING);
				continue;
			}
			rc = -1;
			break;
		}
		size_t n = (size_t)(nl + 1 - buf);
		r.j.pad_end = buf + cap + JL_PADDING;
		parse_text(&r, buf, n, 0, fs.lines);
		at += (long long)n;
	}
	free(buf);
	jl_free(&r.j);
	free(r.sc.buf);
	return rc;
}

int lsrv_restore(struct lsrv *v, struct arm *a, int fd, long long pos, const struct ingest_opts *o, const char *path)
{
	lgens_adopt(&v->gens, &a->strs);
	if (!a->serving_base)
		return 0;
	struct arm t = {0};
	int ok = !reread(fd, pos, o, &t) && t.serving.n == arm_nserving(a);
	if (ok) {
		vec_free(&a->serving);
		a->serving = t.serving;
		memset(&t.serving, 0, sizeof t.serving);
		arena_adopt(&a->strs, &t.strs);
		a->serving_base = 0;
	} else {
		kvio_err("--follow: %s: its first %lld bytes no longer hold the %zu serving records read from them (the "
			 "file changed under the follower)", path, pos, arm_nserving(a));
	}
	arm_free(&t);
	return ok ? 0 : 2;
}

void lsrv_free(struct lsrv *v)
{
	vec_free(&v->lane);
	lanes_free(&v->lanes);
	lgens_free(&v->gens);
}
