/* chunk.h — columnar storage of NVMe command slices inside SQLite.
 *
 * Commands are the volume of a capture (tens of millions of rows). Instead of
 * one B-tree row each, kvio stores them in kvio_cmd_chunk(id = first command
 * id, n, data BLOB), up to CHUNK_ROWS commands per row, column by column; the
 * virtual table kvio_cmd (module "kvio_cmds", db/cmd_vtab.c) presents them
 * as ordinary rows. chunk.c is the one place that encodes and decodes them. Ids inside a chunk are id .. id+n-1.
 *
 * Blob layout (native little-endian, every array 8-byte aligned):
 *   u32 magic, u32 n, u64 checksum (XXH3-64 of the bytes after it, seeded
 *   with the chunk's id: a chunk's bytes damaged, cut, grown or swapped with
 *   another chunk's fail it),
 *   i64 ts[n], i64 dur[n], i64 slba[n], u32 track_id[n], u32 data_len[n],
 *   u32 trace_id[n] (0 = NULL), u32 slba_track[n] (0 = NULL), u32 kv_id[n],
 *   u16 name[n] (index into kvio_cmd_name), u8 flags[n] (CHF_*). */
#ifndef KVIO_CMDCHUNK_H
#define KVIO_CMDCHUNK_H
#include <stddef.h>
#include <stdint.h>

#define CHUNK_MAGIC 0x3343564bu /* "KVC3": kvio_schema_version 3 (2 had no checksum) */
#define CHUNK_HDR 16
#define CHUNK_ROWS 8192

/* A command's name (op_name: read, write, store, ...; kvio_cmd_name) is at most
 * this many bytes: kvio-ingest refuses a longer one (the line is malformed), the
 * .pftrace import keeps such a slice as a plain slice, and dir.c refuses a
 * database that holds one (a name is copied into every row that reads it). */
#define CHUNK_NAME_MAX 64

#define CHF_SLBA 1    /* slba present */
#define CHF_REAL 2    /* real_dur */
#define CHF_KV 4      /* key_hex/key_len/value_len in kvio_cmd_kv (row kv_id) */
#define CHF_HEADER 8  /* role = 'header' */
#define CHF_PAYLOAD 16 /* role = 'payload' */
#define CHF_ALL 31

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
	size_t s = CHUNK_HDR;
	s += 3 * chunk_al8((size_t)8 * n);
	s += 5 * chunk_al8((size_t)4 * n);
	s += chunk_al8((size_t)2 * n);
	s += chunk_al8(n);
	return s;
}

struct dbdir;

/* Point v's arrays into blob b (of len bytes, 8-byte aligned). 0 ok, -1 if
 * malformed (bad magic, or len is not chunk_size(n)). Its bytes are not
 * checked: only for a chunk chunk_check passed before. */
int chunk_map(const void *b, size_t len, struct chunk_view *v);
/* Check blob b (len bytes, 8-byte aligned) as chunk k of directory d: its
 * header (magic, n as its row says, len = chunk_size(n)), its checksum, and
 * every command's values: 0 <= ts, 0 <= dur, ts + dur in range, a track and a
 * name that exist, an slba counter track, a KV row, kvio's flags, and the
 * chunk's extent as kvio_cmd_range holds it. 0 with v mapped, or -1 with why
 * (one sentence naming the chunk and the command). */
int chunk_check(const void *b, size_t len, const struct dbdir *d, size_t k, struct chunk_view *v, char *why,
		size_t whylen);
/* Encode the v->n commands of v as chunk `first` into out (chunk_size(v->n)
 * bytes, 8-byte aligned; padding zeroed). Returns the bytes written. */
size_t chunk_encode(const struct chunk_view *v, int64_t first, unsigned char *out);

#endif
