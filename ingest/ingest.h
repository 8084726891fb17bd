/* ingest.h — kvio-ingest's option set and entry, shared with kvio2perfetto. */
#ifndef KVIO_INGEST_H
#define KVIO_INGEST_H
#include "model.h"

#define MAX_ARMS 64

struct arm_spec {
	const char *label, *sem, *ebpf, *serving;
	const char *shown[3]; /* --follow: the names recorded for sem, ebpf, serving when read from elsewhere (a pipe's spool) */
};

struct ingest_args {
	struct ingest_opts o;
	struct arm_spec arms[MAX_ARMS];
	int narms;
	const char *out;      /* -o */
	const char *pftrace;  /* --pftrace: import a .pftrace instead of JSONL */
	int quiet;
	int follow, force;    /* --follow, --force (follow.c) */
	int64_t interval_ms, idle_ms; /* --interval MS (default 1000), --idle SECONDS (0: none) */
	unsigned char given[9]; /* the single-valued options seen (ingest_parse_opt: a second is a usage error) */
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
/* Build the database at path (lib/outfile.h: refused when path is an input,
 * temp file + rename, nothing left behind on failure). Exit status. */
int ingest_to_db(struct ingest_args *a, const char *path);
/* The input files of a into in[0..cap) (for outfile_open's same-file check);
 * returns how many. */
size_t ingest_inputs(const struct ingest_args *a, const char **in, size_t cap);
/* 0 when every JSONL input can be opened for reading, else 2 (said). */
int ingest_inputs_readable(const struct ingest_args *a);
struct outfile;
struct arm;
/* Ingest into the empty database file o->tmp (an open outfile; the caller
 * commits or aborts it). *arms gets the arms' results (NULL for a .pftrace
 * import): say them with ingest_summary, free them with ingest_free.
 * Exit status. */
int ingest_into(struct ingest_args *a, struct outfile *o, struct arm **arms);
/* After a successful ingest into path (written: 0 when path is not written,
 * as kvio2perfetto's trace): the arms' summaries on stdout (unless
 * -q), their data warnings on stderr. 1 when an arm holds nothing (said), else 0. */
int ingest_summary(const struct ingest_args *a, struct arm *arms, const char *path, int written);
void ingest_free(const struct ingest_args *a, struct arm *arms);
/* The JSONL arms into db (made by db_create, or emptied in an open
 * transaction: --follow); *arms gets the arms. Exit status. */
struct sqlite3;
int ingest_arms(struct ingest_args *a, struct sqlite3 *db, struct arm **arms);
/* Arm i of a into w, as a one-shot ingest writes it (read, joined, its end,
 * threads, stats; --follow --merge's stop writes the arms after the first
 * so); t0: the ingest's start (KVIO_TIMING). Exit status. */
struct dbw;
int ingest_arm(struct ingest_args *a, int i, struct dbw *w, struct arm *arm, double t0);
/* kvio-ingest --follow (follow.c): the database at path kept current while
 * the inputs grow, until a stop. Exit status. */
int ingest_follow(struct ingest_args *a, const char *path);
extern const char ingest_options_help[];
extern const char ingest_exit_help[]; /* the exit statuses, for --help */
/* kvio-ingest's entry (cmd/main.c's table). */
int cmd_ingest(int argc, char **argv);

#endif
