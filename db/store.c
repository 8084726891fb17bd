/* store.c — the chunk store behind kvio_cmd: the directory of command chunks
 * (kvio_cmd_chunk's ids and sizes), the command names, each track's process,
 * the chunks' extents (kvio_cmd_range), and a few decoded chunks in an LRU
 * cache. Everything is read again when the database's data version changes.
 * The one reader of chunk rows inside the extension (chunk.h decodes them). */
#include "kvio_int.h"
#include "memo.h"

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
	if (s->d.names) { /* a value of a running statement may point at a name: freed at store_free */
		char ***r = sqlite3_realloc64(s->retired, (s->nretired + 1) * sizeof *r);
		if (r) {
			s->retired = r;
			r[s->nretired] = s->d.names;
			s->retired_n = sqlite3_realloc64(s->retired_n, (s->nretired + 1) * sizeof *s->retired_n);
			if (s->retired_n)
				s->retired_n[s->nretired++] = s->d.nnames;
		}
	}
	dir_free(&s->d, 1);
	if (s->own_checked)
		sqlite3_free(s->checked);
	s->checked = NULL;
	sqlite3_free(s->ord);
	sqlite3_free(s->ord_key);
	sqlite3_free(s->ord_ts);
	sqlite3_free(s->ord_track);
	s->ord = NULL;
	s->ord_key = NULL;
	s->ord_ts = NULL;
	s->ord_track = NULL;
	s->order_known = 0;
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
	sqlite3_free(s->why);
	sqlite3_free(s->schema);
	sqlite3_free(s->qschema);
	sqlite3_free(s);
}

/* s->why = the damage sentence (one line, sqlite3_malloc'd: KVIO_DAMAGED ...,
 * or what the version says); returns SQLITE_CORRUPT. */
static int store_damaged(struct store *s, char *why)
{
	sqlite3_free(s->why);
	s->why = why;
	return SQLITE_CORRUPT;
}

/* Read the directory (dir.h: chunks, extents, names, tracks, checked) if the
 * database changed since. SQLITE_OK; SQLITE_CORRUPT with s->why; else the
 * code of the read (the tables are not there, an interrupt). */
int store_refresh(struct store *s)
{
	unsigned ver = data_version(s);
	if (s->loaded && ver == s->ver)
		return SQLITE_OK;
	store_drop(s);
	char *why = NULL;
	int rc = db_valid(s->db, s->schema, &why); /* kvio's version, schema and directory sums */
	if (rc == SQLITE_CORRUPT)
		return store_damaged(s, why);
	if (rc == SQLITE_OK && (rc = dir_load(s->db, s->qschema, &s->d, &why)) == SQLITE_CORRUPT) {
		store_damaged(s, sqlite3_mprintf(KVIO_DAMAGED "%s", why));
		sqlite3_free(why);
		return SQLITE_CORRUPT;
	}
	if (rc != SQLITE_OK)
		return rc;
	/* which chunks were checked: the process's memo of the file, shared by its
	 * connections (each chunk checked once per process), else the store's own */
	s->own_checked = !(s->checked = memo_chunks(memo_of(s->db, s->schema), s->d.nchunks));
	if (s->own_checked && !(s->checked = sqlite3_malloc64(s->d.nchunks ? s->d.nchunks : 1)))
		return SQLITE_NOMEM;
	if (s->own_checked)
		memset(s->checked, 0, s->d.nchunks ? s->d.nchunks : 1);
	s->ver = ver;
	s->loaded = 1;
	return SQLITE_OK;
}


/* The decoded chunk k, read into the cache if needed; NULL on error. */
const struct chunk_view *store_chunk(struct store *s, size_t k)
{
	int64_t id = s->d.first[k];
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
	char why[256];
	int check = !__atomic_load_n(&s->checked[k], __ATOMIC_ACQUIRE) && !db_unchecked();
	int rc = chunk_read(s->db, s->schema, &s->d, k, check, &victim->blob, &victim->cap, &victim->v, why, sizeof why);
	if (rc != SQLITE_OK) {
		s->chunk_rc = rc == SQLITE_CORRUPT ? store_damaged(s, sqlite3_mprintf(KVIO_DAMAGED "%s", why)) : rc;
		return NULL;
	}
	if (check) /* its first read in this process checked every byte */
		__atomic_store_n(&s->checked[k], 1, __ATOMIC_RELEASE);
	victim->id = id;
	victim->age = ++s->clock;
	return &victim->v;
}

const char *store_why(const struct store *s)
{
	return s->why ? s->why : KVIO_DAMAGED "a command chunk cannot be read";
}

/* Report the failed store_chunk of s as ctx's error: the damage (one line,
 * "database damaged or not written by kvio: ...", code SQLITE_CORRUPT); any
 * other cause (an interrupt, out of memory, a busy or unreadable file) keeps
 * its own SQLite code. Returns the code for an xColumn to return. */
int chunk_error(sqlite3_context *ctx, struct store *s, const char *who)
{
	(void)who;
	int rc = s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
	if (rc == SQLITE_CORRUPT) {
		sqlite3_result_error(ctx, store_why(s), -1);
		sqlite3_result_error_code(ctx, SQLITE_CORRUPT); /* keeps the message */
	} else {
		sqlite3_result_error_code(ctx, rc);
	}
	return rc;
}

/* The KV rows (kvio_cmd_kv: its sum and values, and kvio_counter's, the
 * tables kvio-export reads) checked before the first KV column at this data
 * version is read (once per process for a file: memo.h): a command's key and
 * lengths are read from that table, not from the checked chunks. */
