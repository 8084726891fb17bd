/* follow.c — kvio-ingest --follow: the database kept current while the
 * capture's files grow.
 *
 * Every --interval the inputs are looked at (their size; a pipe's bytes go
 * into a spool file); when one of them holds new complete lines, one commit
 * adds what arrived (live.c: the stream, the writer and the records kept
 * across commits). Where live.c does not apply (--merge, the key and offset
 * joins, a window), or when it finds that what it wrote is not what a
 * one-shot ingest writes, a commit is the rebuild: in one transaction the
 * tables are emptied and the ingest of one-shot kvio-ingest runs on the
 * files cut at their last complete line (input_limit), its kvio_sum rows
 * last; those commits are paced to at most one per max(--interval, the last
 * commit's time). The database is in WAL mode: readers see the last commit,
 * never a half-written one, and kill -9 leaves the last commit (SQLite
 * recovers the WAL).
 *
 * The follow stops on SIGINT/SIGTERM (exit status as a one-shot ingest's),
 * after --idle seconds without a new byte, at the tracer's final drops line,
 * or when a pipe ends; the last commit then reads the files whole, as
 * kvio-ingest of the final files would, and the database leaves WAL mode.
 * An input replaced under the follower (a new file at its path) is read no
 * further (its last bytes stay in); one that shrinks (truncated) stops the
 * follow with the database as of its last commit (exit 1). */
#include "ingest.h"
#include "input.h"
#include "live.h"
#include "../db/schema.h"
#include "../lib/outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One followed input. */
struct fin {
	const char *name;   /* as given (recorded in the database) */
	const char **slot;  /* the arm_spec field that names it, and its shown name */
	const char **shown;
	char rpath[40];     /* /proc/self/fd/N: the spool of a pipe, or a replaced file's own inode */
	int fd;             /* the file opened at the start (or the spool) */
	int src;            /* a pipe: its descriptor (read into fd); -1 for a file */
	dev_t dev;
	ino_t ino;
	long long size;     /* bytes seen */
	long long done;     /* bytes up to the end of the last complete line */
	int is_ebpf, frozen, eof, sniffed;
	int drops;          /* its drops line (the tracer's last) was seen */
};

struct follow {
	struct ingest_args *a;
	const char *path;
	sqlite3 *db;
	struct fin in[3 * MAX_ARMS];
	int nin;
	long long committed; /* the inputs' total `done` at the last commit */
	int64_t commits;
	double last_cost;    /* seconds the last commit took */
	int drops_seen;
	struct live *live;   /* incremental commits (live.c); NULL: each commit rebuilds */
	struct outfile out;  /* live: the database until it appears (tmpdb its connection) */
	sqlite3 *tmpdb;
	struct arm *arms;    /* live: the arm after the final commit */
	int waiting_said;    /* the note that commands wait for a semantic file's first line */
};

