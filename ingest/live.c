/* live.c — kvio-ingest --follow's incremental commits (follow.c calls them).
 *
 * One arm's state lives across commits: the device stream (stream.c: its
 * reorder pool, the commands waiting for their completions, lanes), the
 * writer (dbw.c: ids, names, the chunk being filled), and the semantic and
 * serving records read so far (in file order). Each commit reads what the
 * files gained since the last, in complete lines:
 *
 *  - the device file in blocks (1 MiB, KVIO_FOLLOW_BLOCK_BYTES, cut after a
 *    newline), each handed to the stream, which writes the commands whose
 *    inputs are final (paired, or past their horizons) into their chunks (the
 *    trailing partial chunk is written as its row and rewritten by the next
 *    commit): the decisions of a one-shot's stream, which reads 4 MiB blocks;
 *  - the semantic and serving files' new lines; a tagged command whose record
 *    has not come yet waits for it (at most --pair-horizon records);
 *  - the objects whose commands are all written, appended once (interim ids
 *    and lanes), with their flows; the small tables (capture info, serving
 *    spans, threads, files, stats, warnings, metadata, sums) rewritten.
 *
 * At the stop the stream ends as a one-shot's does; the interim object rows go
 * and the end of a one-shot ingest is written (objects with their final ids and
 * lanes, flows, counters, the overview, the small tables). What could differ
 * from a one-shot ingest of the final files is checked first (a record that
 * came after a command written without it, the base, the LBA size:
 * stream_follow_check; a second record of a trace_id; a line longer than a
 * block is not one): then live_commit says so and follow.c rebuilds the database from the
 * files in the same transaction. */
#include "ingest.h"
#include "live.h"
#include "input.h"
#include "records.h"
#include "write.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* interim rows (deleted at the stop): objects from TMP_OBJ + their file
 * position, the capture info and serving spans from TMP_INFO (each commit
 * anew); the interim tracks (object lanes, serving) and the serving process
 * each commit anew after the real ones (track ids are dense: dir.c) */
#define TMP_OBJ ((int64_t)1 << 50)
#define TMP_INFO ((int64_t)1 << 51)

/* One input read a piece at a time. */
struct lfile {
	int fd;            /* -1: none */
	const char *path;  /* what input_open is given (a pipe's spool) */
	long long pos;     /* bytes parsed (device: read into blocks) */
	struct reader r;
	char *buf;
	size_t cap;
	uint64_t bad;      /* unusable lines (device: their first ones in first[]) */
	struct badline first[MAX_REPORTED];
};

/* Ids from another range while interim rows are written. */
struct idsave {
	int64_t id, track, upid, flow;
};

struct live {
	struct ingest_args *a;
	struct arm arm;
	struct arm_out t;
	struct dbw w;
	struct stream *s;
	struct lfile in[3]; /* sem, ebpf, serving */
	size_t bs;          /* device: the bytes of a block (KVIO_FOLLOW_BLOCK_BYTES) */
	int dev_final, begun;
	struct arm part;    /* a device block's records */
	struct file_stats pfs;
	int64_t sem_min, sem_end;
	size_t objs_out;    /* objs[0..objs_out) written by interim commits */
	struct lanes olanes; /* the interim objects' lanes */
	int64_t obase, oupid, tmp_flow; /* the interim tracks' first id (-1 none), process's upid */
	int moved;          /* this commit moved the interim tracks (the objects' sums read again) */
	size_t store_spans; /* of the interim objects: store spans, clock anomalies */
	uint64_t anomalies;
	uint64_t cmds0;     /* commands written before this commit */
	double t_read, t_interim, t_sums; /* the last commit's parts (KVIO_TIMING) */
	struct idsave snext; /* the interim ids after the objects' (the serving tracks take them) */
	const char *broken;
};

int live_wanted(const struct ingest_args *a)
{
	return a->narms == 1 && a->arms[0].ebpf && a->o.join == JOIN_COOKIE && !a->o.win.has_time &&
	       !a->o.win.has_tid && !env_i64("KVIO_FOLLOW_REBUILD", 0, 0);
}

