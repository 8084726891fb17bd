/* records.c — one line of a capture file as a record: the device file's
 * nvme_cmd/nvme_cmp/kvio_meta/drops lines, semantic records, serving spans.
 *
 * Every line is accounted for: used, blank, malformed (first 5 per file
 * reported with file:line), other (valid JSON of another kind), or the
 * unterminated tail of a still-growing file. */
#include "records.h"
#include "../db/chunk.h"
#include <stdlib.h>
#include <string.h>

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

/* A semantic field kept with its JSON type. Returns -1 on a bad string
 * escape, -2 on a number no double holds (1e999, or over 63 characters). */
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
				return -2;
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

#define STR_(x) #x
#define NAME_MAX_S STR_(64)
_Static_assert(CHUNK_NAME_MAX == 64, "NAME_MAX_S says CHUNK_NAME_MAX");

/* An nvme_cmd line's op_name, interned ("cmd" without one): NULL, or why the
 * line is malformed (a bad escape; longer than CHUNK_NAME_MAX bytes). */
static const char *cmd_name(struct reader *r, struct jline *j, uint16_t *name)
{
	struct arm *a = r->a;
	int t = JL_FIND(j, "op_name");
	if (t < 0 || !jl_is_str(j, t)) {
		*name = arm_intern(a, "cmd", 3);
		return NULL;
	}
	const char *raw = j->s + j->tok[t].start;
	size_t l = (size_t)(j->tok[t].end - j->tok[t].start);
	const char *u = raw;
	if (memchr(raw, '\\', l) && !(u = tok_str(a, j, t, &r->sc, &l))) /* no escape: the text is the name */
		return "nvme_cmd op_name has a bad escape";
	if (l > CHUNK_NAME_MAX) /* the names are short (read, write, store, ...): garbage */
		return "nvme_cmd op_name longer than " NAME_MAX_S " bytes";
	*name = arm_intern(a, u, l); /* copied once, when new */
	return NULL;
}

/* An nvme_cmd line's KV args (key_hex, key_len, value_len), when it has one:
 * kept in the arm's kv list, c flagged CF_KV. -1 on a bad key_hex escape. */
static int cmd_kvargs(struct reader *r, struct jline *j, struct cmd *c)
{
	struct arm *a = r->a;
	int tk = JL_FIND(j, "key_hex"), tl = JL_FIND(j, "key_len"), tv = JL_FIND(j, "value_len");
	if (tk < 0 && tl < 0 && tv < 0)
		return 0;
	struct cmd_kv kv = {0};
	if (tk >= 0 && jl_is_str(j, tk) && !(kv.key_hex = tok_str(a, j, tk, &r->sc, NULL)))
		return -1;
	if (tl >= 0 && !jl_i64(j, tl, &kv.key_len))
		kv.has_key_len = 1;
	if (tv >= 0 && !jl_i64(j, tv, &kv.value_len))
		kv.has_value_len = 1;
	c->kv = (uint32_t)a->kv.n;
	*(struct cmd_kv *)vec_push(&a->kv, sizeof kv) = kv;
	c->flags |= CF_KV;
	return 0;
}

/* Command c's role (and under --join-by-offset its trace_id, from its byte
 * range: nlb and io_bytes the line's, 0 when absent). */
static void cmd_role(struct reader *r, struct cmd *c, uint32_t nlb, uint32_t io_bytes)
{
	struct arm *a = r->a;
	const char *nm = VEC_AT(&a->names, const char *, c->name);
	int has_key = (c->flags & CF_KV) && VEC_AT(&a->kv, struct cmd_kv, c->kv).key_hex &&
		      *VEC_AT(&a->kv, struct cmd_kv, c->kv).key_hex;
	if (r->o->join == JOIN_OFFSET) { /* its object by byte range and time: its trace_id, then its role */
		int wr = !strcmp(nm, "write"), rd = !wr && !strcmp(nm, "read");
		arm_offset_attribute(r->offx, &r->memo, a, c, wr ? 1 : rd ? 2 : 0, nlb, io_bytes, r->o->lba_bytes);
		c->role = !c->trace_id && !(c->flags & CF_KV) ? ROLE_UNTAGGED /* a KV command is never untagged here */
			  : wr || !strcmp(nm, "store")     ? ROLE_WRITES
			  : rd || !strcmp(nm, "retrieve")  ? ROLE_READS
							   : ROLE_OTHER;
	} else if (c->trace_id == 0 && !has_key) {
		c->role = ROLE_UNTAGGED;
	} else if (c->name < sizeof a->name_cls && a->name_cls[c->name]) {
		c->role = a->name_cls[c->name] - 1;
	} else {
		c->role = !strcmp(nm, "write") || !strcmp(nm, "store")   ? ROLE_WRITES
			  : !strcmp(nm, "read") || !strcmp(nm, "retrieve") ? ROLE_READS
									 : ROLE_OTHER;
		if (c->name < sizeof a->name_cls)
			a->name_cls[c->name] = (unsigned char)(c->role + 1);
	}
}

