/* unit_json.c — report/json.c's reader (jn_parse), which kvio-report uses to
 * read its children's JSON reports back (--compare, --fail-on, --csv, several
 * databases): every value below is written by hand, its tree checked member
 * by member, and a hand-written report text must print back byte for byte. */
#include "../report/json.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit_json: %s\n", name); \
	else { printf("FAIL - unit_json: %s\n", name); fails++; } } while (0)

static struct jnode *P(const char *s) { return jn_parse(s, strlen(s)); }

/* 1 when s is refused (NULL) */
static int refused(const char *s)
{
	struct jnode *n = P(s);
	jn_free(n);
	return !n;
}

static void numbers(void)
{
	struct jnode *n = P("9007199254740993"); /* 2^53 + 1: a double would read ...992 */
	CHECK("2^53 + 1 is an exact integer", n && n->t == J_INT && n->i == 9007199254740993LL);
	jn_free(n);
	n = P(" -9223372036854775808 ");
	CHECK("INT64_MIN is an integer (blanks around it)", n && n->t == J_INT && n->i == -9223372036854775807LL - 1);
	jn_free(n);
	n = P("9223372036854775808");
	CHECK("2^63 is past int64_t: a real", n && n->t == J_REAL && n->d == 9223372036854775808.0);
	jn_free(n);
	n = P("[0.1, 1e16, -0.0, 2.5E-3, 0]");
	CHECK("reals: 0.1, 1e16, -0.0, 2.5E-3 exact doubles; 0 an integer",
	      n && n->t == J_ARR && n->n == 5 && n->vals[0]->t == J_REAL && n->vals[0]->d == 0.1 &&
		      n->vals[1]->t == J_REAL && n->vals[1]->d == 1e16 && n->vals[2]->t == J_REAL && signbit(n->vals[2]->d) &&
		      n->vals[3]->d == 0.0025 && n->vals[4]->t == J_INT && n->vals[4]->i == 0);
	double v = -1;
	CHECK("jn_num: an integer and a real read as doubles, a string is no number",
	      n && jn_num(n->vals[4], &v) && v == 0 && jn_num(n->vals[0], &v) && v == 0.1 && !jn_num(NULL, &v));
	jn_free(n);
}

static void strings(void)
{
	struct jnode *n = P("\"a\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\/\\t\\u20ac\"");
	CHECK("string escapes: \\u00e9, a surrogate pair, \\n \\\" \\\\ \\/ \\t, \\u20ac as UTF-8",
	      n && n->t == J_STR && !strcmp(n->s, "a\xc3\xa9\xf0\x9f\x98\x80\n\"\\/\t\xe2\x82\xac"));
	jn_free(n);
	n = P("\"h\xc3\xa9\"");
	CHECK("raw UTF-8 bytes kept as they are", n && n->t == J_STR && !strcmp(n->s, "h\xc3\xa9"));
	jn_free(n);
}

static void trees(void)
{
	struct jnode *n = P("{\"b\": 1, \"a\": {\"c\": [true, false, null], \"d\": \"x\"}, \"e\": {}}");
	struct jnode *a = jn_get(n, "a"), *c = jn_get(a, "c");
	CHECK("object: members in their order (b, a, e)",
	      n && n->t == J_OBJ && n->n == 3 && !strcmp(n->keys[0], "b") && !strcmp(n->keys[1], "a") && !strcmp(n->keys[2], "e"));
	CHECK("nested: a.c = [true, false, null], a.d = \"x\", e = {}",
	      c && c->t == J_ARR && c->n == 3 && c->vals[0]->t == J_BOOL && c->vals[0]->i == 1 && c->vals[1]->t == J_BOOL &&
		      c->vals[1]->i == 0 && c->vals[2]->t == J_NULL && jn_get(a, "d") && !strcmp(jn_get(a, "d")->s, "x") &&
		      jn_get(n, "e")->t == J_OBJ && jn_get(n, "e")->n == 0);
	CHECK("jn_get: an array or a missing key gives NULL", !jn_get(c, "c") && !jn_get(n, "zz") && !jn_get(NULL, "a"));
	jn_free(n);
	char deep[200] = "", deeper[210] = "";
	for (int i = 0; i < 64; i++)
		strcat(deep, "[");
	for (int i = 0; i < 64; i++)
		strcat(deep, "]");
	snprintf(deeper, sizeof deeper, "[%s]", deep);
	CHECK("64 levels of nesting read, 65 refused", !refused(deep) && refused(deeper));
}

static void refusals(void)
{
	static const char *const bad[] = {"", " ", "{", "{\"a\":}", "[1,]", "[1 2]", "01", "-", "1.", "1 2", "nul",
					  "{\"a\" 1}", "{a: 1}", "\"\\u0000\"", "\"\\ud800\"", "\"\\ude00\"", "\"\\x\"",
					  "\"a\tb\"", "\"open", "{\"a\": 1}}", "1e999", NULL};
	int n = 0, r = 0;
	for (int i = 0; bad[i]; i++, n++)
		r += refused(bad[i]);
	CHECK("21 texts that are not JSON (or hold a NUL, a lone surrogate, a raw tab, an overflow) refused", n == 21 && r == 21);
}

/* A report's text in Python's json.dump(indent=1) layout, written by hand: it
 * must print back the same bytes (jn_print is held to python3 in t_10) */
static void round_trip(void)
{
	const char *t = "{\n \"capture\": {\n  \"label\": \"capture\",\n  \"info\": {\n   \"hostname\": \"h\\u00e9\\\"1\",\n"
			"   \"lba_bytes\": 4096\n  },\n  \"qd\": {\n   \"mean\": 0.00045990801839632074,\n   \"max\": 2,\n"
			"   \"big\": 1e+16,\n   \"none\": null\n  },\n  \"tp\": [],\n  \"ok\": true,\n  \"list\": [\n   1,\n   -0.5\n  ]\n }\n}\n";
	struct jnode *n = P(t);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (n && m)
		jn_print(m, n, 1);
	if (m)
		fclose(m);
	CHECK("a hand-written report text prints back byte for byte", n && buf && !strcmp(buf, t));
	free(buf);
	jn_free(n);
}

int main(void)
{
	numbers();
	strings();
	trees();
	refusals();
	round_trip();
	return fails != 0;
}
