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
	uint8_t flow;       /* 1 = first cmd of object (flow continues), 2 = last (terminates) */
	uint32_t lane;
	uint32_t kv;        /* index into arm.kv when CF_KV */
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
	int64_t end;        /* ts (op end), raw ns */
	int64_t start;      /* ts_start or NO_TS */
	const char *op, *part, *key; /* arena; NULL if absent */
	struct jv bytes, slot_offset, error, instance, pid;
	uint32_t line;      /* line in the semantic file (stable order) */
	/* filled by the join */
	int32_t occurrence; /* index among the trace_id's records; -1 if it is the only one */
	int32_t first_cmd, last_cmd; /* cmd indices, -1 none */
	uint32_t n_cmds;
	int64_t b, e;       /* slice begin/end (rebased) */
	int is_span;        /* span on objects.NNN; else an instant on capture info */
	uint32_t lane;
};

struct serving {
	int64_t start, end; /* raw ns; after the join: slice begin/end (rebased) */
	uint32_t lane;
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
	struct vec cmds, cmps, objs, serving, kv; /* struct cmd / cmp / obj / serving / cmd_kv */
	struct vec names;   /* const char* interned op names */
	struct vec threads; /* struct thread_name: each (pid, tid, comm) seen on nvme_cmd lines */
	struct u64map thread_ix; /* pid << 32 | tid -> index of its latest entry */
	struct arena strs;
	struct vec parts;   /* struct arena: strings of merged parallel parts */
	/* kvio_meta header (first one seen; sem first) */
	int has_meta;
	struct jv meta_schema, meta_hostname, meta_device_path, meta_io_engine, meta_block_align,
		meta_header_bytes, meta_mdts;
	uint64_t anchors, cq_overflow, cmp_unpaired, dup_trace_id, clock_anomalies;
	int has_drops;
	uint64_t drops;
	/* join results */
	int64_t base_ns;    /* subtracted from every ts (0 with --no-rebase) */
	int64_t min_ts;     /* earliest timestamp of any kind */
	int64_t lba_bytes;
	int nlanes_obj, nlanes_srv, nlanes_role[NROLES];
	uint64_t header_cmds, tagged_bytes, untagged_bytes;
	struct vec warnings; /* const char* */
};

struct ingest_opts {
	int64_t lba_bytes;       /* --lba-bytes (default 4096) */
	int64_t nominal_dur_ns;  /* --nominal-dur-ns (default 8000) */
	const char *device;      /* --device (default "ng") */
	int no_rebase;
	int progress;            /* stderr is a terminal */
};

/* load.c: read the arm's files. Returns 0, or 2 when a file cannot be read (message printed). */
int arm_load(struct arm *a, const char *sem, const char *ebpf, const char *serving,
	     const struct ingest_opts *o);
/* join.c: pair, segment, classify, rebase, lay out lanes. */
void arm_join(struct arm *a, const struct ingest_opts *o);
void arm_free(struct arm *a);
uint16_t arm_intern(struct arm *a, const char *s, size_t n);
void arm_warn(struct arm *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Greedy interval colouring (first free lane, strictly ended before begin).
 * b/e: begin/end per item in the order to colour; lane_out gets each lane.
 * Returns the number of lanes. */
int assign_lanes(size_t n, const int64_t *b, const int64_t *e, uint32_t *lane_out);

#endif
