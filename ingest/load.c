/* load.c — read one arm's JSONL files into struct arm.
 *
 * Every line is accounted for: used, blank, malformed (first 5 per file
 * reported with file:line), other (valid JSON of another kind), or the
 * unterminated tail of a still-growing file. Nothing here is fatal except an
 * unreadable file. */
#include "model.h"
#include "jsonl.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

const char *const role_name[NROLES] = {"writes", "reads", "other", "untagged"};

#define MAX_REPORTED 5

uint16_t arm_intern(struct arm *a, const char *s, size_t n)
{
	for (size_t i = 0; i < a->names.n; i++) {
		const char *x = VEC_AT(&a->names, const char *, i);
		if (strlen(x) == n && !memcmp(x, s, n))
			return (uint16_t)i;
	}
	if (a->names.n >= 65535)
		return 0;
	*(const char **)vec_push(&a->names, sizeof(char *)) = arena_dup(&a->strs, s, n);
	return (uint16_t)(a->names.n - 1);
}

void arm_warn(struct arm *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	*(const char **)vec_push(&a->warnings, sizeof(char *)) = arena_dup(&a->strs, buf, strlen(buf));
}

/* Scratch for unescaping strings of one line. */
struct scratch {
	char *buf;
	size_t cap;
};

static const char *tok_str(struct arm *a, struct jline *j, int t, struct scratch *sc, size_t *len)
{
	size_t need = j->tok[t].end - j->tok[t].start + 1;
	if (need > sc->cap) {
		sc->cap = need * 2;
		sc->buf = xrealloc(sc->buf, sc->cap);
	}
	long n = jl_str(j, t, sc->buf);
	if (n < 0)
		return NULL;
	if (len)
		*len = n;
	return arena_dup(&a->strs, sc->buf, n);
}

/* A semantic field kept with its JSON type. Returns -1 on a bad string escape. */
static int get_jv(struct arm *a, struct jline *j, int t, struct scratch *sc, struct jv *v)
{
	v->t = JV_NONE;
	if (t < 0)
		return 0;
	const jsmntok_t *tk = &j->tok[t];
	if (tk->type == JSMN_STRING) {
		v->s = tok_str(a, j, t, sc, NULL);
		if (!v->s)
			return -1;
		v->t = JV_STR;
	} else if (tk->type == JSMN_PRIMITIVE) {
		char c = j->s[tk->start];
		if (c == 'n') {
			v->t = JV_NULL;
		} else if (c == 't' || c == 'f') {
			v->t = JV_BOOL;
			v->i = c == 't';
		} else {
			const char *p = j->s + tk->start;
			size_t l = tk->end - tk->start;
			int isint = !memchr(p, '.', l) && !memchr(p, 'e', l) && !memchr(p, 'E', l);
			if (isint && c != '-' && !jl_u64(j, t, &v->u))
				v->t = v->u > INT64_MAX ? JV_UINT : (v->i = (int64_t)v->u, JV_INT);
			else if (isint && !jl_i64(j, t, &v->i))
				v->t = JV_INT;
			else if (!jl_f64(j, t, &v->d))
				v->t = JV_REAL;
			else
				return -1;
		}
	} else {
		/* object/array: kept as its JSON text */
		v->s = arena_dup(&a->strs, j->s + tk->start, tk->end - tk->start);
		v->t = JV_STR;
	}
	return 0;
}

/* Seconds (float) to ns, the way the reference converter does: int(s * 1e9);
 * -1 unless a number of seconds in [0, 9.2e9). */
static int sec_to_ns(struct jline *j, int t, int64_t *ns)
{
	double d;
	if (jl_f64(j, t, &d))
		return -1;
	double x = d * 1e9;
	if (x >= 9.2e18 || x < 0) /* CLOCK_MONOTONIC is never negative */
		return -1;
	*ns = (int64_t)x;
	return 0;
}

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

static void report_bad(struct reader *r, uint64_t lineno, const char *why, int tail)
{
	if (r->reported < MAX_REPORTED)
		r->bad[r->reported] = (struct badline){lineno, why, tail};
	r->reported++;
}

static void note_meta(struct arm *a, struct jline *j, struct scratch *sc)
{
	if (a->has_meta)
		return;
	a->has_meta = 1;
	get_jv(a, j, JL_FIND(j, "kvio_schema"), sc, &a->meta_schema);
	get_jv(a, j, JL_FIND(j, "hostname"), sc, &a->meta_hostname);
	get_jv(a, j, JL_FIND(j, "device_path"), sc, &a->meta_device_path);
	get_jv(a, j, JL_FIND(j, "io_engine"), sc, &a->meta_io_engine);
	get_jv(a, j, JL_FIND(j, "block_align"), sc, &a->meta_block_align);
	get_jv(a, j, JL_FIND(j, "header_bytes"), sc, &a->meta_header_bytes);
	get_jv(a, j, JL_FIND(j, "max_data_transfer_size"), sc, &a->meta_mdts);
}

