/* live.h — kvio-ingest --follow's incremental commits (live.c), for follow.c. */
#ifndef KVIO_LIVE_H
#define KVIO_LIVE_H
#include "ingest.h"
#include <sqlite3.h>
#include <stdio.h>

#define LIVE_REBUILD 3 /* live_commit: what was written is not what a one-shot writes: rebuild (rolled back) */

struct live;
/* Why a's ingest cannot be followed incrementally (each commit then rebuilds),
 * or NULL: it can (up to 8 arms, each with a device file, the user_data join,
 * no window; KVIO_FOLLOW_REBUILD=1 says no: to measure, to compare). */
const char *live_unwanted(const struct ingest_args *a);
struct live *live_new(struct ingest_args *a);
/* One commit into db (the first: a database made by db_create, in WAL mode):
 * fd[i][k] reads arm i's sem, ebpf, serving file (-1 none), limit[i][k] the
 * bytes it holds in complete lines (final: at the stop, its end; the arms
 * after the first are then read again as a one-shot reads them: their
 * input_limit set). 0, 2 after a message, or LIVE_REBUILD (nothing of this
 * commit written; live_why says why; every later commit says LIVE_REBUILD too). */
int live_commit(struct live *L, sqlite3 *db, const int (*fd)[3], const long long (*limit)[3], int final);
/* Whether an arm's device file has been quiet for KVIO_FOLLOW_QUIET_MS
 * (default 2000) without the commit that then reads its last block and its
 * reorder pool (a commit is due though no bytes came). */
int live_quiet_due(const struct live *L);
/* Whether what is written holds a command or an object. */
int live_holds(const struct live *L);
const char *live_why(const struct live *L);
/* The last commit's commands written (the stop's: the later arms' too), the
 * objects written so far (every arm's) and those held in memory, and its
 * seconds: reading (the stream's writes in), the interim rows, the sums and COMMIT (KVIO_TIMING). */
void live_stats(const struct live *L, uint64_t *cmds, uint64_t *objs, uint64_t *held, double t[3]);
/* The writer moved to another connection of the same database (0 or 2). */
int live_attach(struct live *L, sqlite3 *db);
/* After the final commit: the arms (for ingest_summary; ingest_free frees them). */
struct arm *live_take_arm(struct live *L);
void live_free(struct live *L);

/* livectr.c: an arm's interim rate counters and overview, appended commit
 * by commit (what write_arm_end derives at the stop from arm_out.ms). */
struct dbw;
struct arm_out;
struct lrate {               /* one rate counter */
	struct vec pend;     /* struct bucket: not final yet, by key */
	int64_t last;        /* the last bucket written (open) */
	int open, zeroed;    /* a bucket written; its run's 0 written */
};
struct lrun {                /* the overview's run of 100 ms buckets being gathered */
	int64_t k0, k1, n, bytes;
	int open;
};
struct lobj {                /* the objects-in-flight counter's steps (struct i64pair) */
	struct vec ev;       /* taken, not written for good: at or after hz */
	int64_t cur;         /* the count after the points written for good */
	int64_t hz;          /* the settled horizon: newest end - 2 x longest span (never back) */
	int64_t last;        /* the last point written for good (its ts; settled: one is) */
	int64_t max_end, max_len;
	size_t taken;        /* the arm's objects whose steps are in */
	int settled;
};
struct lctr {
	struct lobj obj;
	size_t ms_out;       /* arm_out.ms entries taken (the last one: took_n, took_bytes of it) */
	int64_t took_n, took_bytes;
	struct lrate rate[2]; /* cmds/ms, MB/s */
	struct vec ov;       /* the overview's buckets not final yet */
	struct lrun run;
};
/* The points and slices of the buckets final at done (rebased ns: every
 * command before it written): counter ids from *ctr_id, ended runs' slice
 * ids from *slice_id, the growing run's from *info_id (each advanced). */
void lctr_commit(struct lctr *c, struct dbw *w, const struct arm_out *t, int64_t done, int64_t *ctr_id,
		 int64_t *slice_id, int64_t *info_id);
/* The objects-in-flight counter once a's objects [0..n) are written (while
 * following, an object comes at its end, so a past moment's count can still
 * grow): the points before the settled horizon appended once (ids from
 * *ctr_id), the rest (ids from *tail_id) the commit's own. An object that
 * began at or before a point written for good makes the counter written
 * again from its first point (its rows deleted; the spans read back from the
 * slices with ids in [span[0], span[1]) on tracks (span[2], span[3]]: the
 * arm's interim lanes): 1, the counter table's sums to be read whole. */
