/* dir.c — reading and checking a database's directory (dir.h): the command
 * chunks' ids, sizes and extents (kvio_cmd_range), the command names, the
 * tracks, the KV rows; and reading a chunk's bytes (chunk_read). Each table is read in id order with its values' types checked in
 * SQL, so that C sees only integers and text where it expects them. */
#include "kvio_int.h"
#include "chunk.h"
#include <stdarg.h>
#include <stdio.h>

/* *why = the sentence; returns SQLITE_CORRUPT (or NOMEM when there is no room for it). */
static int damaged(char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*why = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	return *why ? SQLITE_CORRUPT : SQLITE_NOMEM;
}

static int dir_prep(sqlite3 *db, const char *qschema, const char *fmt, sqlite3_stmt **st)
{
	char *sql = sqlite3_mprintf(fmt, qschema, qschema); /* fmt names the schema once or twice */
	if (!sql)
		return SQLITE_NOMEM;
	int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
	sqlite3_free(sql);
	return rc;
}

/* Grow *p (of *cap items of size sz) to hold need items. SQLITE_OK or NOMEM. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return SQLITE_OK;
	size_t nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	void *q = sqlite3_realloc64(*p, nc * sz);
	if (!q)
		return SQLITE_NOMEM;
	*p = q;
	*cap = nc;
	return SQLITE_OK;
}

/* A kvio_cmd_range row as a chunk of d (its id past next, the lowest the
 * next chunk may start at): SQLITE_OK, or damage said. */
static int range_row(sqlite3_stmt *st, struct dbdir *d, int64_t *next, char **why)
{
	int64_t id = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);
	struct extent e = {sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
			   sqlite3_column_int64(st, 5)};
	if (!sqlite3_column_int(st, 6) || n < 1 || n > CHUNK_ROWS)
		return damaged(why, "kvio_cmd_range %lld: n %s is not a count of 1..%d commands", (long long)id,
			       sqlite3_column_text(st, 1), CHUNK_ROWS);
	if (id < *next)
		return damaged(why, "kvio_cmd_range %lld: its ids overlap the chunk before (which ends at %lld)",
			       (long long)id, (long long)*next - 1);
	if (id > DIR_MAX_ID - n)
		return damaged(why, "kvio_cmd_range %lld: ids beyond 2^53", (long long)id);
	if (!sqlite3_column_int(st, 7) || e.ts_min < 0 || e.end_max < e.ts_min || e.tid_min < 0 || e.tid_max < e.tid_min ||
	    e.tid_max > UINT32_MAX || (e.tid_max && !e.tid_min))
		return damaged(why, "kvio_cmd_range %lld: not an extent (ts %s..%s, trace_id %s..%s)", (long long)id,
			       sqlite3_column_text(st, 2), sqlite3_column_text(st, 3), sqlite3_column_text(st, 4),
			       sqlite3_column_text(st, 5));
	size_t k = d->nchunks++;
	d->first[k] = id;
	d->n[k] = (uint32_t)n;
	d->ext[k] = e;
	*next = id + n;
	return SQLITE_OK;
}

/* No kvio_slice id among the chunks' command ids: kvio numbers slices and
 * commands from one sequence (the slice view is their union, a flow end names
 * either). One seek of kvio_slice's primary key per chunk. */
static int chunks_apart(sqlite3 *db, const char *q, const struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT id FROM %s.kvio_slice WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 1", &st);
	for (size_t k = 0; rc == SQLITE_OK && k < d->nchunks; k++) {
		sqlite3_bind_int64(st, 1, d->first[k]);
		sqlite3_bind_int64(st, 2, d->first[k] + d->n[k]);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) /* the words of values.c's check of kvio_slice */
			rc = damaged(why, "kvio_slice %lld: id is a command's too (kvio_cmd_range %lld: commands %lld..%lld)",
				     (long long)sqlite3_column_int64(st, 0), (long long)d->first[k],
				     (long long)d->first[k], (long long)(d->first[k] + d->n[k] - 1));
		else if (rc == SQLITE_DONE)
			rc = sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if ((rc & 0xff) == SQLITE_CORRUPT && !*why) /* SQLite found kvio_slice's pages damaged */
		rc = damaged(why, "kvio_slice: %s", sqlite3_errstr(rc));
	return rc;
}

