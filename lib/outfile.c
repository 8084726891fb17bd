/* outfile.c — output files that appear whole or not at all (see outfile.h). */
#include "outfile.h"
#include "util.h"
#include "writeback.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the registry of temp files, read by the signal handler ---------------
 * Slots are filled by one thread (the command's), in order, and never reused:
 * a slot's path is complete before nreg counts it, and is never rewritten, so
 * a handler running on any thread at any moment reads whole paths. */
#define OF_SLOTS 16
#define OF_PATH (PATH_MAX + 64)

static struct slot {
	char tmp[OF_PATH];
	const char *show;        /* the name messages use */
	dev_t dev;               /* of the temp once created */
	ino_t ino;
	volatile sig_atomic_t live;   /* 1 while the temp may exist */
	volatile sig_atomic_t sqlite; /* remove -journal/-wal/-shm too */
} reg[OF_SLOTS];
static volatile sig_atomic_t nreg;

static const char *const companions[] = {"-journal", "-wal", "-shm"};

/* unlink(p + suffix); async-signal-safe (no library string functions). */
static void unlink_suffixed(const char *p, const char *suffix)
{
	char b[OF_PATH + 16];
	size_t i = 0;
	for (; p[i] && i < OF_PATH - 1; i++)
		b[i] = p[i];
	for (size_t k = 0; suffix[k]; k++)
		b[i++] = suffix[k];
	b[i] = 0;
	unlink(b);
}

/* Remove slot i's temp file and, for a database, its companions. */
static void slot_unlink(int i)
{
	unlink(reg[i].tmp);
	if (reg[i].sqlite)
		for (size_t k = 0; k < sizeof companions / sizeof companions[0]; k++)
			unlink_suffixed(reg[i].tmp, companions[k]);
}

static void on_signal(int sig)
{
	int n = nreg;
	for (int i = 0; i < n && i < OF_SLOTS; i++)
		if (reg[i].live)
			slot_unlink(i);
	_exit(128 + sig);
}

void outfile_signals_init(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old, sa;
		if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue; /* ignored by whoever started us: stay ignored */
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigfillset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---- the test knob ----------------------------------------------------------- */
static int64_t stop_at = -1;
static int stopped;

static void maybe_stop(const struct outfile *o)
{
	if (stop_at >= 0 && !stopped && o->bytes >= (uint64_t)stop_at) {
		stopped = 1;
		raise(SIGSTOP);
	}
}

/* ---- checks before anything is created ------------------------------------- */

/* The input among in[0..n) that is the file st describes, or NULL. */
static const char *same_as_input(const struct stat *st, const char *const *in, size_t n)
{
	struct stat s;
	for (size_t i = 0; i < n; i++)
		if (in[i] && stat(in[i], &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return in[i];
	return NULL;
}

/* Remove dir/base.tmp-PID[-journal|-wal|-shm] of processes that no longer
 * exist (kill(PID, 0) fails with ESRCH), except regular files that are inputs
 * and our own PID's (the caller's business). Best effort: errors are ignored. */
static void remove_stale(const char *dir, const char *base, const char *const *in, size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t bl = strlen(base);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *nm = e->d_name;
		if (strncmp(nm, base, bl) || strncmp(nm + bl, ".tmp-", 5) || nm[bl + 5] < '0' || nm[bl + 5] > '9')
			continue;
		char *end;
		errno = 0;
		long pid = strtol(nm + bl + 5, &end, 10);
		if (errno || pid <= 0 || pid > INT_MAX || pid == (long)getpid())
			continue;
		if (*end && strcmp(end, "-journal") && strcmp(end, "-wal") && strcmp(end, "-shm"))
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[OF_PATH + 256];
		struct stat st;
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, nm) >= sizeof p || lstat(p, &st) != 0 ||
		    !S_ISREG(st.st_mode) || same_as_input(&st, in, n))
			continue;
		unlink(p);
	}
	closedir(d);
}

/* Claim a registry slot for tmp (shown as show); -1 when all are used. */
static int slot_claim(const char *tmp, const char *show)
{
	int i = nreg;
	if (i >= OF_SLOTS)
		return -1;
	memcpy(reg[i].tmp, tmp, strlen(tmp) + 1);
	reg[i].show = show;
	reg[i].sqlite = 0;
	reg[i].live = 1;
	nreg = i + 1;
	return i;
}

/* Shared by outfile_open and outfile_scratch: dir/base is the final name,
 * show the name in messages. */
static int of_begin(struct outfile *o, const char *path, const char *dir, const char *base, int scratch,
		    const char *const *in, size_t n)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	o->fd = -1;
	o->slot = -1;
	o->scratch = scratch;
	stop_at = env_i64("KVIO_TEST_STOP_AT", -1, 0);
	char tmp[OF_PATH];
	size_t dl = strlen(dir);
	int tl = snprintf(tmp, sizeof tmp, "%s%s%s.tmp-%d", dir, dl && dir[dl - 1] != '/' ? "/" : "", base,
			  (int)getpid());
	if (tl < 0 || (size_t)tl + 16 >= sizeof tmp) {
		kvio_err("creating %s: %s", path, strerror(ENAMETOOLONG));
		return 2;
	}
	struct stat st;
	const char *in_name;
	if (stat(tmp, &st) == 0 && (in_name = same_as_input(&st, in, n))) {
		kvio_err("%s: its temporary file %s is the input %s (nothing written)", path, tmp, in_name);
		return 2;
	}
	if (stat(tmp, &st) == 0)
		for (int k = 0; k < nreg; k++)
			if (reg[k].live && reg[k].dev == st.st_dev && reg[k].ino == st.st_ino) {
				kvio_err("%s: the same file as the output %s (nothing written)", path, reg[k].show);
				return 2;
			}
	remove_stale(*dir ? dir : ".", base, in, n);
	/* a file with our PID's name is a leftover of a dead process that had it */
	unlink(tmp);
	int i = slot_claim(tmp, path);
	if (i < 0) {
		kvio_err("creating %s: too many output files", path);
		return 2;
	}
	if (scratch)
		reg[i].show = reg[i].tmp;
	o->slot = i;
	o->tmp = reg[i].tmp;
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (o->fd < 0) {
		kvio_err("creating %s: %s", reg[i].show, strerror(errno));
		reg[i].live = 0;
		return 2;
	}
	if (fstat(o->fd, &st) == 0) {
		reg[i].dev = st.st_dev;
		reg[i].ino = st.st_ino;
	}
	if (!scratch) /* written out as it grows: the commit's fsync waits for the last pages only */
		o->wb = writeback_start(o->tmp, 50);
	maybe_stop(o);
	return 0;
}

