/* offset.c — --join-by-offset: device commands attributed to KV objects by
 * byte range and time window, without a user_data cookie.
 *
 * A record with slot_offset owns the slot [slot_offset, slot_offset +
 * header_bytes + roundup(bytes, block_align)) during [ts_start - 5 ms,
 * ts + 5 ms] (ts alone when ts_start is absent). Slots are disjoint in
 * space, so a command's only candidate is the slot with the greatest base
 * <= its first byte (a binary search over the distinct bases); the ops that
 * reused that slot over time are told apart by their windows. The semantic
 * file is read before the device file, so each slot's time line is cut, once,
 * at its windows' starts and ends into intervals in which the same windows
 * are open, and each interval gets its answer for each direction (the first
 * op in file order of that direction, else the first). A command then costs
 * two binary searches (its slot, its interval) and no state: it is attributed
 * on the parse threads (load.c), in any order, the same as in time order.
 * The index costs O(ops log ops) to build and 2 intervals per op at most.
 * Classes and rules: docs/formats.md. */
#include "model.h"
#include <stdlib.h>
#include <string.h>

#define SLACK_NS 5000000 /* the window's margin on each side (5 ms) */

/* One semantic op on a slot, while the index is built. */
struct off_op {
	int64_t t0, t1;  /* its window, raw ns */
	uint32_t obj;    /* index into arm.objs (file order) */
	uint8_t dir;     /* 1 store (writes), 2 load (reads), 0 other */
};

/* A slot: its extent and its intervals. */
struct off_slot {
	int64_t end;        /* the largest base + header + payload of its ops */
	uint32_t iv, niv;   /* its intervals: starts[iv .. iv + niv) */
};

/* What a command attributed to an op takes from it. */
struct off_obj {
	uint64_t cookie_tid; /* the record's own trace_id (parity) */
	uint32_t tid;        /* its synthetic trace_id */
};

struct offset_index {
	int64_t *bases;          /* the slots' bases, ascending */
	struct off_slot *slots;  /* by base */
	int64_t *starts;         /* each slot's interval starts, ascending; an interval
				  * lasts until the next start (the last one: for ever) */
	int32_t (*pick)[3];      /* by interval, by direction (0 other, 1 write, 2 read):
				  * the op (index into objs) the command takes; -1 none */
	struct off_obj *objs;    /* by objs index */
	size_t nslots;
};

struct base_ix {
	int64_t base, end;
	uint32_t op;
};

static int base_cmp(const void *x, const void *y)
{
	const struct base_ix *a = x, *b = y;
	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	return a->op < b->op ? -1 : a->op > b->op;
}

/* The number of v[0..n) that are <= key (v ascending); branch-free steps. */
static size_t count_le(const int64_t *v, size_t n, int64_t key)
{
	if (!n)
		return 0;
	const int64_t *b = v;
	while (n > 1) {
		size_t half = n / 2;
		b = b[half] <= key ? b + half : b;
		n -= half;
	}
	return (size_t)(b - v) + (*b <= key);
}

/* next[] of a disjoint-set forest over intervals: the first unclaimed at or after j */
static uint32_t next_free(uint32_t *next, uint32_t j)
{
	uint32_t r = j;
	while (next[r] != r)
		r = next[r];
	while (next[j] != r) { /* path compression */
		uint32_t n = next[j];
		next[j] = r;
		j = n;
	}
	return r;
}

/* The intervals of one slot (its ops ops[0..n), in file order) appended at
 * x->starts/x->pick[*niv ...]. In each interval the same windows are open;
 * its answer for a direction is the first op in file order of that
 * direction, else the first of any: each op, in file order, claims the
 * intervals of its window that no earlier op claimed (a disjoint-set forest
 * skips the claimed ones: near-linear however the windows overlap). */
