/* pfwrite.c — writing a .pftrace: the output buffer (plain or gzip), one
 * event packet built with protobuf-c (slices with their annotations), the
 * hot path that encodes command, END and counter packets directly, and the
 * export's one error line. */
#include "export_int.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include "../db/memo.h"
#include "../lib/outfile.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Write the buffered bytes (compressed when gz; finish: end the gzip stream). */
void out_flush(struct out *o, int finish)
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
	if (o->mem && o->n + n > o->cap) {
		o->cap = 2 * (o->n + n);
		o->buf = xrealloc(o->buf, o->cap);
	}
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
int out_failed(const struct out *o)
{
	return o->f->err != 0;
}

/* Append one packet as Trace.packet (field 1, length-delimited). */
void out_packet(struct out *o, const Kvio__Pf__TracePacket *p)
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

/* Append n bytes of packets already encoded, a buffer at a time. */
void out_bytes(struct out *o, const unsigned char *b, size_t n)
{
	while (n && !out_failed(o)) {
		size_t room = o->cap - o->n;
		if (!room) {
			out_reserve(o, 1);
			continue;
		}
		size_t k = n < room ? n : room;
		memcpy(o->buf + o->n, b, k);
		o->n += k;
		b += k;
		n -= k;
	}
}

/* ---- interning: string -> iid ---------------------------------------------- */

/* iid of s in pool k of x (0 names, 1 ann_names, 2 str_values; pool id + 1:
 * iid 0 means "none"); *fresh when s is new (the caller emits its
 * InternedData entry), or under a replay when its first encoding found it new. */
static uint64_t intern(struct exporter *x, int k, const char *s, int *fresh)
{
	struct strpool *t = k == 0 ? &x->names : k == 1 ? &x->ann_names : &x->str_values;
	uint32_t id = strpool_id(t, s, strlen(s), fresh);
	if (x->replay) {
		*fresh = id == x->replay_next[k];
		x->replay_next[k] += (uint32_t)*fresh;
	}
	return (uint64_t)id + 1;
}

void ev_reset(struct exporter *x, int type, int64_t ts, uint64_t track)
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

void ev_name(struct exporter *x, const char *name)
{
	struct ev *e = &x->e;
	int fresh;
	uint64_t iid = intern(x, 0, name ? name : "", &fresh);
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
	a->name_iid = intern(x, 1, k, &fresh);
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

void ann_uint(struct exporter *x, const char *key, uint64_t v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_uint_value = 1; a->uint_value = v; }
}

void ann_int(struct exporter *x, const char *key, int64_t v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_int_value = 1; a->int_value = v; }
}

void ann_bool(struct exporter *x, const char *key, int v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_bool_value = 1; a->bool_value = v != 0; }
}

void ann_double(struct exporter *x, const char *key, double v)
{
	Kvio__Pf__DebugAnnotation *a = ev_ann(x, key);
	if (a) { a->has_double_value = 1; a->double_value = v; }
}

void ann_str(struct exporter *x, const char *key, const char *v, int interned)
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
	a->string_value_iid = intern(x, 2, v, &fresh);
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

void ev_emit(struct exporter *x)
{
	struct ev *e = &x->e;
	if (e->idata.n_event_names || e->idata.n_debug_annotation_names ||
	    e->idata.n_debug_annotation_string_values)
		e->p.interned_data = &e->idata;
	out_packet(&x->o, &e->p);
	x->packets++;
}

struct fieldnums F;

static unsigned fnum(const ProtobufCMessageDescriptor *d, const char *name)
{
	return protobuf_c_message_descriptor_get_field_by_name(d, name)->id;
}

void fieldnums_init(void)
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

/* One packet: timestamp, sequence, the encoded TrackEvent te[0..tn), flags. */
void fast_packet(struct exporter *x, uint32_t seq, int64_t ts, unsigned flags, const unsigned char *te,
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
void emit_end(struct exporter *x, uint32_t seq, int64_t ts, uint64_t track)
{
	unsigned char te[32], *p = te;
	p = pfv(p, F.te_type, KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_END);
	if (track)
		p = pfv(p, F.te_track, track);
	fast_packet(x, seq, ts, 0, te, (size_t)(p - te));
}

void emit_counter(struct exporter *x, int64_t ts, uint64_t track, double v)
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

/* Set once a failure has been named on stderr: one line for one failure,
 * whichever statement or caller meets it (a caller's generic line would only
 * add SQLite's "not an error"). */
static int err_said;

/* The failure's line, unless one was said already. */
void say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say_once(const char *fmt, ...)
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
void db_failed(sqlite3 *db, const char *what)
{
	int ec = sqlite3_errcode(db);
	say_once("%s: %s", what, ec != SQLITE_OK && ec != SQLITE_ROW && ec != SQLITE_DONE ? sqlite3_errmsg(db) : "failed");
}

/* A chunk or a directory table of db that fails kvio's checks (db/dir.h). */
void chunk_damaged(sqlite3 *db, const char *why)
{
	say_once("%s: " KVIO_DAMAGED "%s", db_name(db), why);
}

int export_read_chunk(sqlite3 *db, struct exporter *x, size_t k, int check, struct chunk_view *v)
{
	char why[256];
	/* a chunk this process checked already (the findings' connection, db/memo.h) is not checked again */
	check = check && !db_unchecked() && !(x->checked && __atomic_load_n(&x->checked[k], __ATOMIC_ACQUIRE));
	int rc = chunk_read(db, "main", &x->dir, k, check, &x->buf, &x->bufcap, v, why, sizeof why);
	if (rc == SQLITE_OK && check && x->checked)
		__atomic_store_n(&x->checked[k], 1, __ATOMIC_RELEASE);
	if (rc == SQLITE_CORRUPT)
		chunk_damaged(db, why);
	else if (rc != SQLITE_OK)
		say_once("reading the database: %s", sqlite3_errstr(rc));
	return rc == SQLITE_OK ? 0 : -1;
}

