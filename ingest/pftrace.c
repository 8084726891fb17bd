/* pftrace.c — kvio-ingest --pftrace: a TrackEvent .pftrace (kvio's own, or one
 * written by the reference kvio2perfetto.py) back into kvio's tables.
 *
 * Reading follows trace_processor's rules for what kvio's files use: track
 * descriptors (process, parent, counter), per-sequence interning (event names,
 * annotation names, string values; cleared by SEQ_INCREMENTAL_STATE_CLEARED),
 * per-sequence defaults (track_uuid, extra counter tracks), SLICE_BEGIN/END
 * paired per track in timestamp order, instants, counters (TYPE_COUNTER events
 * and extra counter values), and v2 flows (flow_ids continue a flow, terminating_flow_ids end it).
 * Commands (slices on writes*, reads*, other*, untagged* tracks whose args are
 * the command args) go to the columnar kvio_cmd; everything else to
 * kvio_slice/kvio_arg. Plain and gzip files are both read. */
#include "dbw.h"
#include "../db/schema.h"
#include "kvio.pb-c.h"
#include "../lib/strpool.h"
#include "../lib/u64map.h"
#include "../lib/util.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- what the file holds ------------------------------------------------ */
struct tdesc {
	uint64_t uuid, parent;
	int has_parent, has_proc, is_counter, has_order, explicit_order;
	int32_t pid, order;
	uint32_t name, pname, unit; /* pool ids; 0 = none */
	int64_t id, upid;           /* assigned when written */
	int written;
};

enum { V_INT, V_UINT, V_BOOL, V_REAL, V_STR };
struct iarg {
	uint32_t key;  /* pool id of "debug.<name>" */
	uint8_t vt;
	int64_t i;
	double d;
	uint32_t s;
};

struct iev {
	int64_t ts;
	uint64_t track;
	uint32_t order;    /* file order, the tie-break */
	uint8_t type;
	uint8_t is_double;
	uint32_t name;
	uint32_t arg0, nargs;
	uint32_t flow0, nflow, ntflow; /* flows then terminating flows, in flowv */
	int64_t ci;
	double cd;
};

struct seqstate {
	struct u64map names, ann, strs; /* iid -> pool id */
	/* TracePacketDefaults.track_event_defaults (incremental state too) */
	uint64_t def_track;
	int has_def_track;
	struct vec def_xuuids;          /* uint64: default extra counter tracks */
};

struct imp {
	struct strpool p;
	struct vec td;    /* struct tdesc */
	struct u64map tdi; /* uuid -> td index */
	struct vec ev;    /* struct iev */
	struct vec args;  /* struct iarg */
	struct vec flowv; /* uint64 */
	struct u64map seqi; /* sequence id -> seq index */
	struct vec seqs;  /* struct seqstate */
	uint64_t packets, bad_packets, unknown_iid, bad_counters;
};

static struct seqstate *seq_of(struct imp *m, uint32_t id)
{
	int fresh;
	uint32_t *v = map_slot(&m->seqi, id, &fresh);
	if (fresh) {
		*v = (uint32_t)m->seqs.n;
		struct seqstate z;
		memset(&z, 0, sizeof z);
		*(struct seqstate *)vec_push(&m->seqs, sizeof z) = z;
	}
	return &VEC_AT(&m->seqs, struct seqstate, *v);
}

static void seq_clear(struct seqstate *s)
{
	map_free(&s->names);
	map_free(&s->ann);
	map_free(&s->strs);
	vec_free(&s->def_xuuids);
	s->has_def_track = 0;
	s->def_track = 0;
}

static uint32_t str_id(struct imp *m, const char *s)
{
	return s ? strpool_id(&m->p, s, strlen(s), NULL) : 0;
}

