/* sqlfiles.h — the sql/ files, embedded at build time (build/sqlfiles.c). */
#ifndef KVIO_SQLFILES_H
#define KVIO_SQLFILES_H

struct sql_file {
	const char *name; /* "latency.sql" */
	const char *text;
};
extern const struct sql_file kvio_sql_files[];

/* The text of sql/<name>, or NULL. */
const char *sql_text(const char *name);

#endif
