/* schema.c — creating and opening a kvio database (the DDL is ddl.c, the checks valid.c). */
#include "schema.h"
#include "valid.h"
#include "../lib/outfile.h"
#include "../lib/util.h"
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

const char *db_name(sqlite3 *db)
{
	const char *file = sqlite3_db_filename(db, "main");
	return file && *file ? outfile_name(file) : "(database)";
}

const char *db_reason(sqlite3 *db, int rc)
{
	int prim = rc & 0xff, e = db ? sqlite3_system_errno(db) : 0;
	if (prim == SQLITE_FULL) /* SQLite clears its errno on ENOSPC */
		return strerror(ENOSPC);
	if ((prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN) && e)
		return strerror(e);
	return db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

int db_exec(sqlite3 *db, const char *sql, const char *what)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	if (rc != SQLITE_OK && rc != SQLITE_INTERRUPT) { /* an interrupt is no news: whoever interrupted said why */
		int prim = rc & 0xff;
		if ((prim == SQLITE_FULL || prim == SQLITE_IOERR) && sqlite3_db_readonly(db, "main") == 0)
			kvio_err("writing %s: %s", db_name(db), db_reason(db, rc));
		else
			kvio_err("%s: %s: %s", db_name(db), what, err ? err : sqlite3_errstr(rc));
	}
	sqlite3_free(err);
	return rc;
}

int db_create(const char *path, sqlite3 **out)
{
	sqlite3 *db;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		kvio_err("creating %s: %s", outfile_name(path), db_reason(db, rc));
		sqlite3_close(db);
		return rc;
	}
	rc = db_exec(db,
		     "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-4096; PRAGMA temp_store=MEMORY;",
		     "setting up the database");
	if (rc == SQLITE_OK)
		rc = kvio_register_functions(db);
	/* one transaction: each CREATE alone would write the header page and its root anew */
	if (rc == SQLITE_OK)
		rc = db_exec(db, "BEGIN", "creating the schema");
	if (rc == SQLITE_OK)
		rc = db_exec(db, kvio_schema_sql, "creating the schema");
	if (rc == SQLITE_OK)
		rc = db_exec(db, "COMMIT", "creating the schema");
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return SQLITE_OK;
}

sqlite3 *db_open_input(const char *path)
{
	sqlite3 *db;
	struct stat sb;
	/* SQLite says "unable to open database file" or "disk I/O error" for a
	 * missing file or a directory: say what the system says */
	int serr = stat(path, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
	if (serr) {
		kvio_err("%s: cannot open database: %s", path, strerror(serr));
		return NULL;
	}
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		kvio_err("%s: cannot open database: %s", path, db_reason(db, rc));
		sqlite3_close(db);
		return NULL;
	}
	/* a database being written by kvio-ingest --follow (WAL) is locked for a
	 * moment when it changes journal mode: wait, rather than fail */
	sqlite3_busy_timeout(db, 10000);
	/* a database is input: no code of its own runs */
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)0);
	if (kvio_register_functions(db) != SQLITE_OK) {
		kvio_err("%s: cannot register kvio's functions", path);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

sqlite3 *db_open_ro(const char *path)
{
	sqlite3 *db = db_open_input(path);
	if (!db)
		return NULL;
	char *why = NULL;
	if (db_unchecked())
		kvio_err("KVIO_UNCHECKED is set: %s's checksums and values are not checked (a measuring knob)", path);
	int rc = db_valid(db, "main", &why); /* kvio's version, its schema, unchanged */
	if (rc != SQLITE_OK) {
		kvio_err("%s: %s", path, why ? why : db_reason(db, rc));
		sqlite3_free(why);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

char *db_snapshot_id(sqlite3 *db, int say)
{
	static const char q[] =
		"SELECT (SELECT group_concat(name || ':' || rows || ':' || xxh3, ',') FROM main.kvio_sum)"
		" || '/' || (SELECT count(*) || ',' || coalesce(sum(n), 0) || ',' || coalesce(max(id), 0) || ','"
		" || coalesce(max(end_max), 0) FROM main.kvio_cmd_range)"
		" || '/' || (SELECT coalesce(max(id), 0) FROM main.kvio_slice)";
	sqlite3_stmt *st;
	char *id = NULL;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		if (say)
			kvio_err("%s: %s", db_name(db), sqlite3_errmsg(db));
		return NULL;
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		id = sqlite3_mprintf("%s", t ? (const char *)t : "");
	} else if (say) {
		kvio_err("%s: %s", db_name(db), sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return id;
}
