/* arm.c — one arm's shared bookkeeping, used by every stage of the ingest
 * (load, records, offset, join, stream, write): interned op names, data
 * warnings, a semantic JSON value read as an integer, and freeing the arm.
 * The bottom of ingest/: it calls nothing else in the folder. */
#include "model.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const role_name[NROLES] = {"writes", "reads", "other", "untagged"};

/* name x (NUL-terminated) is s[0..n) */
static int name_is(const char *x, const char *s, size_t n)
{
	return !strncmp(x, s, n) && x[n] == 0;
}

uint16_t arm_intern(struct arm *a, const char *s, size_t n)
{
	if (a->last_name < a->names.n && name_is(VEC_AT(&a->names, const char *, a->last_name), s, n))
		return a->last_name; /* a capture's commands come in runs of one name */
	for (size_t i = 0; i < a->names.n; i++)
		if (name_is(VEC_AT(&a->names, const char *, i), s, n))
			return a->last_name = (uint16_t)i;
	if (a->names.n >= 65535)
		return 0;
	*(const char **)vec_push(&a->names, sizeof(char *)) = arena_dup(&a->strs, s, n);
	return (uint16_t)(a->names.n - 1);
}

void arm_warn(struct arm *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	*(const char **)vec_push(&a->warnings, sizeof(char *)) = arena_dup(&a->strs, buf, strlen(buf));
}

void arm_free(struct arm *a)
{
	vec_free(&a->cmds);
	vec_free(&a->cmps);
	vec_free(&a->order);
	vec_free(&a->objs);
	vec_free(&a->serving);
	vec_free(&a->kv);
	vec_free(&a->names);
	vec_free(&a->warnings);
	vec_free(&a->threads);
	map_free(&a->thread_ix);
	arena_free(&a->strs);
	map_free(&a->first_obj);
}


int jv_int(const struct jv *v, int64_t dflt, int64_t *out)
{
	switch (v->t) {
	case JV_INT: case JV_BOOL: *out = v->i; return 1;
	case JV_UINT: *out = (int64_t)v->u; return 1;
	case JV_REAL: *out = i64_of_double(v->d); return 1;
	default: *out = dflt; return 0;
	}
}
