/* cmdchunk.h — columnar storage of NVMe command slices inside SQLite.
 *
 * Commands are the volume of a capture (tens of millions of rows). Instead of
 * one B-tree row each, kvio stores them in kvio_cmd_chunk(id = first command
 * id, n, data BLOB), up to CHUNK_ROWS commands per row, column by column; the
 * virtual table kvio_cmd (module "kvio_cmds", in the extension) presents them
 * as ordinary rows. Ids inside a chunk are id .. id+n-1.
 *
 * Blob layout (native little-endian, every array 8-byte aligned):
 *   u32 magic, u32 n,
 *   i64 ts[n], i64 dur[n], i64 slba[n], u32 track_id[n], u32 data_len[n],
 *   u32 trace_id[n] (0 = NULL), u32 slba_track[n] (0 = NULL), u32 kv_id[n],
 *   u16 name[n] (index into kvio_cmd_name), u8 flags[n] (CHF_*). */
#ifndef KVIO_CMDCHUNK_H
#define KVIO_CMDCHUNK_H
#include <stddef.h>
#include <stdint.h>

#define CHUNK_MAGIC 0x4b43564bu /* "KVCK" */
#define CHUNK_ROWS 8192

#define CHF_SLBA 1    /* slba present */
#define CHF_REAL 2    /* real_dur */
#define CHF_KV 4      /* key_hex/key_len/value_len in kvio_cmd_kv (row kv_id) */
#define CHF_HEADER 8  /* role = 'header' */
#define CHF_PAYLOAD 16 /* role = 'payload' */

struct chunk_view {
	uint32_t n;
	const int64_t *ts, *dur, *slba;
	const uint32_t *track, *data_len, *trace_id, *slba_track, *kv_id;
	const uint16_t *name;
	const uint8_t *flags;
};

static inline size_t chunk_al8(size_t x) { return (x + 7) & ~(size_t)7; }

/* Bytes of a chunk holding n commands. */
static inline size_t chunk_size(uint32_t n)
{
	size_t s = 8;
	s += 3 * chunk_al8((size_t)8 * n);
	s += 5 * chunk_al8((size_t)4 * n);
	s += chunk_al8((size_t)2 * n);
	s += chunk_al8(n);
	return s;
}

/* Point v's arrays into blob b (of len bytes). 0 ok, -1 if malformed. */
static inline int chunk_map(const void *b, size_t len, struct chunk_view *v)
{
	const unsigned char *p = b;
	uint32_t magic, n;
	if (len < 8)
		return -1;
	__builtin_memcpy(&magic, p, 4);
	__builtin_memcpy(&n, p + 4, 4);
	if (magic != CHUNK_MAGIC || chunk_size(n) != len)
		return -1;
	size_t o = 8;
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

#endif
