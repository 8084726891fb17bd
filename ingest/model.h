/* model.h — one arm of a capture, as read from its JSONL files and joined.
 *
 * Data structures first: a command is 56 bytes, a completion 16; strings that
 * repeat (op names, comm) are interned; semantic records are few and keep
 * their JSON values. Times are CLOCK_MONOTONIC ns (semantic float seconds are
 * converted exactly as the reference does: (int64)(seconds * 1e9)). */
#ifndef KVIO_MODEL_H
#define KVIO_MODEL_H
#include "../lib/util.h"
#include "../lib/u64map.h"
#include "../lib/window.h"
#include "../lib/strpool.h"
#include <stdint.h>

#define NO_TS INT64_MIN

/* A JSON value of a semantic field whose type the producer chooses. */
enum jv_type { JV_NONE = 0, JV_NULL, JV_BOOL, JV_INT, JV_UINT, JV_REAL, JV_STR };
struct jv {
	uint8_t t;
	union {
		int64_t i;
		uint64_t u;
		double d;
		const char *s; /* arena */
	};
};

enum role { ROLE_WRITES, ROLE_READS, ROLE_OTHER, ROLE_UNTAGGED, NROLES };
extern const char *const role_name[NROLES];

/* Per-command header/payload classification of store objects. */
enum cmd_kind { CK_NONE = 0, CK_HEADER, CK_PAYLOAD };

#define CF_SLBA 1  /* slba present (absent in KV mode) */
#define CF_REAL 2  /* paired with a completion: dur is real */
#define CF_KV 4    /* has key_hex/key_len/value_len (kv index) */

struct cmd {
	int64_t ts;         /* submit, raw ns */
	uint64_t user_data;
	uint64_t slba;
	int64_t dur;        /* after join: real or nominal, >= 1 */
	uint32_t data_len;
	uint32_t trace_id;  /* user_data >> 32 */
	int32_t obj;        /* index into arm.objs after segmentation, -1 none */
	uint16_t name;      /* interned op_name */
	uint8_t role;       /* enum role */
	uint8_t flags;      /* CF_* */
	uint8_t kind;       /* enum cmd_kind */
	uint32_t kv;        /* index into arm.kv when CF_KV (of the parsed block) */
};

struct cmd_kv {
	const char *key_hex;
	int64_t key_len, value_len;
	uint8_t has_key_len, has_value_len;
};

struct cmp {
	int64_t ts;
	uint64_t user_data;
};

/* One semantic record (an occurrence of a trace_id). */
struct obj {
	uint64_t trace_id;
	uint64_t cookie_tid; /* the record's own trace_id (--join-by-offset replaces trace_id) */
	int64_t end;        /* ts (op end), raw ns */
	int64_t start;      /* ts_start or NO_TS */
	const char *op, *part, *key; /* arena; NULL if absent */
	const char *key_hex;          /* arena; NULL if absent (the object's NVMe KV key, --join-by-key) */
	struct jv bytes, slot_offset, error, instance, pid;
	uint32_t line;      /* line in the semantic file (stable order) */
	/* filled by the join */
	int32_t occurrence; /* index among the trace_id's records; -1 if it is the only one */
	uint32_t n_occ;     /* how many records its trace_id has */
	uint32_t rank;      /* its trace_id's first-appearance rank (occurrence grouping order) */
	uint8_t is_store;   /* op == "store" (header/payload roles, the LBA sampling) */
	uint32_t n_cmds;
	uint64_t first_seq, last_seq; /* its first/last command in time order (stream sequence) */
	int64_t first_ts, last_ts;    /* their submit times, raw ns */
	int64_t first_id, last_id;    /* their slice ids, once written */
	uint8_t lba_match;  /* bit k: a command's slba * lba candidate k == slot_offset (store objects) */
	int64_t b, e;       /* slice begin/end (rebased) */
	int is_span;        /* span on objects.NNN; else an instant on capture info */
	uint8_t tid_kept;   /* its trace_id passes --trace-id (it counts in objects in flight) */
	uint8_t kept;       /* ... and its span passes --time-range: written */
	uint32_t lane;
};

struct serving {
	int64_t start, end; /* raw ns; after the join: slice begin/end (rebased) */
	uint32_t lane;
	uint8_t kept;       /* inside --time-range: written */
	struct jv op, name, tokens, request_id;
};

/* A submitting thread as the tracer saw it. */
struct thread_name {
	uint32_t pid, tid;
	const char *comm;  /* unescaped (arena) */
	const char *raw;   /* as written in the line, to skip unescaping it again */
	uint32_t rawlen;
};

/* Per-file ingest counters. */
struct file_stats {
	const char *path;   /* "-" when absent */
	uint64_t lines, blank, malformed, truncated_tail, other, records;
};