/* A TrackDescriptor: kept by uuid (a re-emitted descriptor: the first one stands). */
static void track_descriptor(struct imp *m, const Kvio__Pf__TrackDescriptor *d)
{
	struct tdesc t;
	memset(&t, 0, sizeof t);
	t.uuid = d->uuid;
	t.has_parent = d->has_parent_uuid;
	t.parent = d->parent_uuid;
	t.name = str_id(m, d->name);
	if (d->process) {
		t.has_proc = 1;
		t.pid = d->process->pid;
		t.pname = str_id(m, d->process->process_name);
	}
	if (d->counter) {
		t.is_counter = 1;
		t.unit = str_id(m, d->counter->unit_name);
	}
	t.has_order = d->has_sibling_order_rank;
	t.order = d->sibling_order_rank;
	t.explicit_order = d->has_child_ordering &&
			   d->child_ordering == KVIO__PF__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
	int fresh;
	uint32_t *v = map_slot(&m->tdi, t.uuid, &fresh);
	if (fresh) {
		*v = (uint32_t)m->td.n;
		*(struct tdesc *)vec_push(&m->td, sizeof t) = t;
	} /* a re-emitted descriptor: the first one stands */
}

/* A packet's interned names and strings, and its TrackEvent defaults, into sequence sq. */
static void seq_state(struct imp *m, struct seqstate *sq, const Kvio__Pf__TracePacket *pk)
{
	if (pk->interned_data) {
		const Kvio__Pf__InternedData *d = pk->interned_data;
		int fresh;
		for (size_t i = 0; i < d->n_event_names; i++)
			*map_slot(&sq->names, d->event_names[i]->iid, &fresh) = str_id(m, d->event_names[i]->name);
		for (size_t i = 0; i < d->n_debug_annotation_names; i++)
			*map_slot(&sq->ann, d->debug_annotation_names[i]->iid, &fresh) =
				str_id(m, d->debug_annotation_names[i]->name);
		for (size_t i = 0; i < d->n_debug_annotation_string_values; i++) {
			const Kvio__Pf__InternedString *s = d->debug_annotation_string_values[i];
			*map_slot(&sq->strs, s->iid, &fresh) =
				strpool_id(&m->p, (const char *)s->str.data, s->has_str ? s->str.len : 0, NULL);
		}
	}
	if (pk->trace_packet_defaults && pk->trace_packet_defaults->track_event_defaults) {
		const Kvio__Pf__TrackEventDefaults *d = pk->trace_packet_defaults->track_event_defaults;
		sq->has_def_track = d->has_track_uuid;
		sq->def_track = d->track_uuid;
		sq->def_xuuids.n = 0;
		for (size_t i = 0; i < d->n_extra_counter_track_uuids; i++)
			*(uint64_t *)vec_push(&sq->def_xuuids, sizeof(uint64_t)) = d->extra_counter_track_uuids[i];
	}
}

/* The extra counter values of event te at ts: counter points on the event's
 * extra counter tracks, else the sequence's default ones. */
static void extra_counters(struct imp *m, const struct seqstate *sq, const Kvio__Pf__TrackEvent *te, int64_t ts)
{
	for (size_t i = 0; i < te->n_extra_counter_values; i++) {
		uint64_t trk = te->n_extra_counter_track_uuids ? (i < te->n_extra_counter_track_uuids
								   ? te->extra_counter_track_uuids[i] : 0)
			     : i < sq->def_xuuids.n ? VEC_AT(&sq->def_xuuids, uint64_t, i) : 0;
		if (!trk) {
			m->bad_counters++;
			continue;
		}
		struct iev c;
		memset(&c, 0, sizeof c);
		c.ts = ts;
		c.track = trk;
		c.order = (uint32_t)m->ev.n;
		c.type = KVIO__PF__TRACK_EVENT__TYPE__TYPE_COUNTER;
		c.ci = te->extra_counter_values[i];
		*(struct iev *)vec_push(&m->ev, sizeof c) = c;
	}
}

