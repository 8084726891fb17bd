/* export.c — kvio-export: a trace.db as a Perfetto TrackEvent trace.
 *
 * The file is a stream of length-delimited TracePackets (Trace.packet = 1),
 * written as the database is read, never built whole in memory. Track
 * descriptors come first; then slices as SLICE_BEGIN/SLICE_END (instants for
 * zero-length slices), counters as TYPE_COUNTER, flows as flow_ids /
 * terminating_flow_ids. Event names, annotation names and the role strings are
 * interned on one trusted packet sequence. Events are not globally sorted by
 * time: trace_processor sorts them (within a track, kvio's slices never overlap
 * or touch, so the order is unambiguous). */
#include "export.h"
#include "kvio.pb-c.h"
#include "../db/chunk.h"
#include "../db/schema.h"
#include "../lib/cli.h"
#include "../lib/outfile.h"
#include "../lib/strpool.h"
#include "../lib/util.h"
#include "../lib/window.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define SEQ_ID 1
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
};

#define ZBUF_BYTES (256u << 10)

/* Write the buffered bytes (compressed when gz; finish: end the gzip stream). */
static void out_flush(struct out *o, int finish)
{
	if (o->f->err) {
		/* nothing more reaches the file */
	} else if (o->gz && (o->n || finish)) {
		o->z.next_in = o->buf;
		o->z.avail_in = (uInt)o->n;
		int zr;
		do {
			o->z.next_out = o->zbuf;
			o->z.avail_out = ZBUF_BYTES;
			zr = deflate(&o->z, finish ? Z_FINISH : Z_NO_FLUSH);
			if (zr == Z_STREAM_ERROR) {
				outfile_fail(o->f, EIO);
				break;
			}
			if (outfile_write(o->f, o->zbuf, ZBUF_BYTES - o->z.avail_out))
				break;
		} while (finish ? zr != Z_STREAM_END : o->z.avail_out == 0);
	} else if (o->n) {
		outfile_write(o->f, o->buf, o->n);
	}
	o->bytes += o->n;
	o->n = 0;
}

/* Room for n more bytes at the end of the buffer. */
static unsigned char *out_reserve(struct out *o, size_t n)
{
	if (o->n + n > o->cap) {
		out_flush(o, 0);
		if (n > o->cap) {
			o->cap = n * 2;
			o->buf = xrealloc(o->buf, o->cap);
		}
	}
	return o->buf + o->n;
}

/* Nonzero once a write to the output failed: the export stops. */
static int out_failed(const struct out *o)
{
	return o->f->err != 0;
}

/* Append one packet as Trace.packet (field 1, length-delimited). */
static void out_packet(struct out *o, const Kvio__Pf__TracePacket *p)
{
	size_t len = kvio__pf__trace_packet__get_packed_size(p);
	unsigned char *b = out_reserve(o, len + 11);
	size_t k = 0;
	b[k++] = 0x0a;
	size_t v = len;
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		b[k++] = c | (v ? 0x80 : 0);
	} while (v);
	kvio__pf__trace_packet__pack(p, b + k);
	o->n += k + len;
}

/* ---- interning: string -> iid ---------------------------------------------- */

/* iid of s (pool id + 1: iid 0 means "none"); *fresh when s is new (the caller
 * emits its InternedData entry). */
static uint64_t intern(struct strpool *t, const char *s, int *fresh)
{
	return (uint64_t)strpool_id(t, s, strlen(s), fresh) + 1;
}

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
	uint64_t flows[4], tflows[4];
};

struct exporter {
	struct out o;
	struct strpool names, ann_names, str_values;
	struct ev e;
	uint64_t packets;
	uint64_t kept; /* command and object slices written */
	uint64_t slices; /* slices written, commands included, capture_info not */
	const struct kvio_window *win; /* --time-range / --trace-id; NULL: everything */
	const struct kept *keep;       /* what win keeps (NULL without one) */
};

static void ev_reset(struct exporter *x, int type, int64_t ts, uint64_t track)
{
	struct ev *e = &x->e;
	kvio__pf__trace_packet__init(&e->p);
	kvio__pf__track_event__init(&e->te);
	kvio__pf__interned_data__init(&e->idata);
	e->p.has_timestamp = 1;
	e->p.timestamp = ts < 0 ? 0 : (uint64_t)ts;
	e->p.has_trusted_packet_sequence_id = 1;
	e->p.trusted_packet_sequence_id = SEQ_ID;
	e->p.has_sequence_flags = 1;
	e->p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE;
	e->p.track_event = &e->te;
	e->te.has_type = 1;
	e->te.type = type;
	e->te.has_track_uuid = 1;
	e->te.track_uuid = track;
	e->te.debug_annotations = e->annp;
	e->te.flow_ids = e->flows;
	e->te.terminating_flow_ids = e->tflows;
	e->idata.event_names = e->enp;
	e->idata.debug_annotation_names = e->dnp;
	e->idata.debug_annotation_string_values = e->isp;
}

static void ev_name(struct exporter *x, const char *name)
{
	struct ev *e = &x->e;
	int fresh;
	uint64_t iid = intern(&x->names, name ? name : "", &fresh);
	e->te.has_name_iid = 1;
	e->te.name_iid = iid;
	if (fresh) {
		kvio__pf__event_name__init(&e->en);
		e->en.has_iid = 1;
		e->en.iid = iid;
		e->en.name = (char *)(name ? name : "");
		e->enp[0] = &e->en;
		e->idata.n_event_names = 1;
	}
}

/* A new debug annotation with an interned name; NULL when full. */
static Kvio__Pf__DebugAnnotation *ev_ann(struct exporter *x, const char *key)
{
	struct ev *e = &x->e;
	if (e->te.n_debug_annotations >= MAXANN)
		return NULL;
	Kvio__Pf__DebugAnnotation *a = &e->ann[e->te.n_debug_annotations];
	kvio__pf__debug_annotation__init(a);
	e->annp[e->te.n_debug_annotations++] = a;
	int fresh;
	const char *k = strncmp(key, "debug.", 6) ? key : key + 6;
	a->has_name_iid = 1;
	a->name_iid = intern(&x->ann_names, k, &fresh);
	if (fresh) {
		size_t n = e->idata.n_debug_annotation_names++;
		kvio__pf__debug_annotation_name__init(&e->dn[n]);
		e->dn[n].has_iid = 1;
		e->dn[n].iid = a->name_iid;
		e->dn[n].name = (char *)k;
		e->dnp[n] = &e->dn[n];
	}
	return a;
}

static void ann_uint(struct exporter *x, const char *key, uint64_t v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_uint_value = 1; a->uint_value = v; }
}

static void ann_int(struct exporter *x, const char *key, int64_t v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_int_value = 1; a->int_value = v; }
}

static void ann_bool(struct exporter *x, const char *key, int v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_bool_value = 1; a->bool_value = v != 0; }
}

static void ann_double(struct exporter *x, const char *key, double v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_double_value = 1; a->double_value = v; }
}

static void ann_str(struct exporter *x, const char *key, const char *v, int interned)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (!a)
		return;
	if (!interned) {
		a->string_value = (char *)v;
		return;
	}
	struct ev *e = &x->e;
	int fresh;
	a->has_string_value_iid = 1;
	a->string_value_iid = intern(&x->str_values, v, &fresh);
	if (fresh) {
		size_t n = e->idata.n_debug_annotation_string_values++;
		kvio__pf__interned_string__init(&e->is[n]);
		e->is[n].has_iid = 1;
		e->is[n].iid = a->string_value_iid;
		e->is[n].has_str = 1;
		e->is[n].str.data = (uint8_t *)v;
		e->is[n].str.len = strlen(v);
		e->isp[n] = &e->is[n];
	}
}

