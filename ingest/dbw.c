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

void dbw_step(struct dbw *w, sqlite3_stmt *st)
{
	if (w->rc != SQLITE_OK)
		return;
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		kvio_err("writing %s: %s", db_name(w->db), db_reason(w->db, rc));
		w->rc = rc;
	}
	sqlite3_reset(st);
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

int64_t dbw_process(struct dbw *w, int64_t pid, const char *name)
{
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
	int64_t id = w->next_track++;
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
	sqlite3_stmt *st = w->slice;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, dur);
	sqlite3_bind_int64(st, 4, track);
	sqlite3_bind_text(st, 5, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, id);
	dbw_step(w, st);
}

/* ---- args of generic slices ---- */
static const char *const obj_cols[] = {"trace_id", "op", "part", "bytes", "slot_offset", "rank", "fmt",
	"chunk", "tp_rank", "tp_world", "tp_chunk", "n_cmds", "op_latency_ms", "error", "instance", "producer_pid",
	"key", "occurrence"};
#define NOBJCOL (int)(sizeof obj_cols / sizeof obj_cols[0])

void dbw_obj_begin(struct dbw *w, int64_t id)
{
	sqlite3_clear_bindings(w->obj);
	sqlite3_bind_int64(w->obj, 1, id);
	w->obj_id = id;
}

void dbw_obj_end(struct dbw *w)
{
	dbw_step(w, w->obj);
	w->obj_id = -1;
}

void dbw_arg_row(struct dbw *w, int64_t set, const char *key, int vt_kind, int64_t i,
		    const char *s, double d, const char *display)
{
	if (set == w->obj_id)
		for (int c = 0; c < NOBJCOL; c++)
			if (!strcmp(key, obj_cols[c])) {
				if (vt_kind == 3)
					sqlite3_bind_double(w->obj, c + 2, d);
				else if (vt_kind == 4)
					sqlite3_bind_text(w->obj, c + 2, s, -1, SQLITE_TRANSIENT);
				else
					sqlite3_bind_int64(w->obj, c + 2, i);
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
	sqlite3_stmt *st = w->counter;
	sqlite3_bind_int64(st, 1, w->next_counter++);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, track);
	sqlite3_bind_double(st, 4, v);
	dbw_step(w, st);
}

void dbw_flow(struct dbw *w, int64_t out, int64_t in, int64_t flow_id)
{
	sqlite3_stmt *st = w->flow;
	sqlite3_bind_int64(st, 1, w->next_flow++);
	sqlite3_bind_int64(st, 2, out);
	sqlite3_bind_int64(st, 3, in);
	sqlite3_bind_int64(st, 4, flow_id);
	dbw_step(w, st);
}

/* ---- command chunks ---- */

uint16_t dbw_name(struct dbw *w, const char *name)
{
	for (size_t i = 0; i < w->names.n; i++)
		if (!strcmp(VEC_AT(&w->names, const char *, i), name))
			return (uint16_t)i;
	if (w->names.n >= 65535)
		return 0;
	*(char **)vec_push(&w->names, sizeof(char *)) = xstrdup(name);
	sqlite3_bind_int64(w->name, 1, (int64_t)w->names.n - 1);
	sqlite3_bind_text(w->name, 2, name, -1, SQLITE_TRANSIENT);
	dbw_step(w, w->name);
	return (uint16_t)(w->names.n - 1);
}

/* The buffered commands as one kvio_cmd_chunk row (and its kvio_cmd_range row). */
static void chunk_row(struct dbw *w)
{
	struct chunkbuf *cb = w->cb;
	uint32_t n = cb->n;
	struct chunk_view v = {n, cb->ts, cb->dur, cb->slba, cb->track, cb->data_len, cb->trace_id, cb->slba_track,
			       cb->kv_id, cb->name, cb->flags};
	unsigned char *p = cb->blob;
	size_t len = chunk_encode(&v, cb->first_id, p);
	sqlite3_bind_int64(w->chunk, 1, cb->first_id);
	sqlite3_bind_int64(w->chunk, 2, n);
	sqlite3_bind_blob(w->chunk, 3, p, (int)len, SQLITE_STATIC);
	dbw_step(w, w->chunk);
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
	dbw_step(w, w->range);
}

void dbw_flush_chunk(struct dbw *w)
{
	if (!w->cb->n)
		return;
	chunk_row(w);
	w->cb->n = 0;
}

void dbw_flush_partial(struct dbw *w)
{
	w->partial_id = -1;
	if (!w->cb->n)
		return;
	chunk_row(w);
	w->partial_id = w->cb->first_id;
}

void dbw_drop_partial(struct dbw *w)
{
	sqlite3_stmt *st;
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


void dbw_cmd(struct dbw *w, int64_t id, const struct cmd_row *r)
{
	struct chunkbuf *cb = w->cb;
	if (cb->n == CHUNK_ROWS || (cb->n && cb->first_id + cb->n != id))
		dbw_flush_chunk(w);
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
		sqlite3_bind_int64(w->kv, 1, w->next_kv++);
		sqlite3_bind_text(w->kv, 2, r->key_hex, -1, SQLITE_TRANSIENT);
		bind_i64_or_null(w->kv, 3, r->has_key_len, r->key_len);
		bind_i64_or_null(w->kv, 4, r->has_value_len, r->value_len);
		dbw_step(w, w->kv);
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
	/* stored counter ids start far above slice ids: the counter view also
	 * derives points whose id is their command's slice id */
	memset(w, 0, sizeof *w);
	w->db = db;
	w->next_id = w->next_track = w->next_flow = w->next_kv = w->next_utid = 1;
	w->next_counter = (int64_t)1 << 40;
	w->obj_id = -1;
	w->partial_id = -1;
	w->cb = xmalloc(sizeof *w->cb);
	w->cb->n = 0;
	w->cb->blob = xmalloc(chunk_size(CHUNK_ROWS));
	/* kvio-ingest --follow opens the transaction itself (it empties the tables first) */
	int rc = sqlite3_get_autocommit(db) ? db_exec(db, "BEGIN", "writing the database") : SQLITE_OK;
	if (rc == SQLITE_OK)
		rc = dbw_attach(w, db);
	w->rc = rc;
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

/* The metadata rows every database ends with, then the sums (the last write). */
static void end_rows(struct dbw *w, int narms)
{
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
						 : db_write_sums(w->db)) != SQLITE_OK) /* the last write: what kvio wrote */
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
	end_rows(w, narms);
	dbw_detach(w);
	free(w->cb->blob);
	free(w->cb);
	for (size_t i = 0; i < w->names.n; i++)
		free(VEC_AT(&w->names, char *, i));
	vec_free(&w->names);
	if (w->rc == SQLITE_OK)
		w->rc = db_exec(w->db, "COMMIT", "writing the database");
	return w->rc;
}

void dbw_set_depth(struct dbw *w, int64_t id, int depth)
{
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
