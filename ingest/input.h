/* input.h — an input file as bytes (input.c): plain or gzip JSONL; a regular
 * file, a pipe, a process substitution, or a file still being written. */
#ifndef KVIO_INPUT_H
#define KVIO_INPUT_H
#include <stddef.h>
#include <sys/types.h>
#include <zlib.h>

/* A regular file is peeked (pread, nothing consumed): a file that is not JSONL
 * (a database, an executable, a .pftrace, binary) is refused naming what it
 * looks like; plain text is read with
 * read() as it is; gzip goes through zlib; zstd, xz and bzip2 are refused
 * with the command that would work. A pipe cannot be peeked, so it is read
 * through zlib, which passes plain text through unchanged. A gzip stream that
 * ends mid-member (still being written, or cut) ends like a truncated file:
 * what was decompressed is used, with a warning. */
struct input {
	int fd;
	gzFile gz;          /* NULL: plain read() on fd */
	const char *path;
	int ended;          /* the gzip stream ended early: said once, then EOF */
	unsigned char peek[4096]; /* through zlib: the first bytes, read to sniff them, */
	size_t npeek, peek_at;    /* returned by input_read before the rest */
	int limited;        /* plain reads stop after `left` more bytes (input_limit) */
	unsigned long long left;
};

/* kvio-ingest --follow: plain reads of path (the same string given to
 * input_open) stop after n bytes, the end of its last complete line when the
 * commit began (a line being written is left for the next commit). n < 0:
 * no limit again. A small table (follow.c's inputs). */
void input_limit(const char *path, long long n);

/* Open path for reading; a file that is not JSONL (a database, an executable,
 * zstd/xz/bzip2, binary) is refused. 0, or -1 after a one-line error. */
int input_open(struct input *in, const char *path);
/* Up to n bytes into p: the count, 0 at the end, -1 after a one-line error. */
ssize_t input_read(struct input *in, char *p, size_t n);
void input_close(struct input *in);
/* Sequential reads: append up to want bytes to *buf, which keeps JL_PADDING
 * bytes allocated past them (the line parser reads there). Returns bytes read
 * (0 at EOF), -1 on error (reported). */
ssize_t read_more(struct input *in, char **buf, size_t *have, size_t *cap, size_t want);

#endif
