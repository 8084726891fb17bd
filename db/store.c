/* store.c — the chunk store behind kvio_cmd: the directory of command chunks
 * (kvio_cmd_chunk's ids and sizes), the command names, each track's process,
 * the chunks' extents (kvio_cmd_range), and a few decoded chunks in an LRU
 * cache. Everything is read again when the database's data version changes.
 * The one reader of chunk rows inside the extension (chunk.h decodes them). */
#include "kvio_int.h"

static unsigned data_version(const struct store *s)
{
	unsigned v = 0;
	sqlite3_file_control(s->db, s->schema, SQLITE_FCNTL_DATA_VERSION, &v);
	return v;
}

/* Prepare fmt, whose one %s is the store's schema (its tables, never the TEMP
 * ones of sql/prelude.sql nor those of another attached database). */
static int store_prep(const struct store *s, const char *fmt, sqlite3_stmt **st)
{
	char *sql = sqlite3_mprintf(fmt, s->qschema);
	if (!sql)
		return SQLITE_NOMEM;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	sqlite3_free(sql);
	return rc;
}

static void store_drop(struct store *s)
{
	s->gen++; /* cursors holding a chunk look it up again */
	for (int i = 0; i < NCACHE; i++) {
		sqlite3_free(s->cache[i].blob);
		s->cache[i].blob = NULL;
		s->cache[i].cap = 0;
		s->cache[i].id = INT64_MIN;
	}
	if (s->names) { /* a value of a running statement may point at a name: freed at store_free */
		char ***r = sqlite3_realloc64(s->retired, (s->nretired + 1) * sizeof *r);
		if (r) {
			s->retired = r;
			r[s->nretired] = s->names;
			s->retired_n = sqlite3_realloc64(s->retired_n, (s->nretired + 1) * sizeof *s->retired_n);
			if (s->retired_n)
				s->retired_n[s->nretired++] = s->nnames;
		}
	}
	sqlite3_free(s->track_upid);
	s->track_upid = NULL;
	s->ntracks = 0;
	s->order_known = 0;
	sqlite3_free(s->first);
	sqlite3_free(s->n);
	sqlite3_free(s->ext);
	s->ext = NULL;
	s->names = NULL;
	s->first = NULL;
	s->n = NULL;
	s->nnames = s->nchunks = 0;
	s->loaded = 0;
}

void obj_row_clear(struct store *s)
{
	for (int i = 0; i < NOBJCOL; i++) {
		sqlite3_value_free(s->obj_row[i]);
		s->obj_row[i] = NULL;
	}
	s->obj_found = 0;
	s->obj_id = INT64_MIN;
}

void store_free(void *p)
{
	struct store *s = p;
	store_drop(s);
	for (size_t k = 0; k < s->nretired; k++) {
		for (size_t i = 0; s->retired_n && i < s->retired_n[k]; i++)
			sqlite3_free(s->retired[k][i]);
		sqlite3_free(s->retired[k]);
	}
	sqlite3_free(s->retired);
	sqlite3_free(s->retired_n);
	obj_row_clear(s);
	sqlite3_free(s->schema);
	sqlite3_free(s->qschema);
	sqlite3_free(s);
}

