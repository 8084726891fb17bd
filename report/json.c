/* json.c — see json.h. */
#include "json.h"
#include "../lib/jsonesc.h"
#include "../lib/util.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct jnode *jn_new(enum jt t)
{
	struct jnode *n = xcalloc(1, sizeof *n);
	n->t = t;
	return n;
}

struct jnode *jn_obj(void) { return jn_new(J_OBJ); }
struct jnode *jn_null(void) { return jn_new(J_NULL); }
struct jnode *jn_arr(void) { return jn_new(J_ARR); }

struct jnode *jn_push(struct jnode *a, struct jnode *v)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 4;
		a->vals = xrealloc(a->vals, a->cap * sizeof *a->vals);
	}
	a->vals[a->n++] = v;
	return v;
}
struct jnode *jn_int(int64_t v) { struct jnode *n = jn_new(J_INT); n->i = v; return n; }
struct jnode *jn_real(double v) { struct jnode *n = jn_new(J_REAL); n->d = v; return n; }
struct jnode *jn_bool(int v) { struct jnode *n = jn_new(J_BOOL); n->i = v != 0; return n; }
struct jnode *jn_str(const char *s) { struct jnode *n = jn_new(J_STR); n->s = xstrdup(s ? s : ""); return n; }

struct jnode *jn_set(struct jnode *o, const char *key, struct jnode *v)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key)) {
			jn_free(o->vals[i]);
			o->vals[i] = v;
			return v;
		}
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 8;
		o->keys = xrealloc(o->keys, o->cap * sizeof *o->keys);
		o->vals = xrealloc(o->vals, o->cap * sizeof *o->vals);
	}
	o->keys[o->n] = xstrdup(key);
	o->vals[o->n++] = v;
	return v;
}

struct jnode *jn_get(const struct jnode *o, const char *key)
{
	for (int i = 0; o && o->t == J_OBJ && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->vals[i];
	return NULL;
}

void jn_free(struct jnode *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n; i++) {
		if (n->keys)
			free(n->keys[i]);
		jn_free(n->vals[i]);
	}
	free(n->keys);
	free(n->vals);
	free(n->s);
	free(n);
}

/* Python's repr of a float: the shortest digits that read back as the same
 * double, in fixed notation when the decimal exponent X is in [-4, 16) (with
 * ".0" when there is no fraction), else d.ddde+XX. */
void fmt_double(char *buf, size_t n, double v)
{
	if (!isfinite(v)) { /* not JSON: Python would write NaN/Infinity; kvio writes null */
		snprintf(buf, n, "null");
		return;
	}
	char e[40];
	for (int prec = 0; prec <= 16; prec++) { /* prec + 1 significant digits */
		snprintf(e, sizeof e, "%.*e", prec, v);
		if (strtod(e, NULL) == v)
			break;
	}
	char *x = strchr(e, 'e');
	int exp = atoi(x + 1);
	if (exp < -4 || exp >= 16) {
		snprintf(buf, n, "%s", e); /* %e writes e+16 / e-05, as Python does */
		return;
	}
	char digits[24];
	size_t nd = 0;
	const char *p = e;
	int neg = *p == '-';
	for (p += neg; p < x; p++)
		if (*p != '.')
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0') /* -0.0 and integral values keep one digit */
		nd--;
	char out[64];
	size_t k = 0;
	if (neg)
		out[k++] = '-';
	if (exp < 0) { /* 0.000ddd */
		out[k++] = '0';
		out[k++] = '.';
		for (int z = 0; z < -exp - 1; z++)
			out[k++] = '0';
		for (size_t d = 0; d < nd; d++)
			out[k++] = digits[d];
	} else { /* ddd.ddd, or ddd00.0 */
		for (int d = 0; d <= exp; d++)
			out[k++] = (size_t)d < nd ? digits[d] : '0';
		out[k++] = '.';
		if ((size_t)exp + 1 < nd)
			for (size_t d = (size_t)exp + 1; d < nd; d++)
				out[k++] = digits[d];
		else
			out[k++] = '0';
	}
	out[k] = 0;
	snprintf(buf, n, "%s", out);
}

