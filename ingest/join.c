/* join.c — the semantic side of one arm: occurrences of the semantic
 * records before the device stream (stream.c joins the commands to them),
 * object spans, lanes and serving spans after it. The rules are the
 * reference converter's (see docs/formats.md), with the deviations written
 * down there. */
#include "model.h"
#include "../lib/u64map.h"
#include <stdlib.h>
#include <string.h>

/* (begin, end, position) order for lane colouring */
struct span_ix {
	int64_t b, e;
	uint32_t pos;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span_ix *a = x, *b = y;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->e != b->e)
		return a->e < b->e ? -1 : 1;
	return a->pos < b->pos ? -1 : 1;
}

/* ---- lanes --------------------------------------------------------------- */
uint32_t lanes_add(struct lanes *l, int64_t beg, int64_t end)
{
	size_t lane;
	if (l->cap && l->mn[1] < beg) {
		/* first fit = leftmost leaf < begin */
		size_t i = 1;
		while (i < l->cap)
			i = l->mn[2 * i] < beg ? 2 * i : 2 * i + 1;
		lane = i - l->cap;
	} else {
		lane = l->n++;
		if (lane >= l->cap) {
			size_t ncap = l->cap ? l->cap * 2 : 1;
			int64_t *nm = xmalloc(2 * ncap * sizeof *nm);
			for (size_t i = 0; i < ncap; i++)
				nm[ncap + i] = i < l->cap ? l->mn[l->cap + i] : INT64_MAX;
			for (size_t i = ncap - 1; i >= 1; i--)
				nm[i] = nm[2 * i] < nm[2 * i + 1] ? nm[2 * i] : nm[2 * i + 1];
			free(l->mn);
			l->mn = nm;
			l->cap = ncap;
		}
	}
	size_t i = l->cap + lane;
	l->mn[i] = end;
	for (i /= 2; i >= 1; i /= 2) { /* up while a minimum changes: the ones above it cannot */
		int64_t m = l->mn[2 * i] < l->mn[2 * i + 1] ? l->mn[2 * i] : l->mn[2 * i + 1];
		if (l->mn[i] == m)
			break;
		l->mn[i] = m;
	}
	return (uint32_t)lane;
}

void lanes_free(struct lanes *l)
{
	free(l->mn);
	memset(l, 0, sizeof *l);
}

int assign_lanes(size_t n, const int64_t *b, const int64_t *e, uint32_t *lane_out)
{
	struct span_ix *ix = xmalloc((n ? n : 1) * sizeof *ix);
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		ix[i] = (struct span_ix){b[i], e[i], (uint32_t)i};
		if (i && span_cmp(&ix[i - 1], &ix[i]) > 0)
			sorted = 0;
	}
	if (!sorted)
		qsort(ix, n, sizeof *ix, span_cmp);
	struct lanes l = {0};
	for (size_t k = 0; k < n; k++)
		lane_out[ix[k].pos] = lanes_add(&l, ix[k].b, ix[k].e);
	int nl = (int)l.n;
	lanes_free(&l);
	free(ix);
	return nl;
}

/* ---- before the device stream ------------------------------------------- */