/* Read kvio_track's upid of every track into s->track_upid. */
static int store_tracks(struct store *s)
{
	sqlite3_stmt *st;
	int rc = store_prep(s, "SELECT id, upid FROM %s.kvio_track WHERE id >= 0 AND id < 16777216 ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t id = (size_t)sqlite3_column_int64(st, 0);
		if (id >= s->ntracks) {
			size_t n = id + 64;
			int64_t *u = sqlite3_realloc64(s->track_upid, n * sizeof *u);
			if (!u) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
			for (size_t i = s->ntracks; i < n; i++)
				u[i] = -1;
			s->track_upid = u;
			s->ntracks = n;
		}
		s->track_upid[id] = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Each chunk's extent from kvio_cmd_range, when the table is there and has
 * a row for every chunk (else s->ext stays NULL: every chunk is read). */
static int store_extents(struct store *s)
{
	sqlite3_stmt *st;
	if (!s->nchunks || sqlite3_table_column_metadata(s->db, s->schema, "kvio_cmd_range", "tid_max", NULL, NULL, NULL,
							 NULL, NULL) != SQLITE_OK)
		return SQLITE_OK;
	int rc = store_prep(s, "SELECT id, ts_min, end_max, coalesce(tid_min, 0), coalesce(tid_max, 0)"
			    " FROM %s.kvio_cmd_range ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	struct extent *e = sqlite3_malloc64(s->nchunks * sizeof *e);
	size_t k = 0;
	while (e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k < s->nchunks && sqlite3_column_int64(st, 0) == s->first[k]) {
			e[k].ts_min = sqlite3_column_int64(st, 1);
			e[k].end_max = sqlite3_column_int64(st, 2);
			e[k].tid_min = sqlite3_column_int64(st, 3);
			e[k].tid_max = sqlite3_column_int64(st, 4);
			k++;
		}
	}
	sqlite3_finalize(st);
	if (!e)
		return SQLITE_NOMEM;
	if (rc != SQLITE_DONE || k != s->nchunks) { /* not one row per chunk: read them all */
		sqlite3_free(e);
		return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
	}
	s->ext = e;
	return SQLITE_OK;
}


/* Read the chunk directory and the name table if the database changed since.
 * Returns SQLITE_OK, or an error code when the tables are not there. */
int store_refresh(struct store *s)
{
	unsigned ver = data_version(s);
	if (s->loaded && ver == s->ver)
		return SQLITE_OK;
	store_drop(s);
	sqlite3_stmt *st;
	int rc = store_prep(s, "SELECT id, n FROM %s.kvio_cmd_chunk ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (s->nchunks == cap) {
			cap = cap ? cap * 2 : 64;
			int64_t *f = sqlite3_realloc64(s->first, cap * sizeof *f);
			uint32_t *n = sqlite3_realloc64(s->n, cap * sizeof *n);
			if (f) s->first = f;
			if (n) s->n = n;
			if (!f || !n) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
		}
		s->first[s->nchunks] = sqlite3_column_int64(st, 0);
		s->n[s->nchunks++] = (uint32_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	rc = store_prep(s, "SELECT id, name FROM %s.kvio_cmd_name ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (id < 0 || id > 65535)
			continue;
		if ((size_t)id >= cap) {
			size_t nc = (size_t)id + 16;
			char **nn = sqlite3_realloc64(s->names, nc * sizeof *nn);
			if (!nn) {
				sqlite3_finalize(st);
				return SQLITE_NOMEM;
			}
			memset(nn + cap, 0, (nc - cap) * sizeof *nn);
			s->names = nn;
			cap = nc;
		}
		const char *t = (const char *)sqlite3_column_text(st, 1);
		s->names[id] = sqlite3_mprintf("%s", t ? t : "");
		if ((size_t)id + 1 > s->nnames)
			s->nnames = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	if ((rc = store_tracks(s)) != SQLITE_OK || (rc = store_extents(s)) != SQLITE_OK)
		return rc;
	s->ver = ver;
	s->loaded = 1;
	return SQLITE_OK;
}

/* Index of the chunk holding command id, or -1. */
long store_find(const struct store *s, int64_t id)
{
	size_t lo = 0, hi = s->nchunks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->first[mid] <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	return id < s->first[lo] + (int64_t)s->n[lo] ? (long)lo : -1;
}

/* The decoded chunk k, read into the cache if needed; NULL on error. */
const struct chunk_view *store_chunk(struct store *s, size_t k)
{
	int64_t id = s->first[k];
	struct cached *victim = &s->cache[0];
	s->chunk_rc = SQLITE_OK;
	for (int i = 0; i < NCACHE; i++) {
		if (s->cache[i].id == id) {
			s->cache[i].age = ++s->clock;
			return &s->cache[i].v;
		}
		if (s->cache[i].age < victim->age)
			victim = &s->cache[i];
	}
	s->gen++; /* the victim's chunk changes under the cursors that hold it */
	victim->id = INT64_MIN;
	/* read straight into the slot's buffer (no statement's copy of the blob) */
	sqlite3_blob *b = NULL;
	int rc = sqlite3_blob_open(s->db, s->schema, "kvio_cmd_chunk", "data", id, 0, &b);
	if (rc != SQLITE_OK) {
		/* no such row (the directory names a chunk that is gone) or no blob in
		 * it: corrupt; else the read's own code, SQLITE_INTERRUPT when an early
		 * exit stopped it */
		s->chunk_rc = rc == SQLITE_ERROR ? SQLITE_CORRUPT : rc;
		sqlite3_blob_close(b);
		return NULL;
	}
	size_t len = (size_t)sqlite3_blob_bytes(b);
	if (victim->cap < len || !victim->blob) {
		void *nb = sqlite3_realloc64(victim->blob, len ? len : 1);
		if (!nb) {
			sqlite3_blob_close(b);
			s->chunk_rc = SQLITE_NOMEM;
			return NULL;
		}
		victim->blob = nb;
		victim->cap = len ? len : 1;
	}
	rc = sqlite3_blob_read(b, victim->blob, (int)len, 0);
	sqlite3_blob_close(b);
	if (rc != SQLITE_OK) {
		s->chunk_rc = rc;
		return NULL;
	}
	if (chunk_map(victim->blob, len, &victim->v) != 0 || victim->v.n != s->n[k]) {
		s->chunk_rc = SQLITE_CORRUPT;
		return NULL;
	}
	victim->id = id;
	victim->age = ++s->clock;
	return &victim->v;
}

/* Report the failed store_chunk of s as ctx's error: "unreadable command
 * chunk" (who says who) only for a bad chunk; any other cause (an interrupt,
 * out of memory, a busy or unreadable file) keeps its own SQLite code.
 * Returns the code for an xColumn to return. */
int chunk_error(sqlite3_context *ctx, struct store *s, const char *who)
{
	int rc = s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
	if (rc == SQLITE_CORRUPT) {
		char msg[96];
		sqlite3_snprintf(sizeof msg, msg, "%s: unreadable command chunk", who);
		sqlite3_result_error(ctx, msg, -1);
		sqlite3_result_error_code(ctx, SQLITE_CORRUPT); /* keeps msg */
	} else {
		sqlite3_result_error_code(ctx, rc);
	}
	return rc;
}

void kv_value(sqlite3_context *ctx, const struct store *s, uint32_t kv_id, int col)
{
	static const char *const q[3] = {"SELECT key_hex FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT key_len FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT value_len FROM %s.kvio_cmd_kv WHERE id = ?"};
	sqlite3_stmt *st;
	if (store_prep(s, q[col - C_KEY_HEX], &st) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, kv_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	sqlite3_finalize(st);
}

/* A store for the commands of database schema on db; NULL when out of memory. */
struct store *store_new(sqlite3 *db, const char *schema)
{
	struct store *s = sqlite3_malloc(sizeof *s);
	if (!s)
		return NULL;
	memset(s, 0, sizeof *s);
	s->db = db;
	s->obj_id = INT64_MIN;
	for (int i = 0; i < NCACHE; i++)
		s->cache[i].id = INT64_MIN;
	s->schema = sqlite3_mprintf("%s", schema);
	s->qschema = sqlite3_mprintf("\"%w\"", schema);
	if (!s->schema || !s->qschema) {
		store_free(s);
		return NULL;
	}
	return s;
}

/* Whether every row is at or after the one before it in (upid, ts) order,
 * ids ascending: computed once per data version (one read of the chunks). */
int store_ordered(struct store *s)
{
	if (store_refresh(s) != SQLITE_OK)
		return 0;
	if (s->order_known)
		return s->ordered;
	int64_t pu = INT64_MIN, pt = INT64_MIN;
	int ok = 1;
	for (size_t k = 0; ok && k < s->nchunks; k++) {
		const struct chunk_view *v = store_chunk(s, k);
		if (!v) {
			ok = 0;
			break;
		}
		for (uint32_t i = 0; i < v->n; i++) {
			int64_t u = store_upid(s, v->track[i]), t = v->ts[i];
			if (u < pu || (u == pu && t < pt)) {
				ok = 0;
				break;
			}
			pu = u;
			pt = t;
		}
	}
	s->ordered = ok;
	s->order_known = 1;
	return ok;
}