int outfile_open(struct outfile *o, const char *path, const char *const *inputs, size_t n)
{
	struct stat st;
	const char *in_name;
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->slot = -1;
	if (!strcmp(path, "-")) { /* standard output: a descriptor of our own, closed at commit */
		o->path = "standard output";
		o->std = 1;
		if ((o->fd = dup(1)) < 0) {
			kvio_err("writing standard output: %s", strerror(errno));
			return 2;
		}
		return 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		kvio_err("creating %s: %s", path, strerror(EISDIR));
		return 2;
	}
	if (stat(path, &st) == 0 && (in_name = same_as_input(&st, inputs, n))) {
		kvio_err("%s: the output is the same file as the input %s (nothing written)", path, in_name);
		return 2;
	}
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		kvio_err("creating %s: %s", path, strerror(EISDIR));
		return 2;
	}
	char dir[OF_PATH];
	size_t dl = slash ? (size_t)(slash - path) : 0;
	if (dl >= sizeof dir) {
		kvio_err("creating %s: %s", path, strerror(ENAMETOOLONG));
		return 2;
	}
	memcpy(dir, path, dl);
	dir[dl] = 0;
	if (slash && !dl) /* "/name" */
		strcpy(dir, "/");
	return of_begin(o, path, slash ? dir : "", base, 0, inputs, n);
}