/* Remember the submitting thread (pid, tid, comm) of an nvme_cmd line; the
 * comm is unescaped only when it differs from the last one of that thread. */
static void note_thread(struct reader *r, struct jline *j)
{
	struct arm *a = r->a;
	int tp = JL_FIND(j, "pid"), tt = JL_FIND(j, "tid"), tc = JL_FIND(j, "comm");
	uint64_t pid = 0, tid = 0;
	if (tt < 0 || tc < 0 || !jl_is_str(j, tc) || jl_u64(j, tt, &tid) || tid > UINT32_MAX ||
	    (tp >= 0 && (jl_u64(j, tp, &pid) || pid > UINT32_MAX)))
		return;
	const char *raw = j->s + j->tok[tc].start;
	uint32_t rawlen = (uint32_t)(j->tok[tc].end - j->tok[tc].start);
	int fresh;
	uint32_t *ix = map_slot(&a->thread_ix, pid << 32 | tid, &fresh);
	if (!fresh) {
		const struct thread_name *t = &VEC_AT(&a->threads, struct thread_name, *ix);
		if (t->rawlen == rawlen && !memcmp(t->raw, raw, rawlen))
			return;
	}
	struct thread_name t = {(uint32_t)pid, (uint32_t)tid, NULL, NULL, rawlen};
	if (!(t.comm = tok_str(a, j, tc, &r->sc, NULL)))
		return;
	t.raw = arena_dup(&a->strs, raw, rawlen);
	*ix = (uint32_t)a->threads.n;
	*(struct thread_name *)vec_push(&a->threads, sizeof t) = t;
}

/* Returns NULL when used, else the reason the record is malformed; *other set
 * when the line is valid but of another kind. */
