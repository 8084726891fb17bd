/* check.h — every check kvio makes of a database, each on a line of its own
 * (check.c): what kvio-check prints. */
#ifndef KVIO_CHECK_H
#define KVIO_CHECK_H
#include <sqlite3.h>
#include <stdio.h>

/* Check db (opened read-only with kvio's functions) and print a line per
 * check to out. Returns how many failed. */
int db_check_all(sqlite3 *db, FILE *out);

#endif
