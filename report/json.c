/* json.c — see json.h. */
#include "json.h"
#include "../lib/jsonesc.h"
#include "../lib/util.h"
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
	for (int i = 0; o && i < o->n; i++)
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
