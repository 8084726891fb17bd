/* json.h — a small ordered JSON tree for kvio-report's output. */
#ifndef KVIO_JSON_H
#define KVIO_JSON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum jt { J_NULL, J_INT, J_REAL, J_STR, J_OBJ, J_BOOL, J_ARR };

struct jnode {
	enum jt t;
	int64_t i;
	double d;
	char *s;
	/* objects: ordered members; arrays: vals only */
	char **keys;
	struct jnode **vals;
	int n, cap;
};

struct jnode *jn_obj(void);
struct jnode *jn_int(int64_t v);
struct jnode *jn_real(double v);
struct jnode *jn_bool(int v);
struct jnode *jn_str(const char *s);
struct jnode *jn_null(void);
struct jnode *jn_arr(void);
/* Append v to array a; returns v. */
struct jnode *jn_push(struct jnode *a, struct jnode *v);
/* Set key (replacing an existing one, keeping its place); returns v. */
struct jnode *jn_set(struct jnode *o, const char *key, struct jnode *v);
struct jnode *jn_get(const struct jnode *o, const char *key);
void jn_free(struct jnode *n);
/* Print as JSON with Python's json.dump(indent=1) layout; indent < 0: on one
 * line, json.dumps(separators=(',', ':')) (kvio-report --watch's lines). */
void jn_print(FILE *f, const struct jnode *n, int indent);
/* Shortest text that reads back as the same double (Python repr style). */
void fmt_double(char *buf, size_t n, double v);
/* The JSON text[0..n) as a tree (integers that fit int64_t exact, as J_INT;
 * other numbers J_REAL), NULL when it is not JSON (nesting over 64 deep, a NUL
 * in a string, trailing bytes). Members in their order; a repeated key keeps
 * its first place and its last value. jn_get on what is no object: NULL. */
struct jnode *jn_parse(const char *text, size_t n);
/* A number's value (J_INT or J_REAL) into *v: 1, or 0 when n is not a number. */
int jn_num(const struct jnode *n, double *v);

#endif
