/* writeback.c — see writeback.h. */
#include "writeback.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct writeback {
	int fd;
	unsigned period_ms;
	int stop;
	int err;            /* errno of the first failed fdatasync, 0 while all is well */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
};

static void *writeback_loop(void *arg)
{
	struct writeback *w = arg;
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += (long)(w->period_ms % 1000) * 1000000L;
		t.tv_sec += w->period_ms / 1000 + t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &t) != ETIMEDOUT)
			;
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->mu);
		int rc = fdatasync(w->fd), e = errno; /* blocks this thread only */
		pthread_mutex_lock(&w->mu);
		if (rc != 0 && !w->err)
			w->err = e ? e : EIO;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct writeback *writeback_start(const char *path, unsigned period_ms)
{
	const char *off = getenv("KVIO_WRITEBACK");
	if (off && !strcmp(off, "0"))
		return NULL;
	struct writeback *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->mu, NULL);
	w->period_ms = period_ms ? period_ms : 1;
	w->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (w->fd < 0 || pthread_create(&w->th, NULL, writeback_loop, w)) {
		if (w->fd >= 0)
			close(w->fd);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	return w;
}

int writeback_stop(struct writeback *w)
{
	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	int err = w->err;
	const char *t = getenv("KVIO_TEST_WRITEBACK_EIO"); /* tests: as if an fdatasync had failed */
	if (!err && t && !strcmp(t, "1"))
		err = EIO;
	close(w->fd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	return err;
}
