/* pcache.c — SQLite's page cache (64 KiB pages) in one region of huge pages
 * where the kernel allows them (madvise), for kvio2perfetto's export: a trap
 * per 2 MiB, not per 4 KiB. SQLite touches every slot at start; on a VM whose
 * free memory goes back to the host (free page reporting), a huge page not
 * freed in the last ~2 s is faulted in anew at ~2 ms: 60-75 ms for the 17 of
 * a 512-page region. kvio2perfetto has its ingest to run first:
 * pcache_prepare faults the region in on a thread meanwhile, pcache_install
 * hands it to SQLite for the export. More pages than the region holds come
 * from malloc, as without it.
 *
 * kvio-report and kvio-export had such a region too (512 pages, touched at
 * start) until malloc's heaps went on huge pages (hugemem.c): then their
 * pages from malloc cost no more, and only those they use are touched. By
 * hand, best of 5-8 alternated, without it: report 100k commands 0.099 ->
 * 0.079 s (mean), 1M 0.35 -> 0.32 s, 4M and 16M alike; export 4M without
 * findings 1.12 -> 1.05 s and 46 -> 15 MB, with findings alike (68 -> 57 MB),
 * its 2 s window 0.42 -> 0.39 s. */
#include "pcache.h"
#include "../lib/util.h"
#include <sqlite3.h>
#include <sys/mman.h>

/* The region's slot size and length for pages (0 when there is none to make). */
static size_t region_len(int pages, size_t *slot)
{
	int hdr = 0;
	if (pages <= 0 || sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK || hdr <= 0)
		return 0;
	*slot = (65536 + (size_t)hdr + 63) & ~(size_t)63;
	return *slot * (size_t)pages;
}

static void *region_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);
#endif
	return p;
}

static void region_give(void *p, size_t slot, size_t n)
{
	if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, p, (int)slot, (int)n) != SQLITE_OK)
		munmap(p, slot * n);
}

static void *prefault(void *arg)
{
	struct pcache *c = arg;
	mem_prefault(c->p, c->slot * c->n);
	return NULL;
}

void pcache_prepare(struct pcache *c, int pages)
{
	*c = (struct pcache){0};
	size_t len = region_len(pages, &c->slot);
	if (!len || !(c->p = region_map(len)))
		return;
	c->n = (size_t)pages;
	c->started = !pthread_create(&c->th, NULL, prefault, c); /* else SQLite's set-up faults it in */
}

void pcache_install(struct pcache *c)
{
	if (!c->p)
		return;
	if (c->started)
		pthread_join(c->th, NULL);
	c->started = 0;
	if (sqlite3_shutdown() == SQLITE_OK)
		region_give(c->p, c->slot, c->n);
	else
		munmap(c->p, c->slot * c->n);
	c->p = NULL;
}