/* An nvme_cmd line as a command of the arm: NULL, or why it is malformed. */
static const char *cmd_line(struct reader *r, struct jline *j)
{
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
	const char *why = cmd_name(r, j, &c.name);
	if (why)
		return why;
	if (cmd_kvargs(r, j, &c))
		return "nvme_cmd key_hex has a bad escape";
	cmd_role(r, &c, nlb, io_bytes);
	c.obj = -1;
	*(struct cmd *)vec_push(&r->a->cmds, sizeof c) = c;
	note_thread(r, j);
	return NULL;
}

/* Returns NULL when used, else the reason the record is malformed; *other set
 * when the line is valid but of another kind. */
static const char *ebpf_line(struct reader *r, int *other)
{
	struct jline *j = &r->j;
	struct arm *a = r->a;
	int et = JL_FIND(j, "event_type");
	if (JL_STREQ(j, et, "nvme_cmd"))
		return cmd_line(r, j);
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
		int kr = get_jv(a, j, t, &r->sc, &v);
		if (kr == -1)
			return "semantic record key has a bad escape";
		if (!kr && v.t == JV_STR)
			o.key = v.s;
		else /* a number (any: 1e999 too) or bool: its JSON text, as str() would print it */
			o.key = arena_dup(&a->strs, j->s + j->tok[t].start, j->tok[t].end - j->tok[t].start);
	}
	t = JL_FIND(j, "key_hex");
	if (t >= 0 && jl_is_str(j, t)) {
		if (get_jv(a, j, t, &r->sc, &v))
			return "semantic record key_hex has a bad escape";
		o.key_hex = v.s;
	}
	int bad;
	if ((bad = get_jv(a, j, JL_FIND(j, "bytes"), &r->sc, &o.bytes)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "slot_offset"), &r->sc, &o.slot_offset)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "error"), &r->sc, &o.error)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "instance"), &r->sc, &o.instance)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "pid"), &r->sc, &o.pid)))
		return bad == -2 ? "semantic record has a number no double holds (1e999, or over 63 characters)"
				 : "semantic record has a bad string escape";
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
	int bad;
	if ((bad = get_jv(a, j, JL_FIND(j, "op"), &r->sc, &s.op)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "name"), &r->sc, &s.name)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "tokens"), &r->sc, &s.tokens)) ||
	    (bad = get_jv(a, j, JL_FIND(j, "request_id"), &r->sc, &s.request_id)))
		return bad == -2 ? "serving record has a number no double holds (1e999, or over 63 characters)"
				 : "serving record has a bad string escape";
	*(struct serving *)vec_push(&a->serving, sizeof s) = s;
	return NULL;
}

/* Longer than this, a line is malformed without being parsed: no record is
 * near it, and a region of NUL bytes (what a crash can leave at the end of a
 * capture) has no newline for gigabytes. KVIO_MAX_LINE overrides (tests). */
#define MAX_LINE_DEFAULT (1 << 20)
static const char overlong_why[] = "line longer than 1 MiB (a region of NUL bytes from a crash?)";

size_t max_line(void)
{
	static size_t v;
	if (!v)
		v = (size_t)env_i64("KVIO_MAX_LINE", MAX_LINE_DEFAULT, 1);
	return v;
}

/* An overlong line (already counted in lines): malformed, its reason reported. */
void overlong_line(struct reader *r, uint64_t lineno)
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

void parse_text(struct reader *r, const char *buf, size_t n, int final, uint64_t lineno)
{
	const char *p = buf, *end = buf + n, *nl;
	const char *last = n ? memrchr(buf, '\n', n) : NULL; /* the whole lines: parsed by regions */
	r->j.many_end = last ? last + 1 : NULL;
	r->j.many_stop = r->j.many_skip = NULL;
	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		one_line(r, p, (size_t)(nl - p), ++lineno, 0);
		p = nl + 1;
	}
	r->j.many_end = r->j.many_stop = NULL;
	if (p < end)
		one_line(r, p, (size_t)(end - p), ++lineno, final);
}