static void ev_emit(struct exporter *x)
{
	struct ev *e = &x->e;
	if (e->idata.n_event_names || e->idata.n_debug_annotation_names ||
	    e->idata.n_debug_annotation_string_values)
		e->p.interned_data = &e->idata;
	out_packet(&x->o, &e->p);
	x->packets++;
}

/* ---- the hot path: packets encoded directly -------------------------------
 * Commands are the volume; their packets (and every END and counter packet)
 * are encoded here without building protobuf-c messages. The field numbers are
 * read from the protoc-c descriptors of report/kvio.proto, which stays the one
 * place they are written down; the tests decode every file with protoc against
 * that .proto, and import it back. */
static struct {
	unsigned pk_ts, pk_seq, pk_te, pk_flags;
	unsigned te_ann, te_type, te_name_iid, te_track, te_counter, te_dcounter, te_flow, te_tflow;
	unsigned te_xvals, te_xuuids;
	unsigned an_name_iid, an_bool, an_uint, an_int, an_str_iid, an_str;
} F;

static unsigned fnum(const ProtobufCMessageDescriptor *d, const char *name)
{
	return protobuf_c_message_descriptor_get_field_by_name(d, name)->id;
}

static void fieldnums_init(void)
{
	const ProtobufCMessageDescriptor *pk = &kvio__pf__trace_packet__descriptor,
		*te = &kvio__pf__track_event__descriptor, *an = &kvio__pf__debug_annotation__descriptor;
	F.pk_ts = fnum(pk, "timestamp");
	F.pk_seq = fnum(pk, "trusted_packet_sequence_id");
	F.pk_te = fnum(pk, "track_event");
	F.pk_flags = fnum(pk, "sequence_flags");
	F.te_ann = fnum(te, "debug_annotations");
	F.te_type = fnum(te, "type");
	F.te_name_iid = fnum(te, "name_iid");
	F.te_track = fnum(te, "track_uuid");
	F.te_counter = fnum(te, "counter_value");
	F.te_dcounter = fnum(te, "double_counter_value");
	F.te_flow = fnum(te, "flow_ids");
	F.te_tflow = fnum(te, "terminating_flow_ids");
	F.te_xvals = fnum(te, "extra_counter_values");
	F.te_xuuids = fnum(te, "extra_counter_track_uuids");
	F.an_name_iid = fnum(an, "name_iid");
	F.an_bool = fnum(an, "bool_value");
	F.an_uint = fnum(an, "uint_value");
	F.an_int = fnum(an, "int_value");
	F.an_str_iid = fnum(an, "string_value_iid");
	F.an_str = fnum(an, "string_value");
}

static unsigned char *pv(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static unsigned char *ptag(unsigned char *p, unsigned field, unsigned wire)
{
	return pv(p, (uint64_t)field << 3 | wire);
}

static unsigned char *pfv(unsigned char *p, unsigned field, uint64_t v)
{
	return pv(ptag(p, field, 0), v);
}

static unsigned char *pf64(unsigned char *p, unsigned field, uint64_t v)
{
	p = ptag(p, field, 1);
	for (int i = 0; i < 8; i++)
		*p++ = (unsigned char)(v >> (8 * i));
	return p;
}

/* A debug annotation (name iid, then one varint value field) as a TrackEvent field. */
static unsigned char *pann(unsigned char *p, uint64_t name_iid, unsigned value_field, uint64_t v)
{
	unsigned char b[24], *q = pfv(pfv(b, F.an_name_iid, name_iid), value_field, v);
	p = pv(ptag(p, F.te_ann, 2), (uint64_t)(q - b));
	memcpy(p, b, (size_t)(q - b));
	return p + (q - b);
}

/* One packet: timestamp, sequence, the encoded TrackEvent te[0..tn), flags. */
static void fast_packet(struct exporter *x, uint32_t seq, int64_t ts, unsigned flags, const unsigned char *te,
			size_t tn)
{
	unsigned char hdr[48], *p = hdr;
	p = pfv(p, F.pk_ts, ts < 0 ? 0 : (uint64_t)ts);
	p = pfv(p, F.pk_seq, seq);
	p = pv(ptag(p, F.pk_te, 2), tn);
	unsigned char tail[8], *t = tail;
	if (flags)
		t = pfv(t, F.pk_flags, flags);
	size_t body = (size_t)(p - hdr) + tn + (size_t)(t - tail);
	unsigned char *o = out_reserve(&x->o, body + 11), *q = pv(o, 0x0a);
	q = pv(q, body);
	memcpy(q, hdr, (size_t)(p - hdr));
	q += p - hdr;
	memcpy(q, te, tn);
	q += tn;
	memcpy(q, tail, (size_t)(t - tail));
	q += t - tail;
	x->o.n += (size_t)(q - o);
	x->packets++;
}

/* A SLICE_END; track 0: the sequence's default track. */
static void emit_end(struct exporter *x, uint32_t seq, int64_t ts, uint64_t track)
{
	unsigned char te[32], *p = te;
	p = pfv(p, F.te_type, KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_END);
	if (track)
		p = pfv(p, F.te_track, track);
	fast_packet(x, seq, ts, 0, te, (size_t)(p - te));
}

static void emit_counter(struct exporter *x, int64_t ts, uint64_t track, double v)
{
	unsigned char te[48], *p = te;
	p = pfv(p, F.te_type, KVIO__PF__TRACK_EVENT__TYPE__TYPE_COUNTER);
	p = pfv(p, F.te_track, track);
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		p = pfv(p, F.te_counter, (uint64_t)(int64_t)v); /* int64: two's complement varint */
	} else {
		uint64_t bits;
		memcpy(&bits, &v, 8);
		p = pf64(p, F.te_dcounter, bits);
	}
	fast_packet(x, SEQ_ID, ts, 0, te, (size_t)(p - te));
}

/* ---- the window: which rows an export of --time-range / --trace-id reads ------
 * Generic slices (kvio_slice) are kept when their span overlaps the window and
 * their trace_id (an object's, or a "no device cmds" instant's arg) is in the
 * range; slices without one (serving, overview) by time only; the capture_info
 * instant always (as at ingest: it says what produced the database).
 * Commands are read only from the chunks whose extent (kvio_cmd_range) meets
 * the window: time proportional to the window, not to the database. */
#define WIN_SLICE_SQL                                                                                  \
	" WHERE s.name = 'capture_info' OR s.ts <= :hi AND (s.dur < 0 OR s.ts + s.dur >= :lo) AND (:ht = 0 OR coalesce("\
	"(SELECT o.trace_id FROM kvio_obj o WHERE o.id = s.id), (SELECT a.int_value FROM kvio_arg a"      \
	" WHERE a.arg_set_id = s.id AND a.key = 'debug.trace_id')) IS NULL OR coalesce((SELECT o.trace_id" \
	" FROM kvio_obj o WHERE o.id = s.id), (SELECT a.int_value FROM kvio_arg a WHERE a.arg_set_id ="   \
	" s.id AND a.key = 'debug.trace_id')) BETWEEN :tlo AND :thi)"