/* No chunk row the directory does not list: a directory row deleted would
 * drop its commands from every reader without a word (those it lists must
 * exist: reading one that does not says so). One count of kvio_cmd_chunk's
 * rows (its b-tree's leaves, not the blobs). */
static int chunks_listed(sqlite3 *db, const char *q, const struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT count(*) FROM %s.kvio_cmd_chunk", &st);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 0);
		rc = n > (int64_t)d->nchunks ? damaged(why, "kvio_cmd_chunk: %lld rows, kvio_cmd_range lists %lld (a chunk"
						       " without its directory row)", (long long)n, (long long)d->nchunks)
					     : SQLITE_OK;
	}
	sqlite3_finalize(st);
	if ((rc & 0xff) == SQLITE_CORRUPT && !*why) /* SQLite found kvio_cmd_chunk's pages damaged */
		rc = damaged(why, "kvio_cmd_chunk: %s", sqlite3_errstr(rc));
	return rc;
}

/* The chunks, from their directory kvio_cmd_range: ids from 1, ascending and
 * disjoint, below DIR_MAX_ID, apart from the slices' ids; 1 <= n <= CHUNK_ROWS;
 * a time extent of integers and a trace_id extent of u32 (NULL: no tagged command). */
static int load_chunks(sqlite3 *db, const char *q, struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT id, n, ts_min, end_max, coalesce(tid_min, 0), coalesce(tid_max, 0),"
			  " typeof(n) = 'integer',"
			  " typeof(ts_min) = 'integer' AND typeof(end_max) = 'integer' AND (tid_min IS NULL) = (tid_max IS NULL)"
			  " AND typeof(coalesce(tid_min, 0)) = 'integer' AND typeof(coalesce(tid_max, 0)) = 'integer'"
			  " FROM %s.kvio_cmd_range ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	size_t cap[3] = {0, 0, 0};
	int64_t next = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t need = d->nchunks + 1;
		if ((rc = grow((void **)&d->first, &cap[0], need, sizeof *d->first)) != SQLITE_OK ||
		    (rc = grow((void **)&d->n, &cap[1], need, sizeof *d->n)) != SQLITE_OK ||
		    (rc = grow((void **)&d->ext, &cap[2], need, sizeof *d->ext)) != SQLITE_OK ||
		    (rc = range_row(st, d, &next, why)) != SQLITE_OK)
			break;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && (rc = chunks_apart(db, q, d, why)) == SQLITE_OK)
		rc = chunks_listed(db, q, d, why);
	return rc;
}

/* The command names: ids 0..65535 (a chunk's u16), each a text of at most
 * CHUNK_NAME_MAX bytes (every row that reads one copies it), no name twice. */
