/* records.h — one line of a capture file as a record of the arm (records.c):
 * nvme_cmd/nvme_cmp/kvio_meta/drops lines of the device file, semantic records,
 * serving spans. A reader parses one byte range of one file into its own arm. */
#ifndef KVIO_RECORDS_H
#define KVIO_RECORDS_H
#include "model.h"
#include "jsonl.h"

#define MAX_REPORTED 5 /* unusable lines named per file */

/* Scratch for unescaping strings of one line. */
struct scratch {
	char *buf;
	size_t cap;
};

enum ftype { F_SEM, F_EBPF, F_SERVING };

/* An unusable line, kept until the parts of a file are merged (so line
 * numbers can be made absolute and the first five printed in file order). */
struct badline {
	uint64_t line;
	const char *why;
	int tail;
};

/* Parses one byte range of one file into its own arm (a part). */
struct reader {
	struct arm *a;
	enum ftype ft;
	struct file_stats *fs;
	struct jline j;
	struct scratch sc;
	const struct ingest_opts *o;
	const struct offset_index *offx; /* --join-by-offset: device commands are attributed here */
	struct off_memo memo;
	uint64_t reported;
	struct badline bad[MAX_REPORTED];
};

/* Parse the lines of buf[0..n), numbered from lineno + 1, into r's arm and
 * file counters. final: the text ends the file, so a last piece without '\n'
 * is the unterminated tail. */
void parse_text(struct reader *r, const char *buf, size_t n, int final, uint64_t lineno);
/* The longest line parsed (KVIO_MAX_LINE, default 1 MiB); an overlong line
 * (already counted in lines) is malformed, its reason reported. */
size_t max_line(void);
void overlong_line(struct reader *r, uint64_t lineno);

#endif
