/* live.c — kvio-ingest --follow's incremental commits (follow.c calls them).
 *
 * Each arm's state lives across commits: the device stream (stream.c: its
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
 * Under --merge the first arm's rows have the ids a one-shot ingest gives
 * them; each later arm k writes its commands with ids from k << ARM_IDS, its
 * KV rows from k << ARM_KV, its tracks in a room of their own (the first arm's
 * room ends where the next arm's begins: a reader accepts a few hundred track
 * ids without a row, db/dir.h) and its processes from 1 + 2k. Every arm's
 * interim objects share one range of ids (appended: a commit's sums read what
 * it added), their lanes after every arm's tracks.
 *
 * At the stop the first arm's stream ends as a one-shot's does; the interim
 * object rows go and the end of a one-shot ingest is written (objects with
 * their final ids and lanes, flows, counters, the overview, the small
 * tables); the later arms' rows go and the arms are written as a one-shot
 * ingest writes them after the first (their files read again: their ids
 * depend on the first arm's whole). What could differ from a one-shot ingest
 * of the final files is checked first (a record that came after a command
 * written without it, the base, the LBA size: stream_follow_check; a second
 * record of a trace_id; a line longer than a block is not one; a command name
 * of the first arm interned after another arm's; an arm's tracks outgrowing
 * their room): then live_commit says so and follow.c rebuilds the database
 * from the files in the same transaction. */
#include "ingest.h"
#include "live.h"
#include "input.h"
#include "records.h"
#include "write.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* interim rows (deleted at the stop): objects from TMP_OBJ (every arm's, in
 * the order written), the capture info and serving spans from TMP_INFO (each
 * commit anew); the interim tracks (object lanes, serving) and the serving
 * processes each commit anew after the real ones (track ids are dense: dir.c) */
#define TMP_OBJ ((int64_t)1 << 50)
#define TMP_INFO ((int64_t)1 << 51)
#define TMP_CTR ((int64_t)1 << 52) /* the interim counters' points (appended; livectr.c) */
#define TMP_CTR_TAIL ((int64_t)3 << 51) /* objects in flight from the settled horizon on (each commit anew; ids < 2^53: db/check.c) */
#define ARM_IDS 46       /* arm k >= 1: its commands' ids from k << ARM_IDS (below TMP_OBJ) */
#define ARM_KV 28        /* its KV rows' ids from k << ARM_KV (a chunk's kv_id is a u32) */
#define LIVE_ARMS 8
#define TRACK_ROOM 3584  /* the track ids the arms before the last share (DIR_TRACK_HOLES is 4096) */
#define OBJ_GAP 32       /* the interim tracks after the real ones, with this room to grow */

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
	int64_t id, track, upid, flow, track_end;
};

/* One arm followed. */
struct larm {
	int ai;
	struct arm arm;
	struct arm_out t;
	struct dbw w;
	struct stream *s;
	struct lfile in[3]; /* sem, ebpf, serving */
	int dev_final;
	long long dev_lim;  /* the device file's complete bytes when they last grew, at dev_since (s) */
	double dev_since, dev_wall; /* (dev_wall: the same moment, Unix time) */
	int quieted;        /* its quiet read done (until the file grows again) */
	int sem_skipped;    /* device blocks were read before the semantic file had a whole line */
	/* a quiet commit's: the unterminated last line of each input (0 none, 1
	 * blanks only, 2 text), counted as a one-shot ingest of the files counts it */
	int tail[3];
	struct arm part;    /* a device block's records */
	struct file_stats pfs;
	int64_t sem_min, sem_end;
	size_t objs_out;    /* objs[0..objs_out) written by interim commits */
	size_t upto;        /* this commit's: objs[objs_out..upto) go now, on lane[] */
	struct vec lane;    /* uint32_t */
	struct lanes olanes; /* the interim objects' lanes */
	int64_t obase;      /* their group track (-1: none yet), with onl lanes */
	size_t onl;
	size_t store_spans; /* of the interim objects: store spans, clock anomalies */
	uint64_t anomalies;
	uint64_t cmds0;     /* commands written before this commit */
	struct lctr ctr;    /* its interim rate counters and overview */
	struct lmem mem;    /* what has left memory (livemem.c) */
	struct lsrv srv;    /* its serving spans (livesrv.c) */
};

struct live {
	struct ingest_args *a;
	int n;
	struct larm *arm;   /* n arms; arm[0]'s writer owns the names, the sums, the metadata */
	size_t bs;          /* device: the bytes of a block (KVIO_FOLLOW_BLOCK_BYTES) */
	double quiet;       /* s without new device bytes that read the rest anyway (KVIO_FOLLOW_QUIET_MS) */
	int begun;
	int64_t ibase;      /* the interim tracks' first id (-1 none) */
	int64_t oupid;      /* the interim processes' first upid */
	int64_t tmp_obj, tmp_flow; /* the next interim object (or overview run) id and flow row */
	int64_t tmp_ctr;    /* the next interim counter point's id */
	int ctr_redo;       /* this commit wrote an objects-in-flight counter again (its sums read whole) */
	int moved;          /* this commit moved interim objects (the objects' sums read again) */
	int64_t room;       /* tracks per arm but the last */
	uint64_t ncmds;     /* the last commit's commands written */
	double t_read, t_interim, t_sums; /* the last commit's parts (KVIO_TIMING) */
	struct idsave snext; /* the interim ids after the objects' (the serving tracks take them) */
	struct arm *done;   /* after the final commit: the arms */
	const char *broken;
	char whybuf[320];   /* broken, with the arm's label under --merge */
};