static int kv_checked(sqlite3_context *ctx, struct store *s)
{
	if (s->kv_ok && s->kv_ver == s->ver)
		return 1;
	char *why = NULL;
	int rc = db_check_tables(s->db, s->schema, DB_OTHER, &why);
	if (rc == SQLITE_CORRUPT && why) {
		sqlite3_result_error(ctx, why, -1);
		sqlite3_result_error_code(ctx, SQLITE_CORRUPT); /* keeps the message */
	} else if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc == SQLITE_CORRUPT ? SQLITE_NOMEM : rc);
	}
	sqlite3_free(why);
	s->kv_ok = rc == SQLITE_OK;
	s->kv_ver = s->ver;
	return s->kv_ok;
}

void kv_value(sqlite3_context *ctx, struct store *s, uint32_t kv_id, int col)
{
	static const char *const q[3] = {"SELECT key_hex FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT key_len FROM %s.kvio_cmd_kv WHERE id = ?",
					 "SELECT value_len FROM %s.kvio_cmd_kv WHERE id = ?"};
	sqlite3_stmt *st;
	if (!kv_checked(ctx, s))
		return;
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

/* Chunk k's ts and track columns (*n rows) for its order: the cached chunk's
 * when it is in the cache; a chunk this process has not checked yet is read
 * whole and checked (store_chunk: once, before the scans, which two
 * connections scanning side by side would otherwise both do); else those two
 * columns alone, read into the store's scratch (a quarter of the chunk's
 * bytes, checked already); a chunk whose columns cannot be read so is read
 * whole (store_chunk says its damage). SQLITE_OK or the read's failure. */
static int order_cols(struct store *s, size_t k, const int64_t **ts, const uint32_t **track, uint32_t *n)
{
	for (int i = 0; i < NCACHE; i++)
		if (s->cache[i].id == s->d.first[k]) {
			*ts = s->cache[i].v.ts;
			*track = s->cache[i].v.track;
			*n = s->cache[i].v.n;
			return SQLITE_OK;
		}
	if (!__atomic_load_n(&s->checked[k], __ATOMIC_ACQUIRE) && !db_unchecked())
		goto whole; /* its first read in this process checks it, once: here, before the scans */
	if (!s->ord_ts && (!(s->ord_ts = sqlite3_malloc64((size_t)CHUNK_ROWS * 8)) ||
			   !(s->ord_track = sqlite3_malloc64((size_t)CHUNK_ROWS * 4))))
		return SQLITE_NOMEM;
	if (chunk_order_cols(s->db, s->schema, &s->d, k, s->ord_ts, s->ord_track) == SQLITE_OK) {
		*ts = s->ord_ts;
		*track = s->ord_track;
		*n = s->d.n[k];
		return SQLITE_OK;
	}
whole:;
	const struct chunk_view *v = store_chunk(s, k);
	if (!v)
		return s->chunk_rc == SQLITE_OK ? SQLITE_CORRUPT : s->chunk_rc;
	*ts = v->ts;
	*track = v->track;
	*n = v->n;
	return SQLITE_OK;
}

/* Chunk k's own order (kvio_int.h), read once per data version. */
int store_chunk_order(struct store *s, size_t k, const int64_t **key)
{
	static const int64_t none[4] = {0, 0, 0, 0};
	size_t nk = s->d.nchunks ? s->d.nchunks : 1;
	*key = none;
	if (k >= s->d.nchunks)
		return -1;
	if (!s->ord) {
		s->ord = sqlite3_malloc64(nk);
		s->ord_key = sqlite3_malloc64(nk * 4 * sizeof(int64_t));
		if (!s->ord || !s->ord_key) {
			sqlite3_free(s->ord);
			sqlite3_free(s->ord_key);
			s->ord = NULL;
			s->ord_key = NULL;
			return -1;
		}
		memset(s->ord, 0, nk); /* nothing known yet */
	}
	*key = &s->ord_key[4 * k];
	if (s->ord[k])
		return s->ord[k] == 1;
	const int64_t *ts;
	const uint32_t *track;
	uint32_t n;
	if (order_cols(s, k, &ts, &track, &n) != SQLITE_OK)
		return -1; /* not kept: an interrupted read is no property of the chunk */
	int64_t pu = INT64_MIN, pt = INT64_MIN, *kk = &s->ord_key[4 * k];
	int ok = 1;
	for (uint32_t i = 0; ok && i < n; i++) {
		int64_t u = store_upid(s, track[i]), t = ts[i];
		if (i == 0)
			kk[0] = u, kk[1] = t;
		ok = !(u < pu || (u == pu && t < pt));
		pu = u;
		pt = t;
	}
	kk[2] = pu;
	kk[3] = pt;
	s->ord[k] = ok ? 1 : 2;
	return ok;
}

/* Whether every row is at or after the one before it in (upid, ts) order,
 * ids ascending: computed once per data version (one read of each chunk,
 * whose own order store_chunk_order keeps for the scans of a window). */
int store_ordered(struct store *s)
{
	if (store_refresh(s) != SQLITE_OK)
		return 0;
	if (s->order_known)
		return s->ordered;
	int64_t pu = INT64_MIN, pt = INT64_MIN;
	int ok = 1;
	for (size_t k = 0; ok && k < s->d.nchunks; k++) {
		const int64_t *key;
		if (store_chunk_order(s, k, &key) != 1 || key[0] < pu || (key[0] == pu && key[1] < pt))
			ok = 0;
		pu = key[2];
		pt = key[3];
	}
	s->ordered = ok;
	s->order_known = 1;
	return ok;
}