struct arm {
	const char *label;
	struct file_stats sem_f, ebpf_f, serving_f;
	/* cmds/cmps/kv hold one parsed block of the device file at a time (see stream.c) */
	struct vec cmds, cmps, objs, serving, kv; /* struct cmd / cmp / obj / serving / cmd_kv */
	/* objects that left objs' front (--follow: written, spilled, livemem.c):
	 * object i (absolute: in file order; obj.rank, cmd.obj, first_obj) is
	 * objs[i - objs_base]; 0 but while following */
	size_t objs_base;
	size_t serving_base; /* the same of the serving records (written under a follow: livesrv.c) */
	uint64_t n_cmd_lines, n_cmp_lines; /* nvme_cmd / nvme_cmp records of the whole file */
	/* a parsed block's records (uint32_t: i < cmds.n a command, else the
	 * completion i - cmds.n) in (ts, command first, file order), the order
	 * the stream's reorder pool takes them in; empty: not sorted (load.c) */
	struct vec order;
	struct vec names;   /* const char* interned op names */
	uint16_t last_name; /* the name arm_intern found last */
	/* name_cls[id] for the first 256 names: 0 not known yet, else 1 + the
	 * role a tagged command of that name has (cmd_role, by join) */
	unsigned char name_cls[256];
	struct vec threads; /* struct thread_name: each (pid, tid, comm) seen on nvme_cmd lines */
	struct u64map thread_ix; /* pid << 32 | tid -> index of its latest entry */
	struct arena strs;
	/* kvio_meta header (first one seen; sem first) */
	int has_meta;
	struct jv meta_schema, meta_hostname, meta_device_path, meta_io_engine, meta_block_align,
		meta_header_bytes, meta_mdts;
	uint64_t anchors, cq_overflow, cmp_unpaired, dup_trace_id, clock_anomalies;
	uint64_t cmd_no_cmp; /* commands written without their completion (the nominal duration) */
	int has_drops;
	uint64_t drops;
	/* join results */
	int64_t base_ns;    /* subtracted from every ts (0 with --no-rebase) */
	int64_t min_ts;     /* earliest timestamp of any kind */
	int64_t lba_bytes;
	int nlanes_obj, nlanes_srv;
	int base_set;            /* base_ns fixed (at the first written command) */
	uint64_t late_lines;     /* device records older than the stream's reorder window */
	int swapped;             /* --sem and --ebpf look swapped: nothing usable in either (an error) */
	uint64_t cmp_after_horizon; /* completions whose command was given up (stream.c) */
	struct u64map first_obj; /* trace_id -> index of its first occurrence in objs */
	uint64_t header_cmds, tagged_bytes, untagged_bytes;
	/* --join-by-key: the semantic keys (lower-case hex) and each one's synthetic trace_id */
	struct strpool keys;
	struct vec key_tid;      /* uint32_t by strpool id */
	uint64_t key_cmds, key_matched; /* commands with a key_hex; of those, claimed by a record */
	/* --join-by-offset: the classes of the commands, and the parity with their cookies */
	struct offset_index *offx;
	uint64_t off_unique, off_cross, off_gap, off_unmatched, off_cookie, off_agree, off_total;
	/* what the window (--time-range / --trace-id) let through */
	uint64_t emitted_cmds, emitted_spans, emitted_instants, emitted_serving;
	struct vec warnings; /* const char* */
	/* the device file's reader, started before the semantic file is read
	 * (arm_device_start; arm_read_device takes it over); dev_failed: its open
	 * failed (said): arm_read_device returns 2 without trying again */
	struct devread *dev;
	int dev_failed;
};

/* How device commands find their object (--join-by-key, --join-by-offset). */
enum join_kind { JOIN_COOKIE = 0, JOIN_KEY, JOIN_OFFSET };
extern const char *const join_name[3]; /* "user_data", "key", "offset" */

struct ingest_opts {
	int64_t lba_bytes;       /* --lba-bytes (default 4096) */
	int64_t nominal_dur_ns;  /* --nominal-dur-ns (default 8000) */
	int64_t pair_horizon;    /* --pair-horizon: records (default 500000), see stream.c */
	const char *device;      /* --device (default "ng") */
	int no_rebase;
	int progress;            /* stderr is a terminal */
	struct kvio_window win;  /* --time-range / --trace-id: what is written (lib/window.h) */
	int no_slba_counter;     /* --no-slba-counter: no "writes slba"/"reads slba" tracks */
	int join;                /* enum join_kind */
	int64_t follow_commit;   /* --follow: this commit's number (from 1); 0 in a one-shot ingest */
	int follow_final;        /* --follow: the commit at the stop (the files read whole) */
};

/* load.c: read the arm's semantic and serving files (the device file is
 * streamed by stream.c). Returns 0, or 2 when a file cannot be read (message printed). */
int arm_load(struct arm *a, const char *sem, const char *serving, const struct ingest_opts *o);
/* load.c: parse the device file in blocks on worker threads; consume() gets
 * each block (a part arm: cmds, cmps, kv, names, threads, counters, meta) in
 * file order, on the calling thread, and owns it. Returns 0 or 2. */
