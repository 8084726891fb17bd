/* livemem.c — kvio-ingest --follow's bounded memory (live.c calls it).
 *
 * A one-shot ingest holds every semantic record (struct obj and its strings)
 * and every 1 ms bucket of commands (arm_out.ms) until its end writes the
 * objects, their lanes, the rate counters and the overview from them. A
 * follow runs for hours, so at each interim commit what is written and that
 * nothing can touch any more leaves memory:
 *  - the objects, in file order, whose op end and last command are more than
 *    KVIO_FOLLOW_KEEP_MS (default 1000) before every command written, that
 *    no command the stream holds points at and that the LBA size's sampling
 *    has passed; their trace_ids leave the join's map (a command of one that
 *    comes later waits as one whose record has not come, and is written
 *    without it: the stop then finds the record and rebuilds, as it does for
 *    any such command); their strings go with the arena of the read of the
 *    semantic file they came in, once all of its records have left;
 *  - the rate buckets the interim counters have taken whole.
 * They go to two spill files: unlinked temporary files beside the database
 * (nothing is left behind, kill -9 included; O_TMPFILE, else mkstemp and
 * unlink). The stop reads them back before the files' last lines, so its
 * end is a one-shot ingest's, with a one-shot's memory for the objects.
 * The first arm's only: a later arm (--merge) is read again from its files at
 * the stop, its objects and buckets just go. A spill file that cannot be
 * written or read back is said once and the follow rebuilds (live.c). */
#include "live.h"
#include "write.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The strings of one read of the semantic file (its records: up to end). */
struct lgen {
	struct arena a;
	size_t end;
};

void lmem_init(struct lmem *m, const char *out, int spill)
{
	memset(m, 0, sizeof *m);
	m->spill = spill;
	m->keep_ns = env_i64("KVIO_FOLLOW_KEEP_MS", 1000, 0) * 1000000;
	m->dir = out;
}

void lgens_begin(struct lgens *g, struct arena *strs)
{
	g->held = *strs;
	memset(strs, 0, sizeof *strs);
}

void lgens_end(struct lgens *g, struct arena *strs, size_t end)
{
	struct lgen n = {*strs, end};
	*strs = g->held;
	memset(&g->held, 0, sizeof g->held);
	if (n.a.blk)
		*(struct lgen *)vec_push(&g->v, sizeof n) = n;
}

void lgens_release(struct lgens *g, size_t upto)
{
	struct lgen *v = g->v.v;
	size_t n = 0;
	while (n < g->v.n && v[n].end <= upto)
		arena_free(&v[n++].a);
	memmove(v, v + n, (g->v.n - n) * sizeof *v);
	g->v.n -= n;
}

void lgens_adopt(struct lgens *g, struct arena *to)
{
	for (size_t i = 0; i < g->v.n; i++)
		arena_adopt(to, &VEC_AT(&g->v, struct lgen, i).a);
	g->v.n = 0;
}

void lgens_free(struct lgens *g)
{
	for (size_t i = 0; i < g->v.n; i++)
		arena_free(&VEC_AT(&g->v, struct lgen, i).a);
	vec_free(&g->v);
	arena_free(&g->held);
}

void lmem_sem_begin(struct lmem *m, struct arm *a)
{
	m->has_meta = a->has_meta;
	lgens_begin(&m->gens, &a->strs);
}

static void jv_home(struct arena *to, struct jv *v)
{
	if (v->t == JV_STR)
		v->s = arena_dup(to, v->s, strlen(v->s));
}

void lmem_sem_end(struct lmem *m, struct arm *a)
{
	lgens_end(&m->gens, &a->strs, arm_nobjs(a));
	if (!m->has_meta && a->has_meta) { /* the arm's header came in this read: its strings are the arm's */
		struct jv *v[] = {&a->meta_schema, &a->meta_hostname, &a->meta_device_path, &a->meta_io_engine,
				  &a->meta_block_align, &a->meta_header_bytes, &a->meta_mdts};
		for (size_t i = 0; i < sizeof v / sizeof *v; i++)
			jv_home(&a->strs, v[i]);
	}
}

