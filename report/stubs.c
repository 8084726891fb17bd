#include "../lib/cli.h"
#include "../lib/util.h"
#include <sqlite3.h>
int cmd_export(int argc, char **argv) { (void)argc; (void)argv; kvio_err("not yet"); return 2; }
int cmd_kvio2perfetto(int argc, char **argv) { (void)argc; (void)argv; kvio_err("not yet"); return 2; }
int pftrace_import(const char *path, sqlite3 *db) { (void)path; (void)db; kvio_err("not yet"); return 2; }
