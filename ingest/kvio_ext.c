/* kvio_ext.c — extract_arg(arg_set_id, key) over kvio's typed args storage.
 *
 * Built twice: linked into the kvio commands (SQLITE_CORE) and as the loadable
 * extension build/kvio.so, so that plain sqlite3 runs Perfetto-style queries:
 *     sqlite3 trace.db -cmd '.load build/kvio'
 * Semantics are trace_processor's: the typed value of the arg (int for int,
 * uint and bool; text; real), or NULL when the arg set has no such key. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* columns of kvio_cmd that hold args, in SELECT order below */
static const char *const cmd_cols[] = {"slba", "data_len", "trace_id", "role", "real_dur",
				       "key_hex", "key_len", "value_len"};
#define NCMDCOL 8

/* Prepared lookups, kept as auxdata of the key argument: they live as long as
 * the calling statement, so no statement outlives its connection's close. */
struct stmts {
	sqlite3_stmt *cmd, *arg;
};

/* Per connection: the last kvio_cmd row read (id, data version, arg values),
 * so the five extract_arg() calls of one row read it once. */
struct ext {
	int64_t row_id;
	unsigned row_ver;
	int row_found;
	sqlite3_value *row[NCMDCOL];
};

static void ext_clear_row(struct ext *x)
{
	for (int i = 0; i < NCMDCOL; i++) {
		sqlite3_value_free(x->row[i]);
		x->row[i] = NULL;
	}
	x->row_found = 0;
}

static void ext_destroy(void *p)
{
	struct ext *x = p;
	ext_clear_row(x);
	sqlite3_free(x);
}

static void stmts_free(void *p)
{
	struct stmts *s = p;
	sqlite3_finalize(s->cmd);
	sqlite3_finalize(s->arg);
	sqlite3_free(s);
}

static int cmd_col(const unsigned char *key, int n)
{
	if (n < 7 || memcmp(key, "debug.", 6))
		return -1;
	for (int i = 0; i < NCMDCOL; i++)
		if ((int)strlen(cmd_cols[i]) == n - 6 && !memcmp(key + 6, cmd_cols[i], n - 6))
			return i;
	return -1;
}

static unsigned data_version(sqlite3 *db)
{
	unsigned v = 0;
	sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, &v);
	return v;
}

static int stmts_prepare(sqlite3 *db, struct stmts *q)
{
	int rc = sqlite3_prepare_v3(db,
		"SELECT slba, data_len, trace_id, role, real_dur, key_hex, key_len, value_len"
		" FROM kvio_cmd WHERE id = ?1", -1, SQLITE_PREPARE_PERSISTENT, &q->cmd, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(db,
			"SELECT CASE WHEN value_type = 'string' THEN string_value"
			" WHEN value_type = 'real' THEN real_value ELSE int_value END"
			" FROM kvio_arg WHERE arg_set_id = ?1 AND key = ?2", -1,
			SQLITE_PREPARE_PERSISTENT, &q->arg, NULL);
	return rc;
}

/* Look id/key up; the result (or an error) goes to ctx. */
static void lookup(sqlite3_context *ctx, struct ext *x, struct stmts *q, int64_t id,
		   const unsigned char *key, int klen)
{
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	int rc;
	/* command rows first: one row read serves every key of the same arg set */
	unsigned ver = data_version(db);
	if (x->row_id != id || x->row_ver != ver) {
		ext_clear_row(x);
		x->row_id = id;
		x->row_ver = ver;
		sqlite3_bind_int64(q->cmd, 1, id);
		rc = sqlite3_step(q->cmd);
		if (rc == SQLITE_ROW) {
			x->row_found = 1;
			for (int i = 0; i < NCMDCOL; i++)
				x->row[i] = sqlite3_value_dup(sqlite3_column_value(q->cmd, i));
		}
		sqlite3_reset(q->cmd);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			x->row_id = INT64_MIN;
			sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
			return;
		}
	}
	if (x->row_found) {
		int c = cmd_col(key, klen);
		if (c >= 0)
			sqlite3_result_value(ctx, x->row[c]);
		return;
	}
	sqlite3_bind_int64(q->arg, 1, id);
	sqlite3_bind_text(q->arg, 2, (const char *)key, klen, SQLITE_STATIC);
	rc = sqlite3_step(q->arg);
	if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(q->arg, 0));
	else if (rc != SQLITE_DONE)
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
	sqlite3_reset(q->arg);
}

static void extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct ext *x = sqlite3_user_data(ctx);
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	int64_t id = sqlite3_value_int64(argv[0]);
	const unsigned char *key = sqlite3_value_text(argv[1]);
	int klen = sqlite3_value_bytes(argv[1]);
	struct stmts *q = sqlite3_get_auxdata(ctx, 1), local = {0};
	if (!q) {
		q = sqlite3_malloc(sizeof *q);
		if (!q) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		memset(q, 0, sizeof *q);
		if (stmts_prepare(db, q) != SQLITE_OK) {
			stmts_free(q);
			sqlite3_result_error(ctx, "extract_arg: not a kvio database (no kvio_cmd/kvio_arg)", -1);
			return;
		}
		sqlite3_set_auxdata(ctx, 1, q, stmts_free);
		q = sqlite3_get_auxdata(ctx, 1);
	}
	if (!q) { /* the key is not a constant: SQLite kept no auxdata */
		if (stmts_prepare(db, &local) == SQLITE_OK)
			lookup(ctx, x, &local, id, key, klen);
		else
			sqlite3_result_error(ctx, "extract_arg: not a kvio database (no kvio_cmd/kvio_arg)", -1);
		sqlite3_finalize(local.cmd);
		sqlite3_finalize(local.arg);
		return;
	}
	lookup(ctx, x, q, id, key, klen);
}

int kvio_register_functions(sqlite3 *db)
{
	struct ext *x = sqlite3_malloc(sizeof *x);
	if (!x)
		return SQLITE_NOMEM;
	memset(x, 0, sizeof *x);
	x->row_id = INT64_MIN;
	return sqlite3_create_function_v2(db, "extract_arg", 2, SQLITE_UTF8, x, extract_arg, NULL,
					  NULL, ext_destroy);
}

#ifndef SQLITE_CORE
#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_kvio_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	(void)err;
	SQLITE_EXTENSION_INIT2(api);
	return kvio_register_functions(db);
}
#endif