struct arm;
int lctr_objects(struct lctr *c, struct dbw *w, int64_t track, const struct arm *a, size_t n, const int64_t span[4],
		 int64_t *ctr_id, int64_t *tail_id);
void lctr_free(struct lctr *c);

/* livemem.c: what a follow holds leaves memory once written (bounded memory). */
struct lspill {              /* an unlinked file beside the database */
	FILE *f;
	uint64_t n;          /* records in it */
};
/* The strings of each read of a file, an arena per read: freed once all of
 * that read's records have left memory. */
struct lgens {
	struct vec v;        /* struct lgen */
	struct arena held;   /* the arm's arena while a read's strings go to their own */
};
/* Around a read: its strings to an arena of their own (*strs: the arm's);
 * end: the records read so far (absolute); then those before upto have left. */
void lgens_begin(struct lgens *g, struct arena *strs);
void lgens_end(struct lgens *g, struct arena *strs, size_t end);
void lgens_release(struct lgens *g, size_t upto);
void lgens_adopt(struct lgens *g, struct arena *to); /* every read's arena the arm's again */
void lgens_free(struct lgens *g);
struct lmem {
	struct lspill obj, ms; /* objects (struct obj and their strings), arm_out.ms buckets */
	struct lgens gens;   /* the semantic file's reads */
	int has_meta;        /* the arm had its kvio_meta header before the read */
	int spill;           /* keep what leaves (the first arm: the stop reads it back), else drop it */
	int failed;          /* a spill file could not be written or read (said) */
	int64_t keep_ns;     /* objects stay this long after their op end (KVIO_FOLLOW_KEEP_MS) */
	const char *dir;     /* the spill files' directory */
};
void lmem_init(struct lmem *m, const char *out, int spill);
/* Around a read of the semantic file: its records' strings in an arena of
 * their own (freed once they have all left), its objects up to objs_end. */
void lmem_sem_begin(struct lmem *m, struct arm *a);
void lmem_sem_end(struct lmem *m, struct arm *a);
/* After an interim commit wrote a's objects before `written` (absolute) and
 * the counters took t->ms[0..*ms_out): the objects before floor (the
 * stream's, stream_obj_floor) whose op end and last command are more than
 * keep_ns before done (raw ns) leave, so do the buckets taken (*ms_out then
 * 0). 0, or 2 when a spill file failed (said). */
struct arm_out;
int lmem_compact(struct lmem *m, struct arm *a, size_t written, size_t floor, int64_t done, struct arm_out *t,
		 size_t *ms_out);
/* Before the stop's reads: what left comes back (objs_base 0, the join's
 * map whole again). 0, 1 when a trace_id has two records (the map found
 * it), 2 when a spill file failed (said). */
int lmem_restore(struct lmem *m, struct arm *a, struct arm_out *t, size_t *ms_out);
void lmem_free(struct lmem *m);

/* livesrv.c: the serving spans while following, appended once each. */
struct lsrv {
	struct vec lane;     /* uint32_t: this commit's new spans' interim lanes */
	struct lanes lanes;  /* the interim lanes */
	int64_t base;        /* the Serving process's track (-1: none yet), its lanes after it */
	size_t nl;           /* lanes written at base */
	struct lgens gens;   /* the serving file's reads */
};
void lsrv_init(struct lsrv *v);
/* Pass 1: the lanes of a's serving spans not written yet (once its base is set). */
void lsrv_ready(struct lsrv *v, const struct arm *a);
/* Pass 2 (v->base set by the caller: room for 1 + v->lanes.n tracks): the
 * Serving process (upid *upid) and its tracks, the new spans (slice ids from
 * *id), which then leave memory with their reads' strings. */
void lsrv_write(struct lsrv *v, struct dbw *w, struct arm *a, int ai, int64_t *id, int64_t *upid);
/* At the stop: every serving span back, the serving file's first pos bytes
 * read again (fd). 0, or 2 when they are not the records read (said). */
int lsrv_restore(struct lsrv *v, struct arm *a, int fd, long long pos, const struct ingest_opts *o, const char *path);
void lsrv_free(struct lsrv *v);

#endif