int arm_read_device(struct arm *a, const char *path, const struct ingest_opts *o,
		    void (*consume)(void *ctx, struct arm *part), void *ctx);
/* load.c: open the device file and start its parse threads now, so that
 * they parse its first blocks while the semantic file is read (a regular
 * file, not under --join-by-offset: their records then depend on nothing in
 * the arm); arm_read_device then takes them over. arm_device_stop stops a
 * reader never taken over. */
void arm_device_start(struct arm *a, const char *path, const struct ingest_opts *o);
void arm_device_stop(struct arm *a);
/* load.c: CPU seconds of the device parse threads that have ended, and the
 * seconds the stream waited for their blocks (KVIO_TIMING). */
double arm_parse_cpu(int *nthreads, double *waited);
/* load.c: take a block's names, threads, counters and meta into the arm;
 * remap[] gets the arm's name id of each of the part's names. */
void arm_absorb(struct arm *a, struct arm *part, uint16_t *remap);
/* join.c: before the device stream: occurrences of the semantic records,
 * earliest semantic/serving time. */
void arm_prepare(struct arm *a);
/* join.c: --join-by-key, before arm_prepare: each semantic record's trace_id
 * becomes a dense id per distinct key (key_hex, else the hex of key's bytes),
 * in file order. */
void arm_key_join(struct arm *a);
/* join.c: the synthetic trace_id of a command's key_hex (any case), 0 when no
 * record claims it. */
uint32_t arm_key_id(const struct arm *a, const char *key_hex);
/* offset.c: --join-by-offset, before arm_prepare: every record takes the
 * synthetic trace_id (its file position + 1; its own is kept as cookie_tid)
 * and the slot index is built. */
void arm_offset_prepare(struct arm *a);
/* offset.c: attribute command c (`dir` 1 write, 2 read, 0 other; nlb and
 * bytes: the line's, 0 when absent) to an object by byte range and time
 * window: sets c->trace_id (0 when not unique) and counts its class and
 * parity in k's off_* counters. x is only read: any thread, any order; m is
 * the calling thread's memo of its last slot and interval (zeroed at first),
 * a shortcut that does not change the answer. */
struct off_memo {
	size_t slot, iv; /* 1 + the index of the last slot and of its interval; 0 none */
};
void arm_offset_attribute(const struct offset_index *x, struct off_memo *m, struct arm *k, struct cmd *c, int dir,
			  uint32_t nlb, uint32_t bytes, int64_t lba_flag);
void arm_offset_free(struct arm *a);
/* join.c, --follow (live.c): the records objs[from..) read since the last
 * commit, prepared as arm_prepare prepares them (kept in file order, which
 * is a one-shot's order while every trace_id has one record); *sem_min and
 * *sem_end take their earliest time and latest op end. 1 at a second record
 * of a trace_id (the follow then rebuilds), else 0. */
int arm_follow_add(struct arm *a, size_t from, int64_t *sem_min, int64_t *sem_end);
/* join.c, --follow at the stop: the warnings arm_prepare says. */
void arm_follow_done(struct arm *a);
/* join.c: an object's span (b, e, is_span) rebased by base; 1 when its op end
 * was moved to its last command (a clock anomaly). */
int obj_span(struct obj *ob, int64_t base);
/* join.c: after it: object spans and lanes, serving lanes, warnings. */
void arm_finish(struct arm *a, const struct ingest_opts *o);
/* join.c, an interim --follow commit (on a copy of the arm): arm_finish but
 * the objects (their spans and lanes are the follow's; n_store_spans of them
 * are store spans, clock_anomalies and nlanes_obj set by the caller). */
void arm_finish_interim(struct arm *a, const struct ingest_opts *o, size_t n_store_spans);
void arm_free(struct arm *a);
/* The semantic records read (those that left objs under a follow too). */
static inline size_t arm_nobjs(const struct arm *a)
{
	return a->objs_base + a->objs.n;
}
static inline size_t arm_nserving(const struct arm *a)
{
	return a->serving_base + a->serving.n;
}
/* Object i (absolute, >= objs_base). */
static inline struct obj *arm_obj(const struct arm *a, size_t i)
{
	return (struct obj *)a->objs.v + (i - a->objs_base);
}
uint16_t arm_intern(struct arm *a, const char *s, size_t n);
/* A JSON value as an integer (1), else dflt (0). */
int jv_int(const struct jv *v, int64_t dflt, int64_t *out);
void arm_warn(struct arm *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Greedy interval colouring, one interval at a time in (begin, end) order:
 * the first lane whose last end is strictly before begin, else a new lane. */
struct lanes {
	int64_t *mn;   /* segment tree of each lane's last end */
	size_t cap, n; /* leaves, lanes in use */
};
uint32_t lanes_add(struct lanes *l, int64_t begin, int64_t end);
void lanes_free(struct lanes *l);
/* The same over n items given in any order (sorted by (b, e, index) here).
 * Returns the number of lanes. */
int assign_lanes(size_t n, const int64_t *b, const int64_t *e, uint32_t *lane_out);

#endif
