/* dbw.c — the database writer shared by the JSONL ingest (write.c) and the
 * .pftrace import (pftrace.c): one transaction, prepared statements, ids
 * assigned here (slice ids are unique across kvio_cmd and kvio_slice, and a
 * slice's arg_set_id is its own id), commands buffered into chunks. */
#include "kvio_prefix.h" /* KVIO_LIBDIR: where make install put the extension */
#include "dbw.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include "../lib/util.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* sqlite3_step + reset; an error is said and goes to *rc (w->rc, or the
 * chunk writer's own); nothing runs after one. */
static void step_rc(struct dbw *w, sqlite3_stmt *st, int *rc)
{
	if (*rc != SQLITE_OK)
		return;
	int r = sqlite3_step(st);
	if (r != SQLITE_DONE) {
		kvio_err("writing %s: %s", db_name(w->db), db_reason(w->db, r));
		*rc = r;
	}
	sqlite3_reset(st);
}

void dbw_step(struct dbw *w, sqlite3_stmt *st)
{
	step_rc(w, st, &w->rc);
}

/* Text parameters need no such helper: sqlite3_bind_text with a NULL pointer
 * binds NULL. */
static void bind_i64_or_null(sqlite3_stmt *st, int i, int present, int64_t v)
{
	if (present)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* ---- the big tables' sums, taken as their rows are written ---- */

static const char *const rsum_table[DBW_NRSUM + 1] = {"kvio_slice", "kvio_obj", "flow", "kvio_counter", NULL};

void dbw_sum_rows(struct dbw *w)
{
	for (int k = 0; k < DBW_NRSUM && w->rc == SQLITE_OK; k++) {
		char sql[96];
		sqlite3_stmt *st;
		snprintf(sql, sizeof sql, "SELECT NOT EXISTS (SELECT 1 FROM %s)", rsum_table[k]);
		int empty = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
			    sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (empty && !w->rsum[k] && (w->rsum[k] = db_sum_new()))
			w->rsum_last[k] = INT64_MIN;
	}
}

/* Table k's sum for a row of id: NULL when not taken (or no longer: a row
 * out of id order is hashed out of the table's order, so it is read back). */
static struct db_sum *rsum_row(struct dbw *w, int k, int64_t id)
{
	struct db_sum *s = w->rsum[k];
	if (s && id <= w->rsum_last[k]) {
		db_sum_free(s);
		w->rsum[k] = s = NULL;
	}
	if (s) {
		w->rsum_last[k] = id;
		db_sum_row(s);
	}
	return s;
}

static void rsum_free(struct dbw *w)
{
	for (int k = 0; k < DBW_NRSUM; k++) {
		db_sum_free(w->rsum[k]);
		w->rsum[k] = NULL;
	}
	free(w->objtext);
	w->objtext = NULL;
	w->objtext_n = w->objtext_cap = 0;
}

int64_t dbw_process(struct dbw *w, int64_t pid, const char *name)
{
	dbw_sync(w);
	int64_t upid = w->next_upid++;
	sqlite3_bind_int64(w->process, 1, upid);
	sqlite3_bind_int64(w->process, 2, pid);
	sqlite3_bind_text(w->process, 3, name, -1, SQLITE_TRANSIENT);
	dbw_step(w, w->process);
	return upid;
}

/* A track; parent < 0 for none; unit != NULL makes it a counter track. */
int64_t dbw_track(struct dbw *w, const char *name, int64_t parent, int64_t upid,
			 const char *unit, int order, int explicit_order)
{
	dbw_sync(w);
	int64_t id = w->next_track++;
	if (w->track_end && id >= w->track_end) { /* --follow --merge: the next arm's tracks (said by live.c) */
		w->rc = w->rc == SQLITE_OK ? SQLITE_FULL : w->rc;
		return id;
	}
	sqlite3_stmt *st = w->track;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	bind_i64_or_null(st, 3, parent >= 0, parent);
	bind_i64_or_null(st, 4, upid >= 0, upid);
	sqlite3_bind_int(st, 5, unit != NULL);
	sqlite3_bind_text(st, 6, unit, -1, SQLITE_STATIC);
	bind_i64_or_null(st, 7, order >= 0, order);
	sqlite3_bind_text(st, 8, explicit_order ? "explicit" : NULL, -1, SQLITE_STATIC);
	dbw_step(w, st);
	return id;
}

int64_t dbw_reserve(struct dbw *w, int64_t n)
{
	int64_t id = w->next_id;
	w->next_id += n;
	return id;
}

int64_t dbw_slice(struct dbw *w, int64_t ts, int64_t dur, int64_t track, const char *name)
{
	int64_t id = w->next_id++;
	dbw_slice_id(w, id, ts, dur, track, name);
	return id;
}

void dbw_slice_id(struct dbw *w, int64_t id, int64_t ts, int64_t dur, int64_t track, const char *name)
{
	dbw_sync(w);
	sqlite3_stmt *st = w->slice;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, dur);
	sqlite3_bind_int64(st, 4, track);
	sqlite3_bind_text(st, 5, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, id);
	dbw_step(w, st);
	struct db_sum *h = rsum_row(w, RS_SLICE, id);
	if (h) { /* id, ts, dur, track_id, category, name, depth (0), parent_id, arg_set_id */
		db_sum_int(h, id);
		db_sum_int(h, ts);
		db_sum_int(h, dur);
		db_sum_int(h, track);
		db_sum_null(h);
		db_sum_text(h, name);
		db_sum_int(h, 0);
		db_sum_null(h);
		db_sum_int(h, id);
	}
}

