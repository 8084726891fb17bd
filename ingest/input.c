/* input.c — an input file as bytes: plain or gzip JSONL, files, pipes, process
 * substitution (input.h says what is refused and how). */
#include "input.h"
#include "jsonl.h" /* JL_PADDING */
#include "../lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Length of the valid UTF-8 sequence at m[0..n) (1 for ASCII), 0 when it is
 * invalid, or n when the bytes end inside a sequence that is valid so far. */
static size_t utf8_len(const unsigned char *m, size_t n)
{
	unsigned c = m[0];
	size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t j = 1; j < k; j++)
		if (j >= n)
			return n;
		else if ((m[j] & 0xc0) != 0x80)
			return 0;
	return k;
}

/* Whether m[0..n) is binary before any complete JSON line: a line that starts
 * with '{' and ends with '}' ends the look (what follows, a crash's NULs
 * included, is the reader's business); before it, more than one byte in 8 is
 * a control byte (not tab, CR, LF) or not valid UTF-8 (at least 8 such). */
static int mostly_binary(const unsigned char *m, size_t n)
{
	size_t bad = 0, seen = 0, line = 0;
	for (size_t i = 0; i < n;) {
		if (m[i] == '\n') {
			size_t e = i;
			while (e > line && (m[e - 1] == '\r' || m[e - 1] == ' ' || m[e - 1] == '\t'))
				e--;
			size_t b = line;
			while (b < e && (m[b] == ' ' || m[b] == '\t'))
				b++;
			if (e > b && m[b] == '{' && m[e - 1] == '}')
				break; /* a complete JSON line */
			line = ++i;
			seen++;
			continue;
		}
		size_t k = utf8_len(m + i, n - i);
		if (!k || (m[i] < 0x20 && m[i] != '\t' && m[i] != '\r'))
			bad++, k = 1;
		i += k;
		seen += k;
	}
	return bad >= 8 && bad * 8 > seen;
}

/* What the first bytes of a regular file say it is when it is not JSONL (plain
 * or compressed): a phrase naming it and what to do, or NULL when it may be
 * JSONL. m holds the first n bytes (up to 4 KiB). A Perfetto trace starts with
 * a TracePacket (field 1, length-delimited: byte 0x0a) and holds control
 * bytes, which JSON text never does; binary data has NULs in its first line
 * (NULs after complete lines are what a crash leaves: those lines are read). */
static const char *not_jsonl(const unsigned char *m, size_t n)
{
	if (n >= 16 && !memcmp(m, "SQLite format 3", 16))
		return "a SQLite database (a kvio trace.db is read by kvio-report and kvio-export), not a JSONL capture";
	if (n >= 4 && !memcmp(m, "\x7f" "ELF", 4))
		return "an ELF executable or library, not a JSONL capture";
	int ctl = 0;
	for (size_t i = 0; i < n && !ctl; i++)
		ctl = m[i] < 0x20 && m[i] != '\t' && m[i] != '\n' && m[i] != '\r';
	if (n >= 2 && m[0] == 0x0a && m[1] != 0x0a && m[1] != '\r' && ctl)
		return "a Perfetto trace (.pftrace): read it with kvio-ingest --pftrace FILE";
	size_t i = 0;
	while (i < n && (m[i] == '\n' || m[i] == '\r'))
		i++;
	for (; i < n && m[i] != '\n'; i++)
		if (m[i] == 0)
			return i == 0 ? "starts with NUL bytes (a capture zeroed by a crash, or not a capture): not JSONL"
				      : "binary (NUL bytes in its first line), not a JSONL capture";
	return mostly_binary(m, n) ? "binary (control bytes and invalid UTF-8 before any JSON line), not a JSONL capture"
				   : NULL;
}

#define NLIMIT (3 * 64 + 1)
struct limit {
	const char *path;
	long long n;
};
static struct limit limits[NLIMIT];
static int nlimits;

void input_limit(const char *path, long long n)
{
	for (int i = 0; i < nlimits; i++)
		if (!strcmp(limits[i].path, path)) {
			limits[i].n = n;
			return;
		}
	if (nlimits < NLIMIT)
		limits[nlimits++] = (struct limit){path, n};
}