static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
	g_stop = sig;
}

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Bytes [from, to) of f: the end of the last complete line in them (or
 * -1), searched from the end; and whether a drops line (the tracer's last)
 * is in their last 64 KiB. What the follow reads of the file besides the
 * commits: about a read of 64 KiB per look, not the bytes that came. */
static long long scan_lines(struct fin *f, long long from, long long to, int *drops)
{
	static const char pat[] = "\"event_type\":\"drops\"";
	enum { STEP = 1 << 16 };
	char buf[STEP + sizeof pat];
	long long last = -1;
	for (long long end = to; end > from && last < 0;) {
		long long beg = end - STEP > from ? end - STEP : from;
		/* the pattern may start in the bytes of the look before */
		long long pbeg = end == to && beg == from && from >= (long long)sizeof pat ? from - (long long)sizeof pat : beg;
		ssize_t k = pread(f->fd, buf, (size_t)(end - pbeg), pbeg);
		if (k <= beg - pbeg)
			break;
		char *nl = memrchr(buf + (beg - pbeg), '\n', (size_t)k - (size_t)(beg - pbeg));
		if (nl)
			last = pbeg + (long long)(nl - buf) + 1;
		if (f->is_ebpf && end == to && memmem(buf, (size_t)k, pat, sizeof pat - 1))
			*drops = 1;
		end = beg;
	}
	return last;
}

/* A pipe's new bytes into its spool. Returns how many. */
static long long pump(struct fin *f)
{
	char buf[1 << 16];
	long long got = 0;
	for (;;) {
		ssize_t k = read(f->src, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			f->eof = 1;
		if (k <= 0)
			break;
		for (ssize_t w = 0; w < k;) {
			ssize_t m = write(f->fd, buf + w, (size_t)(k - w));
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				kvio_err("%s: spooling the pipe: %s", f->name, strerror(errno));
				f->eof = 1;
				return got;
			}
			w += m;
		}
		got += k;
	}
	return got;
}

/* Look at input f: its new bytes, a replacement, a truncation. Returns the
 * bytes it grew by, or -1 when it shrank (said: the follow stops). */
static long long look(struct fin *f)
{
	struct stat sb;
	if (f->frozen || f->eof)
		return 0;
	if (f->src >= 0)
		pump(f);
	else if (stat(f->name, &sb) != 0 || sb.st_dev != f->dev || sb.st_ino != f->ino) {
		int gone = errno == ENOENT && stat(f->name, &sb) != 0;
		kvio_err("WARNING: %s was %s under the follower: it is read no further (its first %lld bytes stay in "
			 "the database)", f->name, gone ? "removed" : "replaced", f->done);
		snprintf(f->rpath, sizeof f->rpath, "/proc/self/fd/%d", f->fd);
		*f->shown = f->name;
		*f->slot = f->rpath; /* its own inode from now on, cut where it was */
		f->frozen = 1;
		return 0;
	}
	if (fstat(f->fd, &sb) != 0)
		return 0;
	long long size = (long long)sb.st_size;
	if (size < f->size) {
		kvio_err("WARNING: %s was truncated under the follower (%lld bytes, %lld before): following stops; "
			 "the database stays as of its last commit", f->name, size, f->size);
		return -1;
	}
	if (!f->sniffed && size >= 2) {
		unsigned char m[2];
		f->sniffed = 1;
		if (pread(f->fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b) {
			kvio_err("%s: gzip: --follow reads plain JSONL as it grows (a gzip stream cannot be cut at a "
				 "line): follow the plain file, or ingest the .gz once it is complete", f->name);
			return -1;
		}
	}
	long long grew = size - f->size;
	if (grew > 0) {
		long long last = scan_lines(f, f->size, size, &f->drops);
		if (last > f->done)
			f->done = last;
		f->size = size;
	}
	return grew;
}

/* Open input *slot (its shown name in *shown). 0, or 2 after a message. */
static int open_input(struct follow *F, const char **slot, const char **shown, int is_ebpf)
{
	struct fin *f = &F->in[F->nin++];
	struct stat sb;
	*f = (struct fin){.name = *slot, .slot = slot, .shown = shown, .src = -1, .is_ebpf = is_ebpf};
	if ((f->fd = open(f->name, O_RDONLY | O_CLOEXEC)) < 0 || fstat(f->fd, &sb) != 0) {
		kvio_err("%s: cannot open: %s", f->name, strerror(errno));
		return 2;
	}
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	if (S_ISREG(sb.st_mode))
		return 0;
	/* a pipe (or a terminal, a socket): its bytes are kept in an unlinked spool file */
	const char *td = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof tmpl, "%s/kvio-follow-XXXXXX", td && *td ? td : "/tmp");
	f->src = f->fd;
	if ((f->fd = mkstemp(tmpl)) < 0) {
		kvio_err("%s: a spool file for the pipe in %s: %s", f->name, td && *td ? td : "/tmp", strerror(errno));
		return 2;
	}
	unlink(tmpl);
	fcntl(f->src, F_SETFL, fcntl(f->src, F_GETFL) | O_NONBLOCK);
	snprintf(f->rpath, sizeof f->rpath, "/proc/self/fd/%d", f->fd);
	*shown = f->name;
	*slot = f->rpath;
	return 0;
}

/* Every table of the database emptied (in the commit's transaction). */
static int empty_tables(sqlite3 *db)
{
	return db_exec(db,
		       "DELETE FROM metadata; DELETE FROM process; DELETE FROM thread; DELETE FROM kvio_track;"
		       "DELETE FROM kvio_cmd_chunk; DELETE FROM kvio_cmd_range; DELETE FROM kvio_cmd_name;"
		       "DELETE FROM kvio_cmd_kv; DELETE FROM kvio_slice; DELETE FROM kvio_obj; DELETE FROM kvio_arg;"
		       "DELETE FROM kvio_counter; DELETE FROM flow; DELETE FROM kvio_file; DELETE FROM kvio_stats;"
		       "DELETE FROM kvio_warning; DELETE FROM kvio_sum;",
		       "emptying the database for the commit");
}

/* The database at path, now written, reopened in WAL mode for the commits. */
static int open_wal(struct follow *F)
{
	int rc = sqlite3_open_v2(F->path, &F->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = kvio_register_functions(F->db);
	if (rc == SQLITE_OK)
		rc = db_exec(F->db, "PRAGMA busy_timeout=10000; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			     " PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;", "setting up the database");
	if (rc != SQLITE_OK)
		kvio_err("%s: opening the database for the follow: %s", F->path, db_reason(F->db, rc));
	return rc == SQLITE_OK ? 0 : 2;
}

/* stderr into an unlinked temp file while an intermediate commit runs (its
 * messages are the final commit's to say); shown when the commit fails. */
static int quiet_begin(void)
{
	char tmpl[] = "/tmp/kvio-follow-err-XXXXXX";
	int t = mkstemp(tmpl);
	if (t < 0)
		return -1;
	unlink(tmpl);
	fflush(stderr);
	int saved = dup(2);
	dup2(t, 2);
	close(t);
	return saved;
}

static void quiet_end(int saved, int show)
{
	if (saved < 0)
		return;
	fflush(stderr);
	if (show) {
		char buf[4096];
		ssize_t k;
		lseek(2, 0, SEEK_SET);
		while ((k = read(2, buf, sizeof buf)) > 0)
			if (write(saved, buf, (size_t)k) < 0)
				break;
	}
	dup2(saved, 2);
	close(saved);
}

static int live_step(struct follow *F, int final);
static void live_drop(struct follow *F);

/* One commit: the capture as the files hold it (final: whole; else up to
 * their last complete line). *arms gets the arms (the caller frees them).
 * Exit status. */
static int commit(struct follow *F, int final, struct arm **arms)
{
	if (F->live) {
		int st = live_step(F, final);
		if (st != LIVE_REBUILD) {
			if (!st && final)
				*arms = live_take_arm(F->live);
			return st;
		}
		live_drop(F);
	}
	double t0 = mono_s();
	long long total = 0;
	for (int i = 0; i < F->nin; i++) {
		input_limit(*F->in[i].slot, final && !F->in[i].frozen ? -1 : F->in[i].done);
		total += F->in[i].done;
	}
	F->a->o.follow_commit = ++F->commits;
	F->a->o.follow_final = final;
	int saved = final ? -1 : quiet_begin();
	int status = db_exec(F->db, "BEGIN IMMEDIATE", "writing the database") || empty_tables(F->db) ? 2 : 0;
	if (!status)
		status = ingest_arms(F->a, F->db, arms);
	if (status && !sqlite3_get_autocommit(F->db))
		sqlite3_exec(F->db, "ROLLBACK", NULL, NULL, NULL);
	quiet_end(saved, status != 0);
	F->committed = total;
	F->last_cost = mono_s() - t0;
	if (getenv("KVIO_TIMING"))
		kvio_err("timing: follow commit %lld%s %.3fs (%lld bytes)", (long long)F->commits, final ? " (final)" : "",
			 F->last_cost, total);
	return status;
}

/* The arms' inputs for a live commit: their descriptors, and the bytes they
 * hold in complete lines (at the stop: their ends, a frozen one's cut; the
 * inputs cut as a rebuild's are, for the arms the stop reads again). */
static void live_inputs(struct follow *F, int final, int (*fd)[3], long long (*lim)[3])
{
	for (int a = 0; a < F->a->narms; a++) {
		struct arm_spec *sp = &F->a->arms[a];
		const char **slots[3] = {&sp->sem, &sp->ebpf, &sp->serving};
		for (int k = 0; k < 3; k++) {
			fd[a][k] = -1;
			lim[a][k] = 0;
			for (int i = 0; i < F->nin; i++) {
				struct fin *f = &F->in[i];
				struct stat sb;
				if (f->slot != slots[k])
					continue;
				fd[a][k] = f->fd;
				lim[a][k] = f->done;
				if (final && !f->frozen && fstat(f->fd, &sb) == 0)
					lim[a][k] = (long long)sb.st_size;
			}
		}
	}
	for (int i = 0; final && i < F->nin; i++)
		input_limit(*F->in[i].slot, F->in[i].frozen ? F->in[i].done : -1);
}

/* One live commit into F->db (or the database not there yet). Exit status,
 * or LIVE_REBUILD. */
static int live_step(struct follow *F, int final)
{
	static int fd[MAX_ARMS][3];
	static long long lim[MAX_ARMS][3];
	double t0 = mono_s();
	live_inputs(F, final, fd, lim);
	F->a->o.follow_commit = ++F->commits;
	F->committed = 0;
	for (int i = 0; i < F->nin; i++)
		F->committed += F->in[i].done;
	int saved = final ? -1 : quiet_begin();
	int status = live_commit(F->live, F->db ? F->db : F->tmpdb, (const int (*)[3])fd, (const long long (*)[3])lim,
				 final);
	quiet_end(saved, status != 0 && status != LIVE_REBUILD);
	F->last_cost = mono_s() - t0;
	if (getenv("KVIO_TIMING")) {
		uint64_t nc, no, nh;
		double t[3];
		live_stats(F->live, &nc, &no, &nh, t);
		kvio_err("timing: follow commit %lld%s %.3fs (%lld bytes; incremental: %llu commands written, %llu objects "
			 "so far, %llu held; read %.3fs, interim rows %.3fs, sums %.3fs)", (long long)F->commits,
			 final ? " (final)" : "", F->last_cost, F->committed, (unsigned long long)nc, (unsigned long long)no,
			 (unsigned long long)nh, t[0], t[1], t[2]);
	}
	if (status == LIVE_REBUILD) {
		if (!F->a->quiet || getenv("KVIO_TIMING"))
			kvio_err("--follow: %s: the database is rebuilt from the files %s", live_why(F->live),
				 final ? "at the final commit" : "at each commit from now on");
		F->commits--;
	}
	return status;
}

/* Stop following incrementally (the database not there yet: its file goes). */
static void live_drop(struct follow *F)
{
	live_free(F->live);
	F->live = NULL;
	if (F->tmpdb) {
		sqlite3_close(F->tmpdb);
		F->tmpdb = NULL;
		outfile_abort(&F->out);
	}
}

/* Whether the arms hold a command or an object (a report has something to say). */
static int holds_some(const struct ingest_args *a, const struct arm *arms)
{
	for (int i = 0; arms && i < a->narms; i++)
		if (arms[i].emitted_cmds || arms[i].emitted_spans || arms[i].emitted_instants || arms[i].emitted_serving)
			return 1;
	return 0;
}

/* The first commit, into a temp file renamed onto path: the database
 * appears once it holds a command or an object (or at the stop, as a
 * one-shot's would). 0 when it appeared, -1 not yet, else the exit status. */
/* The database made in place of the temp file (renamed onto path, in WAL
 * mode before it appears: no reader meets the change of mode), opened for
 * the next commits. */
static int appear(struct follow *F, struct outfile *o)
{
	sqlite3 *t = NULL;
	int status = 0;
	if (sqlite3_open_v2(o->tmp, &t, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    db_exec(t, "PRAGMA journal_mode=WAL", "setting up the database") != SQLITE_OK)
		status = 2;
	if (sqlite3_close(t) != SQLITE_OK)
		status = 2;
	if (status) {
		outfile_abort(o);
		return status;
	}
	char side[4200];
	for (int k = 0; k < 2; k++) { /* a WAL left by an earlier follow is not this database's */
		snprintf(side, sizeof side, "%s-%s", F->path, k ? "shm" : "wal");
		unlink(side);
	}
	if ((status = outfile_commit(o)))
		return status;
	return open_wal(F);
}

/* The first live commits, into a temp file until it holds a command or an
 * object (or the stop): 0 when it appeared, -1 not yet, LIVE_REBUILD, else
 * the exit status. */
static int live_first(struct follow *F, const char *const *in, size_t nin, int final)
{
	if (!F->tmpdb) {
		if (outfile_open(&F->out, F->path, in, nin))
			return 2;
		outfile_sqlite(&F->out);
		if (db_create(F->out.tmp, &F->tmpdb) != SQLITE_OK) {
			outfile_abort(&F->out);
			F->tmpdb = NULL;
			return 2;
		}
	}
	int status = live_step(F, final);
	if (status) {
		live_drop(F);
		return status;
	}
	if (!final && !live_holds(F->live))
		return -1;
	live_attach(F->live, NULL);
	int crc = sqlite3_close(F->tmpdb);
	F->tmpdb = NULL;
	if (crc != SQLITE_OK) {
		kvio_err("%s: closing the database: %s", F->path, sqlite3_errstr(crc));
		outfile_abort(&F->out);
		return 2;
	}
	if ((status = appear(F, &F->out)))
		return status;
	return final ? 0 : live_attach(F->live, F->db);
}

static int first_commit(struct follow *F, const char *const *in, size_t nin, int final)
{
	struct outfile o;
	struct arm *arms = NULL;
	if (F->live) {
		int status = live_first(F, in, nin, final);
		if (status != LIVE_REBUILD)
			return status;
	}
	if (outfile_open(&o, F->path, in, nin))
		return 2;
	F->committed = 0;
	for (int i = 0; i < F->nin; i++) {
		input_limit(*F->in[i].slot, F->in[i].done);
		F->committed += F->in[i].done;
	}
	F->a->o.follow_commit = ++F->commits;
	int saved = quiet_begin();
	double t0 = mono_s();
	int status = ingest_into(F->a, &o, &arms);
	quiet_end(saved, status != 0);
	F->last_cost = mono_s() - t0;
	if (getenv("KVIO_TIMING"))
		kvio_err("timing: follow commit %lld %.3fs (%lld bytes, the first)", (long long)F->commits, F->last_cost,
			 F->committed);
	int some = holds_some(F->a, arms);
	ingest_free(F->a, arms);
	if (status || (!some && !final)) {
		outfile_abort(&o);
		F->commits--;
		return status ? status : -1;
	}
	return appear(F, &o);
}

/* Look at every input; the bytes they grew by, or -1 to stop (said).
 * F->drops_seen: every device file (of every arm) has its drops line. */
static long long look_all(struct follow *F)
{
	long long grew = 0;
	int ebpf = 0, drops = 0;
	for (int i = 0; i < F->nin; i++) {
		long long g = look(&F->in[i]);
		if (g < 0)
			return -1;
		grew += g;
		ebpf += F->in[i].is_ebpf;
		drops += F->in[i].is_ebpf && F->in[i].drops;
	}
	F->drops_seen = ebpf && drops == ebpf;
	return grew;
}

static int pipes_ended(const struct follow *F)
{
	int any = 0;
	for (int i = 0; i < F->nin; i++)
		if (F->in[i].src >= 0) {
			if (!F->in[i].eof)
				return 0;
			any = 1;
		}
	return any;
}

static void sleep_ms(int64_t ms)
{
	struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&t, NULL); /* a signal ends it early: the loop looks at g_stop */
}

/* The wait between two looks: ms, the pipes' bytes spooled as they come (a
 * tracer writing into a pipe waits only while a commit runs, not for the
 * interval: a 64 KiB pipe buffer fills in milliseconds). Ends early at a
 * signal or when a pipe ends. */
static void wait_pumping(struct follow *F, int64_t ms)
{
	struct pollfd pf[3 * MAX_ARMS];
	double end = mono_s() + (double)ms / 1000;
	for (;;) {
		int n = 0, at[3 * MAX_ARMS];
		for (int i = 0; i < F->nin && n < 3 * MAX_ARMS; i++)
			if (F->in[i].src >= 0 && !F->in[i].eof && !F->in[i].frozen) {
				pf[n] = (struct pollfd){.fd = F->in[i].src, .events = POLLIN};
				at[n++] = i;
			}
		double left = end - mono_s();
		if (!n) {
			if (left > 0)
				sleep_ms((int64_t)(left * 1000) + 1);
			return;
		}
		if (left <= 0 || g_stop)
			return;
		int k = poll(pf, (nfds_t)n, (int)(left * 1000) + 1);
		if (k < 0) /* a signal: the loop looks at g_stop */
			return;
		for (int j = 0; j < n; j++)
			if (pf[j].revents) {
				pump(&F->in[at[j]]);
				if (F->in[at[j]].eof)
					return;
			}
	}
}

/* Once, when device lines came and a commit held nothing: the inputs without a
 * complete line yet (a semantic file whose first line the commands wait for:
 * LMCACHE_KVIO_TRACE unset?), so that a follow that shows no database says why. */
static void say_waiting(struct follow *F)
{
	int dev = 0;
	for (int i = 0; i < F->nin; i++)
		dev |= F->in[i].is_ebpf && F->in[i].done > 0;
	for (int i = 0; dev && !F->waiting_said && i < F->nin; i++)
		if (!F->in[i].is_ebpf && F->in[i].done == 0) {
			kvio_err("%s: no complete line yet: the device file's commands wait for its first one (its kvio_meta "
				 "header); %s appears once one comes, or when the device file is quiet for 2 s", F->in[i].name,
				 F->path);
			F->waiting_said = 1;
		}
}

/* The loop: look, commit what arrived, until a stop. 0 to finish with the
 * final commit, else the exit status (the database as of its last commit). */
static int follow_loop(struct follow *F, const char *const *in, size_t nin)
{
	double last_growth = mono_s(), last_commit = mono_s();
	for (;;) {
		if (g_stop || F->drops_seen || pipes_ended(F))
			return 0;
		wait_pumping(F, F->a->interval_ms);
		long long grew = look_all(F);
		if (grew < 0)
			return 1;
		double now = mono_s();
		if (grew > 0)
			last_growth = now;
		if (F->a->idle_ms > 0 && (now - last_growth) * 1000 >= (double)F->a->idle_ms)
			return 0;
		if (g_stop || F->drops_seen || pipes_ended(F))
			return 0;
		long long total = 0;
		for (int i = 0; i < F->nin; i++)
			total += F->in[i].done;
		double gap = F->last_cost > F->a->interval_ms / 1000.0 ? F->last_cost : F->a->interval_ms / 1000.0;
		if ((total == F->committed && !((F->db || F->tmpdb) && F->live && live_quiet_due(F->live))) ||
		    now - last_commit < gap)
			continue;
		struct arm *arms = NULL;
		int status;
		if (!F->db) { /* not there yet: the first commit that holds something */
			if ((status = first_commit(F, in, nin, 0)) > 0)
				return status;
			if (!F->db)
				say_waiting(F);
			last_commit = mono_s();
			continue;
		}
		status = commit(F, 0, &arms);
		ingest_free(F->a, arms);
		if (status) {
			kvio_err("commit %lld failed: the database stays as of the commit before it", (long long)F->commits);
			return status;
		}
		last_commit = mono_s();
	}
}

/* The inputs of every arm, opened. 0 or 2. */
static int open_inputs(struct follow *F)
{
	for (int i = 0; i < F->a->narms; i++) {
		struct arm_spec *s = &F->a->arms[i];
		const char **p[3] = {&s->sem, &s->ebpf, &s->serving};
		for (int k = 0; k < 3; k++)
			if (*p[k] && open_input(F, p[k], &s->shown[k], k == 1))
				return 2;
	}
	return 0;
}

static int finish(struct follow *F, int stop, const char *const *in, size_t nin)
{
	struct arm *arms = NULL;
	int status = stop;
	if (!stop && !F->db && F->live) { /* not there yet: the final live commit makes it */
		status = live_first(F, in, nin, 1);
		if (status != LIVE_REBUILD)
			stop = 1;
		if (!status)
			arms = live_take_arm(F->live);
		if (status == LIVE_REBUILD)
			status = 0;
	}
	if (!stop && !F->db) /* nothing to report yet: the database as a one-shot's (said) */
		stop = status = first_commit(F, in, nin, 1);
	if (!stop) {
		const char *why = g_stop == SIGINT ? "SIGINT" : g_stop == SIGTERM ? "SIGTERM"
				: F->drops_seen ? "the tracer's drops line" : pipes_ended(F) ? "the end of the pipe" : "--idle";
		if (!F->a->quiet)
			printf("kvio-ingest: following stopped (%s) after %lld commits; the final one (%lld) reads the files whole\n",
			       why, (long long)F->commits, (long long)F->commits + 1);
		status = commit(F, 1, &arms);
	}
	live_drop(F);
	if (F->db) {
		/* the database as a one-shot's: no WAL beside it (readers that hold it
		 * are waited for, 5 s at most; then it stays a WAL database) */
		for (int k = 0; k < 100 && sqlite3_exec(F->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL); k++)
			sleep_ms(50);
		if (sqlite3_close(F->db) != SQLITE_OK && !status)
			status = 2;
	}
	if (!status && !F->a->quiet)
		printf("kvio-ingest: wrote %s\n", F->path);
	if (!status && arms && ingest_summary(F->a, arms, F->path, 1))
		status = 1;
	ingest_free(F->a, arms);
	for (int i = 0; i < F->nin; i++) {
		close(F->in[i].fd);
		if (F->in[i].src >= 0)
			close(F->in[i].src);
	}
	return status;
}

int ingest_follow(struct ingest_args *a, const char *path)
{
	static struct follow F; /* large: the inputs' table */
	memset(&F, 0, sizeof F);
	F.a = a;
	F.path = path;
	a->o.progress = 0; /* no progress line: the follow is quiet between commits */
	if (a->pftrace) {
		kvio_err("--follow reads JSONL captures as they grow, not --pftrace");
		return 2;
	}
	const char *in[3 * MAX_ARMS + 1];
	size_t nin = ingest_inputs(a, in, sizeof in / sizeof in[0]);
	struct stat sb;
	if (!a->force && stat(path, &sb) == 0) {
		kvio_err("%s exists: --follow writes its database in place and does not replace one (--force does)",
			 path);
		return 2;
	}
	if (open_inputs(&F))
		return finish(&F, 2, in, nin);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop; /* no SA_RESTART: the sleep ends */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (look_all(&F) < 0)
		return finish(&F, 2, in, nin);
	const char *why = live_unwanted(a);
	if (!why)
		F.live = live_new(a);
	else if (!a->quiet || getenv("KVIO_TIMING"))
		kvio_err("--follow: %s: the database is rebuilt from the files at each commit (a commit costs the "
			 "capture so far)", why);
	int status = first_commit(&F, in, nin, 0);
	if (status > 0)
		return finish(&F, status, in, nin);
	return finish(&F, follow_loop(&F, in, nin), in, nin);
}
