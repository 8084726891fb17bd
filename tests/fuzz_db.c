/* fuzz_db.c — libFuzzer target (make fuzz): the bytes of a whole small kvio database.
 *
 * The input is loaded with sqlite3_deserialize, read-only, into a connection set up as
 * db_open_input sets up a file (defensive, no trusted schema, no triggers, kvio's functions
 * registered), and read the ways kvio reads a database: db_valid (version, schema, the small
 * tables' sums) and db_check_tables (every sum); dir_load and every chunk through chunk_read
 * (checked), each checked chunk's values read; a handful of fixed queries through the
 * extension (the slice, args and counter views, kvio_cmd scans with a window, a filter and
 * batch = 1, kvio_pct over kvio_pct_gather, kvio_depth); kvio-check's db_check_all into
 * /dev/null. Whatever the bytes, nothing may crash, leak or overflow (ASan, UBSan) or run
 * away: statements stop after ~20M VM steps, SQLite's heap is capped at 256 MiB.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined, the extension's sources with
 * -DSQLITE_CORE, and -DKVIO_FUZZ_NO_SUMS (chunk.c, valid.c: every checksum passes, so that
 * the mutated bytes reach the checks behind them). Seeds: small databases of kvio-ingest
 * (build/fuzz-corpus/db, page size 512). */
#include "../db/kvio_int.h"
#include "../db/check.h"
#include "../db/schema.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	sqlite3_hard_heap_limit64(256 << 20);
	return 0;
}

static int progress(void *p)
{
	return ++*(long *)p > 20000; /* x 1000 VM steps */
}

static volatile uint64_t sink;

/* Step st to its end, every column read as text (SQLite's conversions of kvio's values). */
static void drain(sqlite3 *db, const char *sql, long *steps)
{
	sqlite3_stmt *st;
	*steps = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	int rows = 0;
	while (sqlite3_step(st) == SQLITE_ROW && ++rows < 100000)
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const unsigned char *t = sqlite3_column_text(st, c);
			sink += t ? (uint64_t)sqlite3_column_bytes(st, c) + t[0] : 1;
		}
	sqlite3_finalize(st);
}

static const char *const queries[] = {
	"SELECT count(*), sum(dur), min(ts), max(ts), count(DISTINCT track_id), count(name) FROM slice",
	"SELECT * FROM slice ORDER BY ts LIMIT 50",
	"SELECT * FROM args LIMIT 200",
	"SELECT count(*), total(int_value), count(string_value), group_concat(DISTINCT value_type) FROM args",
	"SELECT count(*), total(value), min(ts) FROM counter",
	"SELECT * FROM kvio_cmd ORDER BY upid, ts, id LIMIT 50",
	"SELECT count(*), total(ts_end), count(key_hex), total(key_len), total(value_len), count(role) FROM kvio_cmd",
	"SELECT count(*), total(dur) FROM kvio_cmd WHERE win_lo IS 100000 AND win_hi IS 200000000",
	"SELECT count(*) FROM kvio_cmd WHERE win_tlo IS 1 AND win_thi IS 3",
	"SELECT * FROM kvio_cmd WHERE id BETWEEN 3 AND 20 AND name = 'write' AND upid = 1 AND real_dur = 1",
	"SELECT count(*) FROM kvio_cmd WHERE trace_id > 1 AND role = 'payload'",
	("SELECT kvio_count_distinct(trace_id), kvio_count_distinct(name), kvio_count_distinct(track_id)"
	 " FROM kvio_cmd WHERE batch = 1"),
	"SELECT * FROM kvio_pct((SELECT kvio_pct_gather(track_id, role, dur) FROM kvio_cmd WHERE batch = 1))",
	"SELECT * FROM kvio_depth((SELECT kvio_depth_gather(upid, ts, dur) FROM kvio_cmd WHERE batch = 2))",
	"SELECT * FROM kvio_pct((SELECT kvio_pct_gather(track_id, name, dur) FROM slice))",
};

/* Every chunk of the directory, read and checked, and a checked chunk's values read. */
static void chunks(sqlite3 *db)
{
	struct dbdir d;
	char *why = NULL, buf[256];
	if (dir_load(db, "\"main\"", &d, &why) != SQLITE_OK) {
		sqlite3_free(why);
		return;
	}
	struct store s;
	memset(&s, 0, sizeof s);
	s.d = d;
	void *blob = NULL;
	size_t cap = 0;
	for (size_t k = 0; k < d.nchunks; k++) {
		struct chunk_view v;
		if (chunk_read(db, "main", &d, k, 1, &blob, &cap, &v, buf, sizeof buf) != SQLITE_OK)
			continue;
		for (uint32_t i = 0; i < v.n; i++)
			for (int col = C_ID; col <= C_TS_END; col++)
				if (col < C_KEY_HEX || col > C_VALUE_LEN) {
					struct key x = col_key(&s, &v, d.first[k], i, col);
					sink += x.t == SQLITE_INTEGER ? (uint64_t)x.i : x.t == SQLITE_TEXT ? (uint64_t)x.len : 0;
				}
	}
	sqlite3_free(blob);
	dir_free(&d, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sqlite3 *db;
	if (size < 512 || sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return 0;
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)0);
	unsigned char *copy = sqlite3_malloc64(size);
	if (!copy || kvio_register_functions(db) != SQLITE_OK) {
		sqlite3_free(copy);
		sqlite3_close(db);
		return 0;
	}
	memcpy(copy, data, size);
	if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)size, (sqlite3_int64)size,
				SQLITE_DESERIALIZE_READONLY | SQLITE_DESERIALIZE_FREEONCLOSE) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	long steps = 0;
	sqlite3_progress_handler(db, 1000, progress, &steps);
	char *why = NULL;
	db_valid(db, "main", &why);
	sqlite3_free(why);
	why = NULL;
	steps = 0;
	db_check_tables(db, "main", DB_TABLES, &why);
	sqlite3_free(why);
	steps = 0;
	chunks(db);
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
		drain(db, queries[i], &steps);
	steps = 0;
	db_check_all(db, devnull);
	sqlite3_close(db);
	return 0;
}
