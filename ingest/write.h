/* write.h — write one arm into a kvio database (through dbw.c): its
 * processes and tracks first (write_arm_begin), the commands as the device
 * stream produces them (stream.c, lanes through write_lane_track), then
 * everything that needs the whole arm (write_arm_end). */
#ifndef KVIO_WRITE_H
#define KVIO_WRITE_H
#include "model.h"
#include "dbw.h"
#include "../db/schema.h"

/* floor(x / d) for d > 0, negative x included (a time bucket's key). */
static inline int64_t floor_div(int64_t x, int64_t d)
{
	return x >= 0 ? x / d : -((-x + d - 1) / d);
}

/* Commands per time bucket (k = floor_div(ts, width)). */
struct bucket {
	int64_t k, n, bytes;
};

/* The arm's tracks and what the command stream leaves for the end. */
struct arm_out {
	int ai;
	int64_t lm_upid, nv_upid, lm_proc, nv_proc, meta_trk, obj_ctr, nv_root;
	int64_t ctr_cmds, ctr_mbs, ctr_wslba, ctr_rslba;
	int64_t role_grp[NROLES];     /* a role's group track (made with its first lane) */
	struct vec role_lane[NROLES]; /* int64_t track id per lane */
	struct lanes lanes[NROLES];   /* the lane colouring of each role */
	struct vec ms;                /* struct bucket: written commands per 1 ms, in runs */
};

void write_arm_begin(struct dbw *w, struct arm *a, int ai, const struct ingest_opts *o, struct arm_out *t);
/* The track of a role's lane (made on first use). */
int64_t write_lane_track(struct dbw *w, struct arm_out *t, int role, uint32_t lane);
void write_arm_end(struct dbw *w, struct arm *a, const struct ingest_opts *o, struct arm_out *t);

void write_threads(struct dbw *w, const struct arm *a);
/* Pieces of write_arm_end an interim --follow commit writes (live.c): an
 * object's slice and args (b, e set) with slice id `id`; the capture_info
 * instant; the serving spans (lanes set by arm_finish); the arm's Serving
 * process and its nlanes lane tracks (their ids in lanes[] unless NULL); one
 * serving span (start, end set) with slice id `id` on track. */
void write_object_slice(struct dbw *w, const struct obj *ob, int64_t track, int64_t id);
void write_capture_info(struct dbw *w, const struct arm *a, const struct ingest_opts *o, const struct arm_out *t);
void write_serving(struct dbw *w, const struct arm *a, const struct arm_out *t);
void write_serving_tracks(struct dbw *w, const char *label, int ai, int nlanes, int64_t *lanes);
void write_serving_span(struct dbw *w, int64_t id, const struct serving *sv, int64_t track);
/* The rate counters' buckets (cmds/ms: commands per 1 ms; MB/s: bytes per
 * 10 ms x 1e-4) and the IO-activity overview's (a slice per run of
 * consecutive 100 ms buckets with a command), and one such run's slice
 * [t0, t1) with its args (live.c's interim commits write them too). */
#define CTR_CMDS_MS 1
#define CTR_MBS_MS 10
_Static_assert(CTR_MBS_MS * 1000000LL <= KVIO_CTR_BUCKET_MAX_NS && CTR_CMDS_MS <= CTR_MBS_MS,
	       "db/values.c bounds a counter point by the widest bucket");
#define CTR_MBS_SCALE 1e-4
#define OVERVIEW_MS 100
void write_overview_run(struct dbw *w, int64_t t0, int64_t t1, int64_t n, int64_t bytes, int64_t track);
/* The objects-in-flight counter's steps: +1 at an object's begin, -1 at its
 * end; a point per step in (ts, d) order (i64pair_cmp: an end before a begin
 * at the same ts). live's interim commits write them too (livectr.c). */
struct i64pair {
	int64_t ts, d;
};
int i64pair_cmp(const void *x, const void *y);
/* The options that shaped the database (join, window, counters) as metadata rows. */
void write_options_meta(struct dbw *w, const struct ingest_opts *o);
void write_stats(struct dbw *w, const struct arm *a, const struct ingest_opts *o);

/* stream.c: read the device file and write its commands. Returns 0 or 2. */
int arm_stream(struct arm *a, struct dbw *w, struct arm_out *t, const char *path, const struct ingest_opts *o);
/* The stream itself, for a follow (live.c) that hands it the blocks one commit
 * at a time: open, blocks in file order, end (the file's end: every command
 * written), free. follow: the semantic file still grows (commands wait for
 * their records, the base and the LBA size for the semantic side). */
struct stream;
struct stream *stream_open(struct arm *a, struct dbw *w, struct arm_out *t, const struct ingest_opts *o, int follow);
void stream_block(struct stream *s, struct arm *part);
void stream_end(struct stream *s);
/* --follow, the device file quiet (a hung run): the records waiting in the
 * reorder pool processed and every held command written as if the file ended
 * there (a command without its completion with the nominal duration, a tagged
 * one whose record has not come without its object), so the interim database
 * is what a one-shot ingest of the files now gives; a record that comes later
 * and would change what was written makes the stop rebuild
 * (stream_follow_check). */
void stream_quiet(struct stream *s);
void stream_free(struct stream *s);
/* --follow: the latest op end of the semantic records read so far. */
void stream_sem_seen(struct stream *s, int64_t end);
/* --follow: every command stamped before this (raw ns) is written. */
int64_t stream_done_ts(const struct stream *s);
/* --follow: the objects that ended before this (raw ns) are decided (past a
 * quiet commit's latest op end when nothing is held). */
int64_t stream_obj_done_ts(const struct stream *s);
/* --follow: objs[0..n) are in the database (a command for one comes too late). */
void stream_objects_written(struct stream *s, size_t n);
/* --follow: the first object (absolute index) the stream may still touch:
 * a held command's, the LBA size's next sample while undecided; SIZE_MAX
 * none (the objects before it may leave memory: livemem.c). */
size_t stream_obj_floor(const struct stream *s);
/* --follow: what the stream holds at a commit, not written yet (live.c
 * writes it as the follow_* kvio_stats rows of an interim commit). */
struct stream_wait {
	uint64_t cmds;       /* commands read and joined, not written yet */
	uint64_t unpaired;   /* of those, and of the commands a quiet commit wrote (stream_quiet), without their completion so far */
	uint64_t written;    /* of the unpaired, those a quiet commit wrote (with the nominal duration) */
	uint64_t objects;    /* the trace_ids (!= 0) of those */
	uint64_t pool;       /* records read, waiting in the reorder pool */
	int64_t age_ns;      /* the latest record read - the oldest unpaired's submit; -1: none */
	uint32_t oldest_tid; /* the oldest unpaired's trace_id (0: untagged) */
};
void stream_waiting(const struct stream *s, struct stream_wait *w);
/* --follow, at the stop (the objects in a one-shot's order, sem_min the
 * earliest semantic/serving time): NULL when what was written is what a
 * one-shot ingest writes, else why not (the follow then rebuilds). The LBA
 * size's warnings are said here. */
const char *stream_follow_check(struct stream *s, int64_t sem_min);

#endif
