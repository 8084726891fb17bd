/* writeback.h — a file written out to the disk while it is still being
 * written, so the fsync that ends it (outfile_commit) waits for less. Every
 * output file's temp (outfile.c) has one.
 *
 * Outputs are written through the page cache and fsynced once, at the end:
 * kvio-ingest's 1M-line database (~28 MB) took 0.043-0.051 s in that fsync
 * on the bench VM (~10% of the ingest), the 4M export's .pftrace 0.28 s
 * (~25% of it), both cores idle meanwhile. Starting the I/O early
 * (sync_file_range SYNC_FILE_RANGE_WRITE) did not shorten it (the wait is
 * the journal's commit and the device's cache flush, not the data): a
 * thread that fdatasyncs the file every period_ms does (each 4-13 ms,
 * blocking that thread only); the final fsync then took 0.008-0.009 s.
 * Measured by hand (alternated, KVIO_WRITEBACK=0 against the default, mean
 * wall): 1M ingest 0.597 -> 0.521 s (10 runs each); 4M export without
 * findings 1.378 -> 1.142 s, with findings 1.638 -> 1.376 s (5 each). Best
 * effort: a file it cannot open changes nothing; KVIO_WRITEBACK=0 turns it
 * off. Test knob: KVIO_TEST_WRITEBACK_EIO=1 makes writeback_stop report EIO. */
#ifndef KVIO_WRITEBACK_H
#define KVIO_WRITEBACK_H

struct writeback;

/* Start on path (NULL when it cannot: the caller goes on without). */
struct writeback *writeback_start(const char *path, unsigned period_ms);
/* Stop and free (NULL is fine): 0, or the errno of the first fdatasync
 * that failed. The caller must treat it as a failed write: the kernel
 * reports a write-back error (EIO, ENOSPC of a delayed allocation) once per
 * open file, and a file opened after the thread saw it (outfile_commit's
 * reopen of a database SQLite wrote) would not see it again. */
int writeback_stop(struct writeback *w);

#endif