/* s[0..n) lower-cased into buf (grown as needed); returns its length. */
static size_t lower_into(struct vec *buf, const char *s, size_t n)
{
	vec_reserve(buf, n + 1, 1);
	char *b = buf->v;
	for (size_t i = 0; i < n; i++)
		b[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
	return n;
}

void arm_key_join(struct arm *a)
{
	static const char hx[] = "0123456789abcdef";
	struct obj *objs = a->objs.v;
	struct vec buf = {0};
	uint32_t next = 0;
	for (size_t i = 0; i < a->objs.n; i++) {
		const struct obj *ob = &objs[i];
		size_t n = 0;
		if (ob->key_hex && *ob->key_hex) {
			n = lower_into(&buf, ob->key_hex, strlen(ob->key_hex));
		} else if (ob->key && *ob->key) { /* the UTF-8 bytes of the key string, as hex */
			size_t kl = strlen(ob->key);
			vec_reserve(&buf, 2 * kl + 1, 1);
			for (size_t k = 0; k < kl; k++) {
				((char *)buf.v)[n++] = hx[(unsigned char)ob->key[k] >> 4];
				((char *)buf.v)[n++] = hx[(unsigned char)ob->key[k] & 15];
			}
		}
		if (!n) { /* no key: an object of its own that no command can claim */
			objs[i].trace_id = ++next;
			continue;
		}
		int fresh;
		uint32_t id = strpool_id(&a->keys, buf.v, n, &fresh);
		if (fresh)
			*(uint32_t *)vec_push(&a->key_tid, sizeof(uint32_t)) = ++next;
		objs[i].trace_id = VEC_AT(&a->key_tid, uint32_t, id);
	}
	vec_free(&buf);
}

uint32_t arm_key_id(const struct arm *a, const char *key_hex)
{
	char small[64];
	size_t n = strlen(key_hex);
	struct vec buf = {0};
	const char *k = small;
	if (n < sizeof small) {
		for (size_t i = 0; i < n; i++)
			small[i] = key_hex[i] >= 'A' && key_hex[i] <= 'Z' ? (char)(key_hex[i] - 'A' + 'a') : key_hex[i];
	} else {
		lower_into(&buf, key_hex, n);
		k = buf.v;
	}
	int64_t id = n ? strpool_find(&a->keys, k, n) : -1;
	vec_free(&buf);
	return id < 0 ? 0 : VEC_AT(&a->key_tid, uint32_t, (size_t)id);
}


static int obj_order(const void *x, const void *y)
{
	const struct obj *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->line < b->line ? -1 : 1;
}

static void instance_warning(struct arm *a);

void arm_prepare(struct arm *a)
{
	size_t no = a->objs.n;
	/* semantic occurrences: group by trace_id in first-appearance order,
	 * each group by op end */
	struct obj *objs = a->objs.v;
	struct u64map rank = {0};
	for (size_t i = 0; i < no; i++) {
		int fresh;
		uint32_t *v = map_slot(&rank, objs[i].trace_id, &fresh);
		if (fresh)
			*v = (uint32_t)rank.n - 1;
		else
			a->dup_trace_id++;
		objs[i].rank = *v;
	}
	map_free(&rank);
	if (no > 1)
		qsort(objs, no, sizeof(struct obj), obj_order);
	size_t f = 0, cnt = 0; /* the current trace_id's run of occurrences: [f, f + cnt) */
	for (size_t i = 0; i < no; i++) {
		if (i == f + cnt) { /* a new trace_id: measure its run once */
			int fresh;
			f = i;
			*map_slot(&a->first_obj, objs[i].trace_id, &fresh) = (uint32_t)i;
			for (cnt = 1; f + cnt < no && objs[f + cnt].trace_id == objs[i].trace_id; cnt++)
				;
		}
		objs[i].occurrence = cnt > 1 ? (int32_t)(i - f) : -1;
		objs[i].n_occ = (uint32_t)cnt;
		objs[i].is_store = objs[i].op && !strcmp(objs[i].op, "store");
		objs[i].n_cmds = 0;
		objs[i].first_seq = objs[i].last_seq = UINT64_MAX;
		objs[i].first_id = objs[i].last_id = -1;
		objs[i].lba_match = 0;
	}
	instance_warning(a);

	/* the earliest semantic and serving times (the stream adds the device's) */
	int64_t mn = INT64_MAX;
	for (size_t i = 0; i < no; i++) {
		if (objs[i].end < mn) mn = objs[i].end;
		if (objs[i].start != NO_TS && objs[i].start < mn) mn = objs[i].start;
	}
	const struct serving *sv = a->serving.v;
	for (size_t i = 0; i < a->serving.n; i++) {
		if (sv[i].start < mn) mn = sv[i].start;
		if (sv[i].end < mn) mn = sv[i].end;
	}
	a->min_ts = mn;
}

/* One object's fields as arm_prepare sets them before the stream (i: its
 * position; with one record per trace_id, its occurrence group is itself). */
static void obj_fresh(struct obj *ob, size_t i)
{
	ob->rank = (uint32_t)i;
	ob->occurrence = -1;
	ob->n_occ = 1;
	ob->is_store = ob->op && !strcmp(ob->op, "store");
	ob->n_cmds = 0;
	ob->first_seq = ob->last_seq = UINT64_MAX;
	ob->first_id = ob->last_id = -1;
	ob->lba_match = 0;
}

int arm_follow_add(struct arm *a, size_t from, int64_t *sem_min, int64_t *sem_end)
{
	for (size_t i = from; i < arm_nobjs(a); i++) {
		struct obj *ob = arm_obj(a, i);
		int fresh;
		uint32_t *v = map_slot(&a->first_obj, ob->trace_id, &fresh);
		if (!fresh) {
			a->dup_trace_id++;
			return 1;
		}
		*v = (uint32_t)i;
		obj_fresh(ob, i);
		int64_t mn = ob->start != NO_TS && ob->start < ob->end ? ob->start : ob->end;
		if (mn < *sem_min)
			*sem_min = mn;
		if (ob->end > *sem_end)
			*sem_end = ob->end;
	}
	return 0;
}

void arm_follow_done(struct arm *a)
{
	instance_warning(a);
}

static void instance_warning(struct arm *a)
{
	const struct obj *objs = a->objs.v;
	size_t no = a->objs.n;
	const char *inst0 = NULL;
	int64_t inum0 = 0;
	int kinds = 0, multi = 0;
	for (size_t i = 0; i < no && !multi; i++) {
		const struct jv *v = &objs[i].instance;
		if (v->t == JV_STR) {
			if (!kinds) { inst0 = v->s; kinds = 1; }
			else if (kinds != 1 || strcmp(inst0, v->s)) multi = 1;
		} else if (v->t == JV_INT || v->t == JV_UINT) {
			if (!kinds) { inum0 = v->i; kinds = 2; }
			else if (kinds != 2 || inum0 != v->i) multi = 1;
		}
	}
	if (multi)
		arm_warn(a, "several producer instances share this trace file: device-command "
			    "attribution across instances is ambiguous (same trace_id space)");
}

/* ---- after it -------------------------------------------------------------- */

int obj_span(struct obj *ob, int64_t base)
{
	int64_t end = ob->end - base;
	int has_start = ob->start != NO_TS, anomaly = 0;
	int64_t start = has_start ? ob->start - base : 0;
	if (ob->n_cmds) {
		int64_t first = ob->first_ts - base, last = ob->last_ts - base;
		ob->b = has_start && start < first ? start : first;
		if (end < last) {
			anomaly = 1;
			end = last;
		}
		ob->e = end;
		ob->is_span = 1;
	} else if (has_start && end > start) {
		ob->b = start;
		ob->e = end;
		ob->is_span = 1;
	} else {
		ob->b = ob->e = end;
		ob->is_span = 0;
	}
	return anomaly;
}

/* Object spans: min(ts_start, first command) -> op end (moved to the last
 * command when it is earlier: a clock anomaly), rebased by base; what the
 * window keeps, and its lanes. Returns the store spans. */
static size_t finish_objects(struct arm *a, const struct ingest_opts *o, int64_t base)
{
	struct obj *objs = a->objs.v;
	size_t no = a->objs.n;
	size_t nspan = 0, n_store_spans = 0;
	int64_t *sb = xmalloc((no ? no : 1) * sizeof *sb), *se = xmalloc((no ? no : 1) * sizeof *se);
	uint32_t *spos = xmalloc((no ? no : 1) * sizeof *spos), *slane = xmalloc((no ? no : 1) * sizeof *slane);
	for (size_t i = 0; i < no; i++) {
		struct obj *ob = &objs[i];
		a->clock_anomalies += (uint64_t)obj_span(ob, base);
		if (ob->is_span && ob->is_store)
			n_store_spans++;
		/* --trace-id, then --time-range: only what is written takes a lane */
		ob->tid_kept = (uint8_t)window_obj_tid(&o->win, ob->trace_id);
		ob->kept = ob->tid_kept && window_span(&o->win, ob->b, ob->e - ob->b);
		if (!ob->kept)
			continue;
		if (ob->is_span) {
			sb[nspan] = ob->b;
			se[nspan] = ob->e;
			spos[nspan++] = (uint32_t)i;
			a->emitted_spans++;
		} else {
			a->emitted_instants++;
		}
	}
	a->nlanes_obj = assign_lanes(nspan, sb, se, slane);
	for (size_t k = 0; k < nspan; k++)
		objs[spos[k]].lane = slane[k];
	free(sb); free(se); free(spos); free(slane);
	return n_store_spans;
}

/* Serving spans rebased by base (at least 1 ns long), what the window keeps, their lanes. */
static void finish_serving(struct arm *a, const struct ingest_opts *o, int64_t base)
{
	struct serving *sv = a->serving.v;
	size_t ns = a->serving.n;
	int64_t *vb = xmalloc((ns ? ns : 1) * sizeof *vb), *ve = xmalloc((ns ? ns : 1) * sizeof *ve);
	uint32_t *vl = xmalloc((ns ? ns : 1) * sizeof *vl);
	size_t nk = 0; /* the kept spans (--time-range), compacted into vb/ve */
	for (size_t i = 0; i < ns; i++) {
		sv[i].start -= base;
		sv[i].end -= base;
		if (sv[i].end <= sv[i].start)
			sv[i].end = sv[i].start + 1;
		sv[i].kept = (uint8_t)window_span(&o->win, sv[i].start, sv[i].end - sv[i].start);
		if (!sv[i].kept)
			continue;
		vb[nk] = sv[i].start;
		ve[nk++] = sv[i].end;
	}
	a->emitted_serving = nk;
	a->nlanes_srv = assign_lanes(nk, vb, ve, vl);
	for (size_t i = 0, k = 0; i < ns; i++)
		if (sv[i].kept)
			sv[i].lane = vl[k++];
	free(vb); free(ve); free(vl);
}

/* The data warnings of a joined arm (n_store_spans: its store objects with a span). */
static void finish_warnings(struct arm *a, const struct ingest_opts *o, size_t n_store_spans)
{
	size_t no = arm_nobjs(a);
	/* without any command the stores have nothing to classify: the warnings
	 * below say what is wrong (no device file, or one without commands) */
	if (n_store_spans && a->header_cmds == 0 && a->n_cmd_lines && o->join != JOIN_KEY) /* KV: no headers */
		arm_warn(a, "0 header commands classified across %zu stores: check --lba-bytes", n_store_spans);

	if (strcmp(a->ebpf_f.path, "-") && !a->n_cmd_lines)
		arm_warn(a, "%s has no nvme_cmd lines: was the tracer attached (its stderr says which probes were on)?",
			 a->ebpf_f.path);
	if (strcmp(a->ebpf_f.path, "-") && a->n_cmd_lines && !a->n_cmp_lines)
		arm_warn(a, "%s has no nvme_cmp lines (no completion probe): latency and queue depth are unavailable, "
			    "commands show the nominal --nominal-dur-ns", a->ebpf_f.path);
	if (!strcmp(a->ebpf_f.path, "-") && n_store_spans)
		arm_warn(a, n_store_spans == 1 ? "no device file (--ebpf): the %zu store has no commands, so no header "
			    "or latency figures" : "no device file (--ebpf): the %zu stores have no commands, so no header or "
			    "latency figures", n_store_spans);
	if (strcmp(a->sem_f.path, "-") && !no)
		arm_warn(a, "%s has no semantic records (was LMCACHE_KVIO_TRACE set for the run?)", a->sem_f.path);
	a->swapped = strcmp(a->sem_f.path, "-") && strcmp(a->ebpf_f.path, "-") && !no && !a->n_cmd_lines &&
		     a->sem_f.other && a->ebpf_f.other;
	if (a->clock_anomalies)
		arm_warn(a, "%llu semantic op end(s) earlier than their last device command: impossible on "
			    "one host/boot; check inputs", (unsigned long long)a->clock_anomalies);
	if (o->join == JOIN_KEY && a->n_cmd_lines && !a->key_cmds)
		arm_warn(a, "--join-by-key: no nvme_cmd line of %s carries key_hex (capture with the tracer's --kv "
			    "flag: nvme_uring_cmd_monitor --kv): all %llu commands are untagged", a->ebpf_f.path,
			 (unsigned long long)a->n_cmd_lines);
	if (o->join == JOIN_OFFSET && a->off_total && a->off_agree < a->off_total)
		arm_warn(a, "--join-by-offset: %llu of %llu cookie commands attributed by offset disagree with their "
			    "user_data cookie (parity %.2f%%): check header_bytes/block_align and --lba-bytes",
			 (unsigned long long)(a->off_total - a->off_agree), (unsigned long long)a->off_total,
			 100.0 * (double)a->off_agree / (double)a->off_total);
	arm_offset_free(a);
	strpool_free(&a->keys);
	vec_free(&a->key_tid);
	/* under --join-by-key a store and a later load of one key are two occurrences of one id */
	if (a->dup_trace_id && o->join != JOIN_KEY)
		arm_warn(a, "%llu duplicate trace_id(s): multiple producer instances sharing one trace file? "
			    "spans were segmented by op-end time", (unsigned long long)a->dup_trace_id);
	if (a->cmp_after_horizon)
		arm_warn(a, "%llu completion(s) came more than --pair-horizon %lld records after their command (a "
			    "stall?): left unpaired, their commands show nominal durations; ingest again with a "
			    "larger --pair-horizon to pair them", (unsigned long long)a->cmp_after_horizon,
			 (long long)o->pair_horizon);
	if (a->late_lines)
		arm_warn(a, "%llu device record(s) came more than one read block of the file (4 MiB; KVIO_BLOCK_BYTES) "
			    "or more than the reorder pool (KVIO_POOL_MAX records) after later-stamped ones: they were "
			    "joined out of time order", (unsigned long long)a->late_lines);
}

static void finish_base(struct arm *a, const struct ingest_opts *o)
{
	if (!a->base_set) { /* no device command: the semantic/serving times alone */
		a->base_ns = o->no_rebase || a->min_ts == INT64_MAX ? 0 : a->min_ts;
		a->base_set = 1;
	}
	if (a->min_ts == INT64_MAX)
		a->min_ts = 0;
}

void arm_finish(struct arm *a, const struct ingest_opts *o)
{
	finish_base(a, o);
	int64_t base = a->base_ns;
	size_t n_store_spans = finish_objects(a, o, base);
	finish_serving(a, o, base);
	finish_warnings(a, o, n_store_spans);
}

void arm_finish_interim(struct arm *a, const struct ingest_opts *o, size_t n_store_spans)
{
	finish_base(a, o);
	finish_serving(a, o, a->base_ns);
	finish_warnings(a, o, n_store_spans);
}
