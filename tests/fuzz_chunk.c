/* fuzz_chunk.c — libFuzzer target (make fuzz): a command chunk blob (db/chunk.h) against a
 * synthetic directory, through the codec the readers use.
 *
 * The input is a chunk's bytes. They are checked twice as chunk 0 of a small directory
 * (names with a hole, slice and counter tracks with holes, three KV rows): as they are (the
 * header and the checksum), then re-sealed as a forger would (the checksum made to match,
 * the directory's n and extent taken from the bytes), so that the value checks behind the
 * checksum are what the fuzzer explores. A chunk chunk_check passes is read whole, every
 * column of every command through col_key (kvio_cmd's accessor, db/kvio_int.h) and the
 * export's lookups (its lanes by track id, its names by name id), and the promises
 * chunk_check makes are asserted (a broken one aborts: a finding): tracks are slice tracks,
 * slba tracks counter tracks, names exist, KV ids are rows, ts + dur does not overflow, the
 * extent is the directory's; chunk_encode of the view gives back the same arrays.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined and db/chunk.c (without
 * KVIO_FUZZ_NO_SUMS: the real checksum, re-sealed here). */
#include "../db/kvio_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define NNAMES 4
#define NTRACKS 10

static char *names[NNAMES] = {"write", "read", NULL, "flush"};
static int64_t upid[NTRACKS] = {-1, 1, 1, 2, -1, 1, 2, -1, 3, -1};
static uint8_t kind[NTRACKS] = {TRK_NONE,    TRK_SLICE,   TRK_SLICE, TRK_SLICE, TRK_SLICE,
				TRK_COUNTER, TRK_COUNTER, TRK_NONE,  TRK_SLICE, TRK_COUNTER};

#define PROMISE(c)                                                                                   \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			fprintf(stderr, "fuzz_chunk: chunk_check passed a chunk that breaks: %s\n", #c); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

/* The extent of v's commands as kvio_cmd_range holds it (what a careful forger writes); 0 when a
 * command is no span (the check fails on it before the extent). */
static int extent_of(const struct chunk_view *v, struct extent *e)
{
	*e = (struct extent){INT64_MAX, INT64_MIN, 0, 0};
	int64_t dmin = INT64_MAX;
	for (uint32_t i = 0; i < v->n; i++) {
		if (v->ts[i] < 0 || v->dur[i] < 0 || v->ts[i] > INT64_MAX - v->dur[i])
			return 0;
		e->ts_min = v->ts[i] < e->ts_min ? v->ts[i] : e->ts_min;
		e->end_max = v->ts[i] + v->dur[i] > e->end_max ? v->ts[i] + v->dur[i] : e->end_max;
		if (v->trace_id[i] && v->trace_id[i] < dmin)
			dmin = v->trace_id[i];
		if (v->trace_id[i] > e->tid_max)
			e->tid_max = v->trace_id[i];
	}
	e->tid_min = e->tid_max ? dmin : 0;
	return 1;
}

static volatile uint64_t sink; /* unsigned: sums of anything wrap, never overflow */