static void slot_intervals(struct offset_index *x, size_t *niv, size_t *cap, const struct off_op *ops, uint32_t n,
			   struct off_slot *sl, uint32_t **next, size_t *next_cap)
{
	size_t m = 0, need = 2 * (size_t)n;
	if (*niv + need > *cap) {
		*cap = (*niv + need) * 2;
		x->starts = xrealloc(x->starts, *cap * sizeof *x->starts);
		x->pick = xrealloc(x->pick, *cap * sizeof *x->pick);
	}
	int64_t *st = x->starts + *niv;
	for (uint32_t k = 0; k < n; k++) { /* a window [t0, t1] opens at t0 and closes at t1 + 1 */
		st[m++] = ops[k].t0;
		if (ops[k].t1 < INT64_MAX)
			st[m++] = ops[k].t1 + 1;
	}
	qsort(st, m, sizeof *st, i64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < m; i++)
		if (!u || st[i] != st[u - 1])
			st[u++] = st[i];
	m = u;
	if (m + 1 > *next_cap) {
		*next_cap = (m + 1) * 2;
		*next = xrealloc(*next, *next_cap * sizeof **next);
	}
	int32_t(*pk)[3] = x->pick + *niv;
	for (size_t i = 0; i < m; i++)
		pk[i][0] = pk[i][1] = pk[i][2] = -1;
	for (int d = 0; d < 3; d++) { /* 0: any op; 1, 2: the ops of that direction */
		uint32_t *nx = *next;
		for (size_t i = 0; i <= m; i++)
			nx[i] = (uint32_t)i;
		for (uint32_t k = 0; k < n; k++) {
			if (d && ops[k].dir != d)
				continue;
			if (ops[k].t0 > ops[k].t1)
				continue; /* an empty window holds no command */
			size_t lo = i64_lower_bound(st, m, ops[k].t0);
			size_t hi = ops[k].t1 < INT64_MAX ? i64_lower_bound(st, m, ops[k].t1 + 1) : m;
			for (uint32_t j = next_free(nx, (uint32_t)lo); j < hi; j = next_free(nx, j + 1)) {
				pk[j][d] = (int32_t)ops[k].obj;
				nx[j] = j + 1;
			}
		}
	}
	for (size_t i = 0; i < m; i++) { /* a direction without its own op takes the first of any */
		if (pk[i][1] < 0)
			pk[i][1] = pk[i][0];
		if (pk[i][2] < 0)
			pk[i][2] = pk[i][0];
	}
	sl->iv = (uint32_t)*niv;
	sl->niv = (uint32_t)m;
	*niv += m;
}

/* Before arm_prepare (objs in file order, which its sort keeps: the ids are
 * unique and ranked as read). */
void arm_offset_prepare(struct arm *a)
{
	struct obj *objs = a->objs.v;
	size_t no = a->objs.n;
	int64_t hdr = 0, align = 4096;
	if (a->has_meta) {
		jv_int(&a->meta_header_bytes, 0, &hdr);
		jv_int(&a->meta_block_align, 4096, &align);
	}
	if (hdr < 0)
		hdr = 0;
	if (align <= 0)
		align = 4096;
	struct offset_index *x = a->offx = xcalloc(1, sizeof *x);
	struct base_ix *bx = xmalloc((no ? no : 1) * sizeof *bx);
	struct off_op *all = xmalloc((no ? no : 1) * sizeof *all);
	x->objs = xmalloc((no ? no : 1) * sizeof *x->objs);
	size_t nops = 0;
	for (size_t i = 0; i < no; i++) {
		struct obj *ob = &objs[i];
		ob->cookie_tid = ob->trace_id;
		ob->trace_id = i + 1; /* unique, in file order: arm_prepare keeps this order */
		x->objs[i] = (struct off_obj){ob->cookie_tid, (uint32_t)ob->trace_id};
		int64_t slot, bytes;
		if (!jv_int(&ob->slot_offset, 0, &slot) || slot < 0)
			continue; /* no slot_offset: takes no part */
		jv_int(&ob->bytes, 0, &bytes);
		if (bytes < 0)
			bytes = 0;
		int64_t pay = (bytes + align - 1) / align * align;
		int64_t t1 = ob->end + SLACK_NS, t0 = (ob->start != NO_TS ? ob->start : ob->end) - SLACK_NS;
		const char *op = ob->op ? ob->op : "";
		all[nops] = (struct off_op){t0, t1, (uint32_t)i, !strcmp(op, "store") ? 1 : !strcmp(op, "load") ? 2 : 0};
		bx[nops] = (struct base_ix){slot, slot + hdr + pay, (uint32_t)nops};
		nops++;
	}
	qsort(bx, nops, sizeof *bx, base_cmp);
	/* ops regrouped by base (file order within a base), then the slots */
	struct off_op *ops = xmalloc((nops ? nops : 1) * sizeof *ops);
	x->bases = xmalloc((nops ? nops : 1) * sizeof *x->bases);
	x->slots = xcalloc(nops ? nops : 1, sizeof *x->slots);
	size_t niv = 0, cap = 0, next_cap = 0;
	uint32_t *next = NULL;
	for (size_t k = 0, first = 0; k < nops; k++) {
		ops[k] = all[bx[k].op];
		if (!x->nslots || x->bases[x->nslots - 1] != bx[k].base) {
			x->bases[x->nslots] = bx[k].base;
			x->slots[x->nslots++] = (struct off_slot){.end = bx[k].end};
			first = k;
		}
		struct off_slot *sl = &x->slots[x->nslots - 1];
		if (bx[k].end > sl->end)
			sl->end = bx[k].end;
		if (k + 1 == nops || bx[k + 1].base != bx[k].base) /* the slot's last op */
			slot_intervals(x, &niv, &cap, ops + first, (uint32_t)(k + 1 - first), sl, &next, &next_cap);
	}
	free(next);
	free(ops);
	free(all);
	free(bx);
}

