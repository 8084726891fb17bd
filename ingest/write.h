/* write.h — write joined arms into a kvio database created by db_create(). */
#ifndef KVIO_WRITE_H
#define KVIO_WRITE_H
#include "model.h"
#include <sqlite3.h>

/* One transaction. Returns SQLITE_OK or the first error (already reported). */
int db_write_arms(sqlite3 *db, struct arm *arms, int n, const struct ingest_opts *o);

#endif