/* Every value of a checked chunk, the ways the readers take them. */
static void read_all(const struct store *s, const struct chunk_view *v, int64_t first)
{
	static uint32_t lanes[NTRACKS]; /* the export's lanes by track id */
	for (uint32_t i = 0; i < v->n; i++) {
		PROMISE(v->ts[i] >= 0 && v->dur[i] >= 0 && v->ts[i] <= INT64_MAX - v->dur[i]);
		PROMISE(v->track[i] < s->d.ntracks && s->d.track_kind[v->track[i]] == TRK_SLICE);
		PROMISE(!v->slba_track[i] || (v->slba_track[i] < s->d.ntracks && s->d.track_kind[v->slba_track[i]] == TRK_COUNTER));
		PROMISE(v->name[i] < s->d.nnames && s->d.names[v->name[i]]);
		PROMISE(!(v->flags[i] & ~CHF_ALL) && !((v->flags[i] & CHF_HEADER) && (v->flags[i] & CHF_PAYLOAD)));
		PROMISE(!(v->flags[i] & CHF_KV) || (v->kv_id[i] >= 1 && v->kv_id[i] <= s->d.nkv));
		lanes[v->track[i]]++;
		sink += strlen(s->d.names[v->name[i]]);
		for (int col = C_ID; col <= C_TS_END; col++) {
			if (col >= C_KEY_HEX && col <= C_VALUE_LEN)
				continue; /* kvio_cmd_kv's rows: fuzz_db reads them */
			struct key k = col_key(s, v, first, i, col);
			sink += k.t == SQLITE_INTEGER ? (uint64_t)k.i : k.t == SQLITE_TEXT ? strlen(k.s) + (uint64_t)k.len
				: k.t == SQLITE_FLOAT ? (uint64_t)(k.d > 0) : 0;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > chunk_size(CHUNK_ROWS) + 64) /* chunk_read never reads more */
		return 0;
	unsigned char *b = malloc(size ? size : 1); /* 16-byte aligned, as sqlite3_malloc's are */
	memcpy(b, data, size);
	int64_t first_ids[2] = {1, 8193};
	int64_t first = first_ids[size & 1];
	uint32_t n = 0;
	if (size >= 8)
		memcpy(&n, b + 4, 4);
	struct dbdir d = {0};
	uint32_t dn = n;
	struct extent ext = {0};
	d.first = &first;
	d.n = &dn;
	d.nchunks = 1;
	d.ext = &ext;
	d.names = names;
	d.nnames = NNAMES;
	d.track_upid = upid;
	d.track_kind = kind;
	d.ntracks = NTRACKS;
	d.nkv = 3;
	struct store s;
	memset(&s, 0, sizeof s);
	s.d = d;
	struct chunk_view v;
	char why[256];

	/* as they are: the header, the checksum (and the directory's extent, here a wrong one) */
	if (chunk_map(b, size, &v) == 0) {
		PROMISE(chunk_size(v.n) == size && v.n <= CHUNK_ROWS);
		if (v.n) /* the arrays' last elements are inside the blob */
			sink += (uint64_t)v.ts[v.n - 1] + (uint64_t)v.dur[v.n - 1] + (uint64_t)v.slba[v.n - 1] + v.track[v.n - 1] +
				v.data_len[v.n - 1] + v.trace_id[v.n - 1] + v.slba_track[v.n - 1] + v.kv_id[v.n - 1] +
				v.name[v.n - 1] + v.flags[v.n - 1];
	}
	if (chunk_check(b, size, &d, 0, &v, why, sizeof why) == 0)
		read_all(&s, &v, first);

	/* re-sealed, with the directory's extent from its commands: the value checks */
	if (size >= CHUNK_HDR) {
		uint64_t sum = XXH3_64bits_withSeed(b + CHUNK_HDR, size - CHUNK_HDR, (uint64_t)first);
		memcpy(b + 8, &sum, 8);
		struct chunk_view m;
		if (chunk_map(b, size, &m) == 0 && extent_of(&m, &ext))
			;
		if (chunk_check(b, size, &d, 0, &v, why, sizeof why) == 0) {
			struct extent e2;
			PROMISE(extent_of(&v, &e2) && !memcmp(&e2, &ext, sizeof e2));
			read_all(&s, &v, first);
			/* the codec's round trip: the same arrays, a chunk that passes again */
			unsigned char *out = malloc(size);
			PROMISE(chunk_encode(&v, first, out) == size);
			struct chunk_view w;
			PROMISE(chunk_check(out, size, &d, 0, &w, why, sizeof why) == 0);
			PROMISE(w.n == v.n && !memcmp(w.ts, v.ts, 8 * (size_t)v.n) && !memcmp(w.dur, v.dur, 8 * (size_t)v.n) &&
				!memcmp(w.slba, v.slba, 8 * (size_t)v.n) && !memcmp(w.track, v.track, 4 * (size_t)v.n) &&
				!memcmp(w.data_len, v.data_len, 4 * (size_t)v.n) &&
				!memcmp(w.trace_id, v.trace_id, 4 * (size_t)v.n) &&
				!memcmp(w.slba_track, v.slba_track, 4 * (size_t)v.n) && !memcmp(w.kv_id, v.kv_id, 4 * (size_t)v.n) &&
				!memcmp(w.name, v.name, 2 * (size_t)v.n) && !memcmp(w.flags, v.flags, v.n));
			free(out);
		} else {
			PROMISE(why[0]); /* a refusal says why */
		}
	}
	free(b);
	return 0;
}
