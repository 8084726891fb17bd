/* chunk.c — the command chunk codec: the one place that encodes a chunk
 * (kvio-ingest, the .pftrace import), decodes one (kvio_cmd, the export) and
 * checks one before it is believed (chunk_check). The layout is in chunk.h. */
#include "chunk.h"
#include "dir.h"
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

static uint64_t chunk_sum(const unsigned char *p, size_t len, int64_t first)
{
	return XXH3_64bits_withSeed(p + CHUNK_HDR, len - CHUNK_HDR, (uint64_t)first);
}

/* KVIO_FUZZ_NO_SUMS: a switch of the libFuzzer builds only (tests/fuzz_db.c; `make fuzz`
 * defines it with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, and without that it is an error):
 * every chunk's checksum passes, so that the fuzzer's bytes reach the checks behind it (the
 * header, each command's values, the extent). valid.c has the same switch for kvio_sum. */
#ifdef KVIO_FUZZ_NO_SUMS
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#error "KVIO_FUZZ_NO_SUMS is for libFuzzer builds (make fuzz) only"
#endif
#define chunk_sum_ok(b, len, first, sum) ((void)(b), (void)(len), (void)(first), (void)(sum), 1)
#else
#define chunk_sum_ok(b, len, first, sum) (chunk_sum(b, len, first) == (sum))
#endif

int chunk_map(const void *b, size_t len, struct chunk_view *v)
{
	const unsigned char *p = b;
	uint32_t magic, n;
	if (len < CHUNK_HDR)
		return -1;
	memcpy(&magic, p, 4);
	memcpy(&n, p + 4, 4);
	if (magic != CHUNK_MAGIC || n > CHUNK_ROWS || chunk_size(n) != len)
		return -1;
	size_t o = CHUNK_HDR;
	v->n = n;
	v->ts = (const int64_t *)(p + o); o += chunk_al8((size_t)8 * n);
	v->dur = (const int64_t *)(p + o); o += chunk_al8((size_t)8 * n);
	v->slba = (const int64_t *)(p + o); o += chunk_al8((size_t)8 * n);
	v->track = (const uint32_t *)(p + o); o += chunk_al8((size_t)4 * n);
	v->data_len = (const uint32_t *)(p + o); o += chunk_al8((size_t)4 * n);
	v->trace_id = (const uint32_t *)(p + o); o += chunk_al8((size_t)4 * n);
	v->slba_track = (const uint32_t *)(p + o); o += chunk_al8((size_t)4 * n);
	v->kv_id = (const uint32_t *)(p + o); o += chunk_al8((size_t)4 * n);
	v->name = (const uint16_t *)(p + o); o += chunk_al8((size_t)2 * n);
	v->flags = (const uint8_t *)(p + o);
	return 0;
}

/* What is wrong with command i of v (NULL: nothing), its values against d. */
static const char *cmd_wrong(const struct chunk_view *v, uint32_t i, const struct dbdir *d, char *buf, size_t n)
{
	uint8_t f = v->flags[i];
	if (v->ts[i] < 0 || v->dur[i] < 0 || v->ts[i] > INT64_MAX - v->dur[i])
		snprintf(buf, n, "ts %lld, dur %lld are not a span", (long long)v->ts[i], (long long)v->dur[i]);
	else if (v->track[i] >= d->ntracks || d->track_kind[v->track[i]] != TRK_SLICE)
		snprintf(buf, n, "track %u is not a slice track (tracks are 1..%zu)", v->track[i],
			 d->ntracks ? d->ntracks - 1 : 0);
	else if (v->slba_track[i] && (v->slba_track[i] >= d->ntracks || d->track_kind[v->slba_track[i]] != TRK_COUNTER))
		snprintf(buf, n, "slba counter track %u is not a counter track", v->slba_track[i]);
	else if (v->name[i] >= d->nnames || !d->names[v->name[i]])
		snprintf(buf, n, "name %u has no kvio_cmd_name row", v->name[i]);
	else if ((f & ~CHF_ALL) || ((f & CHF_HEADER) && (f & CHF_PAYLOAD)))
		snprintf(buf, n, "flags 0x%x are not kvio's", f);
	else if ((f & CHF_KV) && (v->kv_id[i] < 1 || v->kv_id[i] > d->nkv))
		snprintf(buf, n, "kv_id %u has no kvio_cmd_kv row (1..%lld)", v->kv_id[i], (long long)d->nkv);
	else
		return NULL;
	return buf;
}

