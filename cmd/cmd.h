/* cmd.h — the commands of the one kvio binary (git-style builtins, main.c):
 * each takes its own argv (argv[0] its name) and returns its exit status.
 * Each folder's header declares its own: cmd_ingest (ingest/ingest.h),
 * cmd_report (report/report.h), cmd_export (export/export.h). */
#ifndef KVIO_CMD_H
#define KVIO_CMD_H
#include "../ingest/ingest.h"
#include "../report/report.h"
#include "../export/export.h"

/* kvio2perfetto.c: ingest + export in one step. */
int cmd_kvio2perfetto(int argc, char **argv);
/* check.c: every check of a trace.db, a line each. */
int cmd_check(int argc, char **argv);

#endif
