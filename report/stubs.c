#include "../lib/cli.h"
#include "../lib/util.h"
#include <sqlite3.h>
int pftrace_import(const char *path, sqlite3 *db) { (void)path; (void)db; kvio_err("not yet"); return 2; }