#define WIN_CHUNK_SQL                                                                                  \
	" WHERE id IN (SELECT id FROM kvio_cmd_range WHERE ts_min <= :hi AND end_max >= :lo AND"          \
	" (:ht = 0 OR (tid_max >= :tlo AND tid_min <= :thi)))"

/* Prepare sql with the window's parameters bound (those it names). */
static int win_prepare(sqlite3 *db, const struct kvio_window *w, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL))
		return -1;
	int64_t lo = w && w->has_time ? w->lo_ns : INT64_MIN, hi = w && w->has_time ? w->hi_ns : INT64_MAX;
	struct { const char *n; int64_t v; } p[] = {
		{":lo", lo}, {":hi", hi}, {":ht", w && w->has_tid},
		{":tlo", w ? (int64_t)w->tid_lo : 0}, {":thi", w ? (int64_t)w->tid_hi : 0},
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		int k = sqlite3_bind_parameter_index(*st, p[i].n);
		if (k)
			sqlite3_bind_int64(*st, k, p[i].v);
	}
	return 0;
}

/* The command chunks window w reads, in id order, as (id, n, inside) without
 * reading the chunks: those whose extent (kvio_cmd_range) meets the window,
 * all of them in a database written before kvio_cmd_range existed. inside = 1
 * when the chunk's extent lies within a time-only window, so that every
 * command of it is kept (end_max is open to the right for a command that never
 * ended; the trace_id extent leaves untagged commands out, so a --trace-id
 * window reads the chunk). */
static int chunk_query(sqlite3 *db, const struct kvio_window *w, sqlite3_stmt **st)
{
	int ranged = sqlite3_table_column_metadata(db, "main", "kvio_cmd_range", "id", NULL, NULL, NULL, NULL,
						   NULL) == SQLITE_OK;
	return win_prepare(db, w, ranged ? "SELECT c.id, c.n, r.ts_min >= :lo AND r.end_max <= :hi AND :ht = 0"
					   " FROM kvio_cmd_range r JOIN kvio_cmd_chunk c ON c.id = r.id"
					   " WHERE r.ts_min <= :hi AND r.end_max >= :lo AND"
					   " (:ht = 0 OR (r.tid_max >= :tlo AND r.tid_min <= :thi)) ORDER BY r.id"
					 : "SELECT id, n, 0 FROM kvio_cmd_chunk ORDER BY id", st);
}

/* A command is written: its trace_id and span pass the window. */
static int cmd_kept(const struct kvio_window *w, const struct chunk_view *v, uint32_t i)
{
	return !w || (window_cmd_tid(w, v->trace_id[i]) && window_span(w, v->ts[i], v->dur[i]));
}

/* What a window keeps, found once before anything is written (a flow is
 * written when both its ends are): the generic slices' ids, ascending, and the
 * commands, chunk by chunk in id order, as a bit per command. */
struct kept_chunk {
	int64_t first;
	uint32_t n, nkept;
	uint64_t *bits; /* NULL: every command of the chunk (an inside chunk, not read) */
};

/* Set once a failure has been named on stderr: one line for one failure,
 * whichever statement or caller meets it (a caller's generic line would only
 * add SQLite's "not an error"). */
static int err_said;

/* The failure's line, unless one was said already. */
static void say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_once(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (err_said)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	kvio_err("%s", msg);
	err_said = 1;
}

/* A failed read of db: SQLite's reason when it has one. */
static void db_failed(sqlite3 *db, const char *what)
{
	int ec = sqlite3_errcode(db);
	say_once("%s: %s", what, ec != SQLITE_OK && ec != SQLITE_ROW && ec != SQLITE_DONE ? sqlite3_errmsg(db) : "failed");
}

/* A chunk whose blob is not a chunk. */
static void chunk_damaged(int64_t first)
{
	say_once("kvio_cmd_chunk %lld is damaged", (long long)first);
}

struct kept {
	struct vec slices; /* int64_t */
	struct vec chunks; /* struct kept_chunk */
};

static void kept_free(struct kept *k)
{
	for (size_t i = 0; i < k->chunks.n; i++)
		free(VEC_AT(&k->chunks, struct kept_chunk, i).bits);
	vec_free(&k->slices);
	vec_free(&k->chunks);
}

/* The window's commands of the chunk on st's row (chunk_query with extent; a
 * chunk not inside read with blob, a point query on its id); -1 when the
 * chunk is damaged (named here) or cannot be read. */
static int kept_chunk_add(struct kept *k, const struct kvio_window *w, sqlite3_stmt *st, sqlite3_stmt *blob)
{
	struct kept_chunk c = {sqlite3_column_int64(st, 0), (uint32_t)sqlite3_column_int64(st, 1), 0, NULL};
	struct chunk_view v;
	int rc = 0;
	if (sqlite3_column_int(st, 2)) {
		c.nkept = c.n;
	} else {
		sqlite3_bind_int64(blob, 1, c.first);
		int sr = sqlite3_step(blob);
		if (sr != SQLITE_ROW) { /* a read error, or no such row: said now (a reset clears the reason) */
			say_once("reading the database: %s",
				 sr == SQLITE_DONE ? "a chunk is missing" : sqlite3_errmsg(sqlite3_db_handle(blob)));
			rc = -1;
		} else if (chunk_map(sqlite3_column_blob(blob, 0), (size_t)sqlite3_column_bytes(blob, 0), &v)) {
			chunk_damaged(c.first);
			rc = -1;
		}
		c.n = rc ? 0 : v.n;
		c.bits = xcalloc(c.n / 64 + 1, sizeof *c.bits);
		for (uint32_t i = 0; i < c.n; i++)
			if (cmd_kept(w, &v, i)) {
				c.bits[i / 64] |= (uint64_t)1 << (i % 64);
				c.nkept++;
			}
		sqlite3_reset(blob);
	}
	*(struct kept_chunk *)vec_push(&k->chunks, sizeof c) = c;
	return rc;
}

/* Command i of chunk c is kept. */
static int kept_chunk_has(const struct kept_chunk *c, uint32_t i)
{
	return !c->bits ? i < c->n : i < c->n && (c->bits[i / 64] >> (i % 64) & 1);
}

/* Find everything window w keeps. Returns 0 or -1. */
static int window_kept(sqlite3 *db, const struct kvio_window *w, struct kept *k)
{
	sqlite3_stmt *st;
	if (win_prepare(db, w, "SELECT s.id FROM kvio_slice s" WIN_SLICE_SQL " ORDER BY s.id", &st))
		return -1;
	int sr;
	while ((sr = sqlite3_step(st)) == SQLITE_ROW)
		*(int64_t *)vec_push(&k->slices, sizeof(int64_t)) = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sr != SQLITE_DONE)
		return -1; /* a read error: not a shorter window */
	sqlite3_stmt *blob;
	if (sqlite3_prepare_v2(db, "SELECT data FROM kvio_cmd_chunk WHERE id = ?1", -1, &blob, NULL))
		return -1;
	if (chunk_query(db, w, &st)) {
		sqlite3_finalize(blob);
		return -1;
	}
	int rc = 0;
	while (!rc && (sr = sqlite3_step(st)) == SQLITE_ROW)
		if (kept_chunk_add(k, w, st, blob))
			rc = -1;
	if (!rc && sr != SQLITE_DONE)
		rc = -1;
	sqlite3_finalize(st);
	sqlite3_finalize(blob);
	return rc;
}

