/* hugemem.c — malloc's heaps on transparent huge pages.
 *
 * Every kvio command's memory is touched once, fresh from the kernel: a
 * one-shot ingest of 1M lines faults in ~10,700 pages of 4 KiB, a findings
 * export of 4M ~13,500. On the VMs kvio is benched on a fault costs ~12 us
 * (16,384 faults in 190-200 ms, a test program); a 2 MiB huge page costs one
 * fault for 512 pages. glibc asks for them when told by its tunables, which it
 * reads once, at exec: glibc.malloc.hugetlb=1 (madvise(MADV_HUGEPAGE) on the
 * heaps as they grow and on mmap'd chunks), top_pad 32 MiB (heaps grow in
 * huge-page-sized steps, not page by page) and mmap_threshold 32 MiB (the
 * big vectors from the heap, not a fresh mapping each time). So main starts
 * over once, the same binary with the same argv, the tunables added.
 *
 * Measured by hand (bash time, best of 3, back to back, KVIO_HUGEMEM=0 against
 * the default; noisy machine): 1M ingest 10,700 -> ~600 faults, 0.355 ->
 * 0.298 s; a 20k-line ingest 98 -> 53 ms; kvio2perfetto 200k 0.22 -> 0.14 s.
 * After 3 s idle (a VM that returns free memory to the host faults a huge
 * page in at ~2 ms) the 1M ingest gains less, 0.34 -> 0.33 s. The costs: the
 * second exec, ~6 ms (kvio --help 9.4 -> 15.4 ms), which a tiny input does
 * not win back (the tiny fixture's ingest 39-45 ms either way); peak RSS
 * grows in 2 MiB steps (1M ingest 44 -> 57 MB).
 *
 * Not done: with a GLIBC_TUNABLES of the user's own (theirs wins), with
 * KVIO_HUGEMEM=0, where THP is "never", or when /proc/self/exe is not there
 * (the command then runs as it is). The exec keeps the pid, argv[0] (the
 * command's name) and every descriptor. */
#include "hugemem.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUGEMEM_TUNABLES "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432:glibc.malloc.mmap_threshold=33554432"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Whether the kernel gives huge pages to a range that asks (madvise): its
 * setting reads "[always]" or "[madvise]". */
static int thp_on_request(void)
{
	char buf[128] = {0};
	FILE *f = fopen(THP_ENABLED, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

void hugemem_reexec(char **argv)
{
	const char *off = getenv("KVIO_HUGEMEM");
	if (getenv("GLIBC_TUNABLES") || (off && !strcmp(off, "0")) || !thp_on_request())
		return;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0 || (size_t)n >= sizeof self - 1)
		return;
	self[n] = 0;
	if (setenv("GLIBC_TUNABLES", HUGEMEM_TUNABLES, 1) != 0)
		return;
	execv(self, argv);
	unsetenv("GLIBC_TUNABLES"); /* the exec failed: run as we are */
}
