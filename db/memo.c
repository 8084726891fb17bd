/* memo.c — what this process has checked of each database file it read
 * (memo.h), so that the connections of one command (kvio-report's pool) check
 * a file once: its small tables' sums, the tables a reader reads, each chunk.
 * A file is known by its identity: device, inode, size and mtime, and those of
 * its -wal file. A file that changes is another identity, checked again. */
#include "kvio_int.h"
#include "memo.h"
#include <pthread.h>
#include <sys/stat.h>

#define NMEMO 16

struct fileid {
	dev_t dev;
	ino_t ino;
	off_t size, wsize;
	int64_t mtime, wmtime;
};

struct memo {
	struct fileid id;
	int flags;      /* MEMO_*, set with release order once checked */
	size_t nchunks; /* the chunk flags: one byte each, 1 = checked */
	uint8_t *chunk;
};

static struct memo memos[NMEMO];
static int nmemo;
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t mtime_ns(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

/* The identity of database schema's file on db; -1 when it has none (memory, temp). */
static int file_id(sqlite3 *db, const char *schema, struct fileid *id)
{
	const char *path = sqlite3_db_filename(db, schema);
	struct stat sb;
	if (!path || !*path || stat(path, &sb) != 0)
		return -1;
	memset(id, 0, sizeof *id);
	id->dev = sb.st_dev;
	id->ino = sb.st_ino;
	id->size = sb.st_size;
	id->mtime = mtime_ns(&sb);
	char *wal = sqlite3_mprintf("%s-wal", path);
	if (wal && stat(wal, &sb) == 0) {
		id->wsize = sb.st_size;
		id->wmtime = mtime_ns(&sb);
	}
	sqlite3_free(wal);
	return 0;
}

struct memo *memo_of(sqlite3 *db, const char *schema)
{
	struct fileid id;
	if (file_id(db, schema, &id))
		return NULL;
	struct memo *m = NULL;
	pthread_mutex_lock(&memo_mu);
	for (int i = 0; i < nmemo && !m; i++)
		if (!memcmp(&memos[i].id, &id, sizeof id))
			m = &memos[i];
	if (!m && nmemo < NMEMO) {
		m = &memos[nmemo++];
		m->id = id;
	}
	pthread_mutex_unlock(&memo_mu);
	return m; /* memos are never freed: a store may keep the pointer */
}

int memo_has(const struct memo *m, int flag)
{
	return m && (__atomic_load_n(&m->flags, __ATOMIC_ACQUIRE) & flag) == flag;
}

void memo_set(struct memo *m, int flag)
{
	if (m)
		__atomic_fetch_or(&m->flags, flag, __ATOMIC_RELEASE);
}

uint8_t *memo_chunks(struct memo *m, size_t nchunks)
{
	if (!m)
		return NULL;
	pthread_mutex_lock(&memo_mu);
	if (!m->chunk && (m->chunk = sqlite3_malloc64(nchunks ? nchunks : 1))) {
		memset(m->chunk, 0, nchunks ? nchunks : 1);
		m->nchunks = nchunks;
	}
	uint8_t *c = m->chunk && m->nchunks == nchunks ? m->chunk : NULL;
	pthread_mutex_unlock(&memo_mu);
	return c;
}