/* Whether extent e is the one v's commands have (what kvio_cmd_range must say
 * for a window to skip the chunk rightly). */
static int extent_is(const struct extent *e, const struct chunk_view *v)
{
	int64_t tmin = INT64_MAX, emax = INT64_MIN, dmin = INT64_MAX, dmax = 0;
	for (uint32_t i = 0; i < v->n; i++) {
		tmin = v->ts[i] < tmin ? v->ts[i] : tmin;
		emax = v->ts[i] + v->dur[i] > emax ? v->ts[i] + v->dur[i] : emax;
		if (v->trace_id[i] && v->trace_id[i] < dmin)
			dmin = v->trace_id[i];
		if (v->trace_id[i] > dmax)
			dmax = v->trace_id[i];
	}
	return e->ts_min == tmin && e->end_max == emax && e->tid_max == dmax && (!dmax || e->tid_min == dmin);
}

int chunk_check(const void *b, size_t len, const struct dbdir *d, size_t k, struct chunk_view *v, char *why,
		size_t whylen)
{
	int64_t first = d->first[k];
	uint32_t magic = 0, n = 0;
	uint64_t sum = 0;
	if (len >= CHUNK_HDR) {
		memcpy(&magic, b, 4);
		memcpy(&n, (const unsigned char *)b + 4, 4);
		memcpy(&sum, (const unsigned char *)b + 8, 8);
	}
	if (len < CHUNK_HDR || magic != CHUNK_MAGIC)
		snprintf(why, whylen, "kvio_cmd_chunk %lld: not a chunk (no kvio header)", (long long)first);
	else if (n != d->n[k] || chunk_size(n) != len)
		snprintf(why, whylen, "kvio_cmd_chunk %lld: %zu bytes, %u commands in its header, %u in its row",
			 (long long)first, len, n, d->n[k]);
	else if (!chunk_sum_ok(b, len, first, sum))
		snprintf(why, whylen, "kvio_cmd_chunk %lld: checksum mismatch (damaged bytes)", (long long)first);
	else {
		chunk_map(b, len, v);
		char buf[160];
		for (uint32_t i = 0; i < n; i++) {
			const char *w = cmd_wrong(v, i, d, buf, sizeof buf);
			if (w) {
				snprintf(why, whylen, "kvio_cmd_chunk %lld: command %lld: %s", (long long)first,
					 (long long)(first + i), w);
				return -1;
			}
		}
		if (extent_is(&d->ext[k], v))
			return 0;
		snprintf(why, whylen, "kvio_cmd_chunk %lld: kvio_cmd_range does not hold its commands' extent",
			 (long long)first);
	}
	return -1;
}

size_t chunk_encode(const struct chunk_view *v, int64_t first, unsigned char *out)
{
	uint32_t n = v->n, magic = CHUNK_MAGIC;
	size_t len = chunk_size(n), o = CHUNK_HDR;
	memset(out, 0, len);
	memcpy(out, &magic, 4);
	memcpy(out + 4, &n, 4);
#define PUT(arr, sz) memcpy(out + o, v->arr, (size_t)(sz) * n); o += chunk_al8((size_t)(sz) * n)
	PUT(ts, 8); PUT(dur, 8); PUT(slba, 8);
	PUT(track, 4); PUT(data_len, 4); PUT(trace_id, 4); PUT(slba_track, 4); PUT(kv_id, 4);
	PUT(name, 2); PUT(flags, 1);
#undef PUT
	uint64_t sum = chunk_sum(out, len, first);
	memcpy(out + 8, &sum, 8);
	return len;
}