/* ---- args of generic slices ---- */
static const char *const obj_cols[] = {"trace_id", "op", "part", "bytes", "slot_offset", "rank", "fmt",
	"chunk", "tp_rank", "tp_world", "tp_chunk", "n_cmds", "op_latency_ms", "error", "instance", "producer_pid",
	"key", "occurrence"};
#define NOBJCOL (int)(sizeof obj_cols / sizeof obj_cols[0])
_Static_assert(NOBJCOL == DBW_OBJ_COLS, "dbw.h sizes the kvio_obj row kept for its sum");

void dbw_obj_begin(struct dbw *w, int64_t id)
{
	dbw_sync(w);
	sqlite3_clear_bindings(w->obj);
	sqlite3_bind_int64(w->obj, 1, id);
	w->obj_id = id;
	w->obj_next = 0;
	if (w->rsum[RS_OBJ]) { /* the row's values as bound, for its sum */
		for (int c = 0; c < NOBJCOL; c++)
			w->objv[c].t = SQLITE_NULL;
		w->objtext_n = 0;
	}
}

/* kvio_obj's row into its sum: the values bound (no declared types: each as it was bound). */
static void obj_sum(struct dbw *w, int64_t id)
{
	struct db_sum *h = rsum_row(w, RS_OBJ, id);
	if (!h)
		return;
	db_sum_int(h, id);
	for (int c = 0; c < NOBJCOL; c++) {
		if (w->objv[c].t == SQLITE_INTEGER)
			db_sum_int(h, w->objv[c].i);
		else if (w->objv[c].t == SQLITE_FLOAT)
			db_sum_real(h, w->objv[c].d, 0);
		else if (w->objv[c].t == SQLITE_TEXT)
			db_sum_text(h, w->objtext + w->objv[c].s);
		else
			db_sum_null(h);
	}
}

void dbw_obj_end(struct dbw *w)
{
	dbw_sync(w);
	dbw_step(w, w->obj);
	obj_sum(w, w->obj_id);
	w->obj_id = -1;
}

