/* writeback.h — a file written out to the disk while it is still being
 * written, so the fsync that ends it (outfile_commit) waits for less.
 *
 * kvio-ingest's database is written by SQLite through the page cache and
 * fsynced once, at the end: at 1M lines ~28 MB, whose fsync took 0.043-0.051 s
 * on the bench VM (~10% of the ingest) with both cores idle. Starting the
 * I/O early (sync_file_range SYNC_FILE_RANGE_WRITE) did not shorten it (the
 * wait is the journal's commit and the device's cache flush, not the data):
 * a thread that fdatasyncs the file every period_ms does (each 4-13 ms,
 * blocking that thread only); the final fsync then took 0.009 s. Measured
 * by hand (alternated, KVIO_WRITEBACK=0 against the default): 1M ingest mean
 * 0.597 -> 0.521 s over 10 runs each. Best effort: a file it cannot open
 * changes nothing; KVIO_WRITEBACK=0 turns it off. */
#ifndef KVIO_WRITEBACK_H
#define KVIO_WRITEBACK_H

struct writeback;

/* Start on path (NULL when it cannot: the caller goes on without). */
struct writeback *writeback_start(const char *path, unsigned period_ms);
/* Stop and free (NULL is fine). */
void writeback_stop(struct writeback *w);

#endif