struct live *live_new(struct ingest_args *a)
{
	struct live *L = xcalloc(1, sizeof *L);
	const struct arm_spec *sp = &a->arms[0];
	const char *paths[3] = {sp->sem, sp->ebpf, sp->serving};
	struct file_stats *fs[3] = {&L->arm.sem_f, &L->arm.ebpf_f, &L->arm.serving_f};
	enum ftype ft[3] = {F_SEM, F_EBPF, F_SERVING};
	L->a = a;
	L->arm.label = sp->label;
	L->arm.min_ts = INT64_MAX;
	L->sem_min = INT64_MAX;
	L->sem_end = INT64_MIN;
	for (int k = 0; k < 3; k++) {
		struct lfile *f = &L->in[k];
		f->fd = -1;
		f->path = paths[k];
		fs[k]->path = sp->shown[k] && paths[k] ? sp->shown[k] : paths[k] ? paths[k] : "-";
		f->r = (struct reader){.a = &L->arm, .ft = ft[k], .fs = fs[k], .o = &a->o};
	}
	L->in[1].r.a = &L->part;
	L->in[1].r.fs = &L->pfs;
	/* smaller blocks than a one-shot's 4 MiB: a commit shows what came sooner
	 * (what depends on the cut is checked at the stop) */
	L->bs = (size_t)env_i64("KVIO_FOLLOW_BLOCK_BYTES", 1 << 20, 1);
	L->obase = L->oupid = -1;
	L->tmp_flow = 1;
	jl_fast = !env_i64("KVIO_JSMN", 0, 0);
	return L;
}

/* n bytes at off into p (short at the end of the file). */
static size_t pread_all(int fd, char *p, size_t n, long long off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, p + got, n - got, (off_t)(off + (long long)got));
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

static void grow(char **buf, size_t *cap, size_t need)
{
	if (need > *cap) {
		*cap = need + need / 4;
		*buf = xrealloc(*buf, *cap);
	}
}

/* The semantic or serving file's lines in [pos, limit) (final: the last piece,
 * an unterminated tail counted as one-shot's is). */
static void text_piece(struct live *L, struct lfile *f, long long limit, int final)
{
	if (f->fd < 0 || (limit <= f->pos && !final))
		return;
	size_t n = limit > f->pos ? (size_t)(limit - f->pos) : 0;
	grow(&f->buf, &f->cap, n + JL_PADDING);
	n = pread_all(f->fd, f->buf, n, f->pos);
	f->r.j.pad_end = f->buf + f->cap;
	size_t objs0 = L->arm.objs.n, srv0 = L->arm.serving.n;
	parse_text(&f->r, f->buf, n, final, f->r.fs->lines);
	f->pos += (long long)n;
	if (arm_follow_add(&L->arm, objs0, &L->sem_min, &L->sem_end))
		L->broken = "a trace_id with a second semantic record";
	const struct serving *sv = L->arm.serving.v;
	for (size_t i = srv0; i < L->arm.serving.n; i++) {
		int64_t mn = sv[i].start < sv[i].end ? sv[i].start : sv[i].end;
		if (mn < L->sem_min)
			L->sem_min = mn;
	}
	if (L->sem_min < L->arm.min_ts)
		L->arm.min_ts = L->sem_min;
}

/* A block's records into the stream (load.c's dev_worker and its consumer). */
static void dev_parse(struct live *L, size_t n, int last)
{
	struct lfile *d = &L->in[1];
	struct arm *p = &L->part;
	struct vec c = p->cmds, q = p->cmps; /* their capacity kept */
	memset(&p->cmds, 0, sizeof p->cmds);
	memset(&p->cmps, 0, sizeof p->cmps);
	arm_free(p);
	memset(p, 0, sizeof *p);
	c.n = q.n = 0;
	p->cmds = c;
	p->cmps = q;
	memset(&L->pfs, 0, sizeof L->pfs);
	L->pfs.path = L->arm.ebpf_f.path;
	d->r.reported = 0;
	d->r.j.pad_end = d->buf + d->cap;
	parse_text(&d->r, d->buf, n, last, 0);
	for (uint64_t k = 0; k < d->r.reported && k < MAX_REPORTED; k++)
		if (d->bad + k < MAX_REPORTED) {
			d->first[d->bad + k] = d->r.bad[k];
			d->first[d->bad + k].line += L->arm.ebpf_f.lines;
		}
	d->bad += d->r.reported;
	struct file_stats *to = &L->arm.ebpf_f;
	to->lines += L->pfs.lines;
	to->blank += L->pfs.blank;
	to->malformed += L->pfs.malformed;
	to->truncated_tail += L->pfs.truncated_tail;
	to->other += L->pfs.other;
	to->records += L->pfs.records;
	stream_block(L->s, p);
}