void arm_offset_attribute(const struct offset_index *x, struct off_memo *m, struct arm *k, struct cmd *c, int dir,
			  uint32_t nlb, uint32_t bytes, int64_t lba_flag)
{
	uint64_t cookie = c->user_data >> 32;
	c->trace_id = 0;
	if (cookie)
		k->off_cookie++;
	if (!(c->flags & CF_SLBA)) { /* no byte address (KV): nothing to attribute by */
		k->off_unmatched++;
		return;
	}
	int64_t lba = bytes && nlb ? (int64_t)(bytes / nlb) : lba_flag;
	int64_t len = bytes ? (int64_t)bytes : nlb ? (int64_t)nlb * lba : (int64_t)c->data_len;
	int64_t off, end;
	if (c->slba > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)c->slba, lba, &off) ||
	    __builtin_add_overflow(off, len, &end)) {
		k->off_unmatched++;
		return;
	}
	/* the slot with the greatest base <= off: the caller's previous one when
	 * it still is (runs of commands on one object), else a search */
	size_t lo = m->slot;
	if (!(lo && x->bases[lo - 1] <= off && (lo == x->nslots || x->bases[lo] > off))) {
		lo = count_le(x->bases, x->nslots, off);
		m->slot = lo;
		m->iv = 0;
	}
	if (lo == 0 || off >= x->slots[lo - 1].end) {
		k->off_unmatched++;
		return;
	}
	const struct off_slot *sl = &x->slots[lo - 1];
	if (end > sl->end) { /* past the slot: a bio merged across two objects, or into a gap */
		if (lo < x->nslots && x->bases[lo] < end)
			k->off_cross++;
		else
			k->off_gap++;
		return;
	}
	/* the interval of the slot's time line that holds ts (the same way) */
	const int64_t *st = x->starts + sl->iv;
	size_t iv = m->iv;
	if (!(iv && st[iv - 1] <= c->ts && (iv == sl->niv || st[iv] > c->ts)))
		iv = m->iv = count_le(st, sl->niv, c->ts);
	int32_t ob = iv ? x->pick[sl->iv + iv - 1][dir == 1 || dir == 2 ? dir : 0] : -1;
	if (ob < 0) {
		k->off_unmatched++;
		return;
	}
	c->trace_id = x->objs[ob].tid;
	k->off_unique++;
	if (cookie) {
		k->off_total++;
		if (x->objs[ob].cookie_tid == cookie)
			k->off_agree++;
	}
}

void arm_offset_free(struct arm *a)
{
	struct offset_index *x = a->offx;
	if (!x)
		return;
	free(x->bases);
	free(x->slots);
	free(x->starts);
	free(x->pick);
	free(x->objs);
	free(x);
	a->offx = NULL;
}