/* ---- the spill files --------------------------------------------------- */

static int spill_fail(struct lmem *m, const char *what)
{
	if (!m->failed)
		kvio_err("--follow: %s the spill file beside %s: %s (the database is rebuilt from the files)", what,
			 m->dir, errno ? strerror(errno) : "short read");
	m->failed = 1;
	return 2;
}

/* f's file, made at the first record: an unlinked file in the database's directory. */
static int spill_open(struct lmem *m, struct lspill *f)
{
	if (f->f)
		return 0;
	char dir[4096];
	const char *sl = strrchr(m->dir, '/');
	snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - m->dir) + (sl == m->dir) : 1, sl ? m->dir : ".");
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* a file system without O_TMPFILE */
		char tmp[4200];
		snprintf(tmp, sizeof tmp, "%s/.kvio-follow-XXXXXX", dir);
		if ((fd = mkstemp(tmp)) >= 0)
			unlink(tmp);
	}
	errno = fd < 0 ? errno : 0;
	if (fd < 0 || !(f->f = fdopen(fd, "w+b"))) {
		if (fd >= 0)
			close(fd);
		return spill_fail(m, "cannot make");
	}
	return 0;
}

static int put_str(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) + 1 : 0;
	return fwrite(&n, sizeof n, 1, f) == 1 && (n < 2 || fwrite(s, n - 1, 1, f) == 1);
}

static int get_str(FILE *f, struct arena *to, const char **s)
{
	uint32_t n;
	char buf[4096];
	if (fread(&n, sizeof n, 1, f) != 1)
		return 0;
	if (!n) {
		*s = NULL;
		return 1;
	}
	char *p = n - 1 <= sizeof buf ? buf : xmalloc(n - 1);
	int ok = n < 2 || fread(p, n - 1, 1, f) == 1;
	*s = ok ? arena_dup(to, p, n - 1) : NULL;
	if (p != buf)
		free(p);
	return ok;
}

/* The pointers of an object's strings (its jv's when strings: jvs[k]->t says). */
static void obj_strs(struct obj *ob, const char ***s, struct jv **jvs)
{
	s[0] = &ob->op, s[1] = &ob->part, s[2] = &ob->key, s[3] = &ob->key_hex;
	jvs[0] = &ob->bytes, jvs[1] = &ob->slot_offset, jvs[2] = &ob->error, jvs[3] = &ob->instance, jvs[4] = &ob->pid;
}

static int put_obj(FILE *f, struct obj *ob)
{
	const char **s[4];
	struct jv *jvs[5];
	obj_strs(ob, s, jvs);
	int ok = fwrite(ob, sizeof *ob, 1, f) == 1;
	for (int k = 0; k < 4 && ok; k++)
		ok = put_str(f, *s[k]);
	for (int k = 0; k < 5 && ok; k++)
		ok = jvs[k]->t != JV_STR || put_str(f, jvs[k]->s);
	return ok;
}

static int get_obj(FILE *f, struct arena *to, struct obj *ob)
{
	const char **s[4];
	struct jv *jvs[5];
	if (fread(ob, sizeof *ob, 1, f) != 1)
		return 0;
	obj_strs(ob, s, jvs);
	int ok = 1;
	for (int k = 0; k < 4 && ok; k++)
		ok = get_str(f, to, s[k]);
	for (int k = 0; k < 5 && ok; k++)
		ok = jvs[k]->t != JV_STR || get_str(f, to, &jvs[k]->s);
	return ok;
}

/* ---- leaving memory, coming back ----------------------------------------- */

/* The objects [objs_base, to) out: spilled, out of the join's map, their
 * reads' arenas freed. */