/* The device file's next block: L->bs bytes cut after their last newline
 * (more, to the next newline, when a line is longer), from bytes the file
 * holds in complete lines (limit). A shorter block waits for the next commit
 * (the reorder window is at least a block: what comes after a block older
 * than its earliest record is joined out of time order) but at the stop
 * (final: limit is the end, the last block takes an unterminated tail).
 * 1 when a block went, 0 when there is none, -1 broken (said in L->broken). */
static int dev_block(struct live *L, long long limit, int final)
{
	struct lfile *d = &L->in[1];
	long long left = limit - d->pos;
	if (L->dev_final || left <= 0 || (!final && left < (long long)L->bs)) {
		L->dev_final |= final;
		return 0;
	}
	size_t want = left > (long long)L->bs ? L->bs : (size_t)left;
	char *nl = NULL;
	for (;;) {
		grow(&d->buf, &d->cap, want + JL_PADDING);
		if (pread_all(d->fd, d->buf, want, d->pos) < want) {
			L->broken = "the device file shrank under the follower";
			return -1;
		}
		if ((nl = memrchr(d->buf, '\n', want)) || want == (size_t)left)
			break;
		want = (size_t)left; /* a line longer than a block: read on to the limit */
	}
	size_t n = nl ? (size_t)(nl + 1 - d->buf) : want;
	if (!nl && !final)
		return 0; /* not a complete line (cannot be: limit ends one) */
	int last = final && (long long)n == left;
	d->pos += (long long)n;
	dev_parse(L, n, last);
	L->dev_final = last;
	return 1;
}

/* The interim tables of the last commit (all: the interim objects too). */
static int drop_interim(struct live *L, sqlite3 *db, int all)
{
	char sql[1024];
	int64_t from = all ? TMP_OBJ : TMP_INFO;
	snprintf(sql, sizeof sql,
		 "DELETE FROM kvio_slice WHERE id >= %lld; DELETE FROM kvio_obj WHERE id >= %lld;"
		 "DELETE FROM kvio_arg WHERE arg_set_id >= %lld; DELETE FROM kvio_track WHERE id >= %lld;"
		 "DELETE FROM process WHERE upid >= %lld; DELETE FROM thread WHERE id > 0; DELETE FROM metadata;"
		 "DELETE FROM kvio_file; DELETE FROM kvio_stats; DELETE FROM kvio_warning; DELETE FROM kvio_sum;%s",
		 (long long)from, (long long)from, (long long)from, (long long)(L->obase < 0 ? INT64_MAX : L->obase),
		 (long long)(L->oupid < 0 ? INT64_MAX : L->oupid), all ? " DELETE FROM flow;" : "");
	return db_exec(db, sql, "writing the database") == SQLITE_OK ? 0 : 2;
}

static void ids_swap(struct dbw *w, struct idsave *v)
{
	struct idsave t = {w->next_id, w->next_track, w->next_upid, w->next_flow};
	w->next_id = v->id;
	w->next_track = v->track;
	w->next_upid = v->upid;
	w->next_flow = v->flow;
	*v = t;
}

/* The objects whose commands are all written (file order), once each, on
 * the interim lanes (tracks from the real ones' next id: the group "objects",
 * then lane k at nb + 1 + k; the slices of earlier commits follow a move). */