int outfile_scratch(struct outfile *o, const char *name, const char *const *inputs, size_t n)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if (strlen(dir) >= PATH_MAX) {
		kvio_err("TMPDIR: %s", strerror(ENAMETOOLONG));
		return 2;
	}
	int rc = of_begin(o, name, dir, name, 1, inputs, n);
	if (!rc)
		o->path = o->tmp;
	return rc;
}

void outfile_sqlite(struct outfile *o)
{
	if (o->slot >= 0)
		reg[o->slot].sqlite = 1;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

int outfile_write(struct outfile *o, const void *p, size_t n)
{
	const char *c = p;
	if (o->err)
		return -1;
	if (o->fd < 0) {
		o->err = EBADF;
		return -1;
	}
	while (n) {
		ssize_t w = write(o->fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
		o->bytes += (uint64_t)w;
	}
	maybe_stop(o);
	return 0;
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	return outfile_write(c, buf, n) ? -1 : (ssize_t)n;
}

FILE *outfile_stdio(struct outfile *o)
{
	if (!o->f) {
		cookie_io_functions_t io = {.write = cookie_write};
		o->f = fopencookie(o, "w", io);
		if (!o->f)
			kvio_err("writing %s: %s", o->path, strerror(errno));
	}
	return o->f;
}

void outfile_fail(struct outfile *o, int err)
{
	if (!o->err)
		o->err = err ? err : EIO;
}

/* Close o's stream and descriptor, recording the first error. */
static void of_close(struct outfile *o)
{
	if (o->f) {
		if (fclose(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
		o->f = NULL;
	}
	if (o->fd >= 0 && close(o->fd) != 0 && !o->err)
		o->err = errno;
	o->fd = -1;
}

void outfile_abort(struct outfile *o)
{
	writeback_stop(o->wb);
	o->wb = NULL;
	int e = o->err;
	of_close(o);
	o->err = e;
	if (o->slot >= 0 && reg[o->slot].live) {
		slot_unlink(o->slot);
		reg[o->slot].live = 0;
	}
}

/* fsync the directory holding path, so the rename survives a crash (best effort). */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[OF_PATH] = ".";
	if (slash == path) {
		strcpy(dir, "/");
	} else if (slash) {
		if ((size_t)(slash - path) >= sizeof dir)
			return;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int outfile_commit(struct outfile *o)
{
	if (o->std) { /* nothing to rename: the bytes are out */
		if (o->f && fflush(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
		of_close(o);
		if (o->err) {
			kvio_err("writing standard output: %s", strerror(o->err));
			return 2;
		}
		return 0;
	}
	if (o->slot < 0 || !reg[o->slot].live)
		return 2;
	const char *show = reg[o->slot].show;
	if (o->f) {
		if (fflush(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
	}
	int wbe = writeback_stop(o->wb);
	o->wb = NULL;
	if (wbe && !o->err)
		o->err = wbe;
	if (o->fd < 0 && !o->err && !o->f) { /* SQLite wrote it: reopen to fsync */
		o->fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
		if (o->fd < 0)
			o->err = errno;
	}
	if (o->fd >= 0 && !o->err && fsync(o->fd) != 0)
		o->err = errno;
	of_close(o);
	if (o->err) {
		kvio_err("writing %s: %s", show, strerror(o->err));
		outfile_abort(o);
		return 2;
	}
	if (o->scratch) {
		outfile_abort(o);
		return 0;
	}
	if (rename(o->tmp, o->path) != 0) {
		kvio_err("replacing %s: %s", o->path, strerror(errno));
		outfile_abort(o);
		return 2;
	}
	reg[o->slot].live = 0;
	sync_dir(o->path);
	return 0;
}

const char *outfile_name(const char *file)
{
	struct stat st;
	int have = -1;
	for (int i = 0; i < nreg; i++) {
		if (!reg[i].live)
			continue;
		if (!strcmp(file, reg[i].tmp))
			return reg[i].show;
		if (have < 0)
			have = stat(file, &st) == 0;
		if (have && st.st_dev == reg[i].dev && st.st_ino == reg[i].ino)
			return reg[i].show;
	}
	return file;
}