static const char *ebpf_line(struct reader *r, int *other)
{
	struct jline *j = &r->j;
	struct arm *a = r->a;
	int et = JL_FIND(j, "event_type");
	if (JL_STREQ(j, et, "nvme_cmd")) {
		struct cmd c = {0};
		int t = JL_FIND(j, "ts");
		if (t < 0)
			return "nvme_cmd without ts";
		if (jl_i64(j, t, &c.ts) || c.ts < 0)
			return "nvme_cmd ts is not a non-negative number";
		t = JL_FIND(j, "user_data");
		if (t >= 0 && jl_u64(j, t, &c.user_data))
			return "nvme_cmd user_data is not an unsigned 64-bit integer";
		c.trace_id = (uint32_t)(c.user_data >> 32);
		t = JL_FIND(j, "slba");
		if (t >= 0 && !jl_is_null(j, t)) {
			if (jl_u64(j, t, &c.slba))
				return "nvme_cmd slba is not an unsigned integer";
			c.flags |= CF_SLBA;
		}
		t = JL_FIND(j, "data_len");
		if (t >= 0) {
			uint64_t v;
			if (jl_u64(j, t, &v) || v > UINT32_MAX)
				return "nvme_cmd data_len is not an unsigned 32-bit integer";
			c.data_len = (uint32_t)v;
		}
		uint64_t v32; /* nlb and bytes: the offset join's geometry (unusable values are absent) */
		uint32_t nlb = 0, io_bytes = 0;
		if (r->o->join == JOIN_OFFSET && (t = JL_FIND(j, "nlb")) >= 0 && !jl_u64(j, t, &v32) && v32 <= UINT32_MAX)
			nlb = (uint32_t)v32;
		if (r->o->join == JOIN_OFFSET && (t = JL_FIND(j, "bytes")) >= 0 && !jl_u64(j, t, &v32) && v32 <= UINT32_MAX)
			io_bytes = (uint32_t)v32;
		t = JL_FIND(j, "op_name");
		if (t >= 0 && jl_is_str(j, t)) {
			const char *raw = j->s + j->tok[t].start;
			size_t l = (size_t)(j->tok[t].end - j->tok[t].start);
			if (!memchr(raw, '\\', l)) { /* no escape: the text is the name (copied once, when new) */
				c.name = arm_intern(a, raw, l);
			} else {
				const char *s = tok_str(a, j, t, &r->sc, &l);
				if (!s)
					return "nvme_cmd op_name has a bad escape";
				c.name = arm_intern(a, s, l);
			}
		} else {
			c.name = arm_intern(a, "cmd", 3);
		}
		const char *nm = VEC_AT(&a->names, const char *, c.name);
		int tk = JL_FIND(j, "key_hex"), tl = JL_FIND(j, "key_len"), tv = JL_FIND(j, "value_len");
		if (tk >= 0 || tl >= 0 || tv >= 0) {
			struct cmd_kv kv = {0};
			if (tk >= 0 && jl_is_str(j, tk) && !(kv.key_hex = tok_str(a, j, tk, &r->sc, NULL)))
				return "nvme_cmd key_hex has a bad escape";
			if (tl >= 0 && !jl_i64(j, tl, &kv.key_len))
				kv.has_key_len = 1;
			if (tv >= 0 && !jl_i64(j, tv, &kv.value_len))
				kv.has_value_len = 1;
			c.kv = (uint32_t)a->kv.n;
			*(struct cmd_kv *)vec_push(&a->kv, sizeof kv) = kv;
			c.flags |= CF_KV;
		}
		int has_key = (c.flags & CF_KV) && VEC_AT(&a->kv, struct cmd_kv, c.kv).key_hex &&
			      *VEC_AT(&a->kv, struct cmd_kv, c.kv).key_hex;
		if (r->o->join == JOIN_OFFSET) { /* its object by byte range and time: its trace_id, then its role */
			int wr = !strcmp(nm, "write"), rd = !wr && !strcmp(nm, "read");
			arm_offset_attribute(r->offx, &r->memo, a, &c, wr ? 1 : rd ? 2 : 0, nlb, io_bytes, r->o->lba_bytes);
			c.role = !c.trace_id && !(c.flags & CF_KV) ? ROLE_UNTAGGED /* a KV command is never untagged here */
				 : wr || !strcmp(nm, "store")     ? ROLE_WRITES
				 : rd || !strcmp(nm, "retrieve")  ? ROLE_READS
								  : ROLE_OTHER;
		} else if (c.trace_id == 0 && !has_key)
			c.role = ROLE_UNTAGGED;
		else if (!strcmp(nm, "write") || !strcmp(nm, "store"))
			c.role = ROLE_WRITES;
		else if (!strcmp(nm, "read") || !strcmp(nm, "retrieve"))
			c.role = ROLE_READS;
		else
			c.role = ROLE_OTHER;
		c.obj = -1;
		*(struct cmd *)vec_push(&a->cmds, sizeof c) = c;
		note_thread(r, j);
		return NULL;
	}
	if (JL_STREQ(j, et, "nvme_cmp")) {
		struct cmp p = {0};
		int t = JL_FIND(j, "ts");
		if (t < 0)
			return "nvme_cmp without ts";
		if (jl_i64(j, t, &p.ts) || p.ts < 0)
			return "nvme_cmp ts is not a non-negative number";
		t = JL_FIND(j, "user_data");
		if (t >= 0 && jl_u64(j, t, &p.user_data))
			return "nvme_cmp user_data is not an unsigned 64-bit integer";
		*(struct cmp *)vec_push(&a->cmps, sizeof p) = p;
		return NULL;
	}
	if (JL_STREQ(j, et, "cq_overflow")) {
		a->cq_overflow++;
		return NULL;
	}
	if (JL_STREQ(j, et, "clock_anchor")) {
		a->anchors++;
		return NULL;
	}
	if (JL_STREQ(j, et, "drops")) {
		uint64_t v;
		int t = JL_FIND(j, "dropped");
		if (jl_u64(j, t, &v))
			return "drops line without an unsigned dropped count";
		a->has_drops = 1;
		a->drops = v; /* the final line wins */
		return NULL;
	}
	if (JL_STREQ(j, et, "kvio_meta")) {
		note_meta(a, j, &r->sc);
		return NULL;
	}
	*other = 1;
	return NULL;
}

