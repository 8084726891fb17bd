/* check.c — kvio-check's checks (check.h): everything kvio trusts about a
 * database, each with a line of its own, so that a damaged file says where it
 * is damaged: SQLite's quick_check, the version and the schema, every table's
 * checksum, the directory and every command chunk, and the invariants across
 * tables that the readers rely on (flows and args pointing at slices, tracks
 * at processes, chunk rows matching their directory). */
#include "kvio_int.h"
#include "check.h"
#include "schema.h"
#include <stdarg.h>
#include <stdio.h>

struct ck {
	sqlite3 *db;
	FILE *out;
	int bad; /* checks that failed */
};

/* One line: what was checked, and ok or what is wrong. */
static void line(struct ck *c, const char *what, int ok, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	size_t pre = strlen(KVIO_DAMAGED); /* said once, as DAMAGED */
	fprintf(c->out, "  %-22s %s%s\n", what, ok ? "ok" : "DAMAGED: ", strncmp(buf, KVIO_DAMAGED, pre) ? buf : buf + pre);
	c->bad += !ok;
}

/* SQLite's own check of the file's pages and indexes. */
static void check_sqlite(struct ck *c)
{
	sqlite3_stmt *st;
	int n = 0, ok = 1;
	char first[256] = "";
	if (sqlite3_prepare_v2(c->db, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK) {
		line(c, "sqlite quick_check", 0, "%s", sqlite3_errmsg(c->db));
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);
		m = m ? m : "";
		if (strcmp(m, "ok") && !n++)
			snprintf(first, sizeof first, "%s", m);
		ok &= !strcmp(m, "ok");
	}
	sqlite3_finalize(st);
	if (ok)
		line(c, "sqlite quick_check", 1, "");
	else
		line(c, "sqlite quick_check", 0, "%s%s", first, n > 1 ? " (and more)" : "");
}

/* A check of valid.c: its line. */
static int check_one(struct ck *c, const char *what, int (*fn)(sqlite3 *, const char *, char **))
{
	char *why = NULL;
	int rc = fn(c->db, "\"main\"", &why);
	if (rc == SQLITE_OK)
		line(c, what, 1, "");
	else
		line(c, what, 0, "%s", why ? why : sqlite3_errstr(rc));
	sqlite3_free(why);
	return rc;
}

/* The directory and every chunk, read and checked (each one, not only the first bad one: the count). */
static void check_chunks(struct ck *c)
{
	struct dbdir d;
	char *why = NULL, buf[256], first[256] = "";
	int rc = dir_load(c->db, "\"main\"", &d, &why);
	if (rc != SQLITE_OK) {
		line(c, "directory", 0, "%s", why ? why : sqlite3_errstr(rc));
		sqlite3_free(why);
		return;
	}
	line(c, "directory", 1, " (%zu chunk%s, %zu names, %zu track ids, %lld KV rows)", d.nchunks, d.nchunks == 1 ? "" : "s", d.nnames,
	     d.ntracks ? d.ntracks - 1 : 0, (long long)d.nkv);
	void *blob = NULL;
	size_t cap = 0, nbad = 0;
	int64_t cmds = 0;
	struct chunk_view v;
	for (size_t k = 0; k < d.nchunks; k++) {
		cmds += d.n[k];
		if ((rc = chunk_read(c->db, "main", &d, k, 1, &blob, &cap, &v, buf, sizeof buf)) != SQLITE_OK && !nbad++)
			snprintf(first, sizeof first, "%s", rc == SQLITE_CORRUPT ? buf : sqlite3_errstr(rc));
	}
	if (!nbad)
		line(c, "kvio_cmd_chunk", 1, " (%lld commands, every byte checked)", (long long)cmds);
	else
		line(c, "kvio_cmd_chunk", 0, "%zu of %zu chunks: %s", nbad, d.nchunks, first);
	sqlite3_free(blob);
	dir_free(&d, 0);
}

