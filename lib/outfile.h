/* outfile.h — output files that appear whole or not at all (every writer uses it).
 *
 * A command never overwrites one of its inputs, and a failed or interrupted
 * run leaves nothing behind: the previous output (if any) stays as it was.
 *
 *   struct outfile o;
 *   const char *in[] = {dbpath};
 *   if (outfile_open(&o, path, in, 1))      // refused or not creatable: said, exit 2
 *           return 2;
 *   outfile_write(&o, buf, n);              // or fprintf(outfile_stdio(&o), ...)
 *   return outfile_commit(&o);              // 0, or 2 after "prog: writing PATH: reason"
 *
 * and outfile_abort(&o) instead of outfile_commit when the command fails for
 * another reason (the temp file goes, the previous output stays). Every
 * outfile_open must be followed by exactly one outfile_commit or outfile_abort.
 *
 * What outfile_open does, in order:
 *  - refuses (one line naming both paths, nothing written) when PATH is a
 *    directory, or names the same file as one of the inputs: compared by
 *    st_dev + st_ino with symlinks followed, so `./t.db`, a symlink to t.db
 *    and a hard link of t.db are all t.db;
 *    An output that is another output this process has open (`--json x
 *    --html ./x`) is refused too;
 *  - removes stale temp files of the same output left by dead processes
 *    (PATH.tmp-PID[-journal|-wal|-shm] where kill(PID, 0) says ESRCH; never
 *    one that is an input; a PID that is alive, or not ours to signal, stays);
 *  - creates PATH.tmp-PID beside PATH (O_EXCL, mode 0666 & ~umask) and
 *    registers it for removal on a signal.
 *
 * Writes are sticky on failure: after the first failed write (ENOSPC, EIO...)
 * nothing more is written, o->err keeps that errno, and outfile_commit says
 * `prog: writing PATH: <strerror>` (the user's path, never the temp name),
 * removes the temp file and returns 2. While it is written, a thread
 * fdatasyncs the temp file every 50 ms (writeback.h; KVIO_WRITEBACK=0: not),
 * so the commit's fsync waits for the last pages only. outfile_commit fsyncs
 * and closes the temp file (both checked) before renaming it onto PATH (a
 * symlink at PATH is replaced by the new file, not written through).
 *
 * Signals: outfile_signals_init() (called once by main) installs a handler for
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE (unless the signal was ignored when the
 * program started, as in `nohup` or a background job of a non-interactive
 * shell). The handler unlinks every registered temp file (and SQLite's
 * -journal/-wal/-shm beside a database temp), then _exit(128 + signal): 130
 * for SIGINT, 143 for SIGTERM. It uses only unlink and _exit; the registry is
 * a fixed array of fixed-size paths whose slots are never reused, so it is
 * safe from any thread at any time. SIGKILL cannot be caught: the next run
 * into the same output removes what it left (see above).
 *
 * Test knob: KVIO_TEST_STOP_AT=N stops the process (SIGSTOP) once, when a
 * temp file it writes through outfile_write holds N bytes or more (0: as soon
 * as it is created), so a test can deliver a signal mid-write. */
#ifndef KVIO_OUTFILE_H
#define KVIO_OUTFILE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct outfile {
	const char *path; /* as the user gave it (the caller keeps it alive); messages name it */
	const char *tmp;  /* the temp file being written (lives in the registry) */
	int fd;           /* the temp file, -1 once closed */
	int err;          /* errno of the first failed write, 0 while all is well */
	FILE *f;          /* outfile_stdio's stream, or NULL */
	uint64_t bytes;   /* written so far */
	int slot;         /* registry entry */
	int scratch;      /* outfile_scratch: never renamed, messages name tmp */
	int std;          /* PATH "-": standard output, written as it goes (no temp) */
	struct writeback *wb; /* the temp file written out while it grows (writeback.h), or NULL */
};

/* Install the signal handler (see above). Call once, before any outfile_open. */
void outfile_signals_init(void);

/* Check PATH against the n inputs, clean stale temps, create PATH.tmp-PID.
 * PATH "-" is standard output (for a stream a pipe can take: not a database):
 * written as it goes, so a failure cannot take back what was written. 
 * inputs may hold NULL entries and paths that do not exist (skipped).
 * Returns 0, or 2 after a one-line error (nothing created). */
int outfile_open(struct outfile *o, const char *path, const char *const *inputs, size_t n);

/* A scratch file NAME.tmp-PID in $TMPDIR (default /tmp), for intermediate data
 * (kvio2perfetto's database): registered, stale ones of dead processes
 * removed, never renamed; end it with outfile_abort. Returns 0 or 2 (said). */
int outfile_scratch(struct outfile *o, const char *name, const char *const *inputs, size_t n);

/* For a SQLite database written at o->tmp: closes o's descriptor (SQLite opens
 * the file by name; an empty file is an empty database) and marks the temp's
 * -journal/-wal/-shm files for removal with it. */
void outfile_sqlite(struct outfile *o);

/* Append n bytes. Returns 0, or -1 when this or an earlier write failed
 * (o->err says why; nothing more is written). */
int outfile_write(struct outfile *o, const void *p, size_t n);

/* A stdio stream writing through outfile_write (same sticky errors); closed by
 * outfile_commit / outfile_abort, never by the caller. NULL on failure (said). */
FILE *outfile_stdio(struct outfile *o);

/* Record a failure found elsewhere (SQLite's errno) so commit refuses. */
void outfile_fail(struct outfile *o, int err);

/* Flush, fsync and close the temp, rename it onto PATH. Returns 0, or 2 after
 * `prog: writing PATH: reason` with the temp removed. */
int outfile_commit(struct outfile *o);

/* Drop the temp file (and its SQLite companions); the previous output stays. */
void outfile_abort(struct outfile *o);

/* The name to show for file: the user's path when file is (the absolute or
 * relative name of) a registered temp file, else file itself. */
const char *outfile_name(const char *file);

#endif