static const char *sem_line(struct reader *r, int *other, uint64_t lineno)
{
	struct jline *j = &r->j;
	struct arm *a = r->a;
	int et = JL_FIND(j, "event_type");
	if (JL_STREQ(j, et, "kvio_meta")) {
		note_meta(a, j, &r->sc);
		return NULL;
	}
	int top = JL_FIND(j, "op"), tt = JL_FIND(j, "trace_id");
	if (et >= 0 || top < 0 || tt < 0) {
		*other = 1;
		return NULL;
	}
	struct obj o = {0};
	if (jl_u64(j, tt, &o.trace_id))
		return "semantic record trace_id is not an unsigned integer";
	int t = JL_FIND(j, "ts");
	if (t < 0)
		return "semantic record without ts";
	if (sec_to_ns(j, t, &o.end))
		return "semantic record ts is not a non-negative number of seconds";
	o.start = NO_TS;
	t = JL_FIND(j, "ts_start");
	if (t >= 0 && !jl_is_null(j, t) && sec_to_ns(j, t, &o.start))
		return "semantic record ts_start is not a non-negative number of seconds";
	struct jv v;
	if (get_jv(a, j, top, &r->sc, &v) || v.t != JV_STR)
		return "semantic record op is not a string";
	o.op = v.s;
	t = JL_FIND(j, "part");
	if (t >= 0 && !jl_is_null(j, t)) {
		if (get_jv(a, j, t, &r->sc, &v) || v.t != JV_STR)
			return "semantic record part is not a string";
		o.part = v.s;
	}
	t = JL_FIND(j, "key");
	if (t >= 0 && !jl_is_null(j, t)) {
		if (get_jv(a, j, t, &r->sc, &v))
			return "semantic record key has a bad escape";
		if (v.t == JV_STR)
			o.key = v.s;
		else /* a number or bool: its JSON text, as str() would print it */
			o.key = arena_dup(&a->strs, j->s + j->tok[t].start, j->tok[t].end - j->tok[t].start);
	}
	t = JL_FIND(j, "key_hex");
	if (t >= 0 && jl_is_str(j, t)) {
		if (get_jv(a, j, t, &r->sc, &v))
			return "semantic record key_hex has a bad escape";
		o.key_hex = v.s;
	}
	if (get_jv(a, j, JL_FIND(j, "bytes"), &r->sc, &o.bytes) ||
	    get_jv(a, j, JL_FIND(j, "slot_offset"), &r->sc, &o.slot_offset) ||
	    get_jv(a, j, JL_FIND(j, "error"), &r->sc, &o.error) ||
	    get_jv(a, j, JL_FIND(j, "instance"), &r->sc, &o.instance) ||
	    get_jv(a, j, JL_FIND(j, "pid"), &r->sc, &o.pid))
		return "semantic record has a bad string escape";
	o.line = (uint32_t)lineno;
	*(struct obj *)vec_push(&a->objs, sizeof o) = o;
	return NULL;
}

static const char *serving_line(struct reader *r, int *other)
{
	struct jline *j = &r->j;
	struct arm *a = r->a;
	int te = JL_FIND(j, "ts"), ts = JL_FIND(j, "ts_start");
	if (te < 0 || ts < 0) {
		*other = 1;
		return NULL;
	}
	struct serving s = {0};
	if (sec_to_ns(j, ts, &s.start) || sec_to_ns(j, te, &s.end))
		return "serving record ts/ts_start is not a non-negative number of seconds";
	if (get_jv(a, j, JL_FIND(j, "op"), &r->sc, &s.op) ||
	    get_jv(a, j, JL_FIND(j, "name"), &r->sc, &s.name) ||
	    get_jv(a, j, JL_FIND(j, "tokens"), &r->sc, &s.tokens) ||
	    get_jv(a, j, JL_FIND(j, "request_id"), &r->sc, &s.request_id))
		return "serving record has a bad string escape";
	*(struct serving *)vec_push(&a->serving, sizeof s) = s;
	return NULL;
}

/* Longer than this, a line is malformed without being parsed: no record is
 * near it, and a region of NUL bytes (what a crash can leave at the end of a
 * capture) has no newline for gigabytes. KVIO_MAX_LINE overrides (tests). */
#define MAX_LINE_DEFAULT (1 << 20)
static const char overlong_why[] = "line longer than 1 MiB (a region of NUL bytes from a crash?)";

static size_t max_line(void)
{
	static size_t v;
	if (!v)
		v = (size_t)env_i64("KVIO_MAX_LINE", MAX_LINE_DEFAULT, 1);
	return v;
}

/* An overlong line (already counted in lines): malformed, its reason reported. */
static void overlong_line(struct reader *r, uint64_t lineno)
{
	r->fs->malformed++;
	report_bad(r, lineno, overlong_why, 0);
}