static void put_str(FILE *f, const char *s)
{
	size_t n = strlen(s);
	char *esc = xmalloc(n * 6 + 1);
	json_escape(s, n, esc);
	fputc('"', f);
	fputs(esc, f);
	fputc('"', f);
	free(esc);
}

static void print_at(FILE *f, const struct jnode *n, int indent, int depth)
{
	char buf[64];
	switch (n->t) {
	case J_NULL: fputs("null", f); break;
	case J_BOOL: fputs(n->i ? "true" : "false", f); break;
	case J_INT: fprintf(f, "%lld", (long long)n->i); break;
	case J_REAL: fmt_double(buf, sizeof buf, n->d); fputs(buf, f); break;
	case J_STR: put_str(f, n->s); break;
	case J_OBJ:
		if (!n->n) {
			fputs("{}", f);
			break;
		}
		fputc('{', f);
		for (int i = 0; i < n->n; i++) {
			if (indent < 0) { /* one line: json.dumps(separators=(',', ':')) */
				fputs(i ? "," : "", f);
				put_str(f, n->keys[i]);
				fputc(':', f);
				print_at(f, n->vals[i], indent, depth + 1);
				continue;
			}
			fprintf(f, "%s\n%*s", i ? "," : "", indent * (depth + 1), "");
			put_str(f, n->keys[i]);
			fputs(": ", f);
			print_at(f, n->vals[i], indent, depth + 1);
		}
		if (indent < 0)
			fputc('}', f);
		else
			fprintf(f, "\n%*s}", indent * depth, "");
		break;
	case J_ARR: /* as json.dump(indent=1): one element a line */
		if (!n->n) {
			fputs("[]", f);
			break;
		}
		fputc('[', f);
		for (int i = 0; i < n->n; i++) {
			if (indent < 0)
				fputs(i ? "," : "", f);
			else
				fprintf(f, "%s\n%*s", i ? "," : "", indent * (depth + 1), "");
			print_at(f, n->vals[i], indent, depth + 1);
		}
		if (indent < 0)
			fputc(']', f);
		else
			fprintf(f, "\n%*s]", indent * depth, "");
		break;
	}
}

void jn_print(FILE *f, const struct jnode *n, int indent)
{
	print_at(f, n, indent, 0);
	fputc('\n', f);
}

/* The reader (jn_parse): recursive descent over text of at most n bytes. */
struct jrd {
	const char *p, *end;
	int depth;
};

static void jr_ws(struct jrd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static int jr_hex4(struct jrd *r, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++, r->p++) {
		char c = r->p < r->end ? *r->p : 0;
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return -1;
		*u = *u << 4 | (unsigned)v;
	}
	return 0;
}

