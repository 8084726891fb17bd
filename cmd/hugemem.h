/* hugemem.h — malloc's heaps on transparent huge pages (hugemem.c). */
#ifndef KVIO_HUGEMEM_H
#define KVIO_HUGEMEM_H

/* Called first in main, with main's argv: where the kernel gives huge pages
 * on request (THP "always" or "madvise") and neither GLIBC_TUNABLES nor
 * KVIO_HUGEMEM=0 is set, runs this binary again with glibc's malloc set to
 * ask for them (GLIBC_TUNABLES, HUGEMEM_TUNABLES); returns only when it does
 * not (nothing to ask, or the exec failed). */
void hugemem_reexec(char **argv);

#endif