/* id is in the ascending list ids. */
static int in_ids(const struct vec *ids, int64_t id)
{
	size_t lo = 0, hi = ids->n;
	const int64_t *v = ids->v;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ids->n && v[lo] == id;
}

/* The slice (generic or command) of id is kept. */
static int id_kept(const struct kept *k, int64_t id)
{
	size_t lo = 0, hi = k->chunks.n;
	const struct kept_chunk *c = k->chunks.v;
	while (lo < hi) { /* the last chunk starting at or before id */
		size_t mid = (lo + hi) / 2;
		if (c[mid].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && id - c[lo - 1].first < (int64_t)c[lo - 1].n && kept_chunk_has(&c[lo - 1], (uint32_t)(id - c[lo - 1].first)))
		return 1;
	return in_ids(&k->slices, id);
}

/* ---- flows: slice id -> its flow ids (in, out) ------------------------------- */
struct flowref {
	int64_t slice;
	uint64_t fid;
	int out; /* 1: the slice is the flow's source */
};

static int flowref_cmp(const void *a, const void *b)
{
	const struct flowref *x = a, *y = b;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

struct flows {
	struct flowref *r;
	size_t n;
};

/* The flow rows, with k only those whose ends both lie in the id spans of
 * what k keeps (its commands' chunks, its slices): SQLite skips the rest of the
 * table without returning them; id_kept then decides. */
static int flow_query(sqlite3 *db, const struct kept *k, sqlite3_stmt **st)
{
	if (!k)
		return sqlite3_prepare_v2(db, "SELECT slice_out, slice_in, coalesce(trace_id, id) FROM flow", -1, st, NULL);
	if (sqlite3_prepare_v2(db, "SELECT slice_out, slice_in, coalesce(trace_id, id) FROM flow"
				   " WHERE (slice_out BETWEEN ?1 AND ?2 OR slice_out BETWEEN ?3 AND ?4)"
				   " AND (slice_in BETWEEN ?1 AND ?2 OR slice_in BETWEEN ?3 AND ?4)", -1, st, NULL))
		return -1;
	int64_t span[4] = {1, 0, 1, 0}; /* lo > hi: empty */
	const struct kept_chunk *c = k->chunks.v;
	for (size_t i = 0; i < k->chunks.n; i++) {
		if (!c[i].nkept)
			continue;
		if (span[0] > span[1] || c[i].first < span[0])
			span[0] = c[i].first;
		if (span[0] > span[1] || c[i].first + c[i].n - 1 > span[1])
			span[1] = c[i].first + c[i].n - 1;
	}
	if (k->slices.n) {
		span[2] = VEC_AT(&k->slices, int64_t, 0);
		span[3] = VEC_AT(&k->slices, int64_t, k->slices.n - 1);
	}
	for (int i = 0; i < 4; i++)
		sqlite3_bind_int64(*st, i + 1, span[i]);
	return 0;
}

/* The flows (with a window: those whose both ends it keeps, k). */
static int load_flows(sqlite3 *db, const struct kept *k, struct flows *f)
{
	sqlite3_stmt *st;
	if (flow_query(db, k, &st))
		return -1;
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (k && !(id_kept(k, sqlite3_column_int64(st, 0)) && id_kept(k, sqlite3_column_int64(st, 1))))
			continue;
		if (f->n + 2 > cap) {
			cap = cap ? cap * 2 : 256;
			f->r = xrealloc(f->r, cap * sizeof *f->r);
		}
		uint64_t fid = (uint64_t)sqlite3_column_int64(st, 2) + 1; /* flow id 0 is invalid */
		f->r[f->n++] = (struct flowref){sqlite3_column_int64(st, 0), fid, 1};
		f->r[f->n++] = (struct flowref){sqlite3_column_int64(st, 1), fid, 0};
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return -1; /* a read error, not fewer flows */
	if (f->n > 1)
		qsort(f->r, f->n, sizeof *f->r, flowref_cmp);
	return 0;
}

/* Put slice id's flow ids on the current event: a source continues the flow,
 * a slice that only receives it terminates it. */
static void slice_flows(const struct flows *f, int64_t id, uint64_t *fl, size_t *nf, uint64_t *tfl, size_t *ntf)
{
	size_t lo = 0, hi = f->n;
	*nf = *ntf = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->r[mid].slice < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < f->n && f->r[i].slice == id; i++) {
		const struct flowref *r = &f->r[i];
		int out_too = 0;
		for (size_t k = lo; k < f->n && f->r[k].slice == id; k++)
			out_too |= f->r[k].fid == r->fid && f->r[k].out;
		if (r->out) {
			if (*nf < 4)
				fl[(*nf)++] = r->fid;
		} else if (!out_too && *ntf < 4) {
			tfl[(*ntf)++] = r->fid;
		}
	}
}

static void ev_flows(struct exporter *x, const struct flows *f, int64_t id)
{
	struct ev *e = &x->e;
	slice_flows(f, id, e->flows, &e->te.n_flow_ids, e->tflows, &e->te.n_terminating_flow_ids);
}

/* ---- the export ------------------------------------------------------------ */

static int export_tracks(sqlite3 *db, struct exporter *x)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db,
		"SELECT t.id, t.name, t.parent_id, t.is_counter, t.unit, t.sibling_order_rank,"
		" t.child_ordering, p.pid, p.name FROM kvio_track t LEFT JOIN process p"
		" ON p.upid = t.upid AND t.parent_id IS NULL AND t.name IS NULL ORDER BY t.id", -1, &st, NULL);
	if (rc)
		return -1;
	while (!out_failed(&x->o) && sqlite3_step(st) == SQLITE_ROW) {
		Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
		Kvio__Pf__TrackDescriptor d = KVIO__PF__TRACK_DESCRIPTOR__INIT;
		Kvio__Pf__ProcessDescriptor pd = KVIO__PF__PROCESS_DESCRIPTOR__INIT;
		Kvio__Pf__CounterDescriptor cd = KVIO__PF__COUNTER_DESCRIPTOR__INIT;
		p.track_descriptor = &d;
		d.has_uuid = 1;
		d.uuid = (uint64_t)sqlite3_column_int64(st, 0);
		d.name = (char *)sqlite3_column_text(st, 1);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			d.has_parent_uuid = 1;
			d.parent_uuid = (uint64_t)sqlite3_column_int64(st, 2);
		}
		if (sqlite3_column_int(st, 3)) {
			d.counter = &cd;
			cd.unit_name = (char *)sqlite3_column_text(st, 4);
		}
		if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
			d.has_sibling_order_rank = 1;
			d.sibling_order_rank = sqlite3_column_int(st, 5);
		}
		if (sqlite3_column_type(st, 6) != SQLITE_NULL) {
			d.has_child_ordering = 1;
			d.child_ordering = KVIO__PF__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
		}
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			d.process = &pd;
			pd.has_pid = 1;
			pd.pid = sqlite3_column_int(st, 7);
			pd.process_name = (char *)sqlite3_column_text(st, 8);
		}
		out_packet(&x->o, &p);
		x->packets++;
	}
	return sqlite3_finalize(st) != SQLITE_OK ? -1 : 0; /* a read error: not fewer tracks */
}

/* Put cursor st (rows ordered by their first column, an id, from ?1 on) on
 * the rows of id, the ids asked for ascending: a merge step, or with `jump`
 * (the ids are sparse: a window's) a new lookup from id when it is more than a
 * few rows ahead. rc is the cursor's last step result; returns the new one. */
