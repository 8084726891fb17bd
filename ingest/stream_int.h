/* stream_int.h — the streaming join's state (stream.c), shared with its
 * --follow half (streamlive.c: what a commit says the stream holds, and what
 * the stop checks against a one-shot ingest). Nothing else includes it. */
#ifndef KVIO_STREAM_INT_H
#define KVIO_STREAM_INT_H
#include "write.h"
#include "../lib/u64map.h"

#define SEQ_MASK 0x7fffffffu /* user_data map values: 31 bits of the sequence */
#define NONE UINT64_MAX
#define GONE_MAX (1u << 18) /* user_data values remembered after their command was given up */

/* A record waiting in the reorder pool. */
struct pev {
	struct cmd c;              /* a completion uses ts and user_data */
	const struct cmd_kv *kv;   /* KV fields (in its block), NULL if none */
	uint32_t block;
	uint8_t is_cmp;
};

/* A processed command waiting to be written. */
struct rent {
	struct cmd c;
	const struct cmd_kv *kv;
	int64_t next_ts;   /* submit time of the next command of its role; INT64_MAX unknown */
	uint64_t proc;     /* records processed before it */
	uint64_t ud_prev;  /* the unpaired command below it on its user_data's stack; NONE */
	uint32_t block;
	uint8_t paired;
};

/* A parsed block: alive while any of its commands is unwritten (KV strings). */
struct blk {
	struct arena strs;
	struct vec kv;
	uint64_t live;
};

struct stream {
	struct arm *a;
	struct dbw *w;
	struct arm_out *t;
	const struct ingest_opts *o;
	/* reorder pool */
	struct pev *pool, *spare;
	size_t npool, cap_pool;
	int64_t wm;        /* records older than this are processed */
	size_t pool_max;   /* records the pool may hold before it is cut back (KVIO_POOL_MAX) */
	size_t sorted_upto; /* pool[0, sorted_upto): in (ts, command first, pool order) */
	int new_sorted;     /* and so are the records after it (the last block's, sorted by load.c) */
	int eof;
	/* processed, unwritten commands: ring[seq & rmask] for seq in [head, tail) */
	struct rent *ring;
	uint64_t rcap, head, tail, nproc;
	struct u64map ud;  /* user_data -> top of its unpaired stack (31-bit seq) */
	struct u64map gone; /* user_data -> commands given up before the end (bounded) */
	uint64_t last_role[NROLES];
	int64_t last_ts;   /* latest processed record time */
	uint64_t horizon;
	int64_t settle;    /* a nominal command is settled once wm >= ts + settle */
	/* occurrences: cur[f] indexes the trace_id whose first record is objs[f] (not under a follow) */
	uint32_t *cur;
	/* LBA size */
	int64_t cand[3];
	int ncand, lba_decided, score[3], sampled;
	size_t lba_cursor;
	/* blocks */
	struct vec blocks; /* struct blk */
	uint16_t *remap;
	size_t nremap;
	uint16_t wname, rname; /* arm name ids of "write" / "read"; UINT16_MAX none */
	/* scratch: group order, pool sort */
	struct gent *grp;
	size_t cap_grp;
	uint32_t *sidx, *stmp;
	uint64_t *skey;
	size_t cap_sort;
	/* --follow (live.c): the stream kept across commits while the semantic
	 * file still grows: a tagged command whose record has not come yet waits
	 * (OBJ_PENDING) at most --pair-horizon records, then is written without
	 * one (its trace_id kept in orphans, checked at the stop) */
	int follow;
	int64_t sem_end;     /* the latest op end of the semantic records read so far */
	int64_t dev_min, dev_min_at_base; /* the device's earliest time: so far, when the base was fixed */
	int base_by_cmd;     /* the base was fixed by a written command */
	int near_horizon;    /* a completion paired more than half the horizon after its command */
	struct u64map orphans;
	/* a quiet commit (stream_quiet: the device file has stopped growing, a
	 * hung run) writes every held command as the end of the file would: those
	 * without a completion with the nominal duration, kept in hung (at most
	 * HUNG_MAX) until their completion comes, still counted as waiting for it;
	 * a device record after such a write makes the stop rebuild */
	int flush;             /* stream_quiet is writing what it holds */
	int64_t wm_obj;        /* a quiet commit's: the objects that ended before it are decided (the
				  semantic side's latest op end past the device's), records stay in order past wm */
	size_t objs_written;   /* objs[0..n) are in the database (live.c says): a command for one is news */
	int64_t quiet_ts;      /* the latest record a quiet commit processed (INT64_MIN: none) */
	const char *flush_why; /* a record came that changes what a quiet commit wrote (the stop rebuilds) */
	struct vec hung;       /* struct hung, in the order written */
	struct u64map hungm;   /* user_data -> its latest live entry of hung */
	uint64_t hung_live, hung_lost; /* entries not completed; drawn past HUNG_MAX, not remembered */
	/* per role, the last command a quiet commit drew without its completion or
	 * a next command of its role (its nominal duration uncapped) */
	int64_t open_ts[NROLES], open_dur[NROLES];
	uint8_t open_set[NROLES];
};

/* A command a quiet commit wrote without its completion (streamlive.c counts them). */
struct hung {
	uint64_t user_data;
	int64_t ts;
	uint32_t trace_id;
	int32_t prev;  /* the entry of the same user_data drawn before it, live; -1: none */
	uint8_t dead;  /* its completion came */
};
#define HUNG_MAX (1u << 18)

#define OBJ_PENDING (-2) /* --follow: its trace_id's record may still come */
/* --follow: the LBA size is decided on this many store objects (a one-shot
 * ingest on 50: the stop checks that the 50 say the same) */
#define FOLLOW_LBA_SAMPLES 8

/* a - b, saturated (timestamps come from input files: any int64 is possible) */
static inline int64_t ts_diff(int64_t a, int64_t b)
{
	int64_t d;
	if (__builtin_sub_overflow(a, b, &d))
		return a > b ? INT64_MAX : INT64_MIN;
	return d;
}

static inline struct rent *R(struct stream *s, uint64_t seq)
{
	return &s->ring[seq & (s->rcap - 1)];
}

/* The sequence a user_data map value stands for, or NONE when written. */
static inline uint64_t ud_seq(const struct stream *s, uint32_t v)
{
	uint64_t d = (v - (uint32_t)s->head) & SEQ_MASK;
	return d < s->tail - s->head ? s->head + d : NONE;
}

/* The objects' watermark: objects that ended before it are decided (past the
 * records', wm, up to a quiet commit's latest op end). */
static inline int64_t obj_wm(const struct stream *s)
{
	return s->wm > s->wm_obj ? s->wm : s->wm_obj;
}

/* A record changes what a quiet commit wrote: the stop rebuilds, for the first
 * reason said. */
static inline void flush_news(struct stream *s, const char *why)
{
	if (!s->flush_why)
		s->flush_why = why;
}

static inline int live(const struct stream *s, uint64_t seq)
{
	return seq != NONE && seq >= s->head && seq < s->tail;
}

/* The LBA size the store objects' scores give (stream.c). */
int64_t lba_choose(struct arm *a, const struct ingest_opts *o, const int64_t *cand, int ncand, const int *score,
		   int sampled, int warn);

#endif
