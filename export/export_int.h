/* export_int.h — what the files of the .pftrace export share: the packet
 * writer's state (pfwrite.c), what a --time-range/--trace-id window keeps and
 * the flows (window.c), and the small field encoders of the hot path (inline:
 * every command packet uses them). export.h is the folder's public face. */
#ifndef KVIO_EXPORT_INT_H
#define KVIO_EXPORT_INT_H
#include "export.h"
#include "kvio.pb-c.h"
#include "../db/chunk.h"
#include "../db/dir.h"
#include "../lib/progress.h"
#include "../lib/strpool.h"
#include "../lib/util.h"
#include "../lib/window.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

struct outfile;

#define SEQ_ID 1
#define MAXFLOWS 8 /* flows through one slice: an object's to its commands, its findings' */
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2

/* ---- output: plain or gzip, with a write buffer ----------------------------
 * Bytes go to an outfile (lib/outfile.h), gzipped here with deflate when the
 * output's name ends in .gz. A failed write is sticky in the outfile: the
 * buffer is emptied all the same (so a reserve never runs past its end),
 * nothing more is written, and the export loops stop at the next row. */
struct out {
	struct outfile *f;
	int gz;
	z_stream z;
	unsigned char *buf, *zbuf;
	size_t n, cap;
	uint64_t bytes;
	int mem; /* a buffer in memory that grows, never flushed (slices written ahead) */
};

#define ZBUF_BYTES (256u << 10)

/* ---- one event packet under construction ------------------------------------- */
#define MAXANN 32

struct ev {
	Kvio__Pf__TracePacket p;
	Kvio__Pf__TrackEvent te;
	Kvio__Pf__InternedData idata;
	Kvio__Pf__DebugAnnotation ann[MAXANN];
	Kvio__Pf__DebugAnnotation *annp[MAXANN];
	Kvio__Pf__EventName en;
	Kvio__Pf__EventName *enp[1];
	Kvio__Pf__DebugAnnotationName dn[MAXANN];
	Kvio__Pf__DebugAnnotationName *dnp[MAXANN];
	Kvio__Pf__InternedString is[MAXANN];
	Kvio__Pf__InternedString *isp[MAXANN];
	uint64_t flows[MAXFLOWS], tflows[MAXFLOWS];
};

struct exporter {
	struct out o;
	struct strpool names, ann_names, str_values;
	struct ev e;
	uint64_t packets;
	uint64_t kept; /* command and object slices written */
	uint64_t slices; /* slices written, commands included, capture_info not */
	uint64_t findings; /* finding slices written */
	const struct kvio_window *win; /* --time-range / --trace-id; NULL: everything */
	const struct kept *keep;       /* what win keeps (NULL without one) */
	struct dbdir dir;              /* the chunks and what they index, checked (db/dir.h) */
	uint8_t *checked;              /* the process's memo of the chunks checked (db/memo.h), or NULL */
	void *buf;                     /* one chunk's bytes (sqlite3_malloc'd) */
	size_t bufcap;
	struct progress prog;          /* on a terminal: the command chunks written of the export's */
	/* a slice written ahead encoded again (slices.c): the strings its first
	 * encoding interned fresh, from these ids on in each pool (names,
	 * ann_names, str_values), are fresh again, in the same order */
	int replay;
	uint32_t replay_next[3];
};

/* What a window keeps, found once before anything is written (a flow is
 * written when both its ends are): the generic slices' ids, ascending, and the
 * commands, chunk by chunk in id order, as a bit per command. */
struct kept_chunk {
	int64_t first;  /* its first command's id */
	size_t k;       /* its index in the directory */
	uint32_t n, nkept;
	uint64_t *bits; /* NULL: every command of the chunk (an inside chunk, not read) */
};

struct kept {
	struct vec slices; /* int64_t */
	struct vec chunks; /* struct kept_chunk */
};

/* ---- flows: slice id -> its flow ids (in, out) ------------------------------- */
struct flowref {
	int64_t slice;
	uint64_t fid;
	int out; /* 1: the slice is the flow's source */
};

struct flows {
	struct flowref *r;
	size_t n;
};


/* ---- the hot path: packets encoded directly -------------------------------
 * Commands are the volume; their packets (and every END and counter packet)
 * are encoded here without building protobuf-c messages. The field numbers are
 * read from the protoc-c descriptors of lib/kvio.proto, which stays the one
 * place they are written down; the tests decode every file with protoc against
 * that .proto, and import it back. */
struct fieldnums {
	unsigned pk_ts, pk_seq, pk_te, pk_flags;
	unsigned te_ann, te_type, te_name_iid, te_track, te_counter, te_dcounter, te_flow, te_tflow;
	unsigned te_xvals, te_xuuids;
	unsigned an_name_iid, an_bool, an_uint, an_int, an_str_iid, an_str;
};
extern struct fieldnums F; /* filled by fieldnums_init (pfwrite.c) */