#define SEEK_STEPS 8
static int seek(sqlite3_stmt *st, int rc, int jump, int64_t id)
{
	for (int n = 0; rc == SQLITE_ROW && sqlite3_column_int64(st, 0) < id; n++) {
		if (jump && n == SEEK_STEPS) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, id);
			return sqlite3_step(st);
		}
		rc = sqlite3_step(st);
	}
	return rc;
}

/* The annotation keys and string values of the event being built: the
 * protobuf messages reference them, so they live until it is emitted. */
struct ann_strs {
	char *keys[MAXANN], *vals[MAXANN];
	int n;
};

static void ann_strs_free(struct ann_strs *k)
{
	for (int i = 0; i < k->n; i++) {
		free(k->keys[i]);
		free(k->vals[i]);
	}
	k->n = 0;
}

/* The slices' three cursors: the slices, their args, their objects' columns. */
struct slice_cur {
	sqlite3_stmt *s, *a, *ob;
	int jump; /* under a window: the args' and objects' cursors jump over what it leaves out */
	int arc, orc; /* the last step result of a and ob */
};

/* Finalize st; -1 (said, with SQLite's reason) when its last read failed. */
static int fin_said(sqlite3_stmt *st)
{
	sqlite3 *db = st ? sqlite3_db_handle(st) : NULL;
	if (sqlite3_finalize(st) == SQLITE_OK)
		return 0;
	say_once("reading the database: %s", sqlite3_errmsg(db));
	return -1;
}

/* Close c's statements; -1 when a read of one of them failed (not a shorter list). */
static int slice_cur_close(struct slice_cur *c)
{
	int a = fin_said(c->s), b = fin_said(c->a), o = fin_said(c->ob);
	return a || b || o ? -1 : 0;
}

/* Generic slices in id order, with cursors on their args and object columns
 * merged with them. */
static int slice_cur_open(sqlite3 *db, const struct kvio_window *w, struct slice_cur *c)
{
	memset(c, 0, sizeof *c);
	c->jump = w != NULL;
	if (sqlite3_prepare_v2(db, "SELECT id, ts, dur, track_id, name FROM kvio_slice WHERE id >= ?1 ORDER BY id", -1, &c->s,
			       NULL) ||
	    sqlite3_prepare_v2(db, "SELECT arg_set_id, key, int_value, string_value, real_value, value_type"
				   " FROM kvio_arg WHERE arg_set_id >= ?1 ORDER BY arg_set_id, key", -1, &c->a, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT * FROM kvio_obj WHERE id >= ?1 ORDER BY id", -1, &c->ob, NULL)) {
		slice_cur_close(c);
		return -1;
	}
	sqlite3_bind_int64(c->s, 1, INT64_MIN);
	sqlite3_bind_int64(c->a, 1, INT64_MIN);
	sqlite3_bind_int64(c->ob, 1, INT64_MIN);
	c->arc = sqlite3_step(c->a);
	c->orc = sqlite3_step(c->ob);
	return 0;
}

/* Slice id's kvio_arg rows as annotations, each with its value type. */
static void slice_args(struct exporter *x, struct slice_cur *c, int64_t id, struct ann_strs *k)
{
	sqlite3_stmt *a = c->a;
	c->arc = seek(a, c->arc, c->jump, id);
	for (; c->arc == SQLITE_ROW && sqlite3_column_int64(a, 0) == id; c->arc = sqlite3_step(a)) {
		if (k->n == MAXANN)
			continue;
		const char *vt = (const char *)sqlite3_column_text(a, 5);
		char *key = k->keys[k->n] = xstrdup((const char *)sqlite3_column_text(a, 1));
		k->vals[k->n] = NULL;
		if (!strcmp(vt, "string")) {
			const char *v = (const char *)sqlite3_column_text(a, 3);
			k->vals[k->n] = xstrdup(v ? v : "");
			ann_str(x, key, k->vals[k->n], 0);
		} else if (!strcmp(vt, "real")) {
			ann_double(x, key, sqlite3_column_double(a, 4));
		} else if (!strcmp(vt, "bool")) {
			ann_bool(x, key, sqlite3_column_int(a, 2));
		} else if (!strcmp(vt, "int")) {
			ann_int(x, key, sqlite3_column_int64(a, 2));
		} else {
			ann_uint(x, key, (uint64_t)sqlite3_column_int64(a, 2));
		}
		k->n++;
	}
}

/* An object's args: the typed columns of its kvio_obj row, each value with its
 * own type (NULL columns left out). Returns 1 when id is an object. */
static int slice_obj_args(struct exporter *x, struct slice_cur *c, int64_t id, struct ann_strs *k)
{
	sqlite3_stmt *ob = c->ob;
	c->orc = seek(ob, c->orc, c->jump, id);
	if (c->orc != SQLITE_ROW || sqlite3_column_int64(ob, 0) != id)
		return 0;
	for (int col = 1; col < sqlite3_column_count(ob) && k->n < MAXANN; col++) {
		int t = sqlite3_column_type(ob, col);
		if (t == SQLITE_NULL)
			continue;
		char *key = k->keys[k->n] = xstrdup(sqlite3_column_name(ob, col));
		k->vals[k->n] = NULL;
		if (t == SQLITE_INTEGER) {
			int64_t v = sqlite3_column_int64(ob, col);
			if (v < 0)
				ann_int(x, key, v);
			else
				ann_uint(x, key, (uint64_t)v);
		} else if (t == SQLITE_FLOAT) {
			ann_double(x, key, sqlite3_column_double(ob, col));
		} else {
			k->vals[k->n] = xstrdup((const char *)sqlite3_column_text(ob, col));
			ann_str(x, key, k->vals[k->n], 0);
		}
		k->n++;
	}
	return 1;
}

/* The slice on c->s's current row: BEGIN (or an instant) with its args and
 * flows, then its END. */
static void export_slice(struct exporter *x, struct slice_cur *c, const struct flows *fl)
{
	sqlite3_stmt *s = c->s;
	int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 1), dur = sqlite3_column_int64(s, 2);
	uint64_t track = (uint64_t)sqlite3_column_int64(s, 3);
	ev_reset(x, dur ? KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN : KVIO__PF__TRACK_EVENT__TYPE__TYPE_INSTANT, ts,
		 track);
	ev_name(x, (const char *)sqlite3_column_text(s, 4));
	struct ann_strs k = {.n = 0};
	slice_args(x, c, id, &k);
	if (slice_obj_args(x, c, id, &k))
		x->kept++;
	const unsigned char *nm = sqlite3_column_text(s, 4);
	if (!nm || strcmp((const char *)nm, "capture_info")) /* the capture's metadata is no content */
		x->slices++;
	ev_flows(x, fl, id);
	ev_emit(x);
	ann_strs_free(&k);
	if (dur > 0) /* dur -1: a slice that never ended (imported): its BEGIN only */
		emit_end(x, SEQ_ID, ts + dur, track);
}

/* Generic slices (objects, serving, capture info, overview) with their args;
 * under a window, those it keeps (x->keep's list: the window's slice query
 * runs once). */
