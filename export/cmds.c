/* cmds.c — the command slices, straight from their chunks: one trusted
 * packet sequence per command track (lane), every packet encoded directly. */
#include "export_int.h"
#include <stdlib.h>

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
	char **names;     /* the directory's (x->dir) */
	size_t nnames;
	struct lane *lanes; /* by track id: tracks 1..ntracks - 1 (a chunk's are checked) */
	size_t nlanes;
	uint32_t next_seq;
	sqlite3_stmt *kv; /* a command's key_hex, key_len, value_len */
	unsigned char *te;
	size_t tecap;
	const struct flows *fl;
};

static void cmd_ctx_free(struct cmd_ctx *c)
{
	free(c->lanes);
	free(c->te);
	sqlite3_finalize(c->kv);
}

/* The command names, a lane per track, the KV lookup; 0 or -1. */
static int cmd_ctx_init(sqlite3 *db, const struct exporter *x, struct cmd_ctx *c, const struct flows *fl)
{
	memset(c, 0, sizeof *c);
	c->fl = fl;
	c->next_seq = LANE_SEQ0;
	c->names = x->dir.names;
	c->nnames = x->dir.nnames;
	c->nlanes = x->dir.ntracks;
	c->lanes = xcalloc(c->nlanes ? c->nlanes : 1, sizeof *c->lanes);
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
	struct lane *l = &c->lanes[trk]; /* trk < nlanes: chunk_check */
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
		k->khex = nz(sqlite3_column_text(kv, 0));
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
	uint64_t fs[MAXFLOWS], tf[MAXFLOWS];
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

/* The commands of chunk k (all of them, or with kc those the window keeps),
 * checked before use unless kc says they were. Returns 0, -1 when the chunk
 * cannot be read or is damaged (said). */
static int export_chunk(sqlite3 *db, struct exporter *x, struct cmd_ctx *c, size_t k, const struct kept_chunk *kc)
{
	struct chunk_view v;
	if (export_read_chunk(db, x, k, !kc || !kc->bits, &v)) /* bits: read and checked by window_kept */
		return -1;
	int64_t first = x->dir.first[k];
	for (uint32_t i = 0; i < v.n; i++) {
		if (kc && !kept_chunk_has(kc, i))
			continue;
		x->kept++;
		x->slices++;
		export_cmd(x, c, &v, i, first + i);
	}
	return 0;
}

/* Command slices straight from their chunks, with their slba counter points
 * (under a window, the commands it keeps: chunks without one are not read). */
int export_cmds(sqlite3 *db, struct exporter *x, const struct flows *fl)
{
	struct cmd_ctx c;
	int rc = cmd_ctx_init(db, x, &c, fl);
	if (x->keep) {
		const struct kept_chunk *kc = x->keep->chunks.v;
		progress_total(&x->prog, x->keep->chunks.n, 0);
		for (size_t j = 0; !rc && !out_failed(&x->o) && j < x->keep->chunks.n; j++) {
			if (kc[j].nkept)
				rc = export_chunk(db, x, &c, kc[j].k, &kc[j]);
			progress_tick(&x->prog, j + 1, j + 1);
		}
	} else {
		progress_total(&x->prog, x->dir.nchunks, 0);
		for (size_t k = 0; !rc && !out_failed(&x->o) && k < x->dir.nchunks; k++) {
			rc = export_chunk(db, x, &c, k, NULL);
			progress_tick(&x->prog, k + 1, k + 1);
		}
	}
	cmd_ctx_free(&c);
	return rc;
}