/* Column c of the kvio_obj row bound, kept for its sum (vt_kind as dbw_arg_row's). */
static void obj_keep(struct dbw *w, int c, int vt_kind, int64_t i, const char *s, double d)
{
	if (!w->rsum[RS_OBJ])
		return;
	if (vt_kind == 3) {
		w->objv[c].t = SQLITE_FLOAT;
		w->objv[c].d = d;
	} else if (vt_kind == 4) {
		size_t l = strlen(s) + 1;
		w->objv[c].t = SQLITE_TEXT;
		if (w->objtext_n + l > w->objtext_cap) {
			w->objtext_cap = (w->objtext_n + l) * 2;
			w->objtext = xrealloc(w->objtext, w->objtext_cap);
		}
		w->objv[c].s = w->objtext_n;
		memcpy(w->objtext + w->objtext_n, s, l);
		w->objtext_n += l;
	} else {
		w->objv[c].t = SQLITE_INTEGER;
		w->objv[c].i = i;
	}
}

/* key's kvio_obj column (obj_cols), -1 for none: the column after the last
 * one found is tried first (write.c binds an object's in the table's order). */
static int obj_col(struct dbw *w, const char *key)
{
	for (int k = 0; k < NOBJCOL; k++) {
		int c = (w->obj_next + k) % NOBJCOL;
		if (!strcmp(key, obj_cols[c])) {
			w->obj_next = c + 1;
			return c;
		}
	}
	return -1;
}

void dbw_arg_row(struct dbw *w, int64_t set, const char *key, int vt_kind, int64_t i,
		    const char *s, double d, const char *display)
{
	dbw_sync(w);
	int c = set == w->obj_id ? obj_col(w, key) : -1;
	if (c >= 0) {
		if (vt_kind == 3)
			sqlite3_bind_double(w->obj, c + 2, d);
		else if (vt_kind == 4)
			sqlite3_bind_text(w->obj, c + 2, s, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_int64(w->obj, c + 2, i);
		obj_keep(w, c, vt_kind, i, s, d);
		return;
	}
	static const char *const vt[] = {"int", "uint", "bool", "real", "string"};
	char k[96];
	snprintf(k, sizeof k, "debug.%s", key);
	sqlite3_stmt *st = w->arg;
	sqlite3_bind_int64(st, 1, set);
	sqlite3_bind_text(st, 2, k, -1, SQLITE_TRANSIENT);
	sqlite3_bind_null(st, 3);
	sqlite3_bind_null(st, 4);
	sqlite3_bind_null(st, 5);
	if (vt_kind == 3)
		sqlite3_bind_double(st, 5, d);
	else if (vt_kind == 4)
		sqlite3_bind_text(st, 4, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 3, i);
	sqlite3_bind_text(st, 6, vt[vt_kind], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, display, -1, SQLITE_TRANSIENT);
	dbw_step(w, st);
}

void dbw_arg_i(struct dbw *w, int64_t set, const char *key, int64_t v)
{
	dbw_arg_row(w, set, key, v < 0 ? 0 : 1, v, NULL, 0, NULL);
}
void dbw_arg_b(struct dbw *w, int64_t set, const char *key, int v)
{
	dbw_arg_row(w, set, key, 2, v != 0, NULL, 0, NULL);
}
void dbw_arg_d(struct dbw *w, int64_t set, const char *key, double v)
{
	dbw_arg_row(w, set, key, 3, 0, NULL, v, NULL);
}
void dbw_arg_s(struct dbw *w, int64_t set, const char *key, const char *v)
{
	if (v)
		dbw_arg_row(w, set, key, 4, 0, v, 0, NULL);
}
void dbw_counter(struct dbw *w, int64_t ts, int64_t track, double v)
{
	dbw_sync(w);
	sqlite3_stmt *st = w->counter;
	int64_t id = w->next_counter++;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, track);
	sqlite3_bind_double(st, 4, v);
	dbw_step(w, st);
	struct db_sum *h = rsum_row(w, RS_COUNTER, id);
	if (h) { /* id, ts, track_id, value (REAL) */
		db_sum_int(h, id);
		db_sum_int(h, ts);
		db_sum_int(h, track);
		db_sum_real(h, v, 1);
	}
}