const char *live_unwanted(const struct ingest_args *a)
{
	if (a->narms > LIVE_ARMS)
		return "more than 8 arms";
	if (a->o.join != JOIN_COOKIE)
		return a->o.join == JOIN_KEY ? "--join-by-key" : "--join-by-offset";
	if (a->o.win.has_time || a->o.win.has_tid)
		return a->o.win.has_time ? "--time-range" : "--trace-id";
	for (int i = 0; i < a->narms; i++)
		if (!a->arms[i].ebpf)
			return "an arm without a device file";
	if (env_i64("KVIO_FOLLOW_REBUILD", 0, 0))
		return "KVIO_FOLLOW_REBUILD=1";
	return NULL;
}

static void larm_init(struct live *L, struct larm *R, int ai)
{
	const struct arm_spec *sp = &L->a->arms[ai];
	const char *paths[3] = {sp->sem, sp->ebpf, sp->serving};
	struct file_stats *fs[3] = {&R->arm.sem_f, &R->arm.ebpf_f, &R->arm.serving_f};
	enum ftype ft[3] = {F_SEM, F_EBPF, F_SERVING};
	R->ai = ai;
	R->arm.label = sp->label;
	R->arm.min_ts = INT64_MAX;
	R->sem_min = INT64_MAX;
	R->sem_end = INT64_MIN;
	R->obase = -1;
	lmem_init(&R->mem, L->a->out, !ai);
	lsrv_init(&R->srv);
	for (int k = 0; k < 3; k++) {
		struct lfile *f = &R->in[k];
		f->fd = -1;
		f->path = paths[k];
		fs[k]->path = sp->shown[k] && paths[k] ? sp->shown[k] : paths[k] ? paths[k] : "-";
		f->r = (struct reader){.a = &R->arm, .ft = ft[k], .fs = fs[k], .o = &L->a->o};
	}
	R->in[1].r.a = &R->part;
	R->in[1].r.fs = &R->pfs;
}

