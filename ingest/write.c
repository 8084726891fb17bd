/* write.c — write joined arms into a fresh kvio database (through dbw.c).
 * Counters and the IO-activity overview are derived here from the commands,
 * in one pass each. */
#include "write.h"
#include "dbw.h"
#include "../db/schema.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* A JSON-typed value; absent and null are skipped (as the reference does). */
static void arg_jv(struct dbw *w, int64_t set, const char *key, const struct jv *v)
{
	char buf[32];
	switch (v->t) {
	case JV_BOOL: dbw_arg_b(w, set, key, (int)v->i); break;
	case JV_INT: dbw_arg_i(w, set, key, v->i); break;
	case JV_UINT:
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u);
		dbw_arg_row(w, set, key, 1, (int64_t)v->u, NULL, 0, buf);
		break;
	case JV_REAL: dbw_arg_d(w, set, key, v->d); break;
	case JV_STR: dbw_arg_s(w, set, key, v->s); break;
	default: break;
	}
}

/* ---- one arm ---- */

int i64pair_cmp(const void *x, const void *y)
{
	const struct i64pair *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->d < b->d ? -1 : a->d > b->d;
}

static int bucket_cmp(const void *x, const void *y)
{
	const struct bucket *a = x, *b = y;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* 1 ms runs -> buckets of `factor` ms, sorted, one per key. */
static struct bucket *bucketize(const struct vec *ms, int64_t factor, size_t *nb)
{
	size_t n = ms->n;
	struct bucket *b = xmalloc((n ? n : 1) * sizeof *b);
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		b[i] = VEC_AT(ms, struct bucket, i);
		b[i].k = floor_div(b[i].k, factor);
		if (i && b[i].k < b[i - 1].k)
			sorted = 0;
	}
	if (!sorted)
		qsort(b, n, sizeof *b, bucket_cmp);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && b[m - 1].k == b[i].k) {
			b[m - 1].n += b[i].n;
			b[m - 1].bytes += b[i].bytes;
		} else {
			b[m++] = b[i];
		}
	}
	*nb = m;
	return b;
}

/* A counter point, when its ts is inside the time window. */
static void counter_in(struct dbw *w, const struct kvio_window *win, int64_t ts, int64_t track, double v)
{
	if (window_span(win, ts, 0))
		dbw_counter(w, ts, track, v);
}

/* A rate counter: one point per bucket, 0 after every run of buckets (the
 * points inside the time window). */
static void rate_counter(struct dbw *w, const struct kvio_window *win, const struct vec *ms, int64_t track,
			 int64_t factor, double bytes_scale)
{
	size_t nb;
	struct bucket *b = bucketize(ms, factor, &nb);
	int64_t width = factor * 1000000;
	for (size_t i = 0; i < nb; i++) {
		if (i && b[i].k > b[i - 1].k + 1)
			counter_in(w, win, (b[i - 1].k + 1) * width, track, 0);
		counter_in(w, win, b[i].k * width, track,
			   bytes_scale > 0 ? b[i].bytes * bytes_scale : (double)b[i].n);
	}
	if (nb)
		counter_in(w, win, (b[nb - 1].k + 1) * width, track, 0);
	free(b);
}

void write_overview_run(struct dbw *w, int64_t t0, int64_t t1, int64_t n, int64_t bytes, int64_t track)
{
	char name[64];
	snprintf(name, sizeof name, "%.1f GB", bytes / 1e9);
	int64_t id = dbw_slice(w, t0, t1 - t0, track, name);
	dbw_arg_i(w, id, "cmds", n);
	dbw_arg_i(w, id, "bytes", bytes);
	dbw_arg_d(w, id, "gbps", bytes / ((t1 - t0) / 1e9) / 1e9);
}

/* IO activity overview: one slice per run of consecutive OVERVIEW_MS buckets
 * (those overlapping the time window). */
static void overview(struct dbw *w, const struct kvio_window *win, const struct vec *ms, int64_t track)
{
	const int64_t B = OVERVIEW_MS * 1000000;
	size_t nb;
	struct bucket *b = bucketize(ms, OVERVIEW_MS, &nb);
	for (size_t i = 0; i < nb;) {
		size_t j = i;
		int64_t n = 0, bytes = 0;
		while (j < nb && (j == i || b[j].k == b[j - 1].k + 1)) {
			n += b[j].n;
			bytes += b[j].bytes;
			j++;
		}
		int64_t t0 = b[i].k * B, t1 = (b[j - 1].k + 1) * B;
		if (window_span(win, t0, t1 - t0))
			write_overview_run(w, t0, t1, n, bytes, track);
		i = j;
	}
	free(b);
}