static inline unsigned char *pv(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline unsigned char *ptag(unsigned char *p, unsigned field, unsigned wire)
{
	return pv(p, (uint64_t)field << 3 | wire);
}

static inline unsigned char *pfv(unsigned char *p, unsigned field, uint64_t v)
{
	return pv(ptag(p, field, 0), v);
}

static inline unsigned char *pf64(unsigned char *p, unsigned field, uint64_t v)
{
	p = ptag(p, field, 1);
	for (int i = 0; i < 8; i++)
		*p++ = (unsigned char)(v >> (8 * i));
	return p;
}

/* A debug annotation (name iid, then one varint value field) as a TrackEvent field. */
static inline unsigned char *pann(unsigned char *p, uint64_t name_iid, unsigned value_field, uint64_t v)
{
	unsigned char b[24], *q = pfv(pfv(b, F.an_name_iid, name_iid), value_field, v);
	p = pv(ptag(p, F.te_ann, 2), (uint64_t)(q - b));
	memcpy(p, b, (size_t)(q - b));
	return p + (q - b);
}


/* pfwrite.c */
void out_flush(struct out *o, int finish);
int out_failed(const struct out *o);
void out_packet(struct out *o, const Kvio__Pf__TracePacket *p);
void out_bytes(struct out *o, const unsigned char *b, size_t n);
void ev_reset(struct exporter *x, int type, int64_t ts, uint64_t track);
void ev_name(struct exporter *x, const char *name);
void ann_uint(struct exporter *x, const char *key, uint64_t v);
void ann_int(struct exporter *x, const char *key, int64_t v);
void ann_bool(struct exporter *x, const char *key, int v);
void ann_double(struct exporter *x, const char *key, double v);
void ann_str(struct exporter *x, const char *key, const char *v, int interned);
void ev_emit(struct exporter *x);
void fieldnums_init(void);
void fast_packet(struct exporter *x, uint32_t seq, int64_t ts, unsigned flags, const unsigned char *te, size_t tn);
void emit_end(struct exporter *x, uint32_t seq, int64_t ts, uint64_t track);
void emit_counter(struct exporter *x, int64_t ts, uint64_t track, double v);
void say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void db_failed(sqlite3 *db, const char *what);
void chunk_damaged(sqlite3 *db, const char *why);
/* Read chunk k of x->dir into x->buf as v, every byte checked when check. 0, or -1 (said). */
int export_read_chunk(sqlite3 *db, struct exporter *x, size_t k, int check, struct chunk_view *v);

/* window.c */
int win_prepare(sqlite3 *db, const struct kvio_window *w, const char *sql, sqlite3_stmt **st);
void kept_free(struct kept *k);
int kept_chunk_has(const struct kept_chunk *c, uint32_t i);
int window_kept(sqlite3 *db, struct exporter *x, struct kept *k);
int load_flows(sqlite3 *db, const struct kept *k, struct flows *f);
int kept_has(const struct kept *k, int64_t id);
void flows_add(struct flows *f, struct flowref *add, size_t n);
void slice_flows(const struct flows *f, int64_t id, uint64_t *fl, size_t *nf, uint64_t *tfl, size_t *ntf);
void ev_flows(struct exporter *x, const struct flows *f, int64_t id);

/* ---- findings (findings.c) ----------------------------------------------------
 * The rows of sql/findings.sql, computed on a connection of their own (a
 * thread) while the export checks the database and writes the commands. The sql/ files as build/sqlfiles.c holds them (the
 * declaration of report/sqlfiles.h, which the export may not include). */
struct sql_file {
	const char *name;
	const char *text;
};
extern const struct sql_file kvio_sql_files[];

struct fcell {
	int t; /* SQLITE_INTEGER, _FLOAT, _TEXT, _NULL */
	int64_t i;
	double d;
	char *s;
};

struct frow {
	char *label, *track, *name;
	int64_t ts, dur;
	int64_t obj, obj_ts;  /* the object's slice id (-1: none) and begin */
	struct fcell *args;   /* one per arg column */
	uint32_t lane;
	uint64_t uuid, fid;   /* its track; its flow id (0: none) */
};

struct flabel {
	char *label;
	int64_t proc_track;   /* the label's process track: the findings group's parent */
};

/* One connection of the findings and its thread. */
struct fconn {
	sqlite3 *db;
	pthread_t th;
	int started, rc;
	int errcode;
	char *err;            /* its failure, said by findings_finish */
};

struct findings {
	const struct export_opts *eo;
	struct fconn c;       /* the findings' connection: prelude.sql, findings.sql */
	int stop;             /* set (atomic) when the export failed: the threads stop at their next statement */
	int imported;         /* the database holds findings already (written as they are) */
	int ncol;             /* arg columns, named col[] */
	char **col;
	struct vec rows;      /* struct frow, in findings.sql's order */
	struct vec labels;    /* struct flabel */
	uint64_t next_uuid;   /* the next free track uuid */
};

int findings_start(sqlite3 *db, struct findings *f, const struct export_opts *eo);
int findings_finish(sqlite3 *db, struct findings *f, int stop);
void findings_tracks(struct exporter *x, struct findings *f);
void findings_flows(const struct exporter *x, struct findings *f, struct flows *fl);
void findings_slices(struct exporter *x, struct findings *f);
/* The ids of the objects the findings' flows reach (after findings_flows), sorted, once each. */
size_t findings_objects(const struct findings *f, int64_t **ids);
void findings_free(struct findings *f);

/* slices.c: the tracks, the generic slices with their args and flows, the
 * stored counters; cmds.c: the commands from their chunks. 0, or -1 after a
 * failed read (said once). */
int export_tracks(sqlite3 *db, struct exporter *x);
int export_slices(sqlite3 *db, struct exporter *x, const struct flows *fl);
/* slices.c: the generic slices written ahead, into memory (while the
 * findings run: their flows are not known yet), then into the output once
 * they are: the slices of ids (ascending: those a finding's flow reaches)
 * encoded again with fl, the others copied as they were. No window. */
struct early {
	unsigned char *buf; /* the packets */
	size_t n;
	struct vec at;      /* struct early_at: one per slice, in id order */
};
int export_slices_early(sqlite3 *db, struct exporter *x, const struct flows *fl, struct early *e);
int export_slices_replay(sqlite3 *db, struct exporter *x, const struct flows *fl, struct early *e, const int64_t *ids,
			 size_t nids);
void early_free(struct early *e);
int export_counters(sqlite3 *db, struct exporter *x);
int export_cmds(sqlite3 *db, struct exporter *x, const struct flows *fl);
#endif
