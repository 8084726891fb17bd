/* chunk.c — the command chunk codec: the one place that encodes a chunk
 * (kvio-ingest, the .pftrace import) and decodes one (kvio_cmd, the export).
 * The layout is in chunk.h. */
#include "chunk.h"
#include <string.h>

int chunk_map(const void *b, size_t len, struct chunk_view *v)
{
	const unsigned char *p = b;
	uint32_t magic, n;
	if (len < 8)
		return -1;
	memcpy(&magic, p, 4);
	memcpy(&n, p + 4, 4);
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

size_t chunk_encode(const struct chunk_view *v, unsigned char *out)
{
	uint32_t n = v->n, magic = CHUNK_MAGIC;
	size_t len = chunk_size(n), o = 8;
	memset(out, 0, len);
	memcpy(out, &magic, 4);
	memcpy(out + 4, &n, 4);
#define PUT(arr, sz) memcpy(out + o, v->arr, (size_t)(sz) * n); o += chunk_al8((size_t)(sz) * n)
	PUT(ts, 8); PUT(dur, 8); PUT(slba, 8);
	PUT(track, 4); PUT(data_len, 4); PUT(trace_id, 4); PUT(slba_track, 4); PUT(kv_id, 4);
	PUT(name, 2); PUT(flags, 1);
#undef PUT
	return len;
}