int input_open(struct input *in, const char *path)
{
	*in = (struct input){.fd = open(path, O_RDONLY | O_CLOEXEC), .path = path};
	for (int i = 0; i < nlimits; i++)
		if (!strcmp(limits[i].path, path) && limits[i].n >= 0) {
			in->limited = 1;
			in->left = (unsigned long long)limits[i].n;
		}
	if (in->fd < 0) {
		kvio_err("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	unsigned char m[4096] = {0};
	ssize_t n = pread(in->fd, m, sizeof m, 0);
	const char *fmt = NULL, *tool = NULL;
	if (n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
		fmt = "zstd", tool = "zstdcat";
	else if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		fmt = "xz", tool = "xzcat";
	else if (n >= 3 && !memcmp(m, "BZh", 3))
		fmt = "bzip2", tool = "bzcat";
	if (fmt) {
		kvio_err("%s: %s-compressed; kvio reads plain or gzip JSONL: pass <(%s %s) instead", path, fmt, tool,
			 path);
		close(in->fd);
		return -1;
	}
	int gzip = n >= 2 && m[0] == 0x1f && m[1] == 0x8b;
	const char *what = n > 0 && !gzip ? not_jsonl(m, (size_t)n) : NULL;
	if (what) {
		kvio_err("%s: %s", path, what);
		close(in->fd);
		return -1;
	}
	if (gzip || (n < 0 && errno == ESPIPE)) {
		if (!(in->gz = gzdopen(in->fd, "rb"))) {
			kvio_err("%s: cannot read: %s", path, strerror(errno ? errno : ENOMEM));
			close(in->fd);
			return -1;
		}
		gzbuffer(in->gz, 1 << 20);
		/* what zlib gives (a gzip file's text, a pipe's bytes) is sniffed too */
		ssize_t k = 0;
		size_t got = 0; /* npeek stays 0 while filling: input_read reads zlib */
		while (got < sizeof in->peek && (k = input_read(in, (char *)in->peek + got, sizeof in->peek - got)) > 0)
			got += (size_t)k;
		in->npeek = got;
		if (k < 0 || (got && (what = not_jsonl(in->peek, got)))) {
			if (what)
				kvio_err("%s: %s%s", path, gzip ? "decompressed, " : "", what);
			input_close(in);
			return -1;
		}
	}
	return 0;
}

void input_close(struct input *in)
{
	if (in->gz)
		gzclose(in->gz); /* closes fd */
	else if (in->fd >= 0)
		close(in->fd);
	in->gz = NULL;
	in->fd = -1;
}

/* Up to n bytes; 0 at the end, -1 on error (reported). */
ssize_t input_read(struct input *in, char *p, size_t n)
{
	if (in->peek_at < in->npeek) {
		size_t k = in->npeek - in->peek_at < n ? in->npeek - in->peek_at : n;
		memcpy(p, in->peek + in->peek_at, k);
		in->peek_at += k;
		return (ssize_t)k;
	}
	if (!in->gz) {
		ssize_t k;
		if (in->limited && n > in->left)
			n = (size_t)in->left;
		if (!n)
			return 0;
		while ((k = read(in->fd, p, n)) < 0 && errno == EINTR)
			;
		if (k < 0)
			kvio_err("%s: read error: %s", in->path, strerror(errno));
		else if (in->limited)
			in->left -= (unsigned long long)k;
		return k;
	}
	if (in->ended)
		return 0;
	if (n > INT_MAX)
		n = INT_MAX;
	int k = gzread(in->gz, p, (unsigned)n);
	if (k > 0)
		return k;
	int zerr;
	const char *msg = gzerror(in->gz, &zerr);
	if (zerr == Z_BUF_ERROR) { /* the gzip stream ends mid-member */
		kvio_err("%s: gzip stream ends early (still being written, or cut): reading up to there", in->path);
		in->ended = 1;
		return 0;
	}
	if (k < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
		if (zerr != Z_ERRNO && msg && !strncmp(msg, "<fd:", 4) && strstr(msg, ": "))
			msg = strstr(msg, ": ") + 2; /* zlib names the descriptor: the path is said already */
		kvio_err("%s: gzip: %s", in->path, zerr == Z_ERRNO ? strerror(errno) : msg);
		return -1;
	}
	return 0;
}

ssize_t read_more(struct input *in, char **buf, size_t *have, size_t *cap, size_t want)
{
	if (*have + want + JL_PADDING > *cap) {
		size_t old = *cap;
		*cap = *have + want + JL_PADDING;
		*buf = xrealloc(*buf, *cap);
		if (*cap - old >= (1u << 20)) /* a block buffer: its pages at once */
			mem_prefault(*buf + old, *cap - old);
	}
	size_t got = 0;
	while (got < want) {
		ssize_t k = input_read(in, *buf + *have + got, want - got);
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	*have += got;
	return (ssize_t)got;
}