static void interim_objects(struct live *L)
{
	struct dbw *w = &L->w;
	int64_t done = stream_done_ts(L->s), nb = L->obase;
	char sql[256];
	L->moved = 0;
	if (nb < w->next_track) { /* more lanes than the room left: after them, with 32 ids of room again */
		nb = w->next_track + 32;
		if (L->obase >= 0 && L->objs_out) {
			snprintf(sql, sizeof sql, "UPDATE kvio_slice SET track_id = track_id + %lld WHERE id >= %lld AND"
				 " id < %lld AND track_id >= %lld", (long long)(nb - L->obase), (long long)TMP_OBJ,
				 (long long)TMP_INFO, (long long)L->obase);
			if (w->rc == SQLITE_OK)
				w->rc = db_exec(w->db, sql, "writing the database");
			L->moved = 1;
		}
	}
	L->obase = nb;
	L->oupid = w->next_upid;
	struct idsave v = {TMP_OBJ, nb, w->next_upid, L->tmp_flow};
	ids_swap(w, &v);
	for (; L->arm.base_set && L->objs_out < L->arm.objs.n; L->objs_out++) {
		struct obj ob = VEC_AT(&L->arm.objs, struct obj, L->objs_out);
		if (ob.end >= done || (ob.n_cmds && ob.last_ts >= done))
			break;
		L->anomalies += (uint64_t)obj_span(&ob, L->arm.base_ns);
		L->store_spans += ob.is_span && ob.is_store;
		int64_t id = TMP_OBJ + (int64_t)L->objs_out;
		if (!ob.is_span) {
			char name[512];
			snprintf(name, sizeof name, "%s (no device cmds)", ob.op);
			dbw_slice_id(w, id, ob.e, 0, L->t.meta_trk, name);
			dbw_arg_i(w, id, "trace_id", (int64_t)ob.trace_id);
			dbw_arg_b(w, id, "no_device_cmds", 1);
			continue;
		}
		write_object_slice(w, &ob, nb + 1 + lanes_add(&L->olanes, ob.b, ob.e), id);
		if (ob.n_cmds && ob.first_id >= 0)
			dbw_flow(w, id, ob.first_id, (int64_t)L->objs_out);
		if (ob.n_cmds && ob.first_id >= 0 && ob.last_id >= 0 && ob.first_id != ob.last_id)
			dbw_flow(w, ob.first_id, ob.last_id, (int64_t)L->objs_out);
	}
	char name[64];
	if (L->olanes.n) {
		int64_t grp = dbw_track(w, "objects", L->t.lm_proc, L->t.lm_upid, NULL, 10, 0);
		for (size_t l = 0; l < L->olanes.n; l++) {
			snprintf(name, sizeof name, "objects.%03zu", l);
			dbw_track(w, name, grp, L->t.lm_upid, NULL, (int)l, 0);
		}
	}
	L->tmp_flow = w->next_flow;
	ids_swap(w, &v); /* the real ones back; v: the interim ones, for the serving tracks */
	L->snext = v;
}

static void vec_copy(struct vec *to, const struct vec *from, size_t sz)
{
	vec_reserve(to, from->n ? from->n : 1, sz);
	if (from->n)
		memcpy(to->v, from->v, from->n * sz);
	to->n = from->n;
}

/* The small tables of an interim commit, from a copy of the arm finished as
 * a one-shot's would be now but for the objects, which are the interim
 * commits' (capture info, serving spans, threads, stats). */
static void interim_small(struct live *L)
{
	struct dbw *w = &L->w;
	struct arm c = L->arm;
	memset(&c.strs, 0, sizeof c.strs);
	memset(&c.warnings, 0, sizeof c.warnings);
	memset(&c.first_obj, 0, sizeof c.first_obj);
	memset(&c.keys, 0, sizeof c.keys);
	memset(&c.key_tid, 0, sizeof c.key_tid);
	c.serving = (struct vec){0};
	c.offx = NULL;
	c.clock_anomalies = L->anomalies;
	c.nlanes_obj = (int)L->olanes.n;
	vec_copy(&c.serving, &L->arm.serving, sizeof(struct serving));
	for (size_t i = 0; i < L->arm.warnings.n; i++)
		*(const char **)vec_push(&c.warnings, sizeof(char *)) = VEC_AT(&L->arm.warnings, const char *, i);
	arm_finish_interim(&c, &L->a->o, L->store_spans);
	struct idsave v = L->snext;
	v.id = TMP_INFO;
	ids_swap(w, &v);
	write_capture_info(w, &c, &L->a->o, &L->t);
	write_serving(w, &c, &L->t);
	ids_swap(w, &v);
	w->next_utid = 1;
	write_threads(w, &c);
	write_stats(w, &c, &L->a->o);
	write_options_meta(w, &L->a->o);
	vec_free(&c.serving);
	vec_free(&c.warnings);
	arena_free(&c.strs);
}

