/* write.h — write one arm into a kvio database (through dbw.c): its
 * processes and tracks first (write_arm_begin), the commands as the device
 * stream produces them (stream.c, lanes through write_lane_track), then
 * everything that needs the whole arm (write_arm_end). */
#ifndef KVIO_WRITE_H
#define KVIO_WRITE_H
#include "model.h"
#include "dbw.h"

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
/* The options that shaped the database (join, window, counters) as metadata rows. */
void write_options_meta(struct dbw *w, const struct ingest_opts *o);
void write_stats(struct dbw *w, const struct arm *a, const struct ingest_opts *o);

/* stream.c: read the device file and write its commands. Returns 0 or 2. */
int arm_stream(struct arm *a, struct dbw *w, struct arm_out *t, const char *path, const struct ingest_opts *o);

#endif