static int objs_leave(struct lmem *m, struct arm *a, size_t to)
{
	if (m->spill && spill_open(m, &m->obj))
		return 2;
	for (size_t i = a->objs_base; i < to; i++) {
		struct obj *ob = arm_obj(a, i);
		uint32_t f;
		if (m->spill && !put_obj(m->obj.f, ob))
			return spill_fail(m, "cannot write");
		if (map_get(&a->first_obj, ob->trace_id, &f) && f == i)
			map_del(&a->first_obj, ob->trace_id);
	}
	m->obj.n += m->spill ? to - a->objs_base : 0;
	size_t k = to - a->objs_base;
	memmove(a->objs.v, arm_obj(a, to), (a->objs.n - k) * sizeof(struct obj));
	a->objs.n -= k;
	a->objs_base = to;
	lgens_release(&m->gens, to);
	return 0;
}

int lmem_compact(struct lmem *m, struct arm *a, size_t written, size_t floor, int64_t done, struct arm_out *t,
		 size_t *ms_out)
{
	if (m->failed)
		return 2;
	int64_t before = done > INT64_MIN + m->keep_ns ? done - m->keep_ns : INT64_MIN;
	size_t to = a->objs_base, lim = written < floor ? written : floor;
	for (; to < lim; to++) {
		const struct obj *ob = arm_obj(a, to);
		if (ob->end >= before || (ob->n_cmds && ob->last_ts >= before))
			break;
	}
	if (to > a->objs_base && objs_leave(m, a, to))
		return 2;
	size_t k = *ms_out; /* (the bucket at ms_out may still grow) */
	if (!k)
		return 0;
	if (m->spill && (spill_open(m, &m->ms) || fwrite(t->ms.v, sizeof(struct bucket), k, m->ms.f) != k))
		return m->failed ? 2 : spill_fail(m, "cannot write");
	m->ms.n += m->spill ? k : 0;
	memmove(t->ms.v, &VEC_AT(&t->ms, struct bucket, k), (t->ms.n - k) * sizeof(struct bucket));
	t->ms.n -= k;
	*ms_out = 0;
	return 0;
}

/* v's items: the spill file's n first (sz bytes each, read by get when
 * given), then v's own. 0, or 2 (said). */
static int spill_back(struct lmem *m, struct lspill *f, struct vec *v, size_t sz, struct arena *to)
{
	struct vec w = {0};
	errno = 0;
	if (fflush(f->f) || fseek(f->f, 0, SEEK_SET))
		return spill_fail(m, "cannot read");
	vec_reserve(&w, f->n + v->n + 1, sz);
	for (uint64_t i = 0; i < f->n; i++) {
		void *p = vec_push(&w, sz);
		if (to ? !get_obj(f->f, to, p) : fread(p, sz, 1, f->f) != 1) {
			vec_free(&w);
			return spill_fail(m, "cannot read");
		}
	}
	if (v->n)
		memcpy((char *)w.v + w.n * sz, v->v, v->n * sz);
	w.n += v->n;
	vec_free(v);
	*v = w;
	return 0;
}

int lmem_restore(struct lmem *m, struct arm *a, struct arm_out *t, size_t *ms_out)
{
	if (m->failed)
		return 2;
	if (m->ms.f) {
		size_t n = (size_t)m->ms.n;
		if (spill_back(m, &m->ms, &t->ms, sizeof(struct bucket), NULL))
			return 2;
		*ms_out += n;
	}
	lgens_adopt(&m->gens, &a->strs);
	if (!a->objs_base)
		return 0;
	if (m->obj.f && spill_back(m, &m->obj, &a->objs, sizeof(struct obj), &a->strs))
		return 2;
	a->objs_base = 0;
	map_free(&a->first_obj);
	int dup = 0;
	for (size_t i = 0; i < a->objs.n; i++) {
		int fresh;
		uint32_t *v = map_slot(&a->first_obj, VEC_AT(&a->objs, struct obj, i).trace_id, &fresh);
		if (fresh)
			*v = (uint32_t)i;
		dup |= !fresh;
	}
	a->dup_trace_id += (uint64_t)dup;
	return dup;
}

void lmem_free(struct lmem *m)
{
	if (m->obj.f)
		fclose(m->obj.f);
	if (m->ms.f)
		fclose(m->ms.f);
	lgens_free(&m->gens);
	memset(m, 0, sizeof *m);
}