struct live *live_new(struct ingest_args *a)
{
	struct live *L = xcalloc(1, sizeof *L);
	L->a = a;
	L->n = a->narms;
	L->arm = xcalloc((size_t)L->n, sizeof *L->arm);
	for (int k = 0; k < L->n; k++)
		larm_init(L, &L->arm[k], k);
	/* smaller blocks than a one-shot's 4 MiB: a commit shows what came sooner
	 * (what depends on the cut is checked at the stop) */
	L->bs = (size_t)env_i64("KVIO_FOLLOW_BLOCK_BYTES", 1 << 20, 1);
	/* a tracer quiet this long (a hung run) has nothing older to come: its
	 * last block and the reorder pool go in (docs/formats.md) */
	L->quiet = (double)env_i64("KVIO_FOLLOW_QUIET_MS", 2000, 1) / 1000.0;
	L->ibase = -1;
	L->oupid = 1 + 2 * (int64_t)L->n;
	L->tmp_obj = TMP_OBJ;
	L->tmp_flow = 1;
	L->tmp_ctr = TMP_CTR;
	/* (KVIO_FOLLOW_TRACK_ROOM: a smaller room, for tests/t_22_follow.sh's outgrown room) */
	L->room = L->n > 1 ? env_i64("KVIO_FOLLOW_TRACK_ROOM", TRACK_ROOM, 16) / (L->n - 1) : 0;
	if (L->room * (L->n - 1) > TRACK_ROOM)
		L->room = TRACK_ROOM / (L->n - 1);
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
static void text_piece(struct live *L, struct larm *R, struct lfile *f, long long limit, int final)
{
	if (f->fd < 0 || (limit <= f->pos && !final))
		return;
	size_t n = limit > f->pos ? (size_t)(limit - f->pos) : 0;
	grow(&f->buf, &f->cap, n + JL_PADDING);
	n = pread_all(f->fd, f->buf, n, f->pos);
	f->r.j.pad_end = f->buf + f->cap;
	size_t objs0 = arm_nobjs(&R->arm), srv0 = R->arm.serving.n;
	if (f == &R->in[0])
		lmem_sem_begin(&R->mem, &R->arm);
	else
		lgens_begin(&R->srv.gens, &R->arm.strs);
	parse_text(&f->r, f->buf, n, final, f->r.fs->lines);
	if (f == &R->in[0])
		lmem_sem_end(&R->mem, &R->arm);
	else
		lgens_end(&R->srv.gens, &R->arm.strs, arm_nserving(&R->arm));
	f->pos += (long long)n;
	/* (a later arm is read again at the stop: its interim objects only are the follow's) */
	if (arm_follow_add(&R->arm, objs0, &R->sem_min, &R->sem_end) && !R->ai)
		L->broken = "a trace_id with a second semantic record";
	const struct serving *sv = R->arm.serving.v;
	for (size_t i = srv0; i < R->arm.serving.n; i++) {
		int64_t mn = sv[i].start < sv[i].end ? sv[i].start : sv[i].end;
		if (mn < R->sem_min)
			R->sem_min = mn;
	}
	if (R->sem_min < R->arm.min_ts)
		R->arm.min_ts = R->sem_min;
}

/* A block's records into the stream (load.c's dev_worker and its consumer). */
static void dev_parse(struct larm *L, size_t n, int last)
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
 * (final: limit is the end, the last block takes an unterminated tail) or
 * when the file is quiet (its complete lines). 1 when a block went, 0 when
 * there is none, -1 broken (said in L->broken). */
static int dev_block(struct live *L, struct larm *R, long long limit, int final, int quiet)
{
	struct lfile *d = &R->in[1];
	long long left = limit - d->pos;
	if (R->dev_final || left <= 0 || (!final && !quiet && left < (long long)L->bs)) {
		R->dev_final |= final;
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
	dev_parse(R, n, last);
	R->dev_final = last;
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
		 "DELETE FROM kvio_file; DELETE FROM kvio_stats; DELETE FROM kvio_warning; DELETE FROM kvio_sum;"
		 "DELETE FROM kvio_counter WHERE id >= %lld;%s",
		 (long long)from, (long long)from, (long long)from, (long long)(L->ibase < 0 ? INT64_MAX : L->ibase),
		 (long long)L->oupid, (long long)(all ? INT64_MIN : TMP_CTR_TAIL), all ? " DELETE FROM flow;" : "");
	return db_exec(db, sql, "writing the database") == SQLITE_OK ? 0 : 2;
}

static void ids_swap(struct dbw *w, struct idsave *v)
{
	struct idsave t = {w->next_id, w->next_track, w->next_upid, w->next_flow, w->track_end};
	w->next_id = v->id;
	w->next_track = v->track;
	w->next_upid = v->upid;
	w->next_flow = v->flow;
	w->track_end = v->track_end;
	*v = t;
}

/* Pass 1 of interim_objects: R's objects whose commands are all written
 * (file order) from objs_out to R->upto, their lanes in R->lane. */
static void ready_objects(struct larm *R)
{
	int64_t done = stream_obj_done_ts(R->s);
	R->lane.n = 0;
	for (R->upto = R->objs_out; R->arm.base_set && R->upto < arm_nobjs(&R->arm); R->upto++) {
		struct obj *ob = arm_obj(&R->arm, R->upto);
		if (ob->end >= done || (ob->n_cmds && ob->last_ts >= done))
			break;
		R->anomalies += (uint64_t)obj_span(ob, R->arm.base_ns);
		R->store_spans += ob->is_span && ob->is_store;
		*(uint32_t *)vec_push(&R->lane, sizeof(uint32_t)) = ob->is_span ? lanes_add(&R->olanes, ob->b, ob->e) : 0;
	}
}

/* Pass 2: R's ready objects written, once each, on its interim lanes (the
 * group "objects" at R->obase, lane k at obase + 1 + k), and its lane tracks. */
static void write_ready(struct live *L, struct larm *R)
{
	struct dbw *w = &R->w;
	struct idsave v = {L->tmp_obj, R->obase, L->oupid, L->tmp_flow, 0};
	ids_swap(w, &v);
	for (; R->objs_out < R->upto; R->objs_out++) {
		struct obj ob = *arm_obj(&R->arm, R->objs_out);
		int64_t id = L->tmp_obj++, flow = ((int64_t)R->ai << 40) | (int64_t)R->objs_out;
		uint32_t lane = VEC_AT(&R->lane, uint32_t, R->lane.n - (R->upto - R->objs_out));
		if (!ob.is_span) {
			char name[512];
			snprintf(name, sizeof name, "%s (no device cmds)", ob.op);
			dbw_slice_id(w, id, ob.e, 0, R->t.meta_trk, name);
			dbw_arg_i(w, id, "trace_id", (int64_t)ob.trace_id);
			dbw_arg_b(w, id, "no_device_cmds", 1);
			continue;
		}
		write_object_slice(w, &ob, R->obase + 1 + lane, id);
		if (ob.n_cmds && ob.first_id >= 0)
			dbw_flow(w, id, ob.first_id, flow);
		if (ob.n_cmds && ob.first_id >= 0 && ob.last_id >= 0 && ob.first_id != ob.last_id)
			dbw_flow(w, ob.first_id, ob.last_id, flow);
	}
	char name[64];
	if (R->olanes.n) {
		int64_t grp = dbw_track(w, "objects", R->t.lm_proc, R->t.lm_upid, NULL, 10, 0);
		for (size_t l = 0; l < R->olanes.n; l++) {
			snprintf(name, sizeof name, "objects.%03zu", l);
			dbw_track(w, name, grp, R->t.lm_upid, NULL, (int)l, 0);
		}
	}
	L->tmp_flow = w->next_flow;
	stream_objects_written(R->s, R->objs_out);
	ids_swap(w, &v); /* the real ones back; v: the interim ones, for the next arm and the serving tracks */
	L->snext = v;
}

/* The interim slices on tracks (from, from + n] moved to (to, to + n]. */
static void move_lanes(struct live *L, int64_t from, size_t n, int64_t to)
{
	struct dbw *last = &L->arm[L->n - 1].w;
	char sql[320];
	if (from < 0 || !n || to == from || last->rc != SQLITE_OK)
		return;
	snprintf(sql, sizeof sql, "UPDATE kvio_slice SET track_id = track_id + %lld WHERE id >= %lld AND"
		 " id < %lld AND track_id > %lld AND track_id <= %lld", (long long)(to - from), (long long)TMP_OBJ,
		 (long long)TMP_INFO, (long long)from, (long long)(from + (int64_t)n));
	last->rc = db_exec(last->db, sql, "writing the database");
	L->moved = 1;
}

/* The objects whose commands are all written and the serving spans read,
 * every arm's, appended; their tracks after the real ones (OBJ_GAP ids of
 * room): each arm's object lanes, then each arm's Serving process and lanes.
 * When the real tracks or lanes grow into them, the lanes move (the slices of
 * earlier commits with them, the last ones first: each moves up past the
 * ones before it). */
static void interim_objects(struct live *L)
{
	struct dbw *last = &L->arm[L->n - 1].w;
	int64_t nb[LIVE_ARMS], sb[LIVE_ARMS], b, upid = L->oupid;
	L->moved = 0;
	if (L->ibase < last->next_track)
		L->ibase = last->next_track + OBJ_GAP;
	b = L->ibase;
	for (int k = 0; k < L->n; k++) {
		ready_objects(&L->arm[k]);
		lsrv_ready(&L->arm[k].srv, &L->arm[k].arm);
		nb[k] = b;
		b += L->arm[k].olanes.n ? 1 + (int64_t)L->arm[k].olanes.n : 0;
	}
	for (int k = 0; k < L->n; k++) {
		sb[k] = b;
		b += L->arm[k].srv.lanes.n ? 1 + (int64_t)L->arm[k].srv.lanes.n : 0;
	}
	for (int k = L->n - 1; k >= 0; k--) {
		struct lsrv *v = &L->arm[k].srv;
		move_lanes(L, v->base, v->nl, sb[k]);
		v->base = sb[k];
	}
	for (int k = L->n - 1; k >= 0; k--) {
		struct larm *R = &L->arm[k];
		move_lanes(L, R->obase, R->onl, nb[k]);
		R->obase = nb[k];
		R->onl = R->olanes.n;
	}
	for (int k = 0; k < L->n; k++)
		write_ready(L, &L->arm[k]);
	for (int k = 0; k < L->n; k++)
		lsrv_write(&L->arm[k].srv, &L->arm[k].w, &L->arm[k].arm, L->arm[k].ai, &L->tmp_obj, &upid);
	L->snext.track = b;
	L->snext.id = TMP_INFO;
	L->snext.upid = upid;
}

/* An interim commit's follow_* kvio_stats rows of arm R: what its stream
 * holds that the database does not show yet (a command whose completion has
 * not come holds the commands after it), when its device file last grew, and
 * the follower's pid. */
static void write_waiting(struct larm *R, double quiet_s)
{
	struct stream_wait v;
	const char *l = R->arm.label;
	stream_waiting(R->s, &v);
	dbw_stat(&R->w, l, "follow_waiting_cmds", (int64_t)v.cmds);
	dbw_stat(&R->w, l, "follow_pool_records", (int64_t)v.pool);
	dbw_stat(&R->w, l, "follow_unpaired_cmds", (int64_t)v.unpaired);
	dbw_stat(&R->w, l, "follow_unpaired_objects", (int64_t)v.objects);
	dbw_stat(&R->w, l, "follow_unpaired_written", (int64_t)v.written);
	if (v.unpaired) {
		dbw_stat(&R->w, l, "follow_unpaired_age_ns", v.age_ns);
		dbw_stat(&R->w, l, "follow_unpaired_oldest_tid", v.oldest_tid);
	}
	if (R->dev_wall > 0)
		dbw_stat(&R->w, l, "follow_device_grew_ms", (int64_t)(R->dev_wall * 1e3));
	/* after this long quiet a commit draws what waits (KVIO_FOLLOW_QUIET_MS): --watch's red rule */
	dbw_stat(&R->w, l, "follow_quiet_ms", (int64_t)(quiet_s * 1e3 + 0.5));
	dbw_stat(&R->w, l, "follow_pid", (int64_t)getpid()); /* a reader on this host sees whether it still runs */
	/* the follower's memory: the semantic records it holds, those that left it (livemem.c) */
	dbw_stat(&R->w, l, "follow_held_objects", (int64_t)R->arm.objs.n);
	dbw_stat(&R->w, l, "follow_left_objects", (int64_t)R->arm.objs_base);
	dbw_stat(&R->w, l, "follow_held_serving", (int64_t)R->arm.serving.n); /* (livesrv.c) */
	dbw_stat(&R->w, l, "follow_left_serving", (int64_t)R->arm.serving_base);
}

/* f's bytes past limit (the end of its complete lines), an unterminated last
 * line: 0 none, 1 blanks only (a one-shot ingest counts a blank line), 2
 * anything else (it counts a truncated tail: a partial line is not JSON). */
static int tail_kind(const struct lfile *f, long long limit)
{
	struct stat sb;
	char buf[256];
	if (f->fd < 0 || fstat(f->fd, &sb) != 0 || (long long)sb.st_size <= limit)
		return 0;
	long long n = (long long)sb.st_size - limit;
	ssize_t r = pread(f->fd, buf, n < (long long)sizeof buf ? (size_t)n : sizeof buf, (off_t)limit);
	for (ssize_t i = 0; i < r; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r')
			return 2;
	return r == n ? 1 : 2;
}

/* A quiet commit's inputs' unterminated last lines, in the copy of the arm
 * its small tables are written from: the interim database counts them as a
 * one-shot ingest of the files as they are would. */
static void count_tails(const struct larm *R, struct arm *c)
{
	struct file_stats *fs[3] = {&c->sem_f, &c->ebpf_f, &c->serving_f};
	for (int k = 0; k < 3; k++) {
		if (!R->quieted || !R->tail[k])
			continue;
		fs[k]->lines++;
		if (R->tail[k] == 1)
			fs[k]->blank++;
		else
			fs[k]->truncated_tail++;
	}
}

/* The small tables of an interim commit for arm R, from a copy of the arm
 * finished as a one-shot's would be now but for the objects, which are the
 * interim commits' (capture info, serving spans, threads from *utid, stats). */
static void interim_small(struct live *L, struct larm *R, int64_t *utid)
{
	struct dbw *w = &R->w;
	struct arm c = R->arm;
	memset(&c.strs, 0, sizeof c.strs);
	memset(&c.warnings, 0, sizeof c.warnings);
	memset(&c.first_obj, 0, sizeof c.first_obj);
	memset(&c.keys, 0, sizeof c.keys);
	memset(&c.key_tid, 0, sizeof c.key_tid);
	c.serving = (struct vec){0}; /* (the serving spans are livesrv.c's: counted only) */
	c.serving_base = arm_nserving(&R->arm);
	c.offx = NULL;
	c.clock_anomalies = R->anomalies;
	c.nlanes_obj = (int)R->olanes.n;
	for (size_t i = 0; i < R->arm.warnings.n; i++)
		*(const char **)vec_push(&c.warnings, sizeof(char *)) = VEC_AT(&R->arm.warnings, const char *, i);
	arm_finish_interim(&c, &L->a->o, R->store_spans);
	count_tails(R, &c);
	struct idsave v = L->snext;
	ids_swap(w, &v);
	write_capture_info(w, &c, &L->a->o, &R->t);
	ids_swap(w, &v);
	L->snext = v;
	w->next_utid = *utid;
	write_threads(w, &c);
	*utid = w->next_utid;
	write_stats(w, &c, &L->a->o);
	write_waiting(R, L->quiet);
	vec_free(&c.serving);
	vec_free(&c.warnings);
	arena_free(&c.strs);
}

/* The first five unusable lines of each file and the count of the rest (said
 * once, at the stop). */
static void say_bad(struct larm *L)
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

/* Each input's first bytes as a one-shot ingest checks them (a file that is
 * not JSONL), by the path follow.c gives it now (a file removed or replaced
 * under the follower: its own inode, /proc/self/fd/N). */
static int sniff(struct live *L)
{
	for (int a = 0; a < L->n; a++) {
		const struct arm_spec *sp = &L->a->arms[a];
		const char *paths[3] = {sp->sem, sp->ebpf, sp->serving};
		for (int k = 0; k < 3; k++) {
			struct input in;
			if (!paths[k])
				continue;
			if (input_open(&in, paths[k]))
				return 2;
			input_close(&in);
		}
	}
	return 0;
}

/* An arm's writer and stream freed (its rows stay). */
static void larm_drop_writer(struct larm *R)
{
	stream_free(R->s);
	R->s = NULL;
	dbw_detach(&R->w);
	db_sums_free(R->w.sums);
	R->w.sums = NULL;
	if (R->w.cb) {
		free(R->w.cb->blob);
		free(R->w.cb->keys);
		vec_free(&R->w.cb->kv);
		free(R->w.cb);
		R->w.cb = NULL;
	}
	if (R->w.spare) {
		free(R->w.spare->blob);
		free(R->w.spare);
		R->w.spare = NULL;
	}
	for (size_t i = 0; i < R->w.names.n; i++)
		free(VEC_AT(&R->w.names, char *, i));
	vec_free(&R->w.names);
	vec_free(&R->w.used);
}

/* At the stop: the later arms' rows gone (they are written again after the
 * first arm's end), the names kept those of the first arm (in its order). */
static int drop_later_arms(struct live *L)
{
	struct dbw *w = &L->arm[0].w;
	char sql[640];
	if (L->n < 2)
		return 0;
	for (int k = 1; k < L->n; k++)
		larm_drop_writer(&L->arm[k]);
	snprintf(sql, sizeof sql,
		 "DELETE FROM kvio_cmd_chunk WHERE id >= %lld; DELETE FROM kvio_cmd_range WHERE id >= %lld;"
		 "DELETE FROM kvio_cmd_kv WHERE id >= %lld; DELETE FROM kvio_track WHERE id >= %lld;"
		 "DELETE FROM process WHERE upid >= 3; DELETE FROM kvio_cmd_name WHERE id >= %lld;",
		 (long long)1 << ARM_IDS, (long long)1 << ARM_IDS, (long long)1 << ARM_KV, (long long)w->track_end,
		 (long long)w->nused);
	for (size_t i = w->nused; i < w->names.n; i++)
		free(VEC_AT(&w->names, char *, i));
	w->names.n = w->nused;
	w->track_end = 0;
	return db_exec(w->db, sql, "writing the database") == SQLITE_OK ? 0 : 2;
}

/* The stop: the first arm's stream's end, the checks, the end of a one-shot
 * ingest, the later arms as a one-shot writes them. */
static int live_final(struct live *L)
{
	struct larm *R = &L->arm[0];
	struct arm *a = &R->arm;
	const struct ingest_opts *o = &L->a->o;
	stream_end(R->s);
	arm_follow_done(a);
	const char *why = L->broken ? L->broken : stream_follow_check(R->s, R->sem_min);
	if (!why && R->sem_skipped && R->in[0].pos > 0)
		why = "the semantic file's first line came after a quiet commit read the device file";
	if (why && why != L->broken && L->n > 1) { /* --merge: the first arm's (the stop writes the others again) */
		snprintf(L->whybuf, sizeof L->whybuf, "arm %s: %s", R->arm.label ? R->arm.label : "1", why);
		why = L->whybuf;
	}
	if (!why && R->w.track_end && R->w.next_track > R->w.track_end)
		why = "an arm's tracks outgrew the room the follow gave them";
	if (!why && R->w.names_unordered)
		why = "a command name of the first arm came after another arm's (its ids would not be a one-shot's)";
	if (why) {
		L->broken = why;
		return LIVE_REBUILD;
	}
	if (drop_later_arms(L))
		return 2;
	say_bad(R);
	arm_finish(a, o);
	if (a->swapped) {
		kvio_err("%s and %s look swapped: --sem takes LMCache's trace, --ebpf the monitor's (nothing written)",
			 a->sem_f.path, a->ebpf_f.path);
		return 2;
	}
	write_arm_end(&R->w, a, o, &R->t);
	R->w.next_utid = 1; /* the interim commits' threads are gone */
	write_threads(&R->w, a);
	write_stats(&R->w, a, o);
	stream_free(R->s);
	R->s = NULL;
	L->done = xcalloc((size_t)L->n, sizeof *L->done);
	int status = 0;
	double t0 = now_s();
	for (int k = 1; k < L->n && !status && R->w.rc == SQLITE_OK; k++) {
		status = ingest_arm(L->a, k, &R->w, &L->done[k], t0);
		L->ncmds += L->done[k].emitted_cmds;
	}
	if (status)
		R->w.rc = status == 2 ? SQLITE_ERROR : R->w.rc;
	write_options_meta(&R->w, o);
	L->begun = 0; /* dbw_end below finalizes the writer, with the sums of every row */
	db_sums_free(R->w.sums);
	R->w.sums = NULL;
	int rc = dbw_end(&R->w, L->n);
	return status ? status : rc == SQLITE_OK ? 0 : 2;
}

/* dbw's frozen(): below which key a table's rows stay as they are (db/valid.h). */
static int64_t frozen(void *ctx, const char *table)
{
	struct live *L = ctx;
	struct dbw *w = &L->arm[0].w;
	if (!strcmp(table, "kvio_slice") || !strcmp(table, "kvio_arg"))
		return L->moved ? TMP_OBJ : L->tmp_obj;
	if (!strcmp(table, "kvio_obj"))
		return L->tmp_obj;
	if (!strcmp(table, "flow"))
		return L->tmp_flow;
	if (!strcmp(table, "kvio_counter")) /* (the interim points only: the real ones come at the stop) */
		return L->ctr_redo ? TMP_CTR : L->tmp_ctr;
	if (!strcmp(table, "kvio_cmd_kv")) /* (a later arm's rows above: read at each commit) */
		return w->next_kv;
	if (!strcmp(table, "kvio_cmd_range"))
		return w->partial_id >= 0 ? w->partial_id : w->next_id;
	return INT64_MIN;
}

/* The first commit: each arm's writer (the first arm's ids from 1, a later
 * arm's in its ranges: the file's top), its tracks and its stream. */
static int live_begin(struct live *L, sqlite3 *db, const int (*fd)[3])
{
	for (int k = 0; k < L->n; k++) {
		struct larm *R = &L->arm[k];
		struct dbw *w = &R->w;
		for (int j = 0; j < 3; j++)
			R->in[j].fd = R->in[j].path ? fd[k][j] : -1;
		if ((k ? dbw_begin_more(w, db, &L->arm[0].w) : dbw_begin(w, db)) != SQLITE_OK)
			return 2;
		w->in_place = 1; /* a commit uses the connection between chunks: no writer thread */
		if (k) {
			w->next_id = (int64_t)k << ARM_IDS;
			w->next_kv = (int64_t)k << ARM_KV;
			w->next_upid = 1 + 2 * (int64_t)k;
			w->next_track = 1 + (int64_t)k * L->room;
		}
		if (k + 1 < L->n)
			w->track_end = 1 + (int64_t)(k + 1) * L->room;
		write_arm_begin(w, &R->arm, k, &L->a->o, &R->t);
		R->s = stream_open(&R->arm, w, &R->t, &L->a->o, 1);
	}
	struct dbw *w = &L->arm[0].w;
	w->sums = db_sums_new();
	w->frozen = frozen;
	w->frozen_ctx = L;
	L->begun = 1;
	return 0;
}

/* R's device file has had no new complete lines for L->quiet s. */
static int dev_quiet(const struct live *L, const struct larm *R, double now)
{
	return now - R->dev_since >= L->quiet;
}

/* Each arm's new lines read (the device file's in blocks, into the stream). */
static void read_arms(struct live *L, const long long (*limit)[3], int final)
{
	for (int k = 0; k < L->n && !L->broken; k++) {
		struct larm *R = &L->arm[k];
		struct dbw *w = &R->w;
		R->cmds0 = R->arm.emitted_cmds;
		if (final && k)
			continue; /* the stop writes it again from its files */
		if (R->in[0].fd < 0)
			stream_sem_seen(R->s, INT64_MAX); /* no semantic file: the base waits for nothing */
		text_piece(L, R, &R->in[0], limit[k][0], final);
		text_piece(L, R, &R->in[2], limit[k][2], final);
		stream_sem_seen(R->s, R->sem_end);
		double now = now_s();
		if (limit[k][1] != R->dev_lim || R->dev_since == 0) {
			R->dev_lim = limit[k][1];
			R->dev_since = now;
			R->dev_wall = wall_s();
			R->quieted = 0;
		}
		int quiet = !final && dev_quiet(L, R, now);
		/* device blocks wait for the semantic file's first line (its kvio_meta
		 * header is the arm's, as in a one-shot ingest, which reads it first),
		 * unless the device file is quiet (a run that hung before its semantic
		 * file got a whole line: a line that comes later makes the stop rebuild) */
		if (R->in[0].fd >= 0 && R->in[0].pos == 0 && quiet)
			R->sem_skipped = 1;
		if (R->in[0].fd < 0 || R->in[0].pos > 0 || final || quiet) {
			while (!L->broken && w->rc == SQLITE_OK && dev_block(L, R, limit[k][1], final, quiet) > 0)
				;
			if (quiet && !L->broken && w->rc == SQLITE_OK) {
				stream_quiet(R->s);
				R->quieted = 1;
				for (int i = 0; i < 3; i++)
					R->tail[i] = tail_kind(&R->in[i], limit[k][i]);
			}
		}
		if (k + 1 < L->n && w->track_end && w->next_track > w->track_end)
			L->broken = "an arm's tracks outgrew the room the follow gave them";
	}
}

/* 0 when no arm's writer has an error but a track refused past its room
 * (said in L->broken: the commit is rebuilt), else 2. */
static int writers_ok(struct live *L)
{
	for (int k = 0; k < L->n; k++) {
		int rc = L->arm[k].w.rc;
		if (rc != SQLITE_OK && !(rc == SQLITE_FULL && L->broken))
			return 2;
	}
	return 0;
}

/* An interim commit's end: the partial chunks, the objects, the small tables, COMMIT. */
static int live_interim(struct live *L)
{
	int64_t utid = 1, tail = TMP_CTR_TAIL;
	for (int k = 0; k < L->n; k++)
		dbw_flush_partial(&L->arm[k].w);
	interim_objects(L);
	L->ctr_redo = 0;
	for (int k = 0; k < L->n; k++) {
		struct larm *R = &L->arm[k];
		int64_t done = stream_done_ts(R->s);
		interim_small(L, R, &utid);
		if (R->arm.base_set && done != INT64_MIN && done != INT64_MAX)
			lctr_commit(&R->ctr, &R->w, &R->t, done - R->arm.base_ns, &L->tmp_ctr, &L->tmp_obj, &L->snext.id);
		int64_t span[4] = {TMP_OBJ, TMP_INFO, R->obase, R->obase + (int64_t)R->onl};
		L->ctr_redo |= lctr_objects(&R->ctr, &R->w, R->t.obj_ctr, &R->arm, R->objs_out, span, &L->tmp_ctr, &tail);
		if (lmem_compact(&R->mem, &R->arm, R->objs_out, stream_obj_floor(R->s), stream_obj_done_ts(R->s), &R->t,
				 &R->ctr.ms_out))
			L->broken = "the follower's spill file failed";
	}
	write_options_meta(&L->arm[0].w, &L->a->o);
	if (writers_ok(L))
		return 2;
	double t2 = now_s();
	int rc = dbw_commit(&L->arm[0].w, L->n);
	L->t_interim = t2 - L->t_interim;
	L->t_sums = now_s() - t2;
	return rc == SQLITE_OK ? 0 : 2;
}

int live_commit(struct live *L, sqlite3 *db, const int (*fd)[3], const long long (*limit)[3], int final)
{
	L->a->o.follow_final = final;
	if (L->broken)
		return LIVE_REBUILD;
	if ((!L->begun || final) && sniff(L))
		return 2;
	int status = 0;
	if (!L->begun) {
		status = live_begin(L, db, fd);
	} else {
		struct dbw *w = &L->arm[0].w;
		w->rc = db_exec(db, "BEGIN IMMEDIATE", "writing the database");
		for (int k = 0; k < L->n; k++)
			dbw_drop_partial(&L->arm[k].w);
		if (w->rc == SQLITE_OK && drop_interim(L, db, final)) /* before the stream's tracks (ids after the real ones) */
			w->rc = SQLITE_ERROR;
	}
	double t0 = now_s();
	if (!status && final && !writers_ok(L)) { /* what left memory back, for the stop's end (livemem.c) */
		struct larm *R = &L->arm[0];
		int r = lmem_restore(&R->mem, &R->arm, &R->t, &R->ctr.ms_out);
		if (!r && R->in[2].fd >= 0)
			r = lsrv_restore(&R->srv, &R->arm, R->in[2].fd, R->in[2].pos, &L->a->o, R->arm.serving_f.path);
		if (r)
			L->broken = r == 1 ? "a trace_id with a second semantic record" : "the follower's spill file failed";
	}
	if (!status && !writers_ok(L) && !L->broken)
		read_arms(L, limit, final);
	L->ncmds = 0; /* (live_final adds the later arms it writes again) */
	double t1 = now_s();
	L->t_read = t1 - t0;
	L->t_interim = t1;
	L->t_sums = 0;
	status = status ? status : writers_ok(L);
	if (!status && final && !L->broken)
		status = live_final(L);
	else if (!status && !L->broken)
		status = live_interim(L);
	for (int k = 0; k < L->n; k++) /* (the stop's stream end writes the commands still waiting) */
		L->ncmds += L->arm[k].arm.emitted_cmds - L->arm[k].cmds0;
	if (final || L->broken)
		L->t_interim = now_s() - t1;
	if ((!status || status == 2) && L->broken)
		status = LIVE_REBUILD;
	if (status && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return status;
}

int live_quiet_due(const struct live *L)
{
	double now = now_s();
	for (int k = 0; k < L->n; k++) {
		const struct larm *R = &L->arm[k];
		if (!R->quieted && R->dev_since > 0 && dev_quiet(L, R, now))
			return 1;
	}
	return 0;
}

int live_holds(const struct live *L)
{
	for (int k = 0; k < L->n; k++)
		if (L->arm[k].arm.emitted_cmds > 0 || L->arm[k].objs_out > 0)
			return 1;
	return 0;
}

const char *live_why(const struct live *L)
{
	return L->broken;
}

void live_stats(const struct live *L, uint64_t *cmds, uint64_t *objs, uint64_t *held, double t[3])
{
	t[0] = L->t_read;
	t[1] = L->t_interim;
	t[2] = L->t_sums;
	*cmds = L->ncmds;
	*objs = *held = 0;
	for (int k = 0; k < L->n; k++) {
		*objs += L->arm[k].objs_out;
		*held += L->arm[k].arm.objs.n;
	}
}

int live_attach(struct live *L, sqlite3 *db)
{
	int rc = 0;
	for (int k = 0; k < L->n; k++) {
		dbw_detach(&L->arm[k].w);
		if (db && L->begun && dbw_attach(&L->arm[k].w, db) != SQLITE_OK)
			rc = 2;
	}
	return rc;
}

struct arm *live_take_arm(struct live *L)
{
	struct arm *a = L->done ? L->done : xcalloc((size_t)L->n, sizeof *a);
	a[0] = L->arm[0].arm;
	memset(&L->arm[0].arm, 0, sizeof L->arm[0].arm);
	L->done = NULL;
	return a;
}

void live_free(struct live *L)
{
	if (!L)
		return;
	for (int k = 0; k < L->n; k++) {
		struct larm *R = &L->arm[k];
		if (L->begun || k)
			larm_drop_writer(R);
		else
			stream_free(R->s);
		for (int r = 0; r < NROLES; r++) {
			vec_free(&R->t.role_lane[r]);
			lanes_free(&R->t.lanes[r]);
		}
		vec_free(&R->t.ms);
		lctr_free(&R->ctr);
		lmem_free(&R->mem);
		lsrv_free(&R->srv);
		for (int j = 0; j < 3; j++) {
			free(R->in[j].buf);
			jl_free(&R->in[j].r.j);
			free(R->in[j].r.sc.buf);
		}
		arm_free(&R->part);
		arm_free(&R->arm);
		lanes_free(&R->olanes);
		vec_free(&R->lane);
	}
	if (L->done) {
		struct ingest_args one = *L->a;
		ingest_free(&one, L->done);
	}
	free(L->arm);
	free(L);
}