static int export_slices(sqlite3 *db, struct exporter *x, const struct flows *fl)
{
	struct slice_cur c;
	if (slice_cur_open(db, x->win, &c))
		return -1;
	if (!x->keep) {
		while (!out_failed(&x->o) && sqlite3_step(c.s) == SQLITE_ROW)
			export_slice(x, &c, fl);
	} else {
		const int64_t *id = x->keep->slices.v;
		int rc = sqlite3_step(c.s);
		for (size_t i = 0; !out_failed(&x->o) && i < x->keep->slices.n; i++) {
			rc = seek(c.s, rc, 1, id[i]);
			if (rc == SQLITE_ROW && sqlite3_column_int64(c.s, 0) == id[i])
				export_slice(x, &c, fl);
		}
	}
	return slice_cur_close(&c);
}

/* ---- commands: one trusted packet sequence per command track (lane) --------
 * The sequence's first packet clears its incremental state and sets its
 * defaults (the lane as track_uuid; its slba counter track as the extra
 * counter track) and interns every name a command can use, with fixed iids:
 * event names = kvio_cmd_name id + 1, annotation names below, the role
 * strings 1 header / 2 payload. Every command packet is then encoded here
 * directly: BEGIN = timestamp, sequence, flags, type, name, the args, the slba
 * counter point as an extra counter value, flows; END = timestamp, sequence,
 * type. */
enum { AN_SLBA = 1, AN_DATA_LEN, AN_TRACE_ID, AN_ROLE, AN_REAL_DUR, AN_KEY_HEX, AN_KEY_LEN, AN_VALUE_LEN, AN_N };
static const char *const an_names[AN_N] = {NULL, "slba", "data_len", "trace_id", "role", "real_dur",
					   "key_hex", "key_len", "value_len"};
enum { STR_HEADER = 1, STR_PAYLOAD };

struct lane {
	uint32_t seq;       /* 0: not started */
	uint64_t slba_trk;  /* the sequence's default extra counter track; 0 none */
};

#define LANE_SEQ0 2 /* sequence ids of lanes: 2, 3, ... (1 is everything else) */

/* A lane sequence's InternedData: the command names (iid = kvio_cmd_name id + 1),
 * the annotation names (iid = AN_*), the role strings (STR_*). */
struct lane_intern {
	Kvio__Pf__InternedData id;
	Kvio__Pf__EventName *en, **enp;
	Kvio__Pf__DebugAnnotationName dn[AN_N], *dnp[AN_N];
	Kvio__Pf__InternedString is[2], *isp[2];
};

static void lane_intern_init(struct lane_intern *t, char **names, size_t nnames)
{
	static const char *const strs[2] = {"header", "payload"};
	Kvio__Pf__InternedData *id = &t->id;
	kvio__pf__interned_data__init(id);
	t->en = xcalloc(nnames ? nnames : 1, sizeof *t->en);
	t->enp = xcalloc(nnames ? nnames : 1, sizeof *t->enp);
	for (size_t i = 0; i < nnames; i++) {
		if (!names[i])
			continue;
		kvio__pf__event_name__init(&t->en[id->n_event_names]);
		t->en[id->n_event_names].has_iid = 1;
		t->en[id->n_event_names].iid = i + 1;
		t->en[id->n_event_names].name = names[i];
		t->enp[id->n_event_names] = &t->en[id->n_event_names];
		id->n_event_names++;
	}
	id->event_names = t->enp;
	for (int k = 1; k < AN_N; k++) {
		kvio__pf__debug_annotation_name__init(&t->dn[k]);
		t->dn[k].has_iid = 1;
		t->dn[k].iid = (uint64_t)k;
		t->dn[k].name = (char *)an_names[k];
		t->dnp[k - 1] = &t->dn[k];
	}
	id->n_debug_annotation_names = AN_N - 1;
	id->debug_annotation_names = t->dnp;
	for (int k = 0; k < 2; k++) {
		kvio__pf__interned_string__init(&t->is[k]);
		t->is[k].has_iid = 1;
		t->is[k].iid = (uint64_t)k + 1;
		t->is[k].has_str = 1;
		t->is[k].str.data = (uint8_t *)strs[k];
		t->is[k].str.len = strlen(strs[k]);
		t->isp[k] = &t->is[k];
	}
	id->n_debug_annotation_string_values = 2;
	id->debug_annotation_string_values = t->isp;
}

/* Start lane l as sequence seq: clear its incremental state, set its defaults
 * (track, slba counter track), intern every name its commands use. */
static void lane_start(struct exporter *x, struct lane *l, uint32_t seq, uint64_t track, uint64_t slba_trk,
		       char **names, size_t nnames)
{
	Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
	Kvio__Pf__TracePacketDefaults pd = KVIO__PF__TRACE_PACKET_DEFAULTS__INIT;
	Kvio__Pf__TrackEventDefaults td = KVIO__PF__TRACK_EVENT_DEFAULTS__INIT;
	struct lane_intern t;
	l->seq = seq;
	l->slba_trk = slba_trk;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = seq;
	p.has_sequence_flags = 1;
	p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
	p.trace_packet_defaults = &pd;
	pd.track_event_defaults = &td;
	td.has_track_uuid = 1;
	td.track_uuid = track;
	if (slba_trk) {
		td.n_extra_counter_track_uuids = 1;
		td.extra_counter_track_uuids = &l->slba_trk;
	}
	lane_intern_init(&t, names, nnames);
	p.interned_data = &t.id;
	out_packet(&x->o, &p);
	x->packets++;
	free(t.en);
	free(t.enp);
}

/* A string annotation with its value inline (KV keys are not worth interning). */
static unsigned char *pann_str(unsigned char *p, uint64_t name_iid, const char *v)
{
	size_t n = strlen(v);
	unsigned char b[24], *q = pfv(b, F.an_name_iid, name_iid);
	q = pv(ptag(q, F.an_str, 2), n);
	p = pv(ptag(p, F.te_ann, 2), (uint64_t)(q - b) + n);
	memcpy(p, b, (size_t)(q - b));
	p += q - b;
	memcpy(p, v, n);
	return p + n;
}

/* What the commands share while they are written: the command names (index:
 * kvio_cmd_name id), the lanes started so far, the KV lookup, the encoding
 * buffer of one BEGIN's TrackEvent. */
struct cmd_ctx {
	char **names;
	size_t nnames;
	struct lane *lanes;
	size_t nlanes;
	uint32_t next_seq;
	sqlite3_stmt *kv; /* a command's key_hex, key_len, value_len */
	unsigned char *te;
	size_t tecap;
	const struct flows *fl;
};

static void cmd_ctx_free(struct cmd_ctx *c)
{
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->lanes);
	free(c->te);
	sqlite3_finalize(c->kv);
}