static int load_names(sqlite3 *db, const char *q, struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT id, name, typeof(name) = 'text' FROM %s.kvio_cmd_name ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (id < 0 || id > 65535 || !sqlite3_column_int(st, 2)) {
			rc = damaged(why, "kvio_cmd_name %lld: %s", (long long)id,
				     id < 0 || id > 65535 ? "id is not 0..65535" : "the name is not text");
			break;
		}
		if (sqlite3_column_bytes(st, 1) > CHUNK_NAME_MAX) {
			rc = damaged(why, "kvio_cmd_name %lld: the name is %d bytes, longer than the %d kvio writes",
				     (long long)id, sqlite3_column_bytes(st, 1), CHUNK_NAME_MAX);
			break;
		}
		size_t had = cap;
		if ((rc = grow((void **)&d->names, &cap, (size_t)id + 1, sizeof *d->names)) != SQLITE_OK)
			break;
		memset(d->names + had, 0, (cap - had) * sizeof *d->names);
		if (!(d->names[id] = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 1)))) {
			rc = SQLITE_NOMEM;
			break;
		}
		d->nnames = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	/* kvio writes each name once (ingest/dbw.c interns them): a name twice splits its
	 * commands between two ids that read the same */
	if ((rc = dir_prep(db, q, "SELECT a.id, a.name FROM %s.kvio_cmd_name a JOIN %s.kvio_cmd_name b"
			   " ON b.name = a.name AND b.id < a.id LIMIT 1", &st)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = damaged(why, "kvio_cmd_name %lld: the name '%s' is another row's too", (long long)sqlite3_column_int64(st, 0),
			     (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The tracks: ids 1..rows + DIR_TRACK_HOLES (so the arrays by id are bounded by
 * the rows), upid NULL or a non-negative integer, is_counter 0 or 1. */
static int load_tracks(sqlite3 *db, const char *q, struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT id, upid, is_counter, (SELECT count(*) FROM %s.kvio_track),"
			  " (upid IS NULL OR typeof(upid) = 'integer' AND upid >= 0) AND is_counter IN (0, 1)"
			  " FROM %s.kvio_track ORDER BY id", &st);
	if (rc != SQLITE_OK)
		return rc;
	size_t cap = 0, cap2 = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), rows = sqlite3_column_int64(st, 3);
		if (id < 1 || id > rows + DIR_TRACK_HOLES || !sqlite3_column_int(st, 4)) {
			rc = damaged(why, "kvio_track %lld: %s", (long long)id, id < 1 || id > rows + DIR_TRACK_HOLES
				     ? "id outside the table's numbering" : "upid or is_counter is not kvio's");
			break;
		}
		size_t had = d->ntracks;
		if ((rc = grow((void **)&d->track_upid, &cap, (size_t)id + 1, sizeof *d->track_upid)) != SQLITE_OK ||
		    (rc = grow((void **)&d->track_kind, &cap2, (size_t)id + 1, sizeof *d->track_kind)) != SQLITE_OK)
			break;
		for (size_t i = had; i < (size_t)id; i++) {
			d->track_upid[i] = -1;
			d->track_kind[i] = TRK_NONE;
		}
		d->track_upid[id] = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
		d->track_kind[id] = sqlite3_column_int(st, 2) ? TRK_COUNTER : TRK_SLICE;
		d->ntracks = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* kvio_cmd_kv's ids are 1..rows (a command's kv_id is checked against it). */
static int load_kv(sqlite3 *db, const char *q, struct dbdir *d, char **why)
{
	sqlite3_stmt *st;
	int rc = dir_prep(db, q, "SELECT count(*), coalesce(max(id), 0), coalesce(min(id), 1) FROM %s.kvio_cmd_kv", &st);
	if (rc != SQLITE_OK)
		return rc;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 0), mx = sqlite3_column_int64(st, 1), mn = sqlite3_column_int64(st, 2);
		rc = n == mx && mn == 1 ? SQLITE_OK
		     : damaged(why, "kvio_cmd_kv: %lld rows, ids %lld..%lld (kvio numbers them 1..rows)", (long long)n,
			       (long long)mn, (long long)mx);
		d->nkv = n;
	}
	sqlite3_finalize(st);
	return rc;
}

long dir_find(const struct dbdir *d, int64_t id)
{
	size_t lo = 0, hi = d->nchunks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->first[mid] <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	return id < d->first[lo] + (int64_t)d->n[lo] ? (long)lo : -1;
}