void dbw_flow(struct dbw *w, int64_t out, int64_t in, int64_t flow_id)
{
	dbw_sync(w);
	sqlite3_stmt *st = w->flow;
	int64_t id = w->next_flow++;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, out);
	sqlite3_bind_int64(st, 3, in);
	sqlite3_bind_int64(st, 4, flow_id);
	dbw_step(w, st);
	struct db_sum *h = rsum_row(w, RS_FLOW, id);
	if (h) { /* id, type (its default), slice_out, slice_in, trace_id, arg_set_id */
		db_sum_int(h, id);
		db_sum_text(h, "__intrinsic_flow");
		db_sum_int(h, out);
		db_sum_int(h, in);
		db_sum_int(h, flow_id);
		db_sum_null(h);
	}
}

/* ---- command chunks ---- */

/* A name's first use by w (its own list: --follow --merge's final checks that
 * the first arm's names have the ids a one-shot gives them). */
static void name_used(struct dbw *w, uint16_t id)
{
	if (id >= w->used.n) {
		size_t had = w->used.n;
		vec_reserve(&w->used, (size_t)id + 1, 1);
		memset((char *)w->used.v + had, 0, (size_t)id + 1 - had);
		w->used.n = (size_t)id + 1;
	}
	if (((char *)w->used.v)[id])
		return;
	((char *)w->used.v)[id] = 1;
	w->names_unordered |= id != w->nused;
	w->nused++;
}

uint16_t dbw_name(struct dbw *w, const char *name)
{
	/* the callers pass interned names: a pointer seen before is likely that
	 * name again (one comparison, not one per name) */
	unsigned h = (unsigned)((uintptr_t)name >> 3) & (DBW_NAME_CACHE - 1);
	struct dbw *o = w->names_of ? w->names_of : w; /* the writer whose list the names are */
	if (w->name_ptr[h] == name && !strcmp(VEC_AT(&o->names, const char *, w->name_id[h]), name))
		return w->name_id[h];
	for (size_t i = 0; i < o->names.n; i++)
		if (!strcmp(VEC_AT(&o->names, const char *, i), name)) {
			w->name_ptr[h] = name;
			w->name_id[h] = (uint16_t)i;
			name_used(w, (uint16_t)i);
			return (uint16_t)i;
		}
	if (o->names.n >= 65535)
		return 0;
	*(char **)vec_push(&o->names, sizeof(char *)) = xstrdup(name);
	dbw_sync(o);
	sqlite3_bind_int64(o->name, 1, (int64_t)o->names.n - 1);
	sqlite3_bind_text(o->name, 2, name, -1, SQLITE_TRANSIENT);
	dbw_step(o, o->name);
	w->rc = w->rc == SQLITE_OK ? o->rc : w->rc;
	name_used(w, (uint16_t)(o->names.n - 1));
	return (uint16_t)(o->names.n - 1);
}

/* cb as one kvio_cmd_chunk row, its kvio_cmd_range row and its KV rows
 * (on the writer thread, or on the caller's when there is none); keep: the
 * commands stay in cb (--follow's trailing partial chunk), its KV rows are
 * written once. */
