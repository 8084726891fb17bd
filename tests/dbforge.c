/* dbforge.c — crafts damaged kvio databases for tests/t_36_damaged.sh the way
 * a careful forger would: values kvio never writes, with the checksums made to
 * match, so that the checks behind the checksums are what is tested.
 *
 *   dbforge DB chunk ID FIELD ROW VALUE   set one command's FIELD (ts dur slba
 *                                         track data_len trace_id slba_track
 *                                         kv_id name flags) in chunk ID, row
 *                                         ROW (0-based), and re-seal the chunk
 *   dbforge DB reseal ID...               recompute chunk ID's checksum from its
 *                                         bytes as they are (any bytes of 16 or
 *                                         more: magic, n and length unchecked)
 *   dbforge DB resum                      recompute kvio_sum from the tables (one
 *                                         transaction: all or nothing)
 *
 * Exit 0, or 1 with a line on stderr. */
#include "../db/chunk.h"
#include "../db/valid.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static int fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "dbforge: %s: %s\n", what, db ? sqlite3_errmsg(db) : "bad arguments");
	return 1;
}

/* The writable array of FIELD in chunk bytes b (v mapped over them) and its element size. */
static void *field(struct chunk_view *v, const char *f, size_t *sz)
{
	struct { const char *n; const void *p; size_t sz; } a[] = {
		{"ts", v->ts, 8}, {"dur", v->dur, 8}, {"slba", v->slba, 8}, {"track", v->track, 4},
		{"data_len", v->data_len, 4}, {"trace_id", v->trace_id, 4}, {"slba_track", v->slba_track, 4},
		{"kv_id", v->kv_id, 4}, {"name", v->name, 2}, {"flags", v->flags, 1},
	};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		if (!strcmp(a[i].n, f)) {
			*sz = a[i].sz;
			return (void *)a[i].p;
		}
	return NULL;
}

static int chunk_set(sqlite3 *db, long long id, const char *f, long row, long long val)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT data FROM kvio_cmd_chunk WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return fail(db, "reading the chunk");
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return fail(db, "no such chunk");
	size_t len = (size_t)sqlite3_column_bytes(st, 0);
	unsigned char *b = malloc(len), *out = malloc(len);
	memcpy(b, sqlite3_column_blob(st, 0), len);
	sqlite3_finalize(st);
	struct chunk_view v;
	size_t sz;
	void *p;
	if (chunk_map(b, len, &v) || row < 0 || (uint32_t)row >= v.n || !(p = field(&v, f, &sz)))
		return fail(NULL, "not a chunk, a row or a field");
	memcpy((unsigned char *)p + (size_t)row * sz, &val, sz); /* little-endian: the low bytes */
	chunk_encode(&v, id, out);
	sqlite3_prepare_v2(db, "UPDATE kvio_cmd_chunk SET data = ?2 WHERE id = ?1", -1, &st, NULL);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_blob(st, 2, out, (int)len, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(db, "writing the chunk");
	sqlite3_finalize(st);
	free(b);
	free(out);
	return rc;
}

/* Chunk id's checksum (bytes 8..15) made to match its bytes after the header,
 * as chunk.c computes it: XXH3-64 seeded with the id. */
static int chunk_reseal(sqlite3 *db, long long id)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT data FROM kvio_cmd_chunk WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return fail(db, "reading the chunk");
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_BLOB) {
		sqlite3_finalize(st);
		return fail(NULL, "no such chunk, or its data is no blob");
	}
	size_t len = (size_t)sqlite3_column_bytes(st, 0);
	if (len < CHUNK_HDR) {
		sqlite3_finalize(st);
		return fail(NULL, "the chunk is shorter than its header");
	}
	unsigned char *b = malloc(len);
	memcpy(b, sqlite3_column_blob(st, 0), len);
	sqlite3_finalize(st);
	uint64_t sum = XXH3_64bits_withSeed(b + CHUNK_HDR, len - CHUNK_HDR, (uint64_t)id);
	memcpy(b + 8, &sum, 8);
	sqlite3_prepare_v2(db, "UPDATE kvio_cmd_chunk SET data = ?2 WHERE id = ?1", -1, &st, NULL);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_blob(st, 2, b, (int)len, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(db, "writing the chunk");
	sqlite3_finalize(st);
	free(b);
	return rc;
}

int main(int argc, char **argv)
{
	sqlite3 *db;
	if (argc < 3 || sqlite3_open(argv[1], &db) != SQLITE_OK)
		return fail(NULL, "usage: dbforge DB chunk ID FIELD ROW VALUE | dbforge DB reseal ID... | dbforge DB resum");
	int rc;
	if (!strcmp(argv[2], "chunk") && argc == 7)
		rc = chunk_set(db, atoll(argv[3]), argv[4], atol(argv[5]), atoll(argv[6]));
	else if (!strcmp(argv[2], "reseal") && argc > 3) {
		rc = 0;
		for (int i = 3; i < argc && !rc; i++)
			rc = chunk_reseal(db, atoll(argv[i]));
	} else if (!strcmp(argv[2], "resum"))
		rc = sqlite3_exec(db, "BEGIN; DELETE FROM kvio_sum", NULL, NULL, NULL) || db_write_sums(db) ||
		     sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) ? fail(db, "resum") : 0; /* all or nothing */
	else
		rc = fail(NULL, "usage");
	sqlite3_close(db);
	return rc;
}