/* The first five unusable lines of each file and the count of the rest (said
 * once, at the stop). */
static void say_bad(struct live *L)
{
	for (int k = 0; k < 3; k++) {
		struct lfile *f = &L->in[k];
		const struct badline *b = k == 1 ? f->first : f->r.bad;
		uint64_t n = k == 1 ? f->bad : f->r.reported;
		const char *path = f->r.fs == &L->pfs ? L->arm.ebpf_f.path : f->r.fs->path;
		if (f->fd < 0)
			continue;
		for (uint64_t i = 0; i < n && i < MAX_REPORTED; i++)
			kvio_err(b[i].tail ? "%s:%llu: %s" : "%s:%llu: %s (line skipped)", path,
				 (unsigned long long)b[i].line, b[i].why);
		if (n > MAX_REPORTED)
			kvio_err("%s: %llu more unusable lines not shown", path, (unsigned long long)(n - MAX_REPORTED));
	}
}

/* Each input's first bytes as a one-shot ingest checks them (a file that is not JSONL). */
static int sniff(struct live *L)
{
	for (int k = 0; k < 3; k++) {
		struct input in;
		if (!L->in[k].path)
			continue;
		if (input_open(&in, L->in[k].path))
			return 2;
		input_close(&in);
	}
	return 0;
}

/* The stop: the stream's end, the checks, the end of a one-shot ingest. */
static int live_final(struct live *L)
{
	struct arm *a = &L->arm;
	const struct ingest_opts *o = &L->a->o;
	stream_end(L->s);
	arm_follow_done(a);
	const char *why = L->broken ? L->broken : stream_follow_check(L->s, L->sem_min);
	if (why) {
		L->broken = why;
		return LIVE_REBUILD;
	}
	say_bad(L);
	arm_finish(a, o);
	if (a->swapped) {
		kvio_err("%s and %s look swapped: --sem takes LMCache's trace, --ebpf the monitor's (nothing written)",
			 a->sem_f.path, a->ebpf_f.path);
		return 2;
	}
	write_arm_end(&L->w, a, o, &L->t);
	write_threads(&L->w, a);
	write_stats(&L->w, a, o);
	write_options_meta(&L->w, o);
	stream_free(L->s);
	L->s = NULL;
	L->begun = 0; /* dbw_end below finalizes the writer, with the sums of every row */
	db_sums_free(L->w.sums);
	L->w.sums = NULL;
	return dbw_end(&L->w, 1) == SQLITE_OK ? 0 : 2;
}

/* dbw's frozen(): below which key a table's rows stay as they are (db/valid.h). */
static int64_t frozen(void *ctx, const char *table)
{
	struct live *L = ctx;
	int64_t objs = TMP_OBJ + (int64_t)L->objs_out;
	if (!strcmp(table, "kvio_slice") || !strcmp(table, "kvio_arg"))
		return L->moved ? TMP_OBJ : objs;
	if (!strcmp(table, "kvio_obj"))
		return objs;
	if (!strcmp(table, "flow"))
		return L->tmp_flow;
	if (!strcmp(table, "kvio_cmd_kv"))
		return L->w.next_kv;
	if (!strcmp(table, "kvio_cmd_range"))
		return L->w.partial_id >= 0 ? L->w.partial_id : L->w.next_id;
	return INT64_MIN;
}

