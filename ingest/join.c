/* join.c — turn the loaded records of one arm into slices: completion pairing,
 * occurrence segmentation, header/payload roles, rebase, durations and lanes.
 * The rules are the reference converter's (see docs/formats.md), with the
 * deviations written down there. */
#include "model.h"
#include "../lib/u64map.h"
#include <stdlib.h>
#include <string.h>

/* ---- sorting ------------------------------------------------------------ */

/* Stable sort of idx[0..n) by key[idx[i]] (LSD radix, 11-bit digits over
 * key - min). Input that is already in order costs one pass. */
static void sort_by_key(uint32_t *idx, size_t n, const int64_t *key)
{
	if (n < 2)
		return;
	int sorted = 1;
	int64_t mn = key[idx[0]], mx = mn;
	for (size_t i = 1; i < n; i++) {
		int64_t k = key[idx[i]];
		if (k < key[idx[i - 1]])
			sorted = 0;
		if (k < mn) mn = k;
		if (k > mx) mx = k;
	}
	if (sorted)
		return;
	uint64_t span = (uint64_t)mx - (uint64_t)mn;
	uint32_t *tmp = xmalloc(n * sizeof *tmp);
	size_t cnt[2048];
	for (int shift = 0; shift < 64 && (span >> shift); shift += 11) {
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(((uint64_t)key[idx[i]] - (uint64_t)mn) >> shift) & 2047]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(((uint64_t)key[idx[i]] - (uint64_t)mn) >> shift) & 2047]++] = idx[i];
		memcpy(idx, tmp, n * sizeof *idx);
	}
	free(tmp);
}

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
	/* segment tree of each lane's last end; first fit = leftmost leaf < begin */
	size_t cap = 1, nl = 0;
	int64_t *mn = xmalloc(2 * sizeof *mn);
	mn[0] = mn[1] = INT64_MAX;
	for (size_t k = 0; k < n; k++) {
		int64_t beg = ix[k].b, end = ix[k].e;
		size_t lane;
		if (mn[1] < beg) {
			size_t i = 1;
			while (i < cap)
				i = mn[2 * i] < beg ? 2 * i : 2 * i + 1;
			lane = i - cap;
		} else {
			lane = nl++;
			if (lane >= cap) {
				size_t ncap = cap * 2;
				int64_t *nm = xmalloc(2 * ncap * sizeof *nm);
				for (size_t i = 0; i < ncap; i++)
					nm[ncap + i] = i < cap ? mn[cap + i] : INT64_MAX;
				for (size_t i = ncap - 1; i >= 1; i--)
					nm[i] = nm[2 * i] < nm[2 * i + 1] ? nm[2 * i] : nm[2 * i + 1];
				free(mn);
				mn = nm;
				cap = ncap;
			}
		}
		size_t i = cap + lane;
		mn[i] = end;
		for (i /= 2; i >= 1; i /= 2)
			mn[i] = mn[2 * i] < mn[2 * i + 1] ? mn[2 * i] : mn[2 * i + 1];
		lane_out[ix[k].pos] = (uint32_t)lane;
	}
	free(mn);
	free(ix);
	return (int)nl;
}

/* ---- the join -------------------------------------------------------------- */

static int jv_int(const struct jv *v, int64_t dflt, int64_t *out)
{
	switch (v->t) {
	case JV_INT: case JV_BOOL: *out = v->i; return 1;
	case JV_UINT: *out = (int64_t)v->u; return 1;
	case JV_REAL: *out = (int64_t)v->d; return 1;
	default: *out = dflt; return 0;
	}
}

static struct u64map g_rank; /* trace_id -> first-appearance rank (for qsort) */
static const struct obj *g_objs;

static int obj_order(const void *x, const void *y)
{
	const struct obj *a = x, *b = y;
	uint32_t ra = 0, rb = 0;
	map_get(&g_rank, a->trace_id, &ra);
	map_get(&g_rank, b->trace_id, &rb);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->line < b->line ? -1 : 1;
}

