/* op_key.c — the operators' group keys and their hash table.
 *
 * A key is any SQL value (struct key, kvio_int.h); a group is keyed by up to
 * two. key_hash/key_same decide the group (an integral real is the integer, a
 * blob the text of its bytes: key_norm), key_cmp orders groups as SQLite does
 * (NULL, numbers, text by bytes). struct gtab finds or creates a group in
 * O(1), keeps insertion order, and sorts by key at the end. */
#include "kvio_int.h"

/* ---- group keys ------------------------------------------------------------ */

/* struct key: in kvio_ext.c, beside the command columns it holds */


/* Copy key view k into *out (its text or blob bytes copied). SQLITE_OK or NOMEM. */
int key_copy(struct key *out, const struct key *k)
{
	*out = *k;
	if (k->t != SQLITE_TEXT && k->t != SQLITE_BLOB)
		return SQLITE_OK;
	out->s = sqlite3_malloc(k->len + 1);
	if (!out->s)
		return SQLITE_NOMEM;
	memcpy(out->s, k->s, k->len);
	out->s[k->len] = 0;
	return SQLITE_OK;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Hash of key k, chained on h. */
uint64_t key_hash(const struct key *k, uint64_t h)
{
	if (k->t == SQLITE_INTEGER)
		return mix(h ^ (uint64_t)k->i);
	if (k->t == SQLITE_FLOAT) {
		uint64_t b;
		memcpy(&b, &k->d, 8);
		return mix(h ^ b ^ 0x9e3779b97f4a7c15ULL);
	}
	if (k->t != SQLITE_TEXT)
		return mix(h ^ 0x51afd7ed558ccdffULL);
	uint64_t x = 1469598103934665603ULL;
	for (int i = 0; i < k->len; i++)
		x = (x ^ (unsigned char)k->s[i]) * 1099511628211ULL;
	return mix(h ^ x);
}

/* Whether keys a and b are the same group. */
int key_same(const struct key *a, const struct key *b)
{
	if (a->t != b->t)
		return 0;
	switch (a->t) {
	case SQLITE_INTEGER: return a->i == b->i;
	case SQLITE_FLOAT: return a->d == b->d;
	case SQLITE_TEXT: return a->len == b->len && (!a->len || !memcmp(a->s, b->s, a->len));
	default: return 1;
	}
}

/* SQLite's order of two keys: NULL, then numbers, then text (BINARY). */
int key_cmp(const struct key *a, const struct key *b)
{
	int ca = a->t == SQLITE_NULL ? 0 : a->t == SQLITE_TEXT ? 2 : 1;
	int cb = b->t == SQLITE_NULL ? 0 : b->t == SQLITE_TEXT ? 2 : 1;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (ca == 0)
		return 0;
	if (ca == 2) {
		int n = a->len < b->len ? a->len : b->len;
		int c = n ? memcmp(a->s, b->s, n) : 0;
		return c ? c : (a->len > b->len) - (a->len < b->len);
	}
	if (a->t == SQLITE_INTEGER && b->t == SQLITE_INTEGER)
		return (a->i > b->i) - (a->i < b->i);
	double x = a->t == SQLITE_INTEGER ? (double)a->i : a->d, y = b->t == SQLITE_INTEGER ? (double)b->i : b->d;
	return (x > y) - (x < y);
}

void key_result(sqlite3_context *ctx, const struct key *k)
{
	switch (k->t) {
	case SQLITE_INTEGER: sqlite3_result_int64(ctx, k->i); break;
	case SQLITE_FLOAT: sqlite3_result_double(ctx, k->d); break;
	case SQLITE_TEXT: sqlite3_result_text(ctx, k->s, k->len, SQLITE_TRANSIENT); break;
	default: sqlite3_result_null(ctx);
	}
}

/* ---- a hash table of groups keyed by up to two values ---------------------- */


void gtab_init(struct gtab *t, size_t gsize, unsigned nkeys)
{
	memset(t, 0, sizeof *t);
	t->gsize = gsize;
	t->nkeys = nkeys;
}

/* Free the table's groups (after fini(g) on each, when given). */
void gtab_free(struct gtab *t, void (*fini)(struct ghead *))
{
	for (size_t i = 0; i < t->nlist; i++) {
		struct ghead *g = t->list[i];
		if (fini)
			fini(g);
		sqlite3_free(g->k[0].s);
		sqlite3_free(g->k[1].s);
		sqlite3_free(g);
	}
	sqlite3_free(t->slot);
	sqlite3_free(t->list);
	memset(t, 0, sizeof *t);
}

static int gtab_grow(struct gtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct ghead **s = sqlite3_malloc64(cap * sizeof *s);
	if (!s)
		return SQLITE_NOMEM;
	memset(s, 0, cap * sizeof *s);
	for (size_t i = 0; i < t->nlist; i++) {
		size_t j = t->list[i]->h & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = t->list[i];
	}
	sqlite3_free(t->slot);
	t->slot = s;
	t->cap = cap;
	return SQLITE_OK;
}

/* The group of keys k (hashed, probed, or created): gtab_get_k without its recent groups. */
static struct ghead *gtab_find(struct gtab *t, const struct key *k)
{
	uint64_t h = key_hash(&k[0], 0x1234567);
	if (t->nkeys > 1)
		h = key_hash(&k[1], h);
	if (t->cap) {
		for (size_t j = h & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
			struct ghead *g = t->slot[j];
			if (g->h == h && key_same(&g->k[0], &k[0]) && (t->nkeys < 2 || key_same(&g->k[1], &k[1])))
				return g;
		}
	}
	if ((t->n + 1) * 2 > t->cap && gtab_grow(t) != SQLITE_OK)
		return NULL;
	if (t->nlist == t->caplist) {
		size_t c = t->caplist ? t->caplist * 2 : 16;
		struct ghead **l = sqlite3_realloc64(t->list, c * sizeof *l);
		if (!l)
			return NULL;
		t->list = l;
		t->caplist = c;
	}
	struct ghead *g = sqlite3_malloc64(t->gsize);
	if (!g)
		return NULL;
	memset(g, 0, t->gsize);
	g->h = h;
	g->k[1].t = SQLITE_NULL;
	if (key_copy(&g->k[0], &k[0]) != SQLITE_OK || (t->nkeys > 1 && key_copy(&g->k[1], &k[1]) != SQLITE_OK)) {
		sqlite3_free(g->k[0].t == SQLITE_TEXT ? g->k[0].s : NULL);
		sqlite3_free(g);
		return NULL;
	}
	size_t j = h & (t->cap - 1);
	while (t->slot[j])
		j = (j + 1) & (t->cap - 1);
	t->slot[j] = g;
	t->n++;
	t->list[t->nlist++] = g;
	return g;
}

/* The group of keys k[0], k[1] (k[1] only when nkeys is 2), created zeroed
 * if new; NULL when out of memory. */
struct ghead *gtab_get_k(struct gtab *t, const struct key *k)
{
	int m = 0;
	struct ghead *g = NULL;
	for (; m < 4 && t->mru[m]; m++)
		if (key_same(&t->mru[m]->k[0], &k[0]) && (t->nkeys < 2 || key_same(&t->mru[m]->k[1], &k[1]))) {
			g = t->mru[m];
			break;
		}
	if (!g) {
		if (!(g = gtab_find(t, k)))
			return NULL;
		m = 3; /* a new recent group: the oldest drops out */
	}
	if (m) { /* g to the front */
		memmove(t->mru + 1, t->mru, (size_t)m * sizeof *t->mru);
		t->mru[0] = g;
	}
	return g;
}


static int ghead_cmp(const void *x, const void *y)
{
	const struct ghead *a = *(struct ghead *const *)x, *b = *(struct ghead *const *)y;
	int c = key_cmp(&a->k[0], &b->k[0]);
	return c ? c : key_cmp(&a->k[1], &b->k[1]);
}

/* Sort the groups by key (SQLite's order); the hash slots stay valid. */
void gtab_sort(struct gtab *t)
{
	if (t->nlist > 1)
		qsort(t->list, t->nlist, sizeof *t->list, ghead_cmp);
}

