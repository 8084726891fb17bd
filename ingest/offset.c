/* offset.c — --join-by-offset: device commands attributed to KV objects by
 * byte range and time window, without a user_data cookie.
 *
 * A record with slot_offset owns the slot [slot_offset, slot_offset +
 * header_bytes + roundup(bytes, block_align)) during [ts_start - 5 ms,
 * ts + 5 ms] (ts alone when ts_start is absent). Slots are disjoint in
 * space, so a command's only candidate is the slot with the greatest base
 * <= its first byte (a binary search over the distinct bases); the ops that
 * reused that slot over time are told apart by their windows. Commands come
 * in time order (stream.c), so each slot keeps a cursor into its ops sorted
 * by window start and the small set of ops whose window is open: a command
 * costs O(log slots + open windows), however many passes reuse the slot. A
 * command older than the previous one of its slot (joined out of time
 * order) scans that slot's ops instead. Classes and rules: docs/formats.md. */
#include "model.h"
#include <stdlib.h>
#include <string.h>

#define SLACK_NS 5000000 /* the window's margin on each side (5 ms) */

/* One semantic op on a slot. */
struct off_op {
	int64_t t0, t1;  /* its window, raw ns */
	uint32_t obj;    /* index into arm.objs (file order) */
	uint8_t dir;     /* 1 store (writes), 2 load (reads), 0 other */
};

/* The ops of one slot base. */
struct off_slot {
	int64_t base, end;  /* end: the largest base + header + payload of its ops */
	uint32_t first, n;  /* its ops: ops[first .. first + n), in file order */
	uint32_t *by_t0;    /* those indices sorted by window start */
	uint32_t cursor;    /* by_t0[cursor..] not opened yet */
	struct vec open;    /* uint32_t op indices whose window started and has not ended */
	int64_t last_ts;    /* the latest command time seen here */
};

struct offset_index {
	struct off_op *ops;
	struct off_slot *slots; /* by base */
	size_t nops, nslots;
};

static const struct off_op *g_sort_ops; /* qsort has no context argument */

static int op_by_slot(const void *x, const void *y)
{
	const struct off_op *a = x, *b = y;
	return a->obj < b->obj ? -1 : a->obj > b->obj;
}

static int idx_by_t0(const void *x, const void *y)
{
	const struct off_op *a = &g_sort_ops[*(const uint32_t *)x], *b = &g_sort_ops[*(const uint32_t *)y];
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->obj < b->obj ? -1 : a->obj > b->obj;
}

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
	x->ops = xmalloc((no ? no : 1) * sizeof *x->ops);
	for (size_t i = 0; i < no; i++) {
		struct obj *ob = &objs[i];
		ob->cookie_tid = ob->trace_id;
		ob->trace_id = i + 1; /* unique, in file order: arm_prepare keeps this order */
		int64_t slot, bytes;
		if (!jv_int(&ob->slot_offset, 0, &slot) || slot < 0)
			continue; /* no slot_offset: takes no part */
		jv_int(&ob->bytes, 0, &bytes);
		if (bytes < 0)
			bytes = 0;
		int64_t pay = (bytes + align - 1) / align * align;
		int64_t t1 = ob->end + SLACK_NS, t0 = (ob->start != NO_TS ? ob->start : ob->end) - SLACK_NS;
		const char *op = ob->op ? ob->op : "";
		x->ops[x->nops] = (struct off_op){t0, t1, (uint32_t)i, !strcmp(op, "store") ? 1 : !strcmp(op, "load") ? 2 : 0};
		bx[x->nops] = (struct base_ix){slot, slot + hdr + pay, (uint32_t)x->nops};
		x->nops++;
	}
	qsort(bx, x->nops, sizeof *bx, base_cmp);
	/* ops regrouped by base (file order within a base), then the slots */
	struct off_op *ops = xmalloc((x->nops ? x->nops : 1) * sizeof *ops);
	x->slots = xcalloc(x->nops ? x->nops : 1, sizeof *x->slots);
	for (size_t k = 0; k < x->nops; k++) {
		ops[k] = x->ops[bx[k].op];
		if (!x->nslots || x->slots[x->nslots - 1].base != bx[k].base)
			x->slots[x->nslots++] = (struct off_slot){.base = bx[k].base, .end = bx[k].end,
								   .first = (uint32_t)k, .last_ts = INT64_MIN};
		struct off_slot *sl = &x->slots[x->nslots - 1];
		sl->n++;
		if (bx[k].end > sl->end)
			sl->end = bx[k].end;
	}
	free(x->ops);
	x->ops = ops;
	free(bx);
	g_sort_ops = x->ops;
	for (size_t s = 0; s < x->nslots; s++) {
		struct off_slot *sl = &x->slots[s];
		qsort(x->ops + sl->first, sl->n, sizeof *x->ops, op_by_slot);
		sl->by_t0 = xmalloc(sl->n * sizeof *sl->by_t0);
		for (uint32_t k = 0; k < sl->n; k++)
			sl->by_t0[k] = sl->first + k;
		qsort(sl->by_t0, sl->n, sizeof *sl->by_t0, idx_by_t0);
	}
	g_sort_ops = NULL;
}