void arm_join(struct arm *a, const struct ingest_opts *o)
{
	struct cmd *cmds = a->cmds.v;
	struct cmp *cmps = a->cmps.v;
	size_t nc = a->cmds.n, np = a->cmps.n, no = a->objs.n;

	/* 1. semantic occurrences: group by trace_id in first-appearance order,
	 * each group by op end */
	struct u64map rank = {0};
	for (size_t i = 0; i < no; i++) {
		int fresh;
		uint32_t *v = map_slot(&rank, VEC_AT(&a->objs, struct obj, i).trace_id, &fresh);
		if (fresh)
			*v = (uint32_t)rank.n - 1;
		else
			a->dup_trace_id++;
	}
	g_rank = rank;
	qsort(a->objs.v, no, sizeof(struct obj), obj_order);
	struct obj *objs = a->objs.v;
	g_objs = objs;
	struct u64map first_obj = {0}; /* trace_id -> index of its first occurrence */
	for (size_t i = 0; i < no; i++) {
		int fresh;
		uint32_t *v = map_slot(&first_obj, objs[i].trace_id, &fresh);
		if (fresh)
			*v = (uint32_t)i;
		size_t f = *v;
		size_t cnt = 1;
		while (f + cnt < no && objs[f + cnt].trace_id == objs[i].trace_id)
			cnt++;
		objs[i].occurrence = cnt > 1 ? (int32_t)(i - f) : -1;
		objs[i].first_cmd = objs[i].last_cmd = -1;
		objs[i].n_cmds = 0;
	}
	{
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

	/* commands and completions in (ts, file order) */
	int64_t *key = xmalloc((nc > np ? nc : np ? np : 1) * sizeof *key);
	uint32_t *ci = xmalloc((nc ? nc : 1) * sizeof *ci);
	uint32_t *pi = xmalloc((np ? np : 1) * sizeof *pi);
	for (size_t i = 0; i < nc; i++) {
		ci[i] = (uint32_t)i;
		key[i] = cmds[i].ts;
	}
	sort_by_key(ci, nc, key);
	for (size_t i = 0; i < np; i++) {
		pi[i] = (uint32_t)i;
		key[i] = cmps[i].ts;
	}
	sort_by_key(pi, np, key);
	free(key);

	/* 2. completion pairing: per user_data, each completion (in time order)
	 * takes the latest not-yet-paired command with cmd.ts <= cmp.ts. Both
	 * sides are put in (user_data, time) order by a stable radix sort of the
	 * time orders above, then merged with a stack per user_data: sequential
	 * memory access only, and no table as large as the capture. */
	if (np) {
		uint32_t *cu = xmalloc((nc ? nc : 1) * sizeof *cu), *pu = xmalloc(np * sizeof *pu);
		int64_t *uk = xmalloc((nc > np ? nc : np) * sizeof *uk);
		memcpy(cu, ci, nc * sizeof *cu);
		memcpy(pu, pi, np * sizeof *pu);
		/* unsigned order as signed order: flip the top bit */
		for (size_t i = 0; i < nc; i++)
			uk[i] = (int64_t)(cmds[i].user_data ^ (1ull << 63));
		sort_by_key(cu, nc, uk);
		for (size_t i = 0; i < np; i++)
			uk[i] = (int64_t)(cmps[i].user_data ^ (1ull << 63));
		sort_by_key(pu, np, uk);
		free(uk);
		uint32_t *stack = xmalloc((nc ? nc : 1) * sizeof *stack);
		size_t x = 0, y = 0;
		while (y < np) {
			uint64_t ud = cmps[pu[y]].user_data;
			while (x < nc && cmds[cu[x]].user_data < ud)
				x++;
			size_t sp = 0;
			for (; y < np && cmps[pu[y]].user_data == ud; y++) {
				int64_t cts = cmps[pu[y]].ts;
				while (x < nc && cmds[cu[x]].user_data == ud && cmds[cu[x]].ts <= cts)
					stack[sp++] = cu[x++];
				if (sp) {
					struct cmd *c = &cmds[stack[--sp]];
					int64_t d = cts - c->ts;
					c->dur = d < 1 ? 1 : d;
					c->flags |= CF_REAL;
				} else {
					a->cmp_unpaired++;
				}
			}
		}
		free(stack);
		free(cu);
		free(pu);
	}
	free(pi);
	/* completions are spent: keep their earliest time (for the rebase) and
	 * their count, give their memory back before the rest of the join */
	int64_t cmp_min = INT64_MAX;
	for (size_t i = 0; i < np; i++)
		if (cmps[i].ts < cmp_min)
			cmp_min = cmps[i].ts;
	free(a->cmps.v);
	a->cmps.v = NULL;
	a->cmps.cap = 0; /* .n stays: the count of nvme_cmp lines */
	cmps = NULL;

	/* 3. occurrence segmentation: a tagged command belongs to the first
	 * occurrence whose op end is >= its submit time (else the last); commands
	 * are visited in time order, so each trace_id's cursor only moves on */
	uint32_t *cur = xmalloc((no ? no : 1) * sizeof *cur); /* per first occurrence */
	uint32_t *grp_n = xcalloc(no ? no : 1, sizeof *grp_n);
	for (size_t i = 0; i < no; i++) {
		uint32_t f = 0;
		map_get(&first_obj, objs[i].trace_id, &f);
		grp_n[f]++;
		cur[i] = 0;
	}
	for (size_t q = 0; q < nc; q++) {
		struct cmd *c = &cmds[ci[q]];
		uint32_t f;
		if (c->trace_id == 0 || !map_get(&first_obj, c->trace_id, &f))
			continue;
		while (cur[f] + 1 < grp_n[f] && c->ts > objs[f + cur[f]].end)
			cur[f]++;
		struct obj *ob = &objs[f + cur[f]];
		c->obj = (int32_t)(f + cur[f]);
		if (ob->first_cmd < 0)
			ob->first_cmd = (int32_t)ci[q];
		ob->last_cmd = (int32_t)ci[q];
		ob->n_cmds++;
	}
	free(cur);
	free(grp_n);

	/* 4. LBA size: the flag, else 4096 or 512, whichever makes store headers
	 * (slba * lba == slot_offset) match; sampled on the first 50 stores */
	int64_t cand[3];
	int nca = 0;
	int64_t cl[3] = {o->lba_bytes, 4096, 512};
	for (int i = 0; i < 3; i++) {
		int dup = 0;
		for (int k = 0; k < nca; k++)
			dup |= cand[k] == cl[i];
		if (!dup)
			cand[nca++] = cl[i];
	}
	int score[3] = {0, 0, 0}, sampled = 0;
	/* commands of each object in ts order: walk ci (sorted by tid, ts) */
	uint32_t *obj_cmds_start = xcalloc(no + 1, sizeof *obj_cmds_start); /* CSR, time order */
	uint32_t *obj_cmds = xmalloc((nc ? nc : 1) * sizeof *obj_cmds);
	for (size_t i = 0; i < nc; i++)
		if (cmds[i].obj >= 0)
			obj_cmds_start[cmds[i].obj + 1]++;
	for (size_t i = 0; i < no; i++)
		obj_cmds_start[i + 1] += obj_cmds_start[i];
	{
		uint32_t *fill = xmalloc((no + 1) * sizeof *fill);
		memcpy(fill, obj_cmds_start, (no + 1) * sizeof *fill);
		for (size_t q = 0; q < nc; q++)
			if (cmds[ci[q]].obj >= 0)
				obj_cmds[fill[cmds[ci[q]].obj]++] = ci[q];
		free(fill);
	}
	for (size_t i = 0; i < no && sampled < 50; i++) {
		if (!objs[i].op || strcmp(objs[i].op, "store") || !objs[i].n_cmds)
			continue;
		int64_t slot;
		jv_int(&objs[i].slot_offset, -1, &slot);
		for (int k = 0; k < nca; k++) {
			for (uint32_t q = obj_cmds_start[i]; q < obj_cmds_start[i + 1]; q++) {
				const struct cmd *c = &cmds[obj_cmds[q]];
				int64_t s = (c->flags & CF_SLBA) ? (int64_t)c->slba : 0;
				if (s * cand[k] == slot) {
					score[k]++;
					break;
				}
			}
		}
		sampled++;
	}
	a->lba_bytes = o->lba_bytes;
	if (sampled) {
		int best = 0;
		for (int k = 1; k < nca; k++)
			if (score[k] > score[best])
				best = k;
		if (score[best] == 0)
			arm_warn(a, "header classification: no store command matches slot_offset under any "
				    "candidate LBA size; headers will read as payload");
		else if (cand[best] != o->lba_bytes) {
			arm_warn(a, "--lba-bytes %lld matches no headers; inferred lba_bytes=%lld (matched "
				    "%d/%d sampled stores) and using it",
				 (long long)o->lba_bytes, (long long)cand[best], score[best], sampled);
			a->lba_bytes = cand[best];
		}
	}

	/* 5. rebase: the earliest timestamp of any kind becomes t=0 */
	int64_t mn = INT64_MAX;
	for (size_t i = 0; i < nc; i++)
		if (cmds[i].ts < mn) mn = cmds[i].ts;
	if (cmp_min < mn)
		mn = cmp_min;
	for (size_t i = 0; i < no; i++) {
		if (objs[i].end < mn) mn = objs[i].end;
		if (objs[i].start != NO_TS && objs[i].start < mn) mn = objs[i].start;
	}
	struct serving *sv = a->serving.v;
	for (size_t i = 0; i < a->serving.n; i++) {
		if (sv[i].start < mn) mn = sv[i].start;
		if (sv[i].end < mn) mn = sv[i].end;
	}
	a->min_ts = mn == INT64_MAX ? 0 : mn;
	a->base_ns = o->no_rebase ? 0 : a->min_ts;
	int64_t base = a->base_ns;

	/* 6. object spans */
	size_t nspan = 0;
	int64_t *sb = xmalloc((no ? no : 1) * sizeof *sb), *se = xmalloc((no ? no : 1) * sizeof *se);
	uint32_t *spos = xmalloc((no ? no : 1) * sizeof *spos), *slane = xmalloc((no ? no : 1) * sizeof *slane);
	size_t n_store_spans = 0;
	for (size_t i = 0; i < no; i++) {
		struct obj *ob = &objs[i];
		int64_t end = ob->end - base;
		int has_start = ob->start != NO_TS;
		int64_t start = ob->start - base;
		if (ob->n_cmds) {
			int64_t first = cmds[ob->first_cmd].ts - base, last = cmds[ob->last_cmd].ts - base;
			ob->b = has_start && start < first ? start : first;
			if (end < last) {
				a->clock_anomalies++;
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
		if (ob->is_span) {
			sb[nspan] = ob->b;
			se[nspan] = ob->e;
			spos[nspan++] = (uint32_t)i;
			if (ob->op && !strcmp(ob->op, "store"))
				n_store_spans++;
		}
	}
	a->nlanes_obj = assign_lanes(nspan, sb, se, slane);
	for (size_t k = 0; k < nspan; k++)
		objs[spos[k]].lane = slane[k];
	free(sb); free(se); free(spos); free(slane);

	/* flows: object -> first command -> last command */
	for (size_t i = 0; i < no; i++) {
		const struct obj *ob = &objs[i];
		if (!ob->is_span || !ob->n_cmds)
			continue;
		cmds[ob->last_cmd].flow = 2;
		if (ob->first_cmd != ob->last_cmd)
			cmds[ob->first_cmd].flow = 1;
	}

	/* 7. header / payload of store objects; byte totals */
	for (size_t i = 0; i < nc; i++) {
		struct cmd *c = &cmds[i];
		if (c->trace_id == 0)
			a->untagged_bytes += c->data_len;
		else
			a->tagged_bytes += c->data_len;
		if (c->obj < 0)
			continue;
		const struct obj *ob = &objs[c->obj];
		if (!ob->op || strcmp(ob->op, "store"))
			continue;
		int64_t slot, s = (c->flags & CF_SLBA) ? (int64_t)c->slba : 0;
		jv_int(&ob->slot_offset, -1, &slot);
		if (s * a->lba_bytes == slot) {
			c->kind = CK_HEADER;
			a->header_cmds++;
		} else {
			c->kind = CK_PAYLOAD;
		}
	}
	if (n_store_spans && a->header_cmds == 0)
		arm_warn(a, "0 header commands classified across %zu stores: check --lba-bytes", n_store_spans);

	/* 8. command durations (real, else nominal capped at 0.9 x the gap to the
	 * next command of the role) and lanes per role */
	{ /* time order, grouped by role (stable) */
		size_t start[NROLES + 1] = {0};
		for (size_t i = 0; i < nc; i++)
			start[cmds[i].role + 1]++;
		for (int r = 0; r < NROLES; r++)
			start[r + 1] += start[r];
		uint32_t *byrole = xmalloc((nc ? nc : 1) * sizeof *byrole);
		for (size_t q = 0; q < nc; q++)
			byrole[start[cmds[ci[q]].role]++] = ci[q];
		free(ci);
		ci = byrole;
	}
	int64_t *cb = xmalloc((nc ? nc : 1) * sizeof *cb), *ce = xmalloc((nc ? nc : 1) * sizeof *ce);
	uint32_t *cln = xmalloc((nc ? nc : 1) * sizeof *cln);
	for (size_t k = 0; k < nc;) {
		int role = cmds[ci[k]].role;
		size_t e = k;
		while (e < nc && cmds[ci[e]].role == role)
			e++;
		for (size_t q = k; q < e; q++) {
			struct cmd *c = &cmds[ci[q]];
			if (!(c->flags & CF_REAL)) {
				int64_t d = o->nominal_dur_ns;
				if (q + 1 < e) {
					int64_t gap = cmds[ci[q + 1]].ts - c->ts;
					int64_t cap = (int64_t)((double)gap * 0.9);
					if (cap < d)
						d = cap;
					if (d < 1)
						d = 1;
				}
				c->dur = d;
			}
			cb[q - k] = c->ts - base;
			ce[q - k] = c->ts - base + c->dur;
		}
		a->nlanes_role[role] = assign_lanes(e - k, cb, ce, cln);
		for (size_t q = k; q < e; q++)
			cmds[ci[q]].lane = cln[q - k];
		k = e;
	}
	free(cb); free(ce); free(cln);

	/* 9. serving spans */
	size_t ns = a->serving.n;
	int64_t *vb = xmalloc((ns ? ns : 1) * sizeof *vb), *ve = xmalloc((ns ? ns : 1) * sizeof *ve);
	uint32_t *vl = xmalloc((ns ? ns : 1) * sizeof *vl);
	for (size_t i = 0; i < ns; i++) {
		sv[i].start -= base;
		sv[i].end -= base;
		if (sv[i].end <= sv[i].start)
			sv[i].end = sv[i].start + 1;
		vb[i] = sv[i].start;
		ve[i] = sv[i].end;
	}
	a->nlanes_srv = assign_lanes(ns, vb, ve, vl);
	for (size_t i = 0; i < ns; i++)
		sv[i].lane = vl[i];
	free(vb); free(ve); free(vl);

	if (strcmp(a->ebpf_f.path, "-") && !nc)
		arm_warn(a, "%s has no nvme_cmd lines: was the tracer attached (its stderr says which probes were on)?",
			 a->ebpf_f.path);
	if (strcmp(a->sem_f.path, "-") && !no)
		arm_warn(a, "%s has no semantic records (was LMCACHE_KVIO_TRACE set for the run?)", a->sem_f.path);
	if (a->clock_anomalies)
		arm_warn(a, "%llu semantic op end(s) earlier than their last device command: impossible on "
			    "one host/boot; check inputs", (unsigned long long)a->clock_anomalies);
	if (a->dup_trace_id)
		arm_warn(a, "%llu duplicate trace_id(s): multiple producer instances sharing one trace file? "
			    "spans were segmented by op-end time", (unsigned long long)a->dup_trace_id);

	free(ci);
	free(obj_cmds_start);
	free(obj_cmds);
	map_free(&rank);
	map_free(&first_obj);
}