int live_commit(struct live *L, sqlite3 *db, const int fd[3], const long long limit[3], int final)
{
	struct dbw *w = &L->w;
	L->a->o.follow_final = final;
	if (L->broken)
		return LIVE_REBUILD;
	if ((!L->begun || final) && sniff(L))
		return 2;
	if (!L->begun) {
		for (int k = 0; k < 3; k++)
			L->in[k].fd = L->in[k].path ? fd[k] : -1;
		if (dbw_begin(w, db) != SQLITE_OK)
			return 2;
		w->in_place = 1; /* a commit uses the connection between chunks: no writer thread */
		w->sums = db_sums_new();
		w->frozen = frozen;
		w->frozen_ctx = L;
		write_arm_begin(w, &L->arm, 0, &L->a->o, &L->t);
		L->s = stream_open(&L->arm, w, &L->t, &L->a->o, 1);
		L->begun = 1;
	} else {
		w->rc = db_exec(db, "BEGIN IMMEDIATE", "writing the database");
		dbw_drop_partial(w);
		if (w->rc == SQLITE_OK && drop_interim(L, db, final)) /* before the stream's tracks (ids after the real ones) */
			w->rc = SQLITE_ERROR;
	}
	L->cmds0 = L->arm.emitted_cmds;
	double t0 = now_s();
	if (L->in[0].fd < 0)
		stream_sem_seen(L->s, INT64_MAX); /* no semantic file: the base waits for nothing */
	text_piece(L, &L->in[0], limit[0], final);
	text_piece(L, &L->in[2], limit[2], final);
	stream_sem_seen(L->s, L->sem_end);
	/* device blocks wait for the semantic file's first line (its kvio_meta
	 * header is the arm's, as in a one-shot ingest, which reads it first) */
	if (L->in[0].fd < 0 || L->in[0].pos > 0 || final)
		while (!L->broken && w->rc == SQLITE_OK && dev_block(L, limit[1], final) > 0)
			;
	int status = w->rc == SQLITE_OK ? 0 : 2;
	double t1 = now_s(), t2 = t1, t3 = t1;
	if (!status && final)
		status = live_final(L);
	else if (!status && !L->broken) {
		dbw_flush_partial(w);
		interim_objects(L);
		interim_small(L);
		t2 = now_s();
		status = dbw_commit(w, 1) == SQLITE_OK ? 0 : 2;
		t3 = now_s();
	}
	L->t_read = t1 - t0;
	L->t_interim = t2 - t1;
	L->t_sums = t3 - t2;
	if (!status && L->broken)
		status = LIVE_REBUILD;
	if (status && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return status;
}

int live_holds(const struct live *L)
{
	return L->arm.emitted_cmds > 0 || L->objs_out > 0;
}

const char *live_why(const struct live *L)
{
	return L->broken;
}

void live_stats(const struct live *L, uint64_t *cmds, uint64_t *objs, double t[3])
{
	t[0] = L->t_read;
	t[1] = L->t_interim;
	t[2] = L->t_sums;
	*cmds = L->arm.emitted_cmds - L->cmds0;
	*objs = L->objs_out;
}

int live_attach(struct live *L, sqlite3 *db)
{
	dbw_detach(&L->w);
	return db && L->begun && dbw_attach(&L->w, db) != SQLITE_OK ? 2 : 0;
}

struct arm *live_take_arm(struct live *L)
{
	struct arm *a = xmalloc(sizeof *a);
	*a = L->arm;
	memset(&L->arm, 0, sizeof L->arm);
	return a;
}

void live_free(struct live *L)
{
	if (!L)
		return;
	stream_free(L->s);
	if (L->begun) {
		dbw_detach(&L->w);
		db_sums_free(L->w.sums);
		free(L->w.cb->blob);
		free(L->w.cb);
		for (size_t i = 0; i < L->w.names.n; i++)
			free(VEC_AT(&L->w.names, char *, i));
		vec_free(&L->w.names);
	}
	for (int r = 0; r < NROLES; r++) {
		vec_free(&L->t.role_lane[r]);
		lanes_free(&L->t.lanes[r]);
	}
	vec_free(&L->t.ms);
	for (int k = 0; k < 3; k++) {
		free(L->in[k].buf);
		jl_free(&L->in[k].r.j);
		free(L->in[k].r.sc.buf);
	}
	arm_free(&L->part);
	arm_free(&L->arm);
	lanes_free(&L->olanes);
	free(L);
}