/* The op of slot sl whose window holds ts: the first in file order whose
 * direction is dir, else the first; -1 when no window holds ts. */
static int64_t pick(struct offset_index *x, struct off_slot *sl, int64_t ts, int dir)
{
	int64_t best = -1, best_dir = -1;
	if (ts < sl->last_ts) { /* out of time order: look at every op of the slot */
		for (uint32_t k = sl->first; k < sl->first + sl->n; k++) {
			const struct off_op *op = &x->ops[k];
			if (op->t0 > ts || op->t1 < ts)
				continue;
			if (best < 0)
				best = k;
			if (best_dir < 0 && dir && op->dir == dir)
				best_dir = k;
		}
		return best_dir >= 0 ? best_dir : best;
	}
	sl->last_ts = ts;
	while (sl->cursor < sl->n && x->ops[sl->by_t0[sl->cursor]].t0 <= ts)
		*(uint32_t *)vec_push(&sl->open, sizeof(uint32_t)) = sl->by_t0[sl->cursor++];
	uint32_t *open = sl->open.v;
	size_t m = 0;
	for (size_t k = 0; k < sl->open.n; k++) {
		const struct off_op *op = &x->ops[open[k]];
		if (op->t1 < ts)
			continue; /* closed for good: later commands are later */
		open[m++] = open[k];
		if (best < 0 || open[k] < best) /* ops of a slot are in file order */
			best = open[k];
		if (dir && op->dir == dir && (best_dir < 0 || open[k] < best_dir))
			best_dir = open[k];
	}
	sl->open.n = m;
	return best_dir >= 0 ? best_dir : best;
}

void arm_offset_attribute(struct arm *a, struct cmd *c, int dir, int64_t lba_flag)
{
	struct offset_index *x = a->offx;
	uint64_t cookie = c->user_data >> 32;
	c->trace_id = 0;
	if (cookie)
		a->off_cookie++;
	if (!(c->flags & CF_SLBA)) { /* no byte address (KV): nothing to attribute by */
		a->off_unmatched++;
		return;
	}
	int64_t lba = c->io_bytes && c->nlb ? (int64_t)(c->io_bytes / c->nlb) : lba_flag;
	int64_t len = c->io_bytes ? (int64_t)c->io_bytes : c->nlb ? (int64_t)c->nlb * lba : (int64_t)c->data_len;
	int64_t off, end;
	if (c->slba > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)c->slba, lba, &off) ||
	    __builtin_add_overflow(off, len, &end)) {
		a->off_unmatched++;
		return;
	}
	/* the slot with the greatest base <= off */
	size_t lo = 0, hi = x->nslots;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->slots[mid].base <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || off >= x->slots[lo - 1].end) {
		a->off_unmatched++;
		return;
	}
	struct off_slot *sl = &x->slots[lo - 1];
	if (end > sl->end) { /* past the slot: a bio merged across two objects, or into a gap */
		if (lo < x->nslots && x->slots[lo].base < end)
			a->off_cross++;
		else
			a->off_gap++;
		return;
	}
	int64_t k = pick(x, sl, c->ts, dir);
	if (k < 0) {
		a->off_unmatched++;
		return;
	}
	const struct obj *ob = &VEC_AT(&a->objs, struct obj, x->ops[k].obj);
	c->trace_id = (uint32_t)ob->trace_id;
	a->off_unique++;
	if (cookie) {
		a->off_total++;
		if (ob->cookie_tid == cookie)
			a->off_agree++;
	}
}

void arm_offset_free(struct arm *a)
{
	struct offset_index *x = a->offx;
	if (!x)
		return;
	for (size_t s = 0; s < x->nslots; s++) {
		free(x->slots[s].by_t0);
		vec_free(&x->slots[s].open);
	}
	free(x->slots);
	free(x->ops);
	free(x);
	a->offx = NULL;
}