/* One physical line (without '\n'). last: the unterminated tail of the file. */
static void one_line(struct reader *r, const char *s, size_t n, uint64_t lineno, int last)
{
	struct file_stats *fs = r->fs;
	fs->lines++;
	if (n > max_line()) {
		overlong_line(r, lineno);
		return;
	}
	if (n && s[n - 1] == '\r')
		n--;
	enum jl_err e = jl_parse(&r->j, s, n);
	if (e == JL_BLANK) {
		fs->blank++;
		return;
	}
	if (e != JL_OK) {
		if (last) {
			fs->truncated_tail++;
			report_bad(r, lineno, "unterminated last line (truncated or still being written), skipped", 1);
			return;
		}
		fs->malformed++;
		report_bad(r, lineno, jl_err_str(e), 0);
		return;
	}
	int other = 0;
	const char *why = r->ft == F_EBPF ? ebpf_line(r, &other)
			: r->ft == F_SEM ? sem_line(r, &other, lineno)
			: serving_line(r, &other);
	if (why) {
		fs->malformed++;
		report_bad(r, lineno, why, 0);
	} else if (other) {
		fs->other++;
	} else {
		fs->records++;
	}
}

/* Parse the lines of buf[0..n), numbered from lineno + 1. final: the text ends
 * the file, so a last piece without '\n' is the unterminated tail. */
static void parse_text(struct reader *r, const char *buf, size_t n, int final, uint64_t lineno)
{
	const char *p = buf, *end = buf + n, *nl;
	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		one_line(r, p, (size_t)(nl - p), ++lineno, 0);
		p = nl + 1;
	}
	if (p < end)
		one_line(r, p, (size_t)(end - p), ++lineno, final);
}

/* ---- inputs: plain or gzip JSONL, files, pipes, process substitution -------
 * A regular file is peeked (pread, nothing consumed): a file that is not JSONL
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
};

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

static ssize_t input_read(struct input *in, char *p, size_t n);
static void input_close(struct input *in);

static int input_open(struct input *in, const char *path)
{
	*in = (struct input){.fd = open(path, O_RDONLY | O_CLOEXEC), .path = path};
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

static void input_close(struct input *in)
{
	if (in->gz)
		gzclose(in->gz); /* closes fd */
	else if (in->fd >= 0)
		close(in->fd);
	in->gz = NULL;
	in->fd = -1;
}

