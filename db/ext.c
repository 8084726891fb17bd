/* ext.c — the entry point of kvio's SQLite extension: registers the kvio_cmd
 * virtual table, extract_arg and the operators on a connection.
 *
 * Built twice: linked into the kvio commands (SQLITE_CORE, kvio_register_functions)
 * and as the loadable extension build/kvio.so (sqlite3_kvio_init), so that plain
 * sqlite3 runs Perfetto-style queries:
 *     sqlite3 trace.db -cmd '.load build/kvio'
 *
 * No prepared statement outlives the SQL statement that needed it (the sqlite3
 * CLI closes its connection with sqlite3_close, which refuses while any is
 * open): lookups prepare on demand, keep statements as auxdata or cursor state. */
#include "kvio_int.h"
SQLITE_EXTENSION_INIT1
#include "schema.h"

/* Register everything on db: kvio_cmd over main's chunks (an ATTACHed
 * database's kvio_cmd gets a store of its own), extract_arg, the operators. */
int kvio_register_functions(sqlite3 *db)
{
	struct store *s = store_new(db, "main");
	if (!s)
		return SQLITE_NOMEM;
	/* the module owns main's store; extract_arg borrows it */
	int rc = sqlite3_create_module_v2(db, "kvio_cmds", &kvio_cmd_module, s, store_free);
	if (rc == SQLITE_OK)
		rc = op_batch_register(db);
	if (rc == SQLITE_OK)
		rc = op_tvf_register(db);
	if (rc == SQLITE_OK)
		rc = op_pct_register(db);
	if (rc == SQLITE_OK)
		rc = op_depth_register(db);
	if (rc == SQLITE_OK)
		rc = op_group_register(db);
	if (rc == SQLITE_OK)
		rc = op_grid_register(db);
	if (rc == SQLITE_OK)
		rc = op_sign_register(db);
	if (rc == SQLITE_OK)
		rc = op_keep_register(db);
	if (rc == SQLITE_OK)
		rc = db_valid_register(db);
	if (rc == SQLITE_OK)
		rc = args_register(db, s);
	return rc;
}

#ifndef SQLITE_CORE
#ifdef _WIN32
__declspec(dllexport)
#endif
__attribute__((visibility("default"))) int sqlite3_kvio_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	(void)err;
	SQLITE_EXTENSION_INIT2(api);
	return kvio_register_functions(db);
}
#endif
