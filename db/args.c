/* args.c — extract_arg(arg_set_id, key), with trace_processor's semantics:
 * the typed value of the arg (int for int, uint and bool; text; real), or NULL
 * when the arg set lacks the key. A command's args come from its chunk, an
 * object's from kvio_obj, the other slices' from kvio_arg. Also
 * kvio_uint_text(x), the args view's display of a uint. */
#include "kvio_int.h"

/* kvio_obj's columns that are object args (debug.<name>), in its column order */
static const char *const obj_cols[NOBJCOL] = {"trace_id", "op", "part", "bytes", "slot_offset", "rank", "fmt",
	"chunk", "tp_rank", "tp_world", "tp_chunk", "n_cmds", "op_latency_ms", "error", "instance", "producer_pid",
	"key", "occurrence"};

/* ---- extract_arg ----------------------------------------------------------- */

/* Per statement (auxdata of the key argument): the kvio_arg lookup. Creating
 * it also refreshes the chunk directory, once per statement. */
struct argq {
	sqlite3_stmt *arg, *obj;
};

static void argq_free(void *p)
{
	struct argq *q = p;
	sqlite3_finalize(q->arg);
	sqlite3_finalize(q->obj);
	sqlite3_free(q);
}

static const char obj_sql[] =
	"SELECT trace_id, op, part, bytes, slot_offset, rank, fmt, chunk, tp_rank, tp_world, tp_chunk, n_cmds,"
	" op_latency_ms, error, instance, producer_pid, key, occurrence FROM main.kvio_obj WHERE id = ?1";

/* Look id up in kvio_obj (one row read serves every key of the set).
 * 1 when id is an object's arg set (result set or left NULL), 0 if not, -1 on error. */
static int obj_lookup(sqlite3_context *ctx, struct store *s, sqlite3_stmt *st, int64_t id,
		      const unsigned char *key, int klen)
{
	if (s->obj_id != id || s->obj_ver != s->ver) {
		obj_row_clear(s);
		s->obj_id = id;
		s->obj_ver = s->ver;
		sqlite3_bind_int64(st, 1, id);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			s->obj_found = 1;
			for (int i = 0; i < NOBJCOL; i++)
				s->obj_row[i] = sqlite3_value_dup(sqlite3_column_value(st, i));
		}
		sqlite3_reset(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			s->obj_id = INT64_MIN;
			return -1;
		}
	}
	if (!s->obj_found)
		return 0;
	if (klen > 6 && !memcmp(key, "debug.", 6))
		for (int i = 0; i < NOBJCOL; i++)
			if ((int)strlen(obj_cols[i]) == klen - 6 && !memcmp(key + 6, obj_cols[i], klen - 6)) {
				sqlite3_result_value(ctx, s->obj_row[i]);
				return 1;
			}
	return 0; /* not a column: the key may still be in kvio_arg */
}

static int cmd_arg_col(const unsigned char *key, int n)
{
	static const int cols[] = {C_SLBA, C_DATA_LEN, C_TRACE_ID, C_ROLE, C_REAL, C_KEY_HEX, C_KEY_LEN,
				   C_VALUE_LEN};
	if (n < 7 || memcmp(key, "debug.", 6))
		return -1;
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		const char *c = col_names[cols[i]];
		if ((int)strlen(c) == n - 6 && !memcmp(key + 6, c, n - 6))
			return cols[i];
	}
	return -1;
}

static void lookup(sqlite3_context *ctx, struct store *s, sqlite3_stmt *argst, sqlite3_stmt *objst, int64_t id,
		   const unsigned char *key, int klen)
{
	long k = dir_find(&s->d, id);
	if (k >= 0) {
		int col = cmd_arg_col(key, klen);
		if (col < 0)
			return; /* a command's arg set has only these keys */
		const struct chunk_view *v = store_chunk(s, (size_t)k);
		if (!v) {
			chunk_error(ctx, s, "extract_arg");
			return;
		}
		col_value(ctx, s, v, s->d.first[k], (uint32_t)(id - s->d.first[k]), col);
		return;
	}
	int o = obj_lookup(ctx, s, objst, id, key, klen);
	if (o < 0) {
		sqlite3_result_error(ctx, sqlite3_errmsg(s->db), -1);
		return;
	}
	if (o > 0)
		return;
	sqlite3_bind_int64(argst, 1, id);
	sqlite3_bind_text(argst, 2, (const char *)key, klen, SQLITE_STATIC);
	int rc = sqlite3_step(argst);
	if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(argst, 0));
	else if (rc != SQLITE_DONE)
		sqlite3_result_error(ctx, sqlite3_errmsg(s->db), -1);
	sqlite3_reset(argst);
}

static const char arg_sql[] =
	"SELECT CASE WHEN value_type = 'string' THEN string_value"
	" WHEN value_type = 'real' THEN real_value ELSE int_value END"
	" FROM main.kvio_arg WHERE arg_set_id = ?1 AND key = ?2";

static void extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct store *s = sqlite3_user_data(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	int64_t id = sqlite3_value_int64(argv[0]);
	const unsigned char *key = sqlite3_value_text(argv[1]);
	int klen = sqlite3_value_bytes(argv[1]);
	struct argq *q = sqlite3_get_auxdata(ctx, 1);
	if (!q) {
		if (store_refresh(s) != SQLITE_OK) {
			sqlite3_result_error(ctx, "extract_arg: not a kvio database", -1);
			return;
		}
		q = sqlite3_malloc(sizeof *q);
		if (!q) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		memset(q, 0, sizeof *q);
		if (sqlite3_prepare_v3(s->db, arg_sql, -1, SQLITE_PREPARE_PERSISTENT, &q->arg, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v3(s->db, obj_sql, -1, SQLITE_PREPARE_PERSISTENT, &q->obj, NULL) != SQLITE_OK) {
			argq_free(q);
			sqlite3_result_error(ctx, "extract_arg: not a kvio database", -1);
			return;
		}
		sqlite3_set_auxdata(ctx, 1, q, argq_free);
		q = sqlite3_get_auxdata(ctx, 1);
		if (!q) { /* the key is not a constant: nothing is kept between calls */
			sqlite3_stmt *st = NULL, *ob = NULL;
			if (sqlite3_prepare_v2(s->db, arg_sql, -1, &st, NULL) == SQLITE_OK &&
			    sqlite3_prepare_v2(s->db, obj_sql, -1, &ob, NULL) == SQLITE_OK)
				lookup(ctx, s, st, ob, id, key, klen);
			sqlite3_finalize(st);
			sqlite3_finalize(ob);
			return;
		}
	}
	lookup(ctx, s, q->arg, q->obj, id, key, klen);
}

/* kvio_uint_text(x): an integer arg of value_type 'uint' as text, unsigned
 * (the args view's display_value: a slba above 2^63 prints as itself). */
static void uint_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	char buf[24];
	sqlite3_snprintf(sizeof buf, buf, "%llu", (unsigned long long)sqlite3_value_int64(argv[0]));
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}


/* extract_arg and kvio_uint_text on db; extract_arg reads through store s. */
int args_register(sqlite3 *db, struct store *s)
{
	int rc = sqlite3_create_function_v2(db, "kvio_uint_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
					    NULL, uint_text, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	return sqlite3_create_function_v2(db, "extract_arg", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, s, extract_arg, NULL,
					  NULL, NULL);
}