/* The shard identity an LMCache object key carries, in whichever form:
 *   model@0xKVRANK[@group]@chunkhex[@salt]   (MP ObjectKey; KVRANK =
 *       world_size<<24 | global_rank<<16 | local_world_size<<8 | local_rank)
 *   fmt@model@world_size@worker_id@chunk
 *   model@world_size@worker_id@chunkhex@dtype[@tag%v]   (legacy)
 *   model@fmt@rank@sha   (the reference converter's reading; world unknown)
 * world is -1 when the form does not say. */
struct tp_id {
	int64_t rank, world;
	char chunk[128];
};

static int all_digits(const char *p, size_t n)
{
	if (!n || n > 18)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

static int all_hex(const char *p, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f') || (p[i] >= 'A' && p[i] <= 'F')))
			return 0;
	return 1;
}

static int tp_decode(const char *key, struct tp_id *t)
{
	const char *f[8];
	size_t fl[8];
	int nf = 0;
	for (const char *p = key; nf < 8;) {
		const char *at = strchr(p, '@');
		f[nf] = p;
		fl[nf++] = at ? (size_t)(at - p) : strlen(p);
		if (!at)
			break;
		p = at + 1;
	}
	int ch = -1;
	t->world = -1;
	if (nf >= 3 && fl[1] > 2 && f[1][0] == '0' && (f[1][1] == 'x' || f[1][1] == 'X') &&
	    all_hex(f[1] + 2, fl[1] - 2) && fl[1] <= 10) {
		uint64_t kv = strtoull(f[1] + 2, NULL, 16);
		t->world = (int64_t)(kv >> 24 & 0xff);
		t->rank = (int64_t)(kv >> 16 & 0xff);
		for (int i = 2; i < nf; i++) /* the chunk: the longest hex field after KVRANK */
			if (all_hex(f[i], fl[i]) && (ch < 0 || fl[i] > fl[ch]))
				ch = i;
	} else if (nf >= 5 && !all_digits(f[1], fl[1]) && all_digits(f[2], fl[2]) && all_digits(f[3], fl[3])) {
		t->world = strtoll(f[2], NULL, 10);
		t->rank = strtoll(f[3], NULL, 10);
		ch = 4;
	} else if (nf >= 4 && all_digits(f[1], fl[1]) && all_digits(f[2], fl[2])) {
		t->world = strtoll(f[1], NULL, 10);
		t->rank = strtoll(f[2], NULL, 10);
		ch = 3;
	} else if (nf >= 4 && all_digits(f[2], fl[2])) {
		t->rank = strtoll(f[2], NULL, 10);
		ch = 3;
	}
	if (ch < 0)
		return 0;
	size_t n = fl[ch] < sizeof t->chunk - 1 ? fl[ch] : sizeof t->chunk - 1;
	memcpy(t->chunk, f[ch], n);
	t->chunk[n] = 0;
	return 1;
}

/* The fields of an LMCache key as the reference reads them (model@fmt@rank@sha...):
 * rank (digits only), fmt, and chunk (the first 12 code points of the 4th field). */
static void key_fields(struct dbw *w, int64_t id, const char *key)
{
	const char *f[5] = {0};
	size_t fl[5] = {0};
	int nf = 0;
	const char *p = key;
	for (;;) {
		const char *at = strchr(p, '@');
		if (nf < 5) {
			f[nf] = p;
			fl[nf] = at ? (size_t)(at - p) : strlen(p);
		}
		nf++;
		if (!at)
			break;
		p = at + 1;
	}
	if (nf < 4)
		return;
	int digits = fl[2] > 0 && fl[2] < 19;
	for (size_t k = 0; digits && k < fl[2]; k++)
		digits = f[2][k] >= '0' && f[2][k] <= '9';
	if (digits)
		dbw_arg_i(w, id, "rank", strtoll(f[2], NULL, 10));
	char buf[256];
	size_t n = fl[1] < sizeof buf - 1 ? fl[1] : sizeof buf - 1;
	memcpy(buf, f[1], n);
	buf[n] = 0;
	dbw_arg_s(w, id, "fmt", buf);
	size_t k = 0, cps = 0; /* first 12 characters (code points) of the 4th field */
	while (k < fl[3] && cps < 12) {
		k++;
		while (k < fl[3] && ((unsigned char)f[3][k] & 0xc0) == 0x80)
			k++;
		cps++;
	}
	memcpy(buf, f[3], k);
	buf[k] = 0;
	dbw_arg_s(w, id, "chunk", buf);
}

/* The last ncp characters (code points) of s. */
static const char *key_tail(const char *s, size_t ncp)
{
	size_t k = strlen(s), cps = 0;
	while (k > 0 && cps < ncp) {
		k--;
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		cps++;
	}
	return s + k;
}

/* Python's "%.1f MiB" of bytes/1048576 and the other object args. */
void write_object_slice(struct dbw *w, const struct obj *ob, int64_t track, int64_t id)
{
	int64_t bytes;
	jv_int(&ob->bytes, 0, &bytes);
	char name[256];
	int failed = ob->error.t == JV_STR ? ob->error.s[0] != 0
		   : ob->error.t == JV_BOOL || ob->error.t == JV_INT ? ob->error.i != 0
		   : ob->error.t == JV_REAL ? ob->error.d != 0 : ob->error.t == JV_UINT;
	char mib[32];
	mib1_text(mib, sizeof mib, bytes);
	str_cat(name, sizeof name, (const char *[]){ob->op, " ", ob->part ? ob->part : "kv", " ", mib, "MiB",
						    failed ? " FAILED" : "", NULL});
	dbw_slice_id(w, id, ob->b, ob->e - ob->b, track, name);

	dbw_obj_begin(w, id);
	dbw_arg_i(w, id, "trace_id", (int64_t)ob->trace_id);
	dbw_arg_s(w, id, "op", ob->op);
	dbw_arg_s(w, id, "part", ob->part);
	dbw_arg_i(w, id, "bytes", bytes);
	int64_t slot = 0;
	if (ob->slot_offset.t == JV_INT || ob->slot_offset.t == JV_BOOL)
		slot = ob->slot_offset.i;
	else if (ob->slot_offset.t == JV_REAL)
		slot = i64_of_double(ob->slot_offset.d);
	dbw_arg_i(w, id, "slot_offset", slot);
	if (ob->key)
		key_fields(w, id, ob->key);
	struct tp_id tp;
	if (ob->key && tp_decode(ob->key, &tp)) {
		dbw_arg_i(w, id, "tp_rank", tp.rank);
		if (tp.world >= 0)
			dbw_arg_i(w, id, "tp_world", tp.world);
		dbw_arg_s(w, id, "tp_chunk", tp.chunk);
	}
	dbw_arg_i(w, id, "n_cmds", ob->n_cmds);
	dbw_arg_d(w, id, "op_latency_ms", (ob->e - ob->b) / 1e6);
	arg_jv(w, id, "error", &ob->error);
	arg_jv(w, id, "instance", &ob->instance);
	arg_jv(w, id, "producer_pid", &ob->pid);
	dbw_arg_s(w, id, "key", ob->key ? key_tail(ob->key, 24) : "");
	if (ob->occurrence >= 0)
		dbw_arg_i(w, id, "occurrence", ob->occurrence);
	dbw_obj_end(w);
}

static const int role_rank[NROLES] = {10, 40, 70, 80};

void write_arm_begin(struct dbw *w, struct arm *a, int ai, const struct ingest_opts *o, struct arm_out *t)
{
	char name[512];
	const char *L = a->label;
	memset(t, 0, sizeof *t);
	t->ai = ai;
	snprintf(name, sizeof name, "LMCache %s", L);
	t->lm_upid = dbw_process(w, 1000 + 3 * ai, name);
	snprintf(name, sizeof name, "NVMe %s %s", o->device, L);
	t->nv_upid = dbw_process(w, 1001 + 3 * ai, name);
	t->lm_proc = dbw_track(w, NULL, -1, t->lm_upid, NULL, -1, 0);
	t->nv_proc = dbw_track(w, NULL, -1, t->nv_upid, NULL, -1, 0);
	t->meta_trk = dbw_track(w, "capture info", t->lm_proc, t->lm_upid, NULL, 0, 0);
	t->obj_ctr = dbw_track(w, "objects in flight", t->lm_proc, t->lm_upid, "objects", 1, 0);
	t->nv_root = dbw_track(w, "IO activity", t->nv_proc, t->nv_upid, NULL, -1, 1);
	t->ctr_cmds = dbw_track(w, "cmds/ms", t->nv_root, t->nv_upid, "cmds", 90, 0);
	t->ctr_mbs = dbw_track(w, "MB/s", t->nv_root, t->nv_upid, "MB/s", 91, 0);
	if (!o->no_slba_counter) { /* 0: commands carry no slba counter point */
		t->ctr_wslba = dbw_track(w, "writes slba", t->nv_root, t->nv_upid, "LBA", 92, 0);
		t->ctr_rslba = dbw_track(w, "reads slba", t->nv_root, t->nv_upid, "LBA", 93, 0);
	}
	for (int r = 0; r < NROLES; r++)
		t->role_grp[r] = -1;
}

/* A role's lanes are the group track's children "<role>.NNN"; a role that
 * ends with one lane gets a single track "<role>" instead (write_arm_end). */
int64_t write_lane_track(struct dbw *w, struct arm_out *t, int role, uint32_t lane)
{
	struct vec *v = &t->role_lane[role];
	while (lane >= v->n) {
		if (t->role_grp[role] < 0)
			t->role_grp[role] = dbw_track(w, role_name[role], t->nv_root, t->nv_upid, NULL,
						      role_rank[role], 1);
		char name[64];
		snprintf(name, sizeof name, "%s.%03zu", role_name[role], v->n);
		*(int64_t *)vec_push(v, sizeof(int64_t)) =
			dbw_track(w, name, t->role_grp[role], t->nv_upid, NULL, (int)v->n, 0);
	}
	return VEC_AT(v, int64_t, lane);
}

/* A role with one lane: its single track, no group. */
static void fold_single_lanes(struct dbw *w, struct arm_out *t)
{
	dbw_sync(w); /* w->db is used directly below */
	for (int r = 0; r < NROLES; r++) {
		if (t->role_lane[r].n != 1 || w->rc != SQLITE_OK)
			continue;
		sqlite3_stmt *st;
		sqlite3_prepare_v2(w->db, "UPDATE kvio_track SET name = ?, parent_id = ?, sibling_order_rank = ?"
				   " WHERE id = ?", -1, &st, NULL);
		sqlite3_bind_text(st, 1, role_name[r], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, t->nv_root);
		sqlite3_bind_int(st, 3, role_rank[r]);
		sqlite3_bind_int64(st, 4, VEC_AT(&t->role_lane[r], int64_t, 0));
		dbw_step(w, st);
		sqlite3_finalize(st);
		sqlite3_prepare_v2(w->db, "DELETE FROM kvio_track WHERE id = ?", -1, &st, NULL);
		sqlite3_bind_int64(st, 1, t->role_grp[r]);
		dbw_step(w, st);
		sqlite3_finalize(st);
	}
}

/* The capture_info instant: the arm, its inputs, its clock, its kvio_meta line. */
void write_capture_info(struct dbw *w, const struct arm *a, const struct ingest_opts *o, const struct arm_out *t)
{
	const char *L = a->label;
	int64_t base = a->base_ns;
	int64_t id = dbw_slice(w, 0, 0, t->meta_trk, "capture_info");
	dbw_arg_s(w, id, "label", L);
	dbw_arg_i(w, id, "base_ns", a->min_ts);
	dbw_arg_i(w, id, "applied_base_ns", base);
	dbw_arg_b(w, id, "rebased", !o->no_rebase);
	dbw_arg_s(w, id, "sem_file", a->sem_f.path);
	dbw_arg_s(w, id, "ebpf_file", a->ebpf_f.path);
	dbw_arg_s(w, id, "serving_file", a->serving_f.path);
	dbw_arg_i(w, id, "lba_bytes", a->lba_bytes);
	dbw_arg_i(w, id, "anchors", (int64_t)a->anchors);
	if (a->has_meta) {
		arg_jv(w, id, "kvio_schema", &a->meta_schema);
		arg_jv(w, id, "hostname", &a->meta_hostname);
		arg_jv(w, id, "device_path", &a->meta_device_path);
		arg_jv(w, id, "io_engine", &a->meta_io_engine);
		arg_jv(w, id, "block_align", &a->meta_block_align);
		arg_jv(w, id, "header_bytes", &a->meta_header_bytes);
		arg_jv(w, id, "max_data_transfer_size", &a->meta_mdts);
	}
}

void write_serving_tracks(struct dbw *w, const char *label, int ai, int nlanes, int64_t *lanes)
{
	char name[512];
	snprintf(name, sizeof name, "Serving %s", label);
	int64_t sv_upid = dbw_process(w, 1002 + 3 * ai, name);
	int64_t sv_proc = dbw_track(w, NULL, -1, sv_upid, NULL, -1, 0);
	for (int l = 0; l < nlanes; l++) {
		snprintf(name, sizeof name, "requests.%03d", l);
		int64_t id = dbw_track(w, name, sv_proc, sv_upid, NULL, 10 + l, 0);
		if (lanes)
			lanes[l] = id;
	}
}

void write_serving_span(struct dbw *w, int64_t id, const struct serving *sv, int64_t track)
{
	const char *nm = sv->op.t == JV_STR && sv->op.s[0] ? sv->op.s
		       : sv->name.t == JV_STR && sv->name.s[0] ? sv->name.s : "request";
	dbw_slice_id(w, id, sv->start, sv->end - sv->start, track, nm);
	arg_jv(w, id, "op", &sv->op);
	arg_jv(w, id, "tokens", &sv->tokens);
	arg_jv(w, id, "request_id", &sv->request_id);
	dbw_arg_d(w, id, "ms", (sv->end - sv->start) / 1e6);
}

/* The serving spans the window keeps, on their lanes of the arm's Serving process. */
void write_serving(struct dbw *w, const struct arm *a, const struct arm_out *t)
{
	if (!a->emitted_serving)
		return;
	int64_t *lanes = xmalloc(a->nlanes_srv * sizeof *lanes);
	write_serving_tracks(w, a->label, t->ai, a->nlanes_srv, lanes);
	const struct serving *sv = a->serving.v;
	for (size_t i = 0; i < a->serving.n; i++)
		if (sv[i].kept)
			write_serving_span(w, w->next_id++, &sv[i], lanes[sv[i].lane]);
	free(lanes);
}

/* Object spans and instants, flows object -> first command -> last command,
 * and the objects-in-flight counter. */
static void write_objects(struct dbw *w, const struct arm *a, const struct ingest_opts *o, const struct arm_out *t)
{
	char name[512];
	const struct obj *objs = a->objs.v;
	size_t no = a->objs.n;
	int64_t obj_base = dbw_reserve(w, (int64_t)no);
	int64_t *olane = NULL;
	if (a->nlanes_obj) {
		int64_t grp = dbw_track(w, "objects", t->lm_proc, t->lm_upid, NULL, 10, 0);
		olane = xmalloc(a->nlanes_obj * sizeof *olane);
		for (int l = 0; l < a->nlanes_obj; l++) {
			snprintf(name, sizeof name, "objects.%03d", l);
			olane[l] = dbw_track(w, name, grp, t->lm_upid, NULL, l, 0);
		}
	}
	struct i64pair *dl = xmalloc((2 * no + 1) * sizeof *dl);
	size_t nd = 0;
	for (size_t i = 0; i < no; i++) {
		const struct obj *ob = &objs[i];
		int64_t oid = obj_base + (int64_t)i;
		if (ob->is_span && ob->tid_kept) { /* objects in flight: every span of the trace_ids */
			dl[nd++] = (struct i64pair){ob->b, 1};
			dl[nd++] = (struct i64pair){ob->e, -1};
		}
		if (!ob->kept)
			continue;
		if (ob->is_span) {
			write_object_slice(w, ob, olane[ob->lane], oid);
			/* a flow stays when both its ends were written (first_id/last_id:
			 * -1 for a command outside the window) */
			int64_t flow_id = ((int64_t)t->ai << 40) | (int64_t)i;
			if (ob->n_cmds && ob->first_id >= 0)
				dbw_flow(w, oid, ob->first_id, flow_id);
			if (ob->n_cmds && ob->first_id >= 0 && ob->last_id >= 0 && ob->first_id != ob->last_id)
				dbw_flow(w, ob->first_id, ob->last_id, flow_id);
		} else {
			snprintf(name, sizeof name, "%s (no device cmds)", ob->op);
			dbw_slice_id(w, oid, ob->e, 0, t->meta_trk, name);
			dbw_arg_i(w, oid, "trace_id", (int64_t)ob->trace_id);
			dbw_arg_b(w, oid, "no_device_cmds", 1);
		}
	}
	free(olane);
	qsort(dl, nd, sizeof *dl, i64pair_cmp);
	int64_t cur = 0;
	for (size_t i = 0; i < nd; i++) {
		cur += dl[i].d;
		counter_in(w, &o->win, dl[i].ts, t->obj_ctr, (double)cur);
	}
	free(dl);
}

void write_arm_end(struct dbw *w, struct arm *a, const struct ingest_opts *o, struct arm_out *t)
{
	fold_single_lanes(w, t);
	write_capture_info(w, a, o, t);
	write_serving(w, a, t);
	write_objects(w, a, o, t);
	if (t->ms.n)
		overview(w, &o->win, &t->ms, t->nv_root);
	rate_counter(w, &o->win, &t->ms, t->ctr_cmds, CTR_CMDS_MS, 0);
	rate_counter(w, &o->win, &t->ms, t->ctr_mbs, CTR_MBS_MS, CTR_MBS_SCALE);
	for (int r = 0; r < NROLES; r++) {
		vec_free(&t->role_lane[r]);
		lanes_free(&t->lanes[r]);
	}
	vec_free(&t->ms);
}

const char *const join_name[3] = {"user_data", "key", "offset"};

void write_options_meta(struct dbw *w, const struct ingest_opts *o)
{
	sqlite3_stmt *st;
	dbw_sync(w);
	if (w->rc != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO metadata VALUES(?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return;
	struct { const char *name; int present; int64_t i; const char *s; } m[] = {
		{"kvio_join", 1, 0, join_name[o->join]},
		{"kvio_time_range_start_ns", o->win.has_time, o->win.lo_ns, NULL},
		{"kvio_time_range_end_ns", o->win.has_time, o->win.hi_ns, NULL},
		{"kvio_trace_id_lo", o->win.has_tid, (int64_t)o->win.tid_lo, NULL},
		{"kvio_trace_id_hi", o->win.has_tid, (int64_t)o->win.tid_hi, NULL},
		{"kvio_no_slba_counter", o->no_slba_counter, 1, NULL},
		/* --follow: which commit wrote the database, and whether it was the last (follow.c) */
		{"kvio_follow_commit", o->follow_commit > 0, o->follow_commit, NULL},
		{"kvio_follow_final", o->follow_commit > 0, o->follow_final, NULL},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		if (!m[i].present)
			continue;
		sqlite3_bind_text(st, 1, m[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, m[i].s ? "string" : "int", -1, SQLITE_STATIC);
		if (m[i].s) {
			sqlite3_bind_null(st, 3);
			sqlite3_bind_text(st, 4, m[i].s, -1, SQLITE_STATIC);
		} else {
			sqlite3_bind_int64(st, 3, m[i].i);
			sqlite3_bind_null(st, 4);
		}
		dbw_step(w, st);
	}
	sqlite3_finalize(st);
}

/* The submitting threads the tracer saw: one thread row per (tid, comm). */
void write_threads(struct dbw *w, const struct arm *a)
{
	for (size_t i = 0; i < a->threads.n; i++) {
		const struct thread_name *t = &VEC_AT(&a->threads, struct thread_name, i);
		dbw_thread(w, t->tid, t->comm);
	}
}

/* The arm's input files and their line counts (kvio_file). */
static void write_files(struct dbw *w, const struct arm *a)
{
	sqlite3_stmt *st;
	const struct file_stats *fs[3] = {&a->sem_f, &a->ebpf_f, &a->serving_f};
	const char *kinds[3] = {"sem", "ebpf", "serving"};
	dbw_sync(w); /* w->db is used directly here and in write_stats */
	sqlite3_prepare_v2(w->db, "INSERT INTO kvio_file VALUES(?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	for (int i = 0; i < 3; i++) {
		if (!strcmp(fs[i]->path, "-"))
			continue;
		sqlite3_bind_text(st, 1, a->label, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kinds[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, fs[i]->path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, fs[i]->lines);
		sqlite3_bind_int64(st, 5, fs[i]->records);
		sqlite3_bind_int64(st, 6, fs[i]->blank);
		sqlite3_bind_int64(st, 7, fs[i]->malformed);
		sqlite3_bind_int64(st, 8, fs[i]->truncated_tail);
		sqlite3_bind_int64(st, 9, fs[i]->other);
		dbw_step(w, st);
	}
	sqlite3_finalize(st);
}

void write_stats(struct dbw *w, const struct arm *a, const struct ingest_opts *o)
{
	int win = o->win.has_time || o->win.has_tid;
	sqlite3_stmt *st;
	write_files(w, a);
	sqlite3_prepare_v2(w->db, "INSERT INTO kvio_stats VALUES(?,?,?)", -1, &st, NULL);
	struct { const char *k; int64_t v; int present; } kv[] = {
		{"sem_records", (int64_t)arm_nobjs(a), 1},
		{"nvme_cmd_lines", (int64_t)a->n_cmd_lines, 1},
		{"nvme_cmp_lines", (int64_t)a->n_cmp_lines, 1},
		{"late_lines", (int64_t)a->late_lines, 1},
		{"cmp_after_horizon", (int64_t)a->cmp_after_horizon, 1},
		{"serving_spans", (int64_t)arm_nserving(a), 1},
		{"malformed_lines", (int64_t)(a->sem_f.malformed + a->ebpf_f.malformed + a->serving_f.malformed), 1},
		{"truncated_tail", (int64_t)(a->sem_f.truncated_tail + a->ebpf_f.truncated_tail +
					     a->serving_f.truncated_tail), 1},
		{"blank_lines", (int64_t)(a->sem_f.blank + a->ebpf_f.blank + a->serving_f.blank), 1},
		{"other_lines", (int64_t)(a->sem_f.other + a->ebpf_f.other + a->serving_f.other), 1},
		{"drops", (int64_t)a->drops, a->has_drops},
		{"cq_overflow", (int64_t)a->cq_overflow, 1},
		{"clock_anchors", (int64_t)a->anchors, 1},
		{"clock_anomalies", (int64_t)a->clock_anomalies, 1},
		{"dup_trace_id", (int64_t)a->dup_trace_id, 1},
		{"cmp_unpaired", (int64_t)a->cmp_unpaired, 1},
		{"header_cmds", (int64_t)a->header_cmds, 1},
		{"tagged_bytes", (int64_t)a->tagged_bytes, 1},
		{"untagged_bytes", (int64_t)a->untagged_bytes, 1},
		{"lba_bytes", a->lba_bytes, 1},
		{"base_ns", a->min_ts, 1},
		{"object_lanes", a->nlanes_obj, 1},
		/* under --time-range / --trace-id: what was written (the rest describes the input) */
		{"offset_unique", (int64_t)a->off_unique, o->join == JOIN_OFFSET},
		{"offset_cross_object", (int64_t)a->off_cross, o->join == JOIN_OFFSET},
		{"offset_gap_spill", (int64_t)a->off_gap, o->join == JOIN_OFFSET},
		{"offset_unmatched", (int64_t)a->off_unmatched, o->join == JOIN_OFFSET},
		{"offset_cookie_cmds", (int64_t)a->off_cookie, o->join == JOIN_OFFSET},
		{"offset_parity_agree", (int64_t)a->off_agree, o->join == JOIN_OFFSET},
		{"offset_parity_total", (int64_t)a->off_total, o->join == JOIN_OFFSET},
		{"key_cmds", (int64_t)a->key_cmds, o->join == JOIN_KEY},
		{"key_matched", (int64_t)a->key_matched, o->join == JOIN_KEY},
		{"emitted_cmds", (int64_t)a->emitted_cmds, win},
		{"emitted_object_spans", (int64_t)a->emitted_spans, win},
		{"emitted_object_instants", (int64_t)a->emitted_instants, win},
		{"emitted_serving_spans", (int64_t)a->emitted_serving, win},
		/* 0: a device file without any nvme_cmp line (no latency, no queue depth) */
		{"completion_probe", a->n_cmp_lines > 0, strcmp(a->ebpf_f.path, "-") != 0},
	};
	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
		if (!kv[i].present)
			continue;
		sqlite3_bind_text(st, 1, a->label, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kv[i].k, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, kv[i].v);
		dbw_step(w, st);
	}
	sqlite3_finalize(st);
	sqlite3_prepare_v2(w->db, "INSERT INTO kvio_warning VALUES(?,?)", -1, &st, NULL);
	for (size_t i = 0; i < a->warnings.n; i++) {
		sqlite3_bind_text(st, 1, a->label, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, VEC_AT(&a->warnings, const char *, i), -1, SQLITE_STATIC);
		dbw_step(w, st);
	}
	sqlite3_finalize(st);
}