/* One \uXXXX escape (a surrogate pair: two) as UTF-8 into o; its length, or -1. */
static int jr_uesc(struct jrd *r, char *o)
{
	unsigned u, l;
	if (jr_hex4(r, &u))
		return -1;
	if (u >= 0xd800 && u < 0xdc00) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return -1;
		r->p += 2;
		if (jr_hex4(r, &l) || l < 0xdc00 || l >= 0xe000)
			return -1;
		u = 0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00);
	} else if ((u >= 0xdc00 && u < 0xe000) || !u) /* a lone low surrogate; NUL (kvio's strings have none) */
		return -1;
	if (u < 0x80)
		return o[0] = (char)u, 1;
	if (u < 0x800)
		return o[0] = (char)(0xc0 | u >> 6), o[1] = (char)(0x80 | (u & 0x3f)), 2;
	if (u < 0x10000)
		return o[0] = (char)(0xe0 | u >> 12), o[1] = (char)(0x80 | (u >> 6 & 0x3f)), o[2] = (char)(0x80 | (u & 0x3f)), 3;
	o[0] = (char)(0xf0 | u >> 18), o[1] = (char)(0x80 | (u >> 12 & 0x3f));
	o[2] = (char)(0x80 | (u >> 6 & 0x3f)), o[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* A string at r->p (its opening quote) as a new NUL-terminated copy, or NULL. */
static char *jr_str(struct jrd *r)
{
	const char *q = ++r->p;
	while (q < r->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= r->end)
		return NULL;
	char *s = xmalloc((size_t)(q - r->p) + 1), *o = s; /* an escape is never shorter than its UTF-8 */
	while (*r->p != '"') {
		unsigned char c = (unsigned char)*r->p++;
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *e = strchr(from, *r->p);
		if (*r->p == 'u') {
			r->p++;
			int k = jr_uesc(r, o);
			if (k < 0)
				goto bad;
			o += k;
		} else if (e && *e) {
			*o++ = to[e - from];
			r->p++;
		} else
			goto bad;
	}
	r->p++;
	*o = 0;
	return s;
bad:
	free(s);
	return NULL;
}

/* The digits at q (at least one); past them, or NULL. */
static const char *jr_digits(const char *q, const char *end)
{
	const char *s = q;
	while (q < end && *q >= '0' && *q <= '9')
		q++;
	return q > s ? q : NULL;
}

/* A number (JSON's grammar): J_INT when it is an integer that fits int64_t,
 * J_REAL otherwise. */
static struct jnode *jr_num(struct jrd *r)
{
	const char *q = r->p, *end = r->end;
	int real = 0;
	if (q < end && *q == '-')
		q++;
	if (q < end && *q == '0')
		q++;
	else if (!(q = jr_digits(q, end)))
		return NULL;
	if (q < end && *q == '.') {
		real = 1;
		if (!(q = jr_digits(q + 1, end)))
			return NULL;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		real = 1;
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (!(q = jr_digits(q, end)))
			return NULL;
	}
	char buf[64];
	if (q - r->p >= (ptrdiff_t)sizeof buf)
		return NULL;
	memcpy(buf, r->p, (size_t)(q - r->p));
	buf[q - r->p] = 0;
	errno = 0;
	if (!real) {
		long long v = strtoll(buf, NULL, 10);
		if (!errno)
			return r->p = q, jn_int(v);
	}
	errno = 0;
	double d = strtod(buf, NULL);
	if (errno == ERANGE && fabs(d) > 1) /* an overflow (an underflow reads as its nearest double) */
		return NULL;
	r->p = q;
	return jn_real(d);
}

static struct jnode *jr_value(struct jrd *r);

/* An object or an array at r->p (its opening bracket). */
static struct jnode *jr_container(struct jrd *r)
{
	int obj = *r->p++ == '{';
	struct jnode *n = obj ? jn_obj() : jn_arr();
	char close = obj ? '}' : ']';
	if (++r->depth > 64)
		goto bad;
	jr_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++, r->depth--;
		return n;
	}
	for (;;) {
		char *key = NULL;
		if (obj) {
			jr_ws(r);
			if (r->p >= r->end || *r->p != '"' || !(key = jr_str(r)))
				goto bad;
			jr_ws(r);
			if (r->p >= r->end || *r->p++ != ':') {
				free(key);
				goto bad;
			}
		}
		struct jnode *v = jr_value(r);
		if (!v) {
			free(key);
			goto bad;
		}
		if (obj)
			jn_set(n, key, v);
		else
			jn_push(n, v);
		free(key);
		jr_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p++ == close)
			break;
		goto bad;
	}
	r->depth--;
	return n;
bad:
	jn_free(n);
	return NULL;
}

static struct jnode *jr_value(struct jrd *r)
{
	jr_ws(r);
	if (r->p >= r->end)
		return NULL;
	static const char *const lit[] = {"null", "true", "false"};
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(lit[i]);
		if ((size_t)(r->end - r->p) >= l && !memcmp(r->p, lit[i], l)) {
			r->p += l;
			return i ? jn_bool(i == 1) : jn_null();
		}
	}
	if (*r->p == '{' || *r->p == '[')
		return jr_container(r);
	if (*r->p == '"') {
		char *s = jr_str(r);
		struct jnode *n = s ? jn_str(s) : NULL;
		free(s);
		return n;
	}
	return jr_num(r);
}

struct jnode *jn_parse(const char *text, size_t n)
{
	struct jrd r = {text, text + n, 0};
	struct jnode *v = jr_value(&r);
	jr_ws(&r);
	if (v && r.p != r.end) {
		jn_free(v);
		v = NULL;
	}
	return v;
}

int jn_num(const struct jnode *n, double *v)
{
	if (!n || (n->t != J_INT && n->t != J_REAL))
		return 0;
	*v = n->t == J_INT ? (double)n->i : n->d;
	return 1;
}