static void write_chunk(struct dbw *w, struct chunkbuf *cb, int *rc, int keep)
{
	uint32_t n = cb->n;
	for (size_t i = 0; i < cb->kv.n; i++) {
		const struct kvrow *k = &VEC_AT(&cb->kv, struct kvrow, i);
		sqlite3_bind_int64(w->kv, 1, k->id);
		sqlite3_bind_text(w->kv, 2, k->has_key ? cb->keys + k->key_off : NULL, -1, SQLITE_STATIC);
		bind_i64_or_null(w->kv, 3, k->has_key_len, k->key_len);
		bind_i64_or_null(w->kv, 4, k->has_value_len, k->value_len);
		step_rc(w, w->kv, rc);
	}
	struct chunk_view v = {n, cb->ts, cb->dur, cb->slba, cb->track, cb->data_len, cb->trace_id, cb->slba_track,
			       cb->kv_id, cb->name, cb->flags};
	size_t len = chunk_encode(&v, cb->first_id, cb->blob);
	sqlite3_bind_int64(w->chunk, 1, cb->first_id);
	sqlite3_bind_int64(w->chunk, 2, n);
	sqlite3_bind_blob(w->chunk, 3, cb->blob, (int)len, SQLITE_STATIC);
	step_rc(w, w->chunk, rc);
	/* the chunk's time and trace_id extent (kvio_cmd_range) */
	int64_t tmin = INT64_MAX, emax = INT64_MIN;
	uint32_t dmin = UINT32_MAX, dmax = 0;
	for (uint32_t k = 0; k < n; k++) {
		int64_t e;
		if (cb->ts[k] < tmin)
			tmin = cb->ts[k];
		if (__builtin_add_overflow(cb->ts[k], cb->dur[k] < 0 ? 0 : cb->dur[k], &e))
			e = INT64_MAX;
		if (cb->dur[k] < 0) /* never ended: open to the right */
			e = INT64_MAX;
		if (e > emax)
			emax = e;
		if (cb->trace_id[k] && cb->trace_id[k] < dmin)
			dmin = cb->trace_id[k];
		if (cb->trace_id[k] > dmax)
			dmax = cb->trace_id[k];
	}
	sqlite3_bind_int64(w->range, 1, cb->first_id);
	sqlite3_bind_int64(w->range, 2, n);
	sqlite3_bind_int64(w->range, 3, tmin);
	sqlite3_bind_int64(w->range, 4, emax);
	if (dmax) {
		sqlite3_bind_int64(w->range, 5, dmin);
		sqlite3_bind_int64(w->range, 6, dmax);
	} else {
		sqlite3_bind_null(w->range, 5);
		sqlite3_bind_null(w->range, 6);
	}
	step_rc(w, w->range, rc);
	if (!keep)
		cb->n = 0;
	cb->kv.n = 0;
	cb->nkeys = 0;
}

void dbw_flush_partial(struct dbw *w)
{
	dbw_sync(w);
	w->partial_id = -1;
	if (!w->cb->n || w->rc != SQLITE_OK)
		return;
	write_chunk(w, w->cb, &w->rc, 1);
	w->partial_id = w->cb->first_id;
}

void dbw_drop_partial(struct dbw *w)
{
	sqlite3_stmt *st;
	dbw_sync(w);
	if (w->partial_id < 0 || w->rc != SQLITE_OK)
		return;
	for (int k = 0; k < 2; k++) {
		if (sqlite3_prepare_v2(w->db, k ? "DELETE FROM kvio_cmd_range WHERE id = ?" : "DELETE FROM kvio_cmd_chunk WHERE id = ?",
				       -1, &st, NULL) != SQLITE_OK) {
			w->rc = sqlite3_errcode(w->db);
			return;
		}
		sqlite3_bind_int64(st, 1, w->partial_id);
		dbw_step(w, st);
		sqlite3_finalize(st);
	}
	w->partial_id = -1;
}

static void *chunk_writer(void *arg)
{
	struct dbw *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		struct chunkbuf *cb = w->job;
		if (!cb)
			break;
		int rc = w->wrc;
		pthread_mutex_unlock(&w->mu);
		write_chunk(w, cb, &rc, 0);
		pthread_mutex_lock(&w->mu);
		w->wrc = rc;
		w->job = NULL;
		atomic_store_explicit(&w->pending, 0, memory_order_release);
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	struct timespec ts;
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		w->writer_cpu = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9; /* read after the join */
	return NULL;
}