int chunk_read(sqlite3 *db, const char *schema, const struct dbdir *d, size_t k, int check, void **buf,
	       size_t *cap, struct chunk_view *v, char *why, size_t whylen)
{
	int64_t id = d->first[k];
	sqlite3_blob *b = NULL;
	/* straight into buf (no statement's copy of the blob) */
	int rc = sqlite3_blob_open(db, schema, "kvio_cmd_chunk", "data", id, 0, &b);
	if (rc != SQLITE_OK) { /* no such row or no blob in it: damage; else the read's own code */
		if (rc == SQLITE_ERROR) {
			snprintf(why, whylen, "kvio_cmd_chunk %lld: %s", (long long)id, sqlite3_errmsg(db));
			rc = SQLITE_CORRUPT;
		}
		sqlite3_blob_close(b);
		return rc;
	}
	size_t len = (size_t)sqlite3_blob_bytes(b);
	if (len > chunk_size(CHUNK_ROWS)) { /* never read more than a chunk can be */
		snprintf(why, whylen, "kvio_cmd_chunk %lld: %zu bytes, more than %u commands take", (long long)id, len,
			 CHUNK_ROWS);
		sqlite3_blob_close(b);
		return SQLITE_CORRUPT;
	}
	if (*cap < len || !*buf) {
		void *nb = sqlite3_realloc64(*buf, len ? len : 1);
		if (!nb) {
			sqlite3_blob_close(b);
			return SQLITE_NOMEM;
		}
		*buf = nb;
		*cap = len ? len : 1;
	}
	rc = sqlite3_blob_read(b, *buf, (int)len, 0);
	sqlite3_blob_close(b);
	if ((rc & 0xff) == SQLITE_CORRUPT) /* a damaged page of the blob: SQLite's reason */
		snprintf(why, whylen, "kvio_cmd_chunk %lld: %s", (long long)id, sqlite3_errstr(rc));
	if (rc != SQLITE_OK)
		return (rc & 0xff) == SQLITE_CORRUPT ? SQLITE_CORRUPT : rc;
	if (check)
		return chunk_check(*buf, len, d, k, v, why, whylen) ? SQLITE_CORRUPT : SQLITE_OK;
	if (chunk_map(*buf, len, v) != 0 || v->n != d->n[k]) {
		snprintf(why, whylen, "kvio_cmd_chunk %lld changed under the reader", (long long)id);
		return SQLITE_CORRUPT;
	}
	return SQLITE_OK;
}

int chunk_order_cols(sqlite3 *db, const char *schema, const struct dbdir *d, size_t k, int64_t *ts, uint32_t *track)
{
	uint32_t n = d->n[k];
	sqlite3_blob *b = NULL;
	int rc = sqlite3_blob_open(db, schema, "kvio_cmd_chunk", "data", d->first[k], 0, &b);
	if (rc == SQLITE_OK && (size_t)sqlite3_blob_bytes(b) != chunk_size(n))
		rc = SQLITE_CORRUPT; /* not a chunk of n commands: the whole read says why */
	if (rc == SQLITE_OK) /* the layout of chunk_encode: ts, dur, slba (8 bytes each), then track */
		rc = sqlite3_blob_read(b, ts, (int)(8 * n), CHUNK_HDR);
	if (rc == SQLITE_OK)
		rc = sqlite3_blob_read(b, track, (int)(4 * n), (int)(CHUNK_HDR + 3 * chunk_al8((size_t)8 * n)));
	sqlite3_blob_close(b);
	return rc;
}

int dir_load(sqlite3 *db, const char *qschema, struct dbdir *d, char **why)
{
	memset(d, 0, sizeof *d);
	*why = NULL;
	static const char *const table[] = {"kvio_cmd_range", "kvio_cmd_name", "kvio_track", "kvio_cmd_kv"};
	int (*const load[])(sqlite3 *, const char *, struct dbdir *, char **) = {load_chunks, load_names, load_tracks,
										  load_kv};
	int rc = SQLITE_OK;
	for (int i = 0; rc == SQLITE_OK && i < 4; i++)
		if ((rc = load[i](db, qschema, d, why)) != SQLITE_OK && (rc & 0xff) == SQLITE_CORRUPT && !*why) {
			*why = sqlite3_mprintf("%s: %s", table[i], sqlite3_errstr(rc)); /* SQLite found its pages damaged */
			rc = *why ? SQLITE_CORRUPT : SQLITE_NOMEM;
		}
	if (rc != SQLITE_OK)
		dir_free(d, 0);
	return rc;
}

void dir_free(struct dbdir *d, int keep_names)
{
	if (!keep_names) {
		for (size_t i = 0; i < d->nnames; i++)
			sqlite3_free(d->names[i]);
		sqlite3_free(d->names);
	}
	sqlite3_free(d->first);
	sqlite3_free(d->n);
	sqlite3_free(d->ext);
	sqlite3_free(d->track_upid);
	sqlite3_free(d->track_kind);
	memset(d, 0, sizeof *d);
}
