/* ddl.c — the tables and views of a kvio database (kvio_schema_version
 * KVIO_DB_VERSION). The text is the schema: valid.c compares a database's
 * sqlite_schema with it statement by statement. */
#include "schema.h"

/* Storage is typed where the volume is (one row per command in kvio_cmd, its
 * args as columns); everything else keeps its args in kvio_arg. The public
 * names are views with the columns of current trace_processor. */
const char kvio_schema_sql[] =
	"CREATE TABLE metadata(name TEXT PRIMARY KEY, key_type TEXT, int_value INT, str_value TEXT);\n"
	"CREATE TABLE process(id INTEGER PRIMARY KEY, upid INT, pid INT, name TEXT, start_ts INT,"
	" end_ts INT, parent_upid INT, uid INT, android_appid INT, cmdline TEXT, arg_set_id INT,"
	" machine_id INT);\n"
	"CREATE TABLE thread(id INTEGER PRIMARY KEY, utid INT, tid INT, name TEXT, start_ts INT,"
	" end_ts INT, upid INT, is_main_thread INT, machine_id INT);\n"
	/* one table for every track; the kind columns select the views */
	"CREATE TABLE kvio_track(id INTEGER PRIMARY KEY, name TEXT, type TEXT, parent_id INT,"
	" upid INT, utid INT, is_counter INT NOT NULL DEFAULT 0, unit TEXT,"
	" sibling_order_rank INT, child_ordering TEXT, classification TEXT);\n"
	/* NVMe commands, columnar (db/chunk.h); kvio_cmd presents them as
	 * rows: id, ts, dur, track_id, name, slba, data_len, trace_id, role,
	 * real_dur, key_hex, key_len, value_len, slba_track */
	"CREATE TABLE kvio_cmd_chunk(id INTEGER PRIMARY KEY, n INT NOT NULL, data BLOB NOT NULL);\n"
	/* the chunks' directory, one row per chunk (id = the chunk's id): its
	 * commands, its earliest ts, latest ts + dur and smallest/largest non-zero
	 * trace_id (NULL: none), so that a time window or a trace_id range reads
	 * only the chunks that can hold it, and no reader reads the chunk rows
	 * themselves to know what they hold */
	"CREATE TABLE kvio_cmd_range(id INTEGER PRIMARY KEY, n INT NOT NULL, ts_min INT NOT NULL, end_max INT NOT NULL,"
	" tid_min INT, tid_max INT);\n"
	"CREATE TABLE kvio_cmd_name(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
	"CREATE TABLE kvio_cmd_kv(id INTEGER PRIMARY KEY, key_hex TEXT, key_len INT, value_len INT);\n"
	"CREATE VIRTUAL TABLE kvio_cmd USING kvio_cmds;\n"
	"CREATE TABLE kvio_slice(id INTEGER PRIMARY KEY, ts INT NOT NULL, dur INT NOT NULL,"
	" track_id INT NOT NULL, category TEXT, name TEXT, depth INT NOT NULL DEFAULT 0,"
	" parent_id INT, arg_set_id INT);\n"
	/* the args of object slices, typed (one row per object); columns without
	 * declared types keep each value's own type */
	"CREATE TABLE kvio_obj(id INTEGER PRIMARY KEY, trace_id, op, part, bytes, slot_offset, rank, fmt,"
	" chunk, tp_rank, tp_world, tp_chunk, n_cmds, op_latency_ms, error, instance, producer_pid, key,"
	" occurrence);\n"
	"CREATE TABLE kvio_arg(arg_set_id INT NOT NULL, key TEXT NOT NULL, int_value INT,"
	" string_value TEXT, real_value REAL, value_type TEXT NOT NULL, display_value TEXT,"
	" PRIMARY KEY(arg_set_id, key)) WITHOUT ROWID;\n"
	/* counters; the per-command "writes slba"/"reads slba" points are not
	 * stored twice: the counter view derives them from kvio_cmd.slba_track */
	"CREATE TABLE kvio_counter(id INTEGER PRIMARY KEY, ts INT NOT NULL, track_id INT NOT NULL,"
	" value REAL);\n"
	"CREATE TABLE flow(id INTEGER PRIMARY KEY, type TEXT DEFAULT '__intrinsic_flow',"
	" slice_out INT NOT NULL, slice_in INT NOT NULL, trace_id INT, arg_set_id INT);\n"
	/* ingest bookkeeping: files, counts, warnings per capture label */
	"CREATE TABLE kvio_file(label TEXT, kind TEXT, path TEXT, lines INT, records INT, blank INT,"
	" malformed INT, truncated_tail INT, other INT);\n"
	"CREATE TABLE kvio_stats(label TEXT, name TEXT, value INT, PRIMARY KEY(label, name));\n"
	"CREATE TABLE kvio_warning(label TEXT, message TEXT);\n"
	/* what kvio wrote, per table: its rows and an XXH3-64 of them (db/valid.c) */
	"CREATE TABLE kvio_sum(name TEXT PRIMARY KEY, rows INT NOT NULL, xxh3 INT NOT NULL);\n"
	/* ---- trace_processor-named views ---- */
	"CREATE VIEW track AS SELECT id, name, type, parent_id, NULL AS source_arg_set_id,"
	" NULL AS machine_id, classification, NULL AS dimension_arg_set_id FROM kvio_track;\n"
	"CREATE VIEW process_track AS SELECT id, name, type, parent_id, upid, NULL AS machine_id,"
	" classification FROM kvio_track WHERE upid IS NOT NULL AND is_counter = 0;\n"
	"CREATE VIEW thread_track AS SELECT id, name, type, parent_id, utid, NULL AS machine_id,"
	" classification FROM kvio_track WHERE utid IS NOT NULL AND is_counter = 0;\n"
	"CREATE VIEW counter_track AS SELECT id, name, type, parent_id, unit, NULL AS description,"
	" NULL AS machine_id, classification FROM kvio_track WHERE is_counter = 1;\n"
	"CREATE VIEW process_counter_track AS SELECT id, name, type, parent_id, unit, upid,"
	" NULL AS description, NULL AS machine_id FROM kvio_track WHERE is_counter = 1 AND upid IS NOT NULL;\n"
	"CREATE VIEW counter AS"
	" SELECT id, '__intrinsic_counter' AS type, ts, track_id, value, NULL AS arg_set_id,"
	" NULL AS machine_id FROM kvio_counter"
	" UNION ALL"
	" SELECT id, '__intrinsic_counter', ts, slba_track, CAST(COALESCE(slba, 0) AS REAL), NULL, NULL"
	" FROM kvio_cmd WHERE slba_track IS NOT NULL;\n"
	"CREATE VIEW slice AS"
	" SELECT id, '__intrinsic_slice' AS type, ts, dur, track_id, NULL AS category, name,"
	" 0 AS depth, NULL AS stack_id, NULL AS parent_stack_id, NULL AS parent_id, id AS arg_set_id,"
	" NULL AS thread_ts, NULL AS thread_dur FROM kvio_cmd"
	" UNION ALL"
	" SELECT id, '__intrinsic_slice', ts, dur, track_id, category, name, depth, NULL, NULL,"
	" parent_id, arg_set_id, NULL, NULL FROM kvio_slice;\n"
	/* args: the typed command columns unpivoted, then the generic rows */