void dbw_sync(struct dbw *w)
{
	if (!atomic_load_explicit(&w->pending, memory_order_acquire)) {
		if (w->started && w->wrc != SQLITE_OK && w->rc == SQLITE_OK) /* idle: wrc is not written now */
			w->rc = w->wrc;
		return;
	}
	pthread_mutex_lock(&w->mu);
	while (w->job)
		pthread_cond_wait(&w->cv, &w->mu);
	if (w->wrc != SQLITE_OK && w->rc == SQLITE_OK)
		w->rc = w->wrc;
	pthread_mutex_unlock(&w->mu);
}

/* Hand the buffered commands to the writer (the other buffer is filled
 * meanwhile); without a writer thread, write them here. */
void dbw_flush_chunk(struct dbw *w)
{
	dbw_sync(w);
	struct chunkbuf *cb = w->cb;
	if (cb->n && w->rc != SQLITE_OK) { /* the ingest fails: the rows go (the chunk must not grow past its size) */
		cb->n = 0;
		cb->nkeys = 0;
		cb->kv.n = 0;
	}
	if (!cb->n)
		return;
	if (!w->started && !w->quit && !w->in_place) {
		w->wrc = SQLITE_OK;
		if (pthread_create(&w->writer, NULL, chunk_writer, w) == 0)
			w->started = 1;
		else
			w->quit = 1; /* no thread: written in place from now on */
	}
	if (!w->started) {
		write_chunk(w, cb, &w->rc, 0);
		return;
	}
	pthread_mutex_lock(&w->mu);
	w->job = cb;
	atomic_store_explicit(&w->pending, 1, memory_order_release);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	w->cb = w->spare;
	w->spare = cb;
}

/* Stop the writer thread (after its last chunk). */
static void writer_stop(struct dbw *w)
{
	dbw_sync(w);
	if (!w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->writer, NULL);
	w->started = 0;
}

void dbw_cmd(struct dbw *w, int64_t id, const struct cmd_row *r)
{
	struct chunkbuf *cb = w->cb;
	if (cb->n == CHUNK_ROWS || (cb->n && cb->first_id + cb->n != id)) {
		dbw_flush_chunk(w);
		cb = w->cb;
	}
	if (cb->n == 0)
		cb->first_id = id;
	uint32_t k = cb->n++;
	cb->ts[k] = r->ts;
	cb->dur[k] = r->dur;
	cb->slba[k] = r->slba;
	cb->track[k] = (uint32_t)r->track;
	cb->data_len[k] = r->data_len;
	cb->trace_id[k] = r->trace_id;
	cb->slba_track[k] = (uint32_t)r->slba_track;
	cb->name[k] = dbw_name(w, r->name ? r->name : "cmd");
	cb->flags[k] = r->flags;
	cb->kv_id[k] = 0;
	if (r->flags & CHF_KV) {
		cb->kv_id[k] = (uint32_t)w->next_kv;
		struct kvrow *kr = vec_push(&cb->kv, sizeof *kr);
		*kr = (struct kvrow){w->next_kv++, r->key_len, r->value_len, cb->nkeys, r->key_hex != NULL,
				     (uint8_t)r->has_key_len, (uint8_t)r->has_value_len};
		if (r->key_hex) { /* the key's text lives in the stream's block: copied */
			size_t l = strlen(r->key_hex) + 1;
			if (cb->nkeys + l > cb->capkeys) {
				cb->capkeys = (cb->nkeys + l) * 2;
				cb->keys = xrealloc(cb->keys, cb->capkeys);
			}
			memcpy(cb->keys + cb->nkeys, r->key_hex, l);
			cb->nkeys += l;
		}
	}
}

static sqlite3_stmt **stmt_slot(struct dbw *w, int i)
{
	sqlite3_stmt **s[] = {&w->process, &w->track, &w->chunk, &w->range, &w->name, &w->kv, &w->slice, &w->arg,
			      &w->counter, &w->flow, &w->obj};
	return i < (int)(sizeof s / sizeof s[0]) ? s[i] : NULL;
}

