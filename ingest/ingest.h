/* ingest.h — kvio-ingest's option set and entry, shared with kvio2perfetto. */
#ifndef KVIO_INGEST_H
#define KVIO_INGEST_H
#include "model.h"

#define MAX_ARMS 64

struct arm_spec {
	const char *label, *sem, *ebpf, *serving;
};

struct ingest_args {
	struct ingest_opts o;
	struct arm_spec arms[MAX_ARMS];
	int narms;
	const char *out;      /* -o */
	const char *pftrace;  /* --pftrace: import a .pftrace instead of JSONL */
	int quiet;
};

/* Parse one ingest option at argv[*i]. Returns 1 if consumed, 0 if not an
 * ingest option, -1 on a usage error (reported). */
int ingest_parse_opt(struct ingest_args *a, int argc, char **argv, int *i);
/* Defaults. */
void ingest_defaults(struct ingest_args *a);
/* After parsing: fold the single-arm form into arms[], check. 0 or -1 (reported). */
int ingest_finish_args(struct ingest_args *a);
/* A whole command line of ingest options plus -o (help: a printf format that
 * takes ingest_options_help). Returns -1 to go on, else the exit status (0
 * after --help, 2 after a reported usage error). */
int ingest_cmdline(struct ingest_args *a, int argc, char **argv, const char *help, const char *out_what);
/* Build the database at path (atomically: temp file + rename). Exit status. */
int ingest_to_db(struct ingest_args *a, const char *path);
extern const char ingest_options_help[];

#endif