/* The command names and the KV lookup; 0 or -1. */
static int cmd_ctx_init(sqlite3 *db, struct cmd_ctx *c, const struct flows *fl)
{
	sqlite3_stmt *nm;
	memset(c, 0, sizeof *c);
	c->fl = fl;
	c->next_seq = LANE_SEQ0;
	if (sqlite3_prepare_v2(db, "SELECT id, name FROM kvio_cmd_name ORDER BY id", -1, &nm, NULL))
		return -1;
	while (sqlite3_step(nm) == SQLITE_ROW) {
		size_t id = (size_t)sqlite3_column_int64(nm, 0);
		if (id >= c->nnames) {
			c->names = xrealloc(c->names, (id + 1) * sizeof *c->names);
			memset(c->names + c->nnames, 0, (id + 1 - c->nnames) * sizeof *c->names);
			c->nnames = id + 1;
		}
		c->names[id] = xstrdup((const char *)sqlite3_column_text(nm, 1));
	}
	if (sqlite3_finalize(nm) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT key_hex, key_len, value_len FROM kvio_cmd_kv WHERE id = ?", -1, &c->kv, NULL))
		return -1;
	c->tecap = 4096;
	c->te = xmalloc(c->tecap);
	return 0;
}

/* The lane of command track trk, its sequence started by its first command
 * (whose slba counter track becomes the sequence's default). */
static struct lane *cmd_lane(struct exporter *x, struct cmd_ctx *c, uint32_t trk, uint64_t slba_trk)
{
	if (trk >= c->nlanes) {
		size_t n = (size_t)trk + 16;
		c->lanes = xrealloc(c->lanes, n * sizeof *c->lanes);
		memset(c->lanes + c->nlanes, 0, (n - c->nlanes) * sizeof *c->lanes);
		c->nlanes = n;
	}
	struct lane *l = &c->lanes[trk];
	if (!l->seq)
		lane_start(x, l, c->next_seq++, trk, slba_trk, c->names, c->nnames);
	return l;
}

/* A KV command's key_hex (NULL: none), key_len and value_len. */
struct cmd_kv {
	const char *khex;
	int64_t klen, vlen;
	int has_klen, has_vlen;
};

/* Read command kv_id's KV args into *k (its key_hex stays valid until c->kv is reset). */
static void cmd_kv_read(struct cmd_ctx *c, uint32_t kv_id, struct cmd_kv *k)
{
	sqlite3_stmt *kv = c->kv;
	memset(k, 0, sizeof *k);
	sqlite3_bind_int64(kv, 1, kv_id);
	if (sqlite3_step(kv) != SQLITE_ROW)
		return;
	if (sqlite3_column_type(kv, 0) != SQLITE_NULL)
		k->khex = (const char *)sqlite3_column_text(kv, 0);
	if ((k->has_klen = sqlite3_column_type(kv, 1) != SQLITE_NULL))
		k->klen = sqlite3_column_int64(kv, 1);
	if ((k->has_vlen = sqlite3_column_type(kv, 2) != SQLITE_NULL))
		k->vlen = sqlite3_column_int64(kv, 2);
}

/* Encode command i's args (slba, data_len, the KV args, trace_id, role,
 * real_dur) at p; returns the end. */
static unsigned char *cmd_args(unsigned char *p, const struct chunk_view *v, uint32_t i, const struct cmd_kv *k)
{
	uint8_t f = v->flags[i];
	if (f & CHF_SLBA)
		p = pann(p, AN_SLBA, F.an_uint, (uint64_t)v->slba[i]);
	p = pann(p, AN_DATA_LEN, F.an_uint, v->data_len[i]);
	if (k->khex)
		p = pann_str(p, AN_KEY_HEX, k->khex);
	if (k->has_klen)
		p = pann(p, AN_KEY_LEN, k->klen < 0 ? F.an_int : F.an_uint, (uint64_t)k->klen);
	if (k->has_vlen)
		p = pann(p, AN_VALUE_LEN, k->vlen < 0 ? F.an_int : F.an_uint, (uint64_t)k->vlen);
	if (v->trace_id[i])
		p = pann(p, AN_TRACE_ID, F.an_uint, v->trace_id[i]);
	if (f & CHF_HEADER)
		p = pann(p, AN_ROLE, F.an_str_iid, STR_HEADER);
	else if (f & CHF_PAYLOAD)
		p = pann(p, AN_ROLE, F.an_str_iid, STR_PAYLOAD);
	return pann(p, AN_REAL_DUR, F.an_bool, (f & CHF_REAL) != 0);
}

/* Encode the rest of command i's BEGIN TrackEvent at p (type, name, its slba
 * counter point, the flows of command id); returns the end. */
static unsigned char *cmd_event(unsigned char *p, const struct cmd_ctx *c, const struct lane *l,
				const struct chunk_view *v, uint32_t i, int64_t id)
{
	p = pfv(p, F.te_type, KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
	p = pfv(p, F.te_name_iid, v->name[i] < c->nnames && c->names[v->name[i]] ? (uint64_t)v->name[i] + 1 : 0);
	if (v->slba_track[i]) { /* the slba counter point */
		if (v->slba_track[i] != l->slba_trk)
			p = pfv(p, F.te_xuuids, v->slba_track[i]);
		p = pfv(p, F.te_xvals, (v->flags[i] & CHF_SLBA) ? (uint64_t)v->slba[i] : 0);
	}
	uint64_t fs[4], tf[4];
	size_t nf, ntf;
	slice_flows(c->fl, id, fs, &nf, tf, &ntf);
	for (size_t k = 0; k < nf; k++)
		p = pf64(p, F.te_flow, fs[k]);
	for (size_t k = 0; k < ntf; k++)
		p = pf64(p, F.te_tflow, tf[k]);
	return p;
}

/* Command i of chunk v (id `id`): its BEGIN and END on its lane's sequence. */
static void export_cmd(struct exporter *x, struct cmd_ctx *c, const struct chunk_view *v, uint32_t i, int64_t id)
{
	struct lane *l = cmd_lane(x, c, v->track[i], v->slba_track[i]);
	struct cmd_kv k = {0};
	if (v->flags[i] & CHF_KV)
		cmd_kv_read(c, v->kv_id[i], &k);
	size_t need = 256 + (k.khex ? strlen(k.khex) : 0);
	if (need > c->tecap) {
		c->tecap = need * 2;
		c->te = xrealloc(c->te, c->tecap);
	}
	unsigned char *p = cmd_args(c->te, v, i, &k);
	if (v->flags[i] & CHF_KV)
		sqlite3_reset(c->kv);
	p = cmd_event(p, c, l, v, i, id);
	fast_packet(x, l->seq, v->ts[i], SEQ_NEEDS_INCREMENTAL_STATE, c->te, (size_t)(p - c->te));
	emit_end(x, l->seq, v->ts[i] + v->dur[i], 0);
}

/* The commands of chunk `first` (blob b of len bytes): all of them, or with
 * kc those the window keeps. Returns 0, -1 when the chunk is damaged. */
static int export_chunk(struct exporter *x, struct cmd_ctx *c, int64_t first, const void *b, size_t len,
			const struct kept_chunk *kc)
{
	struct chunk_view v;
	if (chunk_map(b, len, &v)) {
		chunk_damaged(first);
		return -1;
	}
	for (uint32_t i = 0; i < v.n; i++) {
		if (kc && !kept_chunk_has(kc, i))
			continue;
		x->kept++;
		x->slices++;
		export_cmd(x, c, &v, i, first + i);
	}
	return 0;
}

/* Under a window: the chunks holding a command it keeps, each read by id. */
static int export_kept_chunks(sqlite3 *db, struct exporter *x, struct cmd_ctx *c)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT data FROM kvio_cmd_chunk WHERE id = ?1", -1, &st, NULL))
		return -1;
	int rc = 0;
	const struct kept_chunk *kc = x->keep->chunks.v;
	for (size_t j = 0; !rc && !out_failed(&x->o) && j < x->keep->chunks.n; j++) {
		if (!kc[j].nkept)
			continue;
		sqlite3_bind_int64(st, 1, kc[j].first);
		if (sqlite3_step(st) == SQLITE_ROW)
			rc = export_chunk(x, c, kc[j].first, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
					  &kc[j]);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Command slices straight from their chunks, with their slba counter points
 * (under a window, the commands it keeps: chunks without one are not read). */
static int export_cmds(sqlite3 *db, struct exporter *x, const struct flows *fl)
{
	struct cmd_ctx c;
	sqlite3_stmt *st = NULL;
	if (cmd_ctx_init(db, &c, fl) || (!x->keep && sqlite3_prepare_v2(db, "SELECT id, data FROM kvio_cmd_chunk ORDER BY id", -1, &st, NULL))) {
		cmd_ctx_free(&c);
		return -1;
	}
	int rc = 0;
	if (x->keep)
		rc = export_kept_chunks(db, x, &c);
	while (st && !rc && !out_failed(&x->o) && sqlite3_step(st) == SQLITE_ROW)
		rc = export_chunk(x, &c, sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
				  (size_t)sqlite3_column_bytes(st, 1), NULL);
	if (sqlite3_finalize(st) != SQLITE_OK)
		rc = -1; /* a read error ended the chunks early */
	cmd_ctx_free(&c);
	return rc;
}

/* Stored counters (under a window: their points inside it; counters carry
 * no trace_id, --trace-id keeps them all). */
static int export_counters(sqlite3 *db, struct exporter *x)
{
	sqlite3_stmt *st;
	if (win_prepare(db, x->win, "SELECT ts, track_id, value FROM kvio_counter WHERE ts BETWEEN :lo AND :hi ORDER BY id",
			&st))
		return -1;
	while (!out_failed(&x->o) && sqlite3_step(st) == SQLITE_ROW)
		emit_counter(x, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
			     sqlite3_column_double(st, 2));
	return sqlite3_finalize(st) != SQLITE_OK ? -1 : 0;
}

int export_db(sqlite3 *db, struct outfile *of, const struct kvio_window *win, struct export_stats *stats)
{
	struct exporter x;
	memset(&x, 0, sizeof x);
	fieldnums_init();
	size_t pl = strlen(of->path);
	int rc = 0;
	x.o.f = of;
	x.o.gz = pl > 3 && !strcmp(of->path + pl - 3, ".gz");
	if (x.o.gz) {
		/* windowBits 15 + 16: a gzip wrapper, as gzopen(..., "wb6") writes */
		if (deflateInit2(&x.o.z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			kvio_err("%s: cannot start gzip", of->path);
			return 2;
		}
		x.o.zbuf = xmalloc(ZBUF_BYTES);
	}
	x.win = win && (win->has_time || win->has_tid) ? win : NULL;
	x.o.cap = 1 << 20;
	x.o.buf = xmalloc(x.o.cap);
	struct flows fl = {0};
	struct kept keep = {{0}, {0}};
	x.keep = x.win ? &keep : NULL;
	if ((x.win && window_kept(db, x.win, &keep)) || load_flows(db, x.keep, &fl)) {
		db_failed(db, "reading flows");
		rc = 2;
	}
	/* the sequence starts with cleared incremental state */
	if (!rc) {
		Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
		p.has_trusted_packet_sequence_id = 1;
		p.trusted_packet_sequence_id = SEQ_ID;
		p.has_sequence_flags = 1;
		p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
		out_packet(&x.o, &p);
		x.packets++;
	}
	if (!rc && (export_tracks(db, &x) || export_slices(db, &x, &fl) || export_cmds(db, &x, &fl) ||
		    export_counters(db, &x))) {
		db_failed(db, "reading the database");
		rc = 2;
	}
	out_flush(&x.o, 1);
	if (x.o.gz)
		deflateEnd(&x.o.z);
	if (stats) {
		stats->packets = x.packets;
		stats->kept = x.kept;
		stats->slices = x.slices;
		stats->bytes = x.o.bytes;
	}
	free(fl.r);
	kept_free(&keep);
	free(x.o.buf);
	free(x.o.zbuf);
	strpool_free(&x.names);
	strpool_free(&x.ann_names);
	strpool_free(&x.str_values);
	return rc;
}

static const char export_help[] =
	"usage: kvio-export trace.db -o kv.pftrace[.gz] [--time-range S,E] [--trace-id A[-B]]\n\n"
	"Writes the database as a Perfetto TrackEvent trace: drag it onto\n"
	"https://ui.perfetto.dev (processing stays in the browser) or open it with\n"
	"trace_processor. A .gz suffix gzips. The file appears only when complete.\n\n"
	"options:\n"
	"  -o, --out FILE        the .pftrace to write ('-': standard output, plain)\n"
	"  --time-range S,E      only what overlaps [S, E] seconds of the database's time\n"
	"                        (rebased per arm; absolute if ingested with --no-rebase);\n"
	"                        reads only the command chunks of the window\n"
	"  --trace-id A[-B]      only the commands and objects of trace_id A..B\n\n"
	"EXAMPLES\n"
	"  kvio-export trace.db -o kv.pftrace\n"
	"  kvio-export ab.db -o ab.pftrace.gz\n"
	"  kvio-export trace.db -o stall.pftrace --time-range 12.5,14.5\n\n"
	"exit status: 0 ok; 1 the database, or its --time-range/--trace-id window, holds no\n"
	"  slice (the trace is written); 2 usage or I/O error: unreadable database, an output that\n"
	"  could not be written (nothing left behind); 130/143 interrupted by\n"
	"  SIGINT/SIGTERM (nothing left behind)\n";

int cmd_export(int argc, char **argv)
{
	const char *dbpath = NULL, *out = NULL;
	struct kvio_window win = {0};
	for (int i = 1; i < argc; i++) {
		int r;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(export_help, stdout);
			return 0;
		} else if ((r = window_parse_opt(&win, argc, argv, &i)) != 0) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "-o") || opt_is(argv[i], "--out")) {
			if (out) {
				kvio_err("-o given twice (see --help)");
				return 2;
			}
			if (!(out = opt_value(argc, argv, &i, argv[i][1] == 'o' ? "-o" : "--out")))
				return 2;
		} else if (argv[i][0] == '-') {
			kvio_err("unknown option '%s' (see --help)", argv[i]);
			return 2;
		} else if (!dbpath) {
			dbpath = argv[i];
		} else {
			kvio_err("unexpected argument '%s' (see --help)", argv[i]);
			return 2;
		}
	}
	if (!dbpath || !out) {
		kvio_err("need a trace.db and -o FILE (see --help)");
		return 2;
	}
	struct outfile of;
	const char *in[] = {dbpath};
	if (outfile_open(&of, out, in, 1))
		return 2;
	sqlite3 *db = db_open_ro(dbpath);
	if (!db) {
		outfile_abort(&of);
		return 2;
	}
	struct export_stats s;
	int rc = export_db(db, &of, &win, &s);
	sqlite3_close(db);
	if (rc)
		outfile_abort(&of);
	else
		rc = outfile_commit(&of);
	if (!rc) /* with -o -, standard output holds the trace: the line goes to stderr */
		fprintf(of.std ? stderr : stdout, "kvio-export: wrote %s (%llu packets, %llu bytes before compression)\n",
			of.path, (unsigned long long)s.packets, (unsigned long long)s.bytes);
	if (!rc && !s.slices) { /* written, as ingest writes its database, but nothing in it to look at */
		char wd[128];
		if (win.has_time || win.has_tid)
			kvio_err("%s: the %s window holds no command or object: %s holds nothing to look at (exit 1)",
				 dbpath, window_desc(&win, wd, sizeof wd), of.path);
		else
			kvio_err("%s holds no slice: %s holds nothing to look at (exit 1)", dbpath, of.path);
		rc = 1;
	}
	return rc;
}