static const char *const dbw_sql[] = {
		"INSERT INTO process(id, upid, pid, name) VALUES(?1, ?1, ?2, ?3)",
		("INSERT INTO kvio_track(id, name, parent_id, upid, is_counter, unit,"
		 " sibling_order_rank, child_ordering) VALUES(?,?,?,?,?,?,?,?)"),
		"INSERT INTO kvio_cmd_chunk(id, n, data) VALUES(?,?,?)",
		"INSERT INTO kvio_cmd_range(id, n, ts_min, end_max, tid_min, tid_max) VALUES(?,?,?,?,?,?)",
		"INSERT INTO kvio_cmd_name(id, name) VALUES(?,?)",
		"INSERT INTO kvio_cmd_kv(id, key_hex, key_len, value_len) VALUES(?,?,?,?)",
		"INSERT INTO kvio_slice(id, ts, dur, track_id, name, arg_set_id) VALUES(?,?,?,?,?,?)",
		"INSERT OR REPLACE INTO kvio_arg VALUES(?,?,?,?,?,?,?)",
		"INSERT INTO kvio_counter(id, ts, track_id, value) VALUES(?,?,?,?)",
		"INSERT INTO flow(id, slice_out, slice_in, trace_id) VALUES(?,?,?,?)",
		"INSERT INTO kvio_obj VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

int dbw_attach(struct dbw *w, sqlite3 *db)
{
	int rc = SQLITE_OK;
	w->db = db;
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof dbw_sql / sizeof dbw_sql[0]; i++) {
		rc = sqlite3_prepare_v3(db, dbw_sql[i], -1, SQLITE_PREPARE_PERSISTENT, stmt_slot(w, (int)i), NULL);
		if (rc != SQLITE_OK)
			kvio_err("%s: preparing the database writes: %s", db_name(db), sqlite3_errmsg(db));
	}
	return rc;
}

void dbw_detach(struct dbw *w)
{
	for (int i = 0; stmt_slot(w, i); i++) {
		sqlite3_finalize(*stmt_slot(w, i));
		*stmt_slot(w, i) = NULL;
	}
}

int dbw_begin(struct dbw *w, sqlite3 *db)
{
	int rc = dbw_begin_more(w, db, NULL);
	if (rc == SQLITE_OK) {
		/* trace_processor's placeholder rows: upid 0 and utid 0 */
		dbw_process(w, 0, NULL);
		sqlite3_stmt *st;
		sqlite3_prepare_v2(db, "INSERT INTO thread(id, utid, tid) VALUES(0, 0, 0)", -1, &st, NULL);
		dbw_step(w, st);
		sqlite3_finalize(st);
	}
	return w->rc;
}

int dbw_begin_more(struct dbw *w, sqlite3 *db, struct dbw *names_of)
{
	/* stored counter ids start far above slice ids: the counter view also
	 * derives points whose id is their command's slice id */
	memset(w, 0, sizeof *w);
	w->db = db;
	w->next_id = w->next_track = w->next_flow = w->next_kv = w->next_utid = 1;
	w->next_counter = (int64_t)1 << 40;
	w->obj_id = -1;
	w->partial_id = -1;
	w->cb = xcalloc(1, sizeof *w->cb);
	w->cb->blob = xmalloc(chunk_size(CHUNK_ROWS));
	w->spare = xcalloc(1, sizeof *w->spare);
	w->spare->blob = xmalloc(chunk_size(CHUNK_ROWS));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* kvio-ingest --follow opens the transaction itself (it empties the tables first) */
	int rc = sqlite3_get_autocommit(db) ? db_exec(db, "BEGIN", "writing the database") : SQLITE_OK;
	if (rc == SQLITE_OK)
		rc = dbw_attach(w, db);
	w->rc = rc;
	w->names_of = names_of;
	return w->rc;
}