/* Invariants across tables: each query counts the rows that break one. */
static const struct inv {
	const char *what, *sql;
} invs[] = {
	{"chunk rows", "SELECT (SELECT count(*) FROM (SELECT id, n FROM kvio_cmd_chunk EXCEPT SELECT id, n FROM kvio_cmd_range))"
		       " + (SELECT count(*) FROM (SELECT id, n FROM kvio_cmd_range EXCEPT SELECT id, n FROM kvio_cmd_chunk))"},
	{"slice ids", "SELECT count(*) FROM kvio_slice s WHERE s.id >= 1 AND (SELECT r.id + r.n FROM kvio_cmd_range r"
		      " WHERE r.id <= s.id ORDER BY r.id DESC LIMIT 1) > s.id"},
	{"slice tracks", "SELECT count(*) FROM kvio_slice s LEFT JOIN kvio_track t ON t.id = s.track_id"
			 " WHERE t.id IS NULL OR t.is_counter"},
	{"counter tracks", "SELECT count(*) FROM kvio_counter c LEFT JOIN kvio_track t ON t.id = c.track_id"
			   " WHERE t.id IS NULL OR NOT t.is_counter"},
	{"track processes", "SELECT count(*) FROM kvio_track t WHERE t.upid IS NOT NULL AND NOT EXISTS"
			    " (SELECT 1 FROM process p WHERE p.upid = t.upid)"},
	{"track parents", "SELECT count(*) FROM kvio_track t WHERE t.parent_id IS NOT NULL AND NOT EXISTS"
			  " (SELECT 1 FROM kvio_track p WHERE p.id = t.parent_id AND p.id <> t.id)"},
	{"object slices", "SELECT count(*) FROM kvio_obj o WHERE NOT EXISTS (SELECT 1 FROM kvio_slice s WHERE s.id = o.id)"},
	{"arg sets", "SELECT count(*) FROM (SELECT DISTINCT arg_set_id AS a FROM kvio_arg) WHERE NOT EXISTS"
		     " (SELECT 1 FROM kvio_slice s WHERE s.id = a)"},
	{"flow ends", "SELECT count(*) FROM (SELECT slice_out AS x FROM flow UNION ALL SELECT slice_in FROM flow) e WHERE NOT EXISTS"
		      " (SELECT 1 FROM kvio_slice s WHERE s.id = e.x) AND coalesce((SELECT r.id + r.n FROM kvio_cmd_range r"
		      " WHERE r.id <= e.x ORDER BY r.id DESC LIMIT 1), 0) <= e.x"},
	{"stats", "SELECT count(*) FROM kvio_stats WHERE typeof(value) <> 'integer' OR (value < 0 AND name <> 'base_ns')"},
};

static void check_invariants(struct ck *c)
{
	for (size_t i = 0; i < sizeof invs / sizeof invs[0]; i++) {
		sqlite3_stmt *st;
		int rc = sqlite3_prepare_v2(c->db, invs[i].sql, -1, &st, NULL);
		if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t n = sqlite3_column_int64(st, 0);
			if (n)
				line(c, invs[i].what, 0, "%lld rows break it", (long long)n);
			else
				line(c, invs[i].what, 1, "");
		} else {
			line(c, invs[i].what, 0, "%s", sqlite3_errmsg(c->db));
		}
		sqlite3_finalize(st);
	}
}

/* Every table's checksum, a line each. */
static void check_sums(struct ck *c)
{
	const char *name;
	for (size_t i = 0; (name = db_sum_table(i)); i++) {
		char *why = NULL;
		int64_t rows = 0;
		int rc = db_check_sum(c->db, "\"main\"", i, &rows, &why);
		if (rc == SQLITE_OK)
			line(c, name, 1, " (%lld row%s)", (long long)rows, rows == 1 ? "" : "s");
		else
			line(c, name, 0, "%s", why ? why : sqlite3_errstr(rc));
		sqlite3_free(why);
	}
}

/* The checks, on one snapshot of the file (a database that kvio-ingest
 * --follow commits to would else show its tables, sums and chunks of
 * several commits). */
static void check_all(struct ck *c)
{
	check_sqlite(c);
	if (check_one(c, "kvio_schema_version", db_check_version) != SQLITE_OK)
		return; /* another version: the rest would only say so again */
	if (check_one(c, "schema", db_check_schema) != SQLITE_OK)
		return;
	check_sums(c);
	check_chunks(c);
	check_invariants(c);
}

int db_check_all(sqlite3 *db, FILE *out)
{
	struct ck c = {db, out, 0};
	int txn = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	check_all(&c);
	if (txn)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return c.bad;
}