/* Debug annotation a of an event as an arg ("debug." + its name, its typed value). */
static void annotation(struct imp *m, const struct seqstate *sq, const Kvio__Pf__DebugAnnotation *a)
{
	uint32_t nm = 0;
	if (a->name)
		nm = str_id(m, a->name);
	else if (!map_get(&sq->ann, a->name_iid, &nm)) {
		m->unknown_iid++;
		return;
	}
	char key[256];
	snprintf(key, sizeof key, "debug.%s", strpool_str(&m->p, nm));
	struct iarg g;
	memset(&g, 0, sizeof g);
	g.key = str_id(m, key);
	if (a->has_bool_value) { g.vt = V_BOOL; g.i = a->bool_value; }
	else if (a->has_uint_value) { g.vt = V_UINT; g.i = (int64_t)a->uint_value; }
	else if (a->has_int_value) { g.vt = V_INT; g.i = a->int_value; }
	else if (a->has_double_value) { g.vt = V_REAL; g.d = a->double_value; }
	else if (a->string_value) { g.vt = V_STR; g.s = str_id(m, a->string_value); }
	else if (a->has_string_value_iid) {
		g.vt = V_STR;
		if (!map_get(&sq->strs, a->string_value_iid, &g.s))
			m->unknown_iid++;
	} else
		return; /* nested or pointer values: not kvio's */
	*(struct iarg *)vec_push(&m->args, sizeof g) = g;
}

static void packet(struct imp *m, const Kvio__Pf__TracePacket *pk)
{
	m->packets++;
	if (pk->track_descriptor)
		track_descriptor(m, pk->track_descriptor);
	uint32_t sid = pk->has_trusted_packet_sequence_id ? pk->trusted_packet_sequence_id : 0;
	struct seqstate *sq = seq_of(m, sid);
	if (pk->has_sequence_flags && (pk->sequence_flags & 1))
		seq_clear(sq);
	seq_state(m, sq, pk);
	const Kvio__Pf__TrackEvent *te = pk->track_event;
	if (!te)
		return;
	struct iev e;
	memset(&e, 0, sizeof e);
	e.ts = (int64_t)pk->timestamp;
	e.track = te->has_track_uuid ? te->track_uuid : sq->has_def_track ? sq->def_track : 0;
	extra_counters(m, sq, te, e.ts);
	e.order = (uint32_t)m->ev.n;
	e.type = (uint8_t)te->type;
	if (te->name)
		e.name = str_id(m, te->name);
	else if (te->has_name_iid && !map_get(&sq->names, te->name_iid, &e.name))
		m->unknown_iid++;
	e.arg0 = (uint32_t)m->args.n;
	for (size_t i = 0; i < te->n_debug_annotations; i++)
		annotation(m, sq, te->debug_annotations[i]);
	e.nargs = (uint32_t)(m->args.n - e.arg0);
	e.flow0 = (uint32_t)m->flowv.n;
	for (size_t i = 0; i < te->n_flow_ids; i++)
		*(uint64_t *)vec_push(&m->flowv, sizeof(uint64_t)) = te->flow_ids[i];
	for (size_t i = 0; i < te->n_terminating_flow_ids; i++)
		*(uint64_t *)vec_push(&m->flowv, sizeof(uint64_t)) = te->terminating_flow_ids[i];
	e.nflow = (uint32_t)te->n_flow_ids;
	e.ntflow = (uint32_t)te->n_terminating_flow_ids;
	if (te->has_double_counter_value) {
		e.is_double = 1;
		e.cd = te->double_counter_value;
	} else {
		e.ci = te->counter_value;
	}
	*(struct iev *)vec_push(&m->ev, sizeof e) = e;
}

