/* pcache.h — SQLite's page cache in one region of huge pages (pcache.c), for
 * kvio2perfetto's export. */
#ifndef KVIO_PCACHE_H
#define KVIO_PCACHE_H
#include <pthread.h>
#include <stddef.h>

/* A region of pages SQLite pages (64 KiB each) in two steps, for a command
 * whose SQLite runs before the region is wanted (kvio2perfetto: the ingest,
 * then the export): pcache_prepare maps
 * the region and faults it in on a thread of its own (0 pages: nothing);
 * pcache_install, once no connection is open, waits for that thread, stops
 * SQLite and gives it the region (the next open starts SQLite with it). */
struct pcache {
	void *p;
	size_t slot, n;
	pthread_t th;
	int started;
};
void pcache_prepare(struct pcache *c, int pages);
void pcache_install(struct pcache *c);

#endif