static void chunkbuf_free(struct chunkbuf *cb)
{
	free(cb->blob);
	free(cb->keys);
	vec_free(&cb->kv);
	free(cb);
}

/* The metadata rows every database ends with, then the sums (the last write). */
static void end_rows(struct dbw *w, int narms)
{
	dbw_sync(w);
	if (w->rc == SQLITE_OK) {
		char sql[1024];
		/* readable without the extension: what reads the rest */
		snprintf(sql, sizeof sql,
			 "INSERT INTO metadata VALUES('kvio_schema_version','int',%d,NULL),"
			 "('trace_type','string',NULL,'kvio'),('arms','int',%d,NULL),"
			 "('extension','string',NULL,'kvio (PREFIX/lib/kvio/kvio.so; a build: build/kvio.so)'),"
			 "('read_with','string',NULL,'slice, args and counter need kvio''s SQLite extension "
			 "(without it: no such module: kvio_cmds): sqlite3 trace.db -cmd \".load "
			 KVIO_LIBDIR "/kvio\" (a build: .load build/kvio); kvio-report and kvio-export "
			 "load it themselves')",
			 KVIO_DB_VERSION, narms);
		w->rc = db_exec(w->db, sql, "writing the database");
	}
	if (w->rc == SQLITE_OK && (w->rc = w->sums ? db_write_sums_inc(w->db, w->sums, w->frozen, w->frozen_ctx)
						 : db_write_sums_given(w->db, rsum_table, w->rsum)) != SQLITE_OK) /* the last write */
		kvio_err("writing %s: %s", db_name(w->db), db_reason(w->db, w->rc));
}

int dbw_commit(struct dbw *w, int narms)
{
	end_rows(w, narms);
	if (w->rc == SQLITE_OK)
		w->rc = db_exec(w->db, "COMMIT", "writing the database");
	return w->rc;
}

int dbw_end(struct dbw *w, int narms)
{
	dbw_flush_chunk(w);
	writer_stop(w);
	end_rows(w, narms);
	rsum_free(w);
	dbw_detach(w);
	chunkbuf_free(w->cb);
	chunkbuf_free(w->spare);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	for (size_t i = 0; i < w->names.n; i++)
		free(VEC_AT(&w->names, char *, i));
	vec_free(&w->names);
	vec_free(&w->used);
	if (w->rc == SQLITE_OK)
		w->rc = db_exec(w->db, "COMMIT", "writing the database");
	return w->rc;
}

void dbw_set_depth(struct dbw *w, int64_t id, int depth)
{
	dbw_sync(w);
	db_sum_free(w->rsum[RS_SLICE]); /* a row changed: read back */
	w->rsum[RS_SLICE] = NULL;
	sqlite3_stmt *st;
	if (w->rc != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "UPDATE kvio_slice SET depth = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int(st, 1, depth);
	sqlite3_bind_int64(st, 2, id);
	dbw_step(w, st);
	sqlite3_finalize(st);
}

void dbw_stat(struct dbw *w, const char *label, const char *name, int64_t value)
{
	dbw_sync(w);
	sqlite3_stmt *st;
	if (w->rc != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO kvio_stats VALUES(?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, label, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, value);
	dbw_step(w, st);
	sqlite3_finalize(st);
}

int64_t dbw_thread(struct dbw *w, int64_t tid, const char *name)
{
	dbw_sync(w);
	sqlite3_stmt *st;
	int64_t utid = w->next_utid++;
	if (w->rc != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO thread(id, utid, tid, name) VALUES(?1, ?1, ?2, ?3)", -1, &st,
			       NULL) != SQLITE_OK)
		return utid;
	sqlite3_bind_int64(st, 1, utid);
	sqlite3_bind_int64(st, 2, tid);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
	dbw_step(w, st);
	sqlite3_finalize(st);
	return utid;
}
