/* op_keep.c — a gathering aggregate's set kept on the connection for a later
 * statement: kvio_keep(name, set) and kvio_pick(name, set).
 *
 * One pass over the commands can feed several gathers (prelude.sql's
 * kvio_pool_gather: four sets from one read of the chunks), but a set is a
 * pointer value (SQLite's pointer passing): it cannot be stored in a table,
 * and each of the four is read by another statement. kvio_keep moves the set
 * it is given into the connection's keep (the aggregate's own result is left
 * an empty set, freed as before); kvio_pick(name, set) hands out the kept set
 * of that name, once, else set itself (moved too): the fill views read
 * kvio_pick(name, (their own gather)) and need not know which pass made it. */
#include "kvio_int.h"

/* The set types kvio_keep takes: their pointer type, size and free. */
static const struct {
	const char *type;
	size_t size;
	void (*free)(void *);
} kinds[] = {
	{"kvio_vset", sizeof(struct vset), vset_free},
	{"kvio_depth", sizeof(struct dset), dset_free},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
#define NKEEP 16

struct keep {
	struct {
		char *name;
		int kind;
		void *p;
	} e[NKEEP];
};

static void keep_drop(struct keep *k, int i)
{
	kinds[k->e[i].kind].free(k->e[i].p);
	sqlite3_free(k->e[i].name);
	k->e[i].name = NULL;
	k->e[i].p = NULL;
}

static void keep_free(void *p)
{
	struct keep *k = p;
	for (int i = 0; k && i < NKEEP; i++)
		if (k->e[i].name)
			keep_drop(k, i);
	sqlite3_free(k);
}

/* The set v holds, moved out of it (v's set is left empty, still its owner's
 * to free): a copy of its struct, *kind its type. NULL: v holds none (*kind
 * -1), or no memory (*kind >= 0). */
static void *set_move(sqlite3_value *v, int *kind)
{
	for (int i = 0; i < (int)NKINDS; i++) {
		void *p = sqlite3_value_pointer(v, kinds[i].type);
		if (!p)
			continue;
		*kind = i;
		void *n = sqlite3_malloc64(kinds[i].size);
		if (n) {
			memcpy(n, p, kinds[i].size);
			memset(p, 0, kinds[i].size); /* an empty set: its groups are n's now */
		}
		return n;
	}
	*kind = -1;
	return NULL;
}

static int keep_find(const struct keep *k, const char *name)
{
	for (int i = 0; i < NKEEP; i++)
		if (k->e[i].name && !strcmp(k->e[i].name, name))
			return i;
	return -1;
}

/* kvio_keep(name, set): set kept as name (one kept before under it freed). 1. */
static void keep_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct keep *k = sqlite3_user_data(ctx);
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	int kind, i = name ? keep_find(k, name) : -1;
	if (!name) {
		sqlite3_result_error(ctx, "kvio_keep: the name must be text", -1);
		return;
	}
	if (i >= 0)
		keep_drop(k, i);
	for (i = 0; i < NKEEP && k->e[i].name; i++)
		;
	if (i == NKEEP) {
		sqlite3_result_error(ctx, "kvio_keep: at most 16 sets kept (kvio_pick takes them)", -1);
		return;
	}
	void *p = set_move(argv[1], &kind);
	if (kind < 0) {
		sqlite3_result_error(ctx, "kvio_keep: the set is not a kvio_pct_gather, kvio_runs_gather, kvio_gaps_gather"
					  " or kvio_depth_gather result", -1);
		return;
	}
	if (!p || !(k->e[i].name = sqlite3_mprintf("%s", name))) {
		if (p)
			kinds[kind].free(p);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	k->e[i].kind = kind;
	k->e[i].p = p;
	sqlite3_result_int(ctx, 1);
}

/* kvio_pick(name, set): the set kept as name (no longer kept), else set. */
static void pick_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct keep *k = sqlite3_user_data(ctx);
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	int i = name ? keep_find(k, name) : -1, kind;
	void *p;
	if (i >= 0) {
		p = k->e[i].p;
		kind = k->e[i].kind;
		k->e[i].p = NULL;
		sqlite3_free(k->e[i].name);
		k->e[i].name = NULL;
	} else if (!(p = set_move(argv[1], &kind))) {
		if (kind >= 0)
			sqlite3_result_error_nomem(ctx);
		return; /* no set: NULL (the reader says what it wanted) */
	}
	sqlite3_result_pointer(ctx, p, kinds[kind].type, kinds[kind].free);
}

int op_keep_register(sqlite3 *db)
{
	struct keep *k = sqlite3_malloc(sizeof *k);
	if (!k)
		return SQLITE_NOMEM;
	memset(k, 0, sizeof *k);
	/* kvio_pick first: kvio_keep's registration owns k (freed with the connection) */
	int rc = sqlite3_create_function_v2(db, "kvio_pick", 2, SQLITE_UTF8, k, pick_func, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_free(k);
		return rc;
	}
	return sqlite3_create_function_v2(db, "kvio_keep", 2, SQLITE_UTF8, k, keep_func, NULL, NULL, keep_free);
}