/* Read the Trace stream packet by packet. 0, or -1 after a one-line error. */
static int read_trace(struct imp *m, const char *path)
{
	gzFile f = gzopen(path, "rb");
	if (!f) {
		kvio_err("%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
		return -1;
	}
	gzbuffer(f, 1 << 20);
	size_t cap = 1 << 16;
	unsigned char *buf = xmalloc(cap);
	uint64_t off = 0;
	int rc = 0;
	for (;;) {
		/* tag varint */
		uint64_t tag = 0, len = 0;
		int c, shift = 0, got = 0;
		while ((c = gzgetc(f)) >= 0) {
			got = 1;
			tag |= (uint64_t)(c & 0x7f) << shift;
			shift += 7;
			if (!(c & 0x80) || shift > 63)
				break;
		}
		if (!got)
			break; /* clean end */
		if (c < 0) {
			kvio_err("%s: truncated at byte %llu (inside a field tag)", path, (unsigned long long)off);
			rc = -1;
			break;
		}
		int wt = tag & 7;
		uint64_t field = tag >> 3;
		if (wt != 2 && off == 0 && tag == '{') { /* "{" is tag field 15, wire type 3 */
			kvio_err("%s: starts with '{': a JSONL capture, not a Perfetto trace (give it as --sem or --ebpf)", path);
			rc = -1;
			break;
		}
		if (wt != 2) {
			kvio_err("%s: byte %llu: field %llu has wire type %d; not a Perfetto trace", path,
				 (unsigned long long)off, (unsigned long long)field, wt);
			rc = -1;
			break;
		}
		shift = 0;
		while ((c = gzgetc(f)) >= 0) {
			len |= (uint64_t)(c & 0x7f) << shift;
			shift += 7;
			if (!(c & 0x80) || shift > 63)
				break;
		}
		if (c < 0 || len > (1u << 30)) {
			kvio_err("%s: byte %llu: bad packet length", path, (unsigned long long)off);
			rc = -1;
			break;
		}
		if (len > cap) {
			cap = len;
			buf = xrealloc(buf, cap);
		}
		if (len && gzread(f, buf, (unsigned)len) != (int)len) {
			kvio_err("%s: truncated at byte %llu (a packet of %llu bytes)", path,
				 (unsigned long long)off, (unsigned long long)len);
			rc = -1;
			break;
		}
		off = (uint64_t)gztell(f);
		if (field != 1)
			continue;
		Kvio__Pf__TracePacket *pk = kvio__pf__trace_packet__unpack(NULL, len, buf);
		if (!pk) {
			m->bad_packets++;
			continue;
		}
		packet(m, pk);
		kvio__pf__trace_packet__free_unpacked(pk, NULL);
	}
	free(buf);
	gzclose(f);
	return rc;
}

/* ---- writing ----------------------------------------------------------- */

static int ev_order(const void *x, const void *y)
{
	const struct iev *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Write descriptor k (its parent first); returns its track id. */
static int64_t write_track(struct dbw *w, struct imp *m, size_t k, int depth)
{
	struct tdesc *t = &VEC_AT(&m->td, struct tdesc, k);
	if (t->written)
		return t->id;
	t->written = 1; /* also breaks parent cycles */
	int64_t parent = -1, upid = -1;
	uint32_t pk;
	if (t->has_parent && depth < 64 && map_get(&m->tdi, t->parent, &pk)) {
		parent = write_track(w, m, pk, depth + 1);
		upid = VEC_AT(&m->td, struct tdesc, pk).upid;
	}
	if (t->has_proc) {
		upid = dbw_process(w, t->pid, t->pname ? strpool_str(&m->p, t->pname) : NULL);
	}
	t->upid = upid;
	t->id = dbw_track(w, t->name ? strpool_str(&m->p, t->name) : NULL, parent, upid,
			  t->is_counter ? (t->unit ? strpool_str(&m->p, t->unit) : "") : NULL,
			  t->has_order ? t->order : -1, t->explicit_order);
	return t->id;
}

/* A slice found by pairing: begin event index, dur, depth. */
struct islice {
	uint32_t ev;
	int64_t dur;
	int depth;
	int is_cmd;
	int64_t id;
};

static int cmd_track(const char *name)
{
	return name && (!strncmp(name, "writes", 6) || !strncmp(name, "reads", 5) ||
			!strncmp(name, "other", 5) || !strncmp(name, "untagged", 8));
}

/* The command columns of e's args; 0 if an arg is not one of them. */
static int as_cmd(const struct imp *m, const struct iev *e, struct cmd_row *r)
{
	memset(r, 0, sizeof *r);
	for (uint32_t i = 0; i < e->nargs; i++) {
		const struct iarg *g = &VEC_AT(&m->args, struct iarg, e->arg0 + i);
		const char *k = strpool_str(&m->p, g->key) + 6;
		int isint = g->vt == V_UINT || g->vt == V_INT;
		if (!strcmp(k, "slba") && g->vt == V_UINT) { r->slba = g->i; r->flags |= CHF_SLBA; }
		else if (!strcmp(k, "data_len") && isint && g->i >= 0 && g->i <= UINT32_MAX) r->data_len = (uint32_t)g->i;
		else if (!strcmp(k, "trace_id") && isint && g->i > 0 && g->i <= UINT32_MAX) r->trace_id = (uint32_t)g->i;
		else if (!strcmp(k, "real_dur") && g->vt == V_BOOL) { if (g->i) r->flags |= CHF_REAL; }
		else if (!strcmp(k, "role") && g->vt == V_STR && !strcmp(strpool_str(&m->p, g->s), "header")) r->flags |= CHF_HEADER;
		else if (!strcmp(k, "role") && g->vt == V_STR && !strcmp(strpool_str(&m->p, g->s), "payload")) r->flags |= CHF_PAYLOAD;
		else if (!strcmp(k, "key_hex") && g->vt == V_STR) { r->flags |= CHF_KV; r->key_hex = strpool_str(&m->p, g->s); }
		else if (!strcmp(k, "key_len") && isint) { r->flags |= CHF_KV; r->has_key_len = 1; r->key_len = g->i; }
		else if (!strcmp(k, "value_len") && isint) { r->flags |= CHF_KV; r->has_value_len = 1; r->value_len = g->i; }
		else return 0;
	}
	return 1;
}

static void write_args(struct dbw *w, const struct imp *m, const struct iev *e, int64_t id)
{
	for (uint32_t i = 0; i < e->nargs; i++) {
		const struct iarg *g = &VEC_AT(&m->args, struct iarg, e->arg0 + i);
		const char *key = strpool_str(&m->p, g->key) + 6; /* dbw adds "debug." */
		char disp[32];
		switch (g->vt) {
		case V_INT: dbw_arg_row(w, id, key, 0, g->i, NULL, 0, NULL); break;
		case V_UINT:
			snprintf(disp, sizeof disp, "%llu", (unsigned long long)(uint64_t)g->i);
			dbw_arg_row(w, id, key, 1, g->i, NULL, 0, g->i < 0 ? disp : NULL);
			break;
		case V_BOOL: dbw_arg_b(w, id, key, (int)g->i); break;
		case V_REAL: dbw_arg_d(w, id, key, g->d); break;
		default: dbw_arg_s(w, id, key, strpool_str(&m->p, g->s)); break;
		}
	}
}

struct pend_flow {
	uint64_t fid;
	uint32_t slice; /* index into slices */
};

/* The events paired into slices, per track (BEGIN/END nest; an instant is
 * a slice of dur 0; a BEGIN that never ends keeps dur -1, as in
 * trace_processor), and the flows between them. */
struct pairing {
	struct islice *sl; /* slices, in the events' (sorted) order */
	size_t ns;
	struct vec flows;  /* items: int64[3] = out, in (slice indices), flow id */
	uint64_t unmatched_end, unended, long_names;
};

/* Event i (a BEGIN or an instant) opens slice p->ns on its track, and joins the
 * flows it names. */
static void open_slice(struct imp *m, struct pairing *p, struct u64map *open_top, uint32_t *below,
		       struct u64map *flow_last, size_t i)
{
	const struct iev *e = &VEC_AT(&m->ev, struct iev, i);
	struct islice *sl = p->sl;
	size_t ns = p->ns;
	int fresh;
	uint32_t *top = map_slot(open_top, e->track, &fresh);
	if (fresh)
		*top = 0;
	int depth = *top ? sl[*top - 1].depth + 1 : 0; /* one more than the open slice below */
	int begin = e->type == KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	sl[ns] = (struct islice){(uint32_t)i, begin ? -1 : 0, depth, 0, 0};
	p->unended += begin;
	if (begin) {
		below[ns] = *top;
		*top = (uint32_t)ns + 1;
	}
	for (uint32_t f = 0; f < e->nflow + e->ntflow; f++) { /* flows through this slice */
		uint64_t fid = VEC_AT(&m->flowv, uint64_t, e->flow0 + f);
		/* value: slice index + 1 of the flow's latest event; 0 = ended */
		uint32_t *last = map_slot(flow_last, fid, &fresh);
		if (!fresh && *last) {
			int64_t *fr = vec_push(&p->flows, 3 * sizeof(int64_t));
			fr[0] = *last - 1;
			fr[1] = (int64_t)ns;
			fr[2] = (int64_t)fid;
		}
		*last = f < e->nflow ? (uint32_t)ns + 1 : 0;
	}
	p->ns++;
}

/* Pair m's events (sorted here in time order) into p's slices. */
static void pair_slices(struct imp *m, struct pairing *p)
{
	struct iev *ev = m->ev.v;
	size_t ne = m->ev.n;
	if (ne)
		qsort(ev, ne, sizeof *ev, ev_order);
	p->sl = xmalloc((ne ? ne : 1) * sizeof *p->sl);
	struct u64map open_top = {0}; /* track uuid -> top of its open-slice stack (slice index + 1) */
	uint32_t *below = xmalloc((ne ? ne : 1) * sizeof *below);
	struct u64map flow_last = {0}; /* flow id -> its latest slice */
	for (size_t i = 0; i < ne; i++) {
		struct iev *e = &ev[i];
		int fresh;
		if (e->type == KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN ||
		    e->type == KVIO__PF__TRACK_EVENT__TYPE__TYPE_INSTANT) {
			open_slice(m, p, &open_top, below, &flow_last, i);
		} else if (e->type == KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
			uint32_t *top = map_slot(&open_top, e->track, &fresh);
			if (fresh || !*top) {
				if (fresh)
					*top = 0;
				p->unmatched_end++;
				continue;
			}
			uint32_t s = *top - 1;
			*top = below[s];
			p->sl[s].dur = e->ts - ev[p->sl[s].ev].ts;
			p->unended--;
		}
	}
	free(below);
	map_free(&open_top);
	map_free(&flow_last);
}

/* The database track id of event e's track (0: none). */
static int64_t ev_track(const struct imp *m, const struct iev *e)
{
	uint32_t tk = 0;
	return map_get(&m->tdi, e->track, &tk) ? VEC_AT(&m->td, struct tdesc, tk).id : 0;
}

/* The command slices first (consecutive ids, for chunks): the depth-0 ended
 * BEGINs on command tracks whose args read as a command's and whose name is
 * one (at most CHUNK_NAME_MAX bytes). */
static void write_cmds(struct dbw *w, struct imp *m, struct pairing *p)
{
	const struct iev *ev = m->ev.v;
	size_t ncmd = 0;
	for (size_t s = 0; s < p->ns; s++) {
		const struct iev *e = &ev[p->sl[s].ev];
		uint32_t tk;
		const char *tname = NULL;
		if (map_get(&m->tdi, e->track, &tk)) {
			const struct tdesc *t = &VEC_AT(&m->td, struct tdesc, tk);
			tname = t->name ? strpool_str(&m->p, t->name) : NULL;
		}
		struct cmd_row r;
		p->sl[s].is_cmd = e->type == KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN && p->sl[s].depth == 0 &&
				  p->sl[s].dur >= 0 && cmd_track(tname) && as_cmd(m, e, &r);
		if (p->sl[s].is_cmd && e->name && strlen(strpool_str(&m->p, e->name)) > CHUNK_NAME_MAX) {
			p->sl[s].is_cmd = 0; /* a command's name is short: a plain slice (counted) */
			p->long_names++;
		}
		if (p->sl[s].is_cmd)
			ncmd++;
	}
	int64_t c = dbw_reserve(w, (int64_t)ncmd);
	for (size_t s = 0; s < p->ns; s++) {
		if (!p->sl[s].is_cmd)
			continue;
		const struct iev *e = &ev[p->sl[s].ev];
		struct cmd_row r;
		as_cmd(m, e, &r);
		r.ts = e->ts;
		r.dur = p->sl[s].dur;
		r.track = ev_track(m, e);
		r.name = e->name ? strpool_str(&m->p, e->name) : NULL;
		p->sl[s].id = c;
		dbw_cmd(w, c++, &r);
	}
	dbw_flush_chunk(w);
}

/* The other slices with their args, the counters, the flows, and what was read. */
static void write_rest(struct dbw *w, struct imp *m, struct pairing *p, const char *path)
{
	const struct iev *ev = m->ev.v;
	struct islice *sl = p->sl;
	for (size_t s = 0; s < p->ns && w->rc == SQLITE_OK; s++) {
		if (sl[s].is_cmd)
			continue;
		const struct iev *e = &ev[sl[s].ev];
		sl[s].id = dbw_reserve(w, 1);
		dbw_slice_id(w, sl[s].id, e->ts, sl[s].dur, ev_track(m, e), e->name ? strpool_str(&m->p, e->name) : "");
		if (sl[s].depth)
			dbw_set_depth(w, sl[s].id, sl[s].depth);
		write_args(w, m, e, sl[s].id);
	}
	for (size_t i = 0; i < m->ev.n && w->rc == SQLITE_OK; i++) {
		const struct iev *e = &ev[i];
		uint32_t tk;
		if (e->type != KVIO__PF__TRACK_EVENT__TYPE__TYPE_COUNTER || !map_get(&m->tdi, e->track, &tk))
			continue;
		dbw_counter(w, e->ts, VEC_AT(&m->td, struct tdesc, tk).id, e->is_double ? e->cd : (double)e->ci);
	}
	for (size_t i = 0; i < p->flows.n && w->rc == SQLITE_OK; i++) { /* items of 3 int64 */
		const int64_t *fr = (const int64_t *)p->flows.v + 3 * i;
		dbw_flow(w, sl[fr[0]].id, sl[fr[1]].id, fr[2]);
	}
	dbw_stat(w, path, "pftrace_packets", (int64_t)m->packets);
	dbw_stat(w, path, "pftrace_bad_packets", (int64_t)m->bad_packets);
	dbw_stat(w, path, "pftrace_unknown_iids", (int64_t)m->unknown_iid);
	dbw_stat(w, path, "pftrace_extra_counter_without_track", (int64_t)m->bad_counters);
	dbw_stat(w, path, "pftrace_unmatched_end", (int64_t)p->unmatched_end);
	dbw_stat(w, path, "pftrace_unended", (int64_t)p->unended);
	dbw_stat(w, path, "pftrace_long_cmd_names", (int64_t)p->long_names);
}

static void imp_free(struct imp *m)
{
	for (size_t i = 0; i < m->seqs.n; i++)
		seq_clear(&VEC_AT(&m->seqs, struct seqstate, i));
	vec_free(&m->seqs);
	map_free(&m->seqi);
	vec_free(&m->td);
	map_free(&m->tdi);
	vec_free(&m->ev);
	vec_free(&m->args);
	vec_free(&m->flowv);
	strpool_free(&m->p);
}

int pftrace_import(const char *path, sqlite3 *db)
{
	struct imp m;
	memset(&m, 0, sizeof m);
	strpool_id(&m.p, "", 0, NULL); /* id 0 */
	int rc = read_trace(&m, path);
	if (!rc && !m.packets) {
		kvio_err("%s: no trace packets (not a Perfetto trace?)", path);
		rc = -1;
	}
	struct dbw w;
	int wrc = SQLITE_OK;
	struct pairing p = {0};
	if (!rc && (wrc = dbw_begin(&w, db)) == SQLITE_OK) {
		for (size_t k = 0; k < m.td.n; k++)
			write_track(&w, &m, k, 0);
		pair_slices(&m, &p);
		if (p.unmatched_end)
			kvio_err("%s: %llu SLICE_END events without a matching begin (ignored)", path,
				 (unsigned long long)p.unmatched_end);
		if (p.unended)
			kvio_err("%s: %llu SLICE_BEGIN events never end (dur -1, as trace_processor shows them)", path,
				 (unsigned long long)p.unended);
		write_cmds(&w, &m, &p);
		if (p.long_names)
			kvio_err("%s: %llu command slices with a name longer than %d bytes (kept as plain slices)", path,
				 (unsigned long long)p.long_names, CHUNK_NAME_MAX);
		write_rest(&w, &m, &p, path);
		wrc = dbw_end(&w, 0);
	}
	free(p.sl);
	vec_free(&p.flows);
	imp_free(&m);
	if (m.bad_packets)
		kvio_err("%s: %llu packets could not be decoded (skipped)", path, (unsigned long long)m.bad_packets);
	return rc || wrc != SQLITE_OK ? 2 : 0;
}