/* Up to n bytes; 0 at the end, -1 on error (reported). */
static ssize_t input_read(struct input *in, char *p, size_t n)
{
	if (in->peek_at < in->npeek) {
		size_t k = in->npeek - in->peek_at < n ? in->npeek - in->peek_at : n;
		memcpy(p, in->peek + in->peek_at, k);
		in->peek_at += k;
		return (ssize_t)k;
	}
	if (!in->gz) {
		ssize_t k;
		while ((k = read(in->fd, p, n)) < 0 && errno == EINTR)
			;
		if (k < 0)
			kvio_err("%s: read error: %s", in->path, strerror(errno));
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

/* Sequential reads: append up to want bytes to *buf, which keeps JL_PADDING
 * bytes allocated past them (the line parser reads there). Returns bytes read
 * (0 at EOF), -1 on error (reported). */
static ssize_t read_more(struct input *in, char **buf, size_t *have, size_t *cap, size_t want)
{
	if (*have + want + JL_PADDING > *cap) {
		*cap = *have + want + JL_PADDING;
		*buf = xrealloc(*buf, *cap);
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

/* Take a parsed block's names, threads, counters and meta into the arm.
 * The block keeps its commands, completions and KV strings (stream.c uses
 * them); strings the arm keeps are copied into the arm's arena. */
static const char *dup_str(struct arm *a, const char *s)
{
	return s ? arena_dup(&a->strs, s, strlen(s)) : NULL;
}

static struct jv dup_jv(struct arm *a, struct jv v)
{
	if (v.t == JV_STR)
		v.s = dup_str(a, v.s);
	return v;
}

void arm_absorb(struct arm *a, struct arm *p, uint16_t *remap)
{
	for (size_t i = 0; i < p->names.n; i++) {
		const char *nm = VEC_AT(&p->names, const char *, i);
		remap[i] = arm_intern(a, nm, strlen(nm));
	}
	for (size_t i = 0; i < p->threads.n; i++) {
		const struct thread_name *t = &VEC_AT(&p->threads, struct thread_name, i);
		int fresh;
		uint32_t *ix = map_slot(&a->thread_ix, (uint64_t)t->pid << 32 | t->tid, &fresh);
		if (!fresh) {
			const struct thread_name *o = &VEC_AT(&a->threads, struct thread_name, *ix);
			if (o->rawlen == t->rawlen && !memcmp(o->raw, t->raw, t->rawlen))
				continue;
		}
		struct thread_name c = *t;
		c.comm = dup_str(a, t->comm);
		c.raw = arena_dup(&a->strs, t->raw, t->rawlen);
		*ix = (uint32_t)a->threads.n;
		*(struct thread_name *)vec_push(&a->threads, sizeof c) = c;
	}
	a->cq_overflow += p->cq_overflow;
	a->anchors += p->anchors;
	a->off_unique += p->off_unique; /* --join-by-offset: the block's classes and parity */
	a->off_cross += p->off_cross;
	a->off_gap += p->off_gap;
	a->off_unmatched += p->off_unmatched;
	a->off_cookie += p->off_cookie;
	a->off_agree += p->off_agree;
	a->off_total += p->off_total;
	if (p->has_drops) {
		a->has_drops = 1;
		a->drops = p->drops;
	}
	if (!a->has_meta && p->has_meta) {
		a->has_meta = 1;
		a->meta_schema = dup_jv(a, p->meta_schema);
		a->meta_hostname = dup_jv(a, p->meta_hostname);
		a->meta_device_path = dup_jv(a, p->meta_device_path);
		a->meta_io_engine = dup_jv(a, p->meta_io_engine);
		a->meta_block_align = dup_jv(a, p->meta_block_align);
		a->meta_header_bytes = dup_jv(a, p->meta_header_bytes);
		a->meta_mdts = dup_jv(a, p->meta_mdts);
	}
}

/* Print the first unusable lines of a file (absolute line numbers). */
static void report_lines(const char *path, const struct badline *bad, uint64_t reported, uint64_t *shown)
{
	for (uint64_t i = 0; i < reported && i < MAX_REPORTED && *shown < MAX_REPORTED; i++, (*shown)++)
		kvio_err(bad[i].tail ? "%s:%llu: %s" : "%s:%llu: %s (line skipped)", path,
			 (unsigned long long)bad[i].line, bad[i].why);
}

static void add_stats(struct file_stats *to, const struct file_stats *from)
{
	to->lines += from->lines;
	to->blank += from->blank;
	to->malformed += from->malformed;
	to->truncated_tail += from->truncated_tail;
	to->other += from->other;
	to->records += from->records;
}

/* Read one whole file into arm a (the semantic and serving files: small). */
static int read_file(struct arm *a, enum ftype ft, struct file_stats *fs, const struct ingest_opts *o)
{
	struct input in;
	if (input_open(&in, fs->path))
		return 2;
	char *buf = NULL;
	size_t have = 0, cap = 0;
	ssize_t got;
	/* A regular file is read in one go into a buffer of its size; a pipe or a
	 * gzip file doubles its buffer, so even a large input (a device capture
	 * passed as --sem by mistake) costs linear time. */
	struct stat st;
	size_t hint = 1 << 20;
	if (!in.gz && !fstat(in.fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		hint = (size_t)st.st_size + 1;
	while ((got = read_more(&in, &buf, &have, &cap, have < hint ? hint - have : have > hint ? have : hint)) > 0)
		;
	input_close(&in);
	if (got < 0) {
		free(buf);
		return 2;
	}
	struct reader r = {.a = a, .ft = ft, .fs = fs, .o = o};
	r.j.pad_end = buf ? buf + cap : NULL;
	parse_text(&r, buf ? buf : "", have, 1, 0);
	free(buf);
	uint64_t shown = 0;
	report_lines(fs->path, r.bad, r.reported, &shown);
	if (r.reported > shown)
		kvio_err("%s: %llu more unusable lines not shown", fs->path, (unsigned long long)(r.reported - shown));
	jl_free(&r.j);
	free(r.sc.buf);
	return 0;
}

/* ---- the device file: read in order in blocks of about block_bytes cut after
 * a newline (plain reads: a file still being written, a pipe or a process
 * substitution all work; the last block may end in an unterminated line),
 * parsed by worker threads, handed to the caller in file order. */
struct dblock {
	struct arm part;
	struct file_stats fs;
	uint64_t reported;
	struct badline bad[MAX_REPORTED];
	int rc;
	int ready;
};

#define MAX_WORKERS 4

struct devread {
	struct input in;
	const char *path;
	size_t bs;
	const struct ingest_opts *o;
	const struct offset_index *offx;
	pthread_mutex_t mu, read_mu; /* read_mu: one reader at a time, in block order */
	pthread_cond_t cv;
	int64_t next_take, next_consume, nblocks; /* nblocks: known once the last block is read */
	int nslot, stop, eof;
	char *carry;                 /* bytes after the last newline of the previous block */
	size_t ncarry, carry_cap;
	struct dblock *slot;         /* block i in slot i % nslot */
};

/* Read the next block (under read_mu) into the worker's buffer: the carried
 * bytes, then about bs more, cut after the last newline. *final at the end of
 * the file. *overlong: lines longer than max_line() that were dropped unread
 * at the start of the block (the block's text follows them). Returns the
 * block's length. A newline is looked for only in bytes not searched before,
 * so a long line costs linear time. */
static size_t read_block(struct devread *d, char **buf, size_t *cap, int *final, int *rc, uint64_t *overlong)
{
	size_t have = 0, scan_from = 0;
	int skipping = 0;
	*overlong = 0;
	if (d->ncarry) { /* the start of a line: it has no newline */
		if (d->ncarry > *cap) {
			*cap = d->ncarry;
			*buf = xrealloc(*buf, *cap);
		}
		memcpy(*buf, d->carry, d->ncarry);
		have = scan_from = d->ncarry;
		d->ncarry = 0;
	}
	*final = 0;
	*rc = 0;
	for (;;) {
		ssize_t got = read_more(&d->in, buf, &have, cap, d->bs);
		if (got < 0) {
			*rc = 2;
			*final = 1;
			return have;
		}
		if (got == 0) {
			*final = 1;
			return skipping ? 0 : have;
		}
		if (skipping) { /* drop the overlong line up to its newline */
			char *nl1 = memchr(*buf + have - (size_t)got, '\n', (size_t)got);
			if (!nl1) {
				have = 0;
				continue;
			}
			size_t rest = have - (size_t)(nl1 + 1 - *buf);
			memmove(*buf, nl1 + 1, rest);
			have = rest;
			scan_from = 0;
			skipping = 0;
		}
		char *nl = have > scan_from ? memrchr(*buf + scan_from, '\n', have - scan_from) : NULL;
		if (nl) { /* the rest starts the next block */
			size_t keep = (size_t)(nl + 1 - *buf);
			d->ncarry = have - keep;
			if (d->ncarry > d->carry_cap) {
				d->carry_cap = d->ncarry * 2;
				d->carry = xrealloc(d->carry, d->carry_cap);
			}
			if (d->ncarry)
				memcpy(d->carry, nl + 1, d->ncarry);
			return keep;
		}
		scan_from = have; /* no newline yet: one line longer than a block, read on */
		if (have > max_line()) {
			(*overlong)++;
			skipping = 1;
			have = scan_from = 0;
		}
	}
}

/* Empty a block's part for the next block, keeping the capacity of its
 * command and completion arrays (no fresh pages to fault in per block). */
static void part_reset(struct arm *p)
{
	struct vec c = p->cmds, q = p->cmps;
	memset(&p->cmds, 0, sizeof p->cmds);
	memset(&p->cmps, 0, sizeof p->cmps);
	arm_free(p);
	memset(p, 0, sizeof *p);
	c.n = q.n = 0;
	p->cmds = c;
	p->cmps = q;
}

static void *dev_worker(void *arg)
{
	struct devread *d = arg;
	struct reader r = {.ft = F_EBPF, .o = d->o, .offx = d->offx};
	char *text = NULL; /* this worker's block buffer, reused */
	size_t cap = 0;
	for (;;) {
		pthread_mutex_lock(&d->read_mu);
		pthread_mutex_lock(&d->mu);
		while (!d->stop && !d->eof && d->next_take - d->next_consume >= d->nslot)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop || d->eof) {
			pthread_mutex_unlock(&d->mu);
			pthread_mutex_unlock(&d->read_mu);
			break;
		}
		int64_t i = d->next_take++;
		pthread_mutex_unlock(&d->mu);
		int final, rc;
		uint64_t overlong;
		size_t n = read_block(d, &text, &cap, &final, &rc, &overlong);
		if (final) {
			pthread_mutex_lock(&d->mu);
			d->eof = 1;
			d->nblocks = i + 1;
			pthread_cond_broadcast(&d->cv);
			pthread_mutex_unlock(&d->mu);
		}
		pthread_mutex_unlock(&d->read_mu);
		struct dblock *b = &d->slot[i % d->nslot];
		part_reset(&b->part);
		memset(&b->fs, 0, sizeof b->fs);
		b->fs.path = d->path;
		r.a = &b->part;
		r.fs = &b->fs;
		r.reported = 0;
		for (uint64_t k = 0; k < overlong; k++) { /* the block's first lines, dropped unread */
			b->fs.lines++;
			overlong_line(&r, k + 1);
		}
		r.j.pad_end = text ? text + cap : NULL;
		if (!rc)
			parse_text(&r, text ? text : "", n, final, overlong);
		b->rc = rc;
		b->reported = r.reported;
		memcpy(b->bad, r.bad, sizeof b->bad);
		pthread_mutex_lock(&d->mu);
		b->ready = 1;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
	}
	free(text);
	jl_free(&r.j);
	free(r.sc.buf);
	return NULL;
}

int arm_read_device(struct arm *a, const char *path, const struct ingest_opts *o,
		    void (*consume)(void *ctx, struct arm *part), void *ctx)
{
	struct file_stats *fs = &a->ebpf_f;
	struct devread d = {.path = path, .o = o, .offx = a->offx, .nblocks = -1};
	jl_fast = !env_i64("KVIO_JSMN", 0, 0); /* 1: the full parser only (measuring it) */
	if (input_open(&d.in, path))
		return 2;
	d.bs = (size_t)env_i64("KVIO_BLOCK_BYTES", 4 << 20, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nw = ncpu > MAX_WORKERS ? MAX_WORKERS : ncpu < 2 ? 2 : (int)ncpu;
	d.nslot = nw + 2;
	d.slot = xcalloc((size_t)d.nslot, sizeof *d.slot);
	pthread_mutex_init(&d.mu, NULL);
	pthread_mutex_init(&d.read_mu, NULL);
	pthread_cond_init(&d.cv, NULL);
	pthread_t th[MAX_WORKERS];
	int started = 0;
	for (int k = 0; k < nw; k++)
		if (pthread_create(&th[k], NULL, dev_worker, &d) == 0)
			started++;
	int rc = 0;
	if (!started) {
		kvio_err("%s: cannot start a reader thread", path);
		rc = 2;
	}
	uint64_t shown = 0, total_bad = 0, next_progress = 1000000;
	double t0 = now_s();
	for (int64_t i = 0; !rc; i++) {
		struct dblock *b = &d.slot[i % d.nslot];
		pthread_mutex_lock(&d.mu);
		while (!b->ready && !(d.eof && i >= d.nblocks))
			pthread_cond_wait(&d.cv, &d.mu);
		int more = b->ready;
		pthread_mutex_unlock(&d.mu);
		if (!more)
			break; /* every block consumed */
		if (b->rc)
			rc = b->rc;
		for (uint64_t k = 0; k < b->reported && k < MAX_REPORTED; k++)
			b->bad[k].line += fs->lines;
		report_lines(path, b->bad, b->reported, &shown);
		total_bad += b->reported;
		add_stats(fs, &b->fs);
		if (!rc)
			consume(ctx, &b->part); /* takes the block's KV strings; the rest is copied */
		if (o->progress && fs->lines >= next_progress) {
			fprintf(stderr, "\r%s: %s: %llu lines (%.1fs)", kvio_prog, path,
				(unsigned long long)fs->lines, now_s() - t0);
			next_progress = fs->lines + 1000000;
		}
		pthread_mutex_lock(&d.mu);
		b->ready = 0;
		d.next_consume++;
		pthread_cond_broadcast(&d.cv);
		pthread_mutex_unlock(&d.mu);
	}
	pthread_mutex_lock(&d.mu);
	d.stop = 1;
	pthread_cond_broadcast(&d.cv);
	pthread_mutex_unlock(&d.mu);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	if (o->progress && next_progress > 1000000)
		fputc('\n', stderr);
	if (total_bad > shown)
		kvio_err("%s: %llu more unusable lines not shown", path, (unsigned long long)(total_bad - shown));
	for (int k = 0; k < d.nslot; k++)
		arm_free(&d.slot[k].part);
	free(d.slot);
	free(d.carry);
	pthread_mutex_destroy(&d.mu);
	pthread_mutex_destroy(&d.read_mu);
	pthread_cond_destroy(&d.cv);
	input_close(&d.in);
	return rc;
}

int arm_load(struct arm *a, const char *sem, const char *serving, const struct ingest_opts *o)
{
	const char *paths[2] = {sem, serving};
	struct file_stats *fss[2] = {&a->sem_f, &a->serving_f};
	enum ftype fts[2] = {F_SEM, F_SERVING};
	int rc = 0;
	jl_fast = !env_i64("KVIO_JSMN", 0, 0);
	for (int i = 0; i < 2 && !rc; i++) {
		fss[i]->path = paths[i] ? paths[i] : "-";
		if (paths[i])
			rc = read_file(a, fts[i], fss[i], o);
	}
	return rc;
}

void arm_free(struct arm *a)
{
	vec_free(&a->cmds);
	vec_free(&a->cmps);
	vec_free(&a->objs);
	vec_free(&a->serving);
	vec_free(&a->kv);
	vec_free(&a->names);
	vec_free(&a->warnings);
	vec_free(&a->threads);
	map_free(&a->thread_ix);
	arena_free(&a->strs);
	map_free(&a->first_obj);
}