#define CMD_ARG(col, vt, ival, sval, disp)                                                        \
	" SELECT id AS arg_set_id, 'debug." col "' AS flat_key, 'debug." col "' AS key, " ival   \
	" AS int_value, " sval " AS string_value, NULL AS real_value, '" vt "' AS value_type, "   \
	disp " AS display_value FROM kvio_cmd WHERE " col " IS NOT NULL UNION ALL"
	"CREATE VIEW args AS"
	CMD_ARG("slba", "uint", "slba", "NULL", "kvio_uint_text(slba)")
	CMD_ARG("data_len", "uint", "data_len", "NULL", "kvio_uint_text(data_len)")
	CMD_ARG("key_hex", "string", "NULL", "key_hex", "key_hex")
	CMD_ARG("key_len", "uint", "key_len", "NULL", "kvio_uint_text(key_len)")
	CMD_ARG("value_len", "uint", "value_len", "NULL", "kvio_uint_text(value_len)")
	CMD_ARG("trace_id", "uint", "trace_id", "NULL", "kvio_uint_text(trace_id)")
	CMD_ARG("role", "string", "NULL", "role", "role")
	CMD_ARG("real_dur", "bool", "real_dur", "NULL", "CASE real_dur WHEN 0 THEN 'false' ELSE 'true' END")
#define OBJ_ARG(col)                                                                               \
	" SELECT id, 'debug." col "', 'debug." col "', CASE WHEN typeof(" col ") = 'integer' THEN " col  \
	" END, CASE WHEN typeof(" col ") = 'text' THEN " col " END, CASE WHEN typeof(" col ") = 'real'"   \
	" THEN " col " END, CASE typeof(" col ") WHEN 'integer' THEN CASE WHEN " col " < 0 THEN 'int'"   \
	" ELSE 'uint' END WHEN 'real' THEN 'real' ELSE 'string' END, CAST(" col " AS TEXT)"               \
	" FROM kvio_obj WHERE " col " IS NOT NULL UNION ALL"
	OBJ_ARG("trace_id") OBJ_ARG("op") OBJ_ARG("part") OBJ_ARG("bytes") OBJ_ARG("slot_offset")
	OBJ_ARG("rank") OBJ_ARG("fmt") OBJ_ARG("chunk") OBJ_ARG("tp_rank") OBJ_ARG("tp_world")
	OBJ_ARG("tp_chunk") OBJ_ARG("n_cmds") OBJ_ARG("op_latency_ms") OBJ_ARG("error")
	OBJ_ARG("instance") OBJ_ARG("producer_pid") OBJ_ARG("key") OBJ_ARG("occurrence")
	" SELECT arg_set_id, key, key, int_value, string_value, real_value, value_type,"
	" COALESCE(display_value, CASE value_type WHEN 'string' THEN string_value"
	" WHEN 'real' THEN CAST(real_value AS TEXT) WHEN 'bool' THEN"
	" CASE int_value WHEN 0 THEN 'false' ELSE 'true' END ELSE CAST(int_value AS TEXT) END)"
	" FROM kvio_arg;\n";
#undef CMD_ARG
#undef OBJ_ARG
