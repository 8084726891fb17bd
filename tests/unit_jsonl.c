/* unit_jsonl.c — the JSON line layer: exact u64, escapes, number grammar,
 * UTF-8 checks. Prints "ok - ..." / "FAIL - ..." lines (counted by t_unit.sh). */
#include "../ingest/jsonl.h"
#include "../lib/jsonesc.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit: %s\n", name); \
	else { printf("FAIL - unit: %s\n", name); fails++; } } while (0)

static struct jline j;
static int parse(const char *s) { return jl_parse(&j, s, strlen(s)); }

/* Parse s[0..n) with the full parser (jsmn) and with the fast path (simdjson)
 * and compare: the same verdict, the same tokens. Returns the verdict, or -1
 * when the two differ; *fast: the fast path took the line. */
static int both_n(const char *s, size_t n, int *fast)
{
	static struct jline full;
	jl_fast = 0;
	int e0 = jl_parse(&full, s, n);
	jl_fast = 1;
	int e1 = jl_parse(&j, s, n);
	*fast = j.fast;
	if (e0 != e1 || full.ntok != j.ntok || full.nmem != j.nmem)
		return -1;
	for (int t = 0; t < j.ntok; t++)
		if (full.tok[t].type != j.tok[t].type || full.tok[t].start != j.tok[t].start ||
		    full.tok[t].end != j.tok[t].end || full.tok[t].size != j.tok[t].size)
			return -1;
	return e1;
}
static int both(const char *s, int *fast) { return both_n(s, strlen(s), fast); }

/* Exact integers, keys, escapes, the number grammar. */
static void parser_checks(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];
	(void)u; (void)i; (void)buf;
	CHECK("u64 max parses exactly",
	      parse("{\"user_data\":18446744073709551615}") == JL_OK &&
	      !jl_u64(&j, JL_FIND(&j, "user_data"), &u) && u == UINT64_MAX);
	CHECK("2^63+1 parses exactly (a double would round it)",
	      parse("{\"user_data\":9223372036854775809}") == JL_OK &&
	      !jl_u64(&j, JL_FIND(&j, "user_data"), &u) && u == 9223372036854775809ull);
	CHECK("u64 overflow is refused",
	      parse("{\"user_data\":18446744073709551616}") == JL_OK &&
	      jl_u64(&j, JL_FIND(&j, "user_data"), &u) != 0);
	CHECK("negative is not a u64",
	      parse("{\"x\":-1}") == JL_OK && jl_u64(&j, JL_FIND(&j, "x"), &u) != 0);
	CHECK("float ts truncates like int()",
	      parse("{\"ts\":12.9}") == JL_OK && !jl_i64(&j, JL_FIND(&j, "ts"), &i) && i == 12);
	CHECK("last duplicate key wins",
	      parse("{\"a\":1,\"a\":2}") == JL_OK && !jl_i64(&j, JL_FIND(&j, "a"), &i) && i == 2);
	CHECK("nested values are skipped when finding top-level keys",
	      parse("{\"c\":{\"ts\":1,\"d\":[1,{\"ts\":2}]},\"ts\":3}") == JL_OK &&
	      !jl_i64(&j, JL_FIND(&j, "ts"), &i) && i == 3);
	CHECK("escaped comm decodes", parse("{\"comm\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\"}") == JL_OK &&
	      jl_str(&j, JL_FIND(&j, "comm"), buf) == 11 && !strcmp(buf, "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80"));
	{
		const char *raw = "q\"\\\n\t\x01\xc3\xa9";
		char esc[64], line[128], back[64];
		json_escape(raw, strlen(raw), esc);
		snprintf(line, sizeof line, "{\"s\":\"%s\"}", esc);
		CHECK("escape round-trips", parse(line) == JL_OK && jl_str(&j, JL_FIND(&j, "s"), back) >= 0 &&
		      !strcmp(back, raw));
	}
	CHECK("bad escape is refused", parse("{\"s\":\"\\x\"}") != JL_OK ||
	      jl_str(&j, JL_FIND(&j, "s"), buf) < 0);
	CHECK("bare word is not JSON", parse("{\"a\":tru}") == JL_SYNTAX);
	CHECK("1.2.3 is not a number", parse("{\"a\":1.2.3}") == JL_SYNTAX);
	CHECK("leading zero is not a number", parse("{\"a\":01}") == JL_SYNTAX);
	CHECK("trailing garbage is refused", parse("{\"a\":1} x") == JL_SYNTAX);
	CHECK("two objects on a line are refused", parse("{\"a\":1}{\"b\":2}") == JL_SYNTAX);
	CHECK("array is JSON but not an object", parse("[1,2]") == JL_NOTOBJ);
	CHECK("number is JSON but not an object", parse("42") == JL_NOTOBJ);
}

/* Nesting, UTF-8, wide lines. */
static void more_parser_checks(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];
	(void)u; (void)i; (void)buf;
	CHECK("blank line", parse("   ") == JL_BLANK);
	CHECK("invalid UTF-8 refused", parse("{\"a\":\"\xff\"}") == JL_UTF8);
	CHECK("overlong UTF-8 refused", parse("{\"a\":\"\xc0\xaf\"}") == JL_UTF8);
	{
		/* {"a":[[...[1]...]],"pad":"..."} with d levels in all (the object is one):
		 * 64 parse, 65 are refused; brackets inside a string do not count */
		static char line[4096];
		for (int d = 64; d <= 65; d++) {
			int k = snprintf(line, sizeof line, "{\"a\":");
			for (int l = 1; l < d; l++)
				line[k++] = '[';
			line[k++] = '1';
			for (int l = 1; l < d; l++)
				line[k++] = ']';
			k += snprintf(line + k, sizeof line - k, ",\"pad\":\"%0300d\"}", 0);
			CHECK(d == 64 ? "64 levels of nesting parse" : "65 levels of nesting are refused",
			      parse(line) == (d == 64 ? JL_OK : JL_DEEP));
		}
		int k = snprintf(line, sizeof line, "{\"s\":\"");
		for (int l = 0; l < 500; l++)
			line[k++] = '[';
		snprintf(line + k, sizeof line - k, "\\\"\"}");
		CHECK("brackets inside a string are not nesting", parse(line) == JL_OK);
	}
	CHECK("lone CR refused", parse("{\"a\":1,\r\"b\":2}") == JL_UTF8);
	CHECK("raw control char in string refused", parse("{\"a\":\"\x01\"}") == JL_UTF8);
	CHECK("valid UTF-8 accepted", parse("{\"a\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}") == JL_OK);
	{
		/* 400 array elements: more tokens than the first token array holds */
		static char wide[1024];
		size_t k = 0;
		k += sprintf(wide + k, "{\"a\":[1");
		for (int d = 1; d < 400; d++) wide[k++] = ',', wide[k++] = '1';
		sprintf(wide + k, "],\"ts\":9}");
		CHECK("a line of 400 values parses (token array grows)",
		      parse(wide) == JL_OK && !jl_i64(&j, JL_FIND(&j, "ts"), &i) && i == 9);
	}
}

/* The fast path (simdjson) against the full parser. */
static void fast_path_checks(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];
	(void)u; (void)i; (void)buf;
	/* the fast path (simdjson, tests/../ingest/sjline.cc) against the full
	 * parser: every expectation below is written by hand */
	int f;
	const char *dev = "{\"event_type\":\"nvme_cmd\",\"pid\":4242,\"tid\":4304,\"user_data\":4294967296,"
			  "\"op_name\":\"write\",\"slba\":0,\"data_len\":4096,\"cmd_op\":\"0xc0484e80\","
			  "\"comm\":\"python3\",\"ts\":5000000180280}";
	CHECK("fast: a device line takes the fast path, same tokens",
	      both(dev, &f) == JL_OK && f && j.ntok == 21 && !jl_u64(&j, JL_FIND(&j, "user_data"), &u) &&
	      u == 4294967296ull && !jl_i64(&j, JL_FIND(&j, "ts"), &i) && i == 5000000180280ll &&
	      JL_STREQ(&j, JL_FIND(&j, "comm"), "python3") && j.tok[JL_FIND(&j, "comm")].start == 143);
	CHECK("fast: spaces around tokens, same tokens",
	      both(" { \"a\" : 1 ,\t\"b\" :\"x y\" } ", &f) == JL_OK && f && j.ntok == 5 &&
	      j.tok[2].start == 8 && j.tok[2].end == 9 && j.tok[4].start == 18 && j.tok[4].end == 21);
	CHECK("fast: 2^64-1 exact", both("{\"user_data\":18446744073709551615}", &f) == JL_OK && f &&
	      !jl_u64(&j, JL_FIND(&j, "user_data"), &u) && u == UINT64_MAX);
	CHECK("fast: 2^64 is JSON, not a u64 (the record is malformed, counted)",
	      both("{\"user_data\":18446744073709551616}", &f) == JL_OK && f &&
	      jl_u64(&j, JL_FIND(&j, "user_data"), &u) != 0);
	CHECK("fast: -1 is not a u64, is an i64",
	      both("{\"user_data\":-1}", &f) == JL_OK && f && jl_u64(&j, JL_FIND(&j, "user_data"), &u) != 0 &&
	      !jl_i64(&j, JL_FIND(&j, "user_data"), &i) && i == -1);
	CHECK("fast: a 40-digit number is JSON, neither a u64 nor an i64",
	      both("{\"user_data\":1234567890123456789012345678901234567890}", &f) == JL_OK && f &&
	      jl_u64(&j, 1 + 1, &u) != 0 && jl_i64(&j, 2, &i) != 0);
	/* floats in integer fields: truncated toward zero, as Python's int() (as before) */
	CHECK("fast: 1.0 reads as 1", both("{\"ts\":1.0}", &f) == JL_OK && f &&
	      !jl_u64(&j, 2, &u) && u == 1 && !jl_i64(&j, 2, &i) && i == 1);
	CHECK("fast: 1e3 reads as 1000", both("{\"ts\":1e3}", &f) == JL_OK && f &&
	      !jl_u64(&j, 2, &u) && u == 1000);
	CHECK("fast: 01 is not JSON", both("{\"ts\":01}", &f) == JL_SYNTAX);
	CHECK("fast: +1 is not JSON", both("{\"ts\":+1}", &f) == JL_SYNTAX);
	CHECK("fast: 1. is not JSON", both("{\"ts\":1.}", &f) == JL_SYNTAX);
	CHECK("fast: -0 and 0 are", both("{\"a\":-0,\"b\":0}", &f) == JL_OK && f);
	CHECK("fast: trailing garbage refused", both("{\"a\":1} x", &f) == JL_SYNTAX);
	CHECK("fast: a second closing brace refused", both("{\"a\":1}}", &f) == JL_SYNTAX);
	CHECK("fast: a trailing comma after the object refused", both("{\"a\":1},", &f) == JL_SYNTAX);
	CHECK("fast: two objects on a line refused", both("{\"a\":1}{\"b\":2}", &f) == JL_SYNTAX);
	CHECK("fast: unclosed object refused", both("{\"a\":1", &f) == JL_SYNTAX);
}

/* The fast path: the grammar at the edges (commas, UTF-8, NULs, escapes, unread values). */
static void fast_path_grammar(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];
	int f;
	(void)u; (void)i; (void)buf;
	/* jsmn lets a missing comma between members pass; simdjson refuses the
	 * line, the full parser decides: accepted, as before */
	CHECK("fast: missing comma: as the full parser says", both("{\"a\":1 \"b\":2}", &f) == JL_OK && !f);
	CHECK("fast: missing colon refused", both("{\"a\" 1}", &f) == JL_SYNTAX);
	CHECK("fast: invalid UTF-8 in a value refused", both("{\"a\":\"\xff\",\"b\":1}", &f) == JL_UTF8);
	CHECK("fast: invalid UTF-8 in a key refused", both("{\"\xc0\xaf\":1}", &f) == JL_UTF8);
	CHECK("fast: a UTF-16 surrogate in UTF-8 refused", both("{\"a\":\"\xed\xa0\x80\"}", &f) == JL_UTF8);
	CHECK("fast: valid UTF-8 takes the fast path", both("{\"a\":\"caf\xc3\xa9\"}", &f) == JL_OK && f);
	CHECK("fast: a NUL in a string refused", both_n("{\"a\":\"x\0y\"}", 11, &f) == JL_UTF8);
	CHECK("fast: a NUL between tokens refused", both_n("{\"a\":1,\0\"b\":2}", 15, &f) == JL_UTF8);
	CHECK("fast: a TAB in a string is kept (as before)", both("{\"a\":\"x\ty\"}", &f) == JL_OK);
	CHECK("fast: a CR between tokens refused", both("{\"a\":1,\r\"b\":2}", &f) == JL_UTF8);
	CHECK("fast: escapes go to the full parser, same tokens",
	      both("{\"a\\\"b\":\"c\\\"d\\u00e9\"}", &f) == JL_OK && !f && j.ntok == 3);
	CHECK("fast: a bad escape refused", both("{\"a\":\"\\x\"}", &f) == JL_SYNTAX);
	CHECK("fast: duplicate keys, the last wins", both("{\"a\":1,\"b\":5,\"a\":2}", &f) == JL_OK && f &&
	      !jl_i64(&j, JL_FIND(&j, "a"), &i) && i == 2 && !jl_i64(&j, JL_FIND(&j, "b"), &i) && i == 5);
	CHECK("fast: empty object", both("{}", &f) == JL_OK && f && j.ntok == 1);
	CHECK("fast: an absent key is -1", both("{\"ab\":1}", &f) == JL_OK && JL_FIND(&j, "ba") < 0 &&
	      JL_FIND(&j, "a") < 0 && JL_FIND(&j, "") < 0);
	/* the values of keys kvio never reads are checked all the same: such a
	 * line is malformed, counted as before (simdjson alone would skip them) */
	CHECK("fast: a bare word under an unread key refused",
	      both("{\"ts\":1,\"junk\":tru}", &f) == JL_SYNTAX);
	CHECK("fast: a bad number under an unread key refused",
	      both("{\"ts\":1,\"junk\":1.2.3}", &f) == JL_SYNTAX);
	CHECK("fast: -- under an unread key refused", both("{\"ts\":1,\"junk\":--1}", &f) == JL_SYNTAX);
	CHECK("fast: a bad literal under an unread key refused",
	      both("{\"ts\":1,\"junk\":nul}", &f) == JL_SYNTAX);
	CHECK("fast: a bad value inside an unread array refused (the full parser sees nested values)",
	      both("{\"ts\":1,\"junk\":[1,tru]}", &f) == JL_SYNTAX && !f);
	CHECK("fast: a bad value inside an unread object refused",
	      both("{\"ts\":1,\"junk\":{\"x\":01}}", &f) == JL_SYNTAX && !f);
	CHECK("fast: nested values go to the full parser", both("{\"a\":[1,{\"b\":2}],\"ts\":3}", &f) == JL_OK &&
	      !f && !jl_i64(&j, JL_FIND(&j, "ts"), &i) && i == 3);
	CHECK("fast: not an object", both("[1]", &f) == JL_NOTOBJ && both("2", &f) == JL_NOTOBJ);
	CHECK("fast: a key that is not a string refused", both("{1:2}", &f) == JL_SYNTAX);
	/* simdjson's On-Demand walk skips what lies between a value and the next
	 * key, and a second '}': the line-by-line fast path took these with
	 * tokens of its own (found by a fuzz of same-layout lines). They go to
	 * the full parser, which decides (jsmn takes some: today's verdicts) */
	CHECK("fast: a second value after a colon goes to the full parser",
	      both("{\"a\":\"x\":\"y\",\"b\":1}", &f) == JL_OK && !f && both("{\"a\":1:2}", &f) == JL_SYNTAX);
	CHECK("fast: two commas, or none, between members go to the full parser",
	      both("{\"a\":1,,\"b\":2}", &f) == JL_OK && !f && both("{\"a\":\"x\" \"b\":2}", &f) == JL_OK && !f);
	CHECK("fast: a second closing brace refused", both("{\"a\":1}}", &f) == JL_SYNTAX &&
	      both("{\"a\":1} }", &f) == JL_SYNTAX && both("{}}", &f) == JL_SYNTAX);
	CHECK("fast: a second value after a colon, then a second brace: refused, not cut short",
	      both("{\"a\":\"x\":\"y\",\"b\":1}}", &f) == JL_SYNTAX && both("{\"a\":\"x\":\"y\"}}", &f) == JL_SYNTAX &&
	      both("{\"a\":1,\"b\":\"x\":\"y\",\"c\":2}}", &f) == JL_SYNTAX);
	CHECK("fast: blanks around the separators kept", both("{ \"a\" : 1 ,\t\"b\":\"x\" }", &f) == JL_OK && f);
}

/* The fast path in place (the next line as padding) and at a buffer's end. */
static void fast_path_buffers(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];
	int f;
	(void)u; (void)i; (void)buf;
	{
		/* 200 members: more tokens than the first token array holds, and more
		 * keys than the hash table indexes (the rest are found by a scan) */
		static char wide[4096];
		size_t k = (size_t)sprintf(wide, "{\"k0\":0");
		for (int d = 1; d < 200; d++)
			k += (size_t)sprintf(wide + k, ",\"k%d\":%d", d, d);
		sprintf(wide + k, "}");
		CHECK("fast: 200 members", both(wide, &f) == JL_OK && f && j.ntok == 401 &&
		      !jl_i64(&j, JL_FIND(&j, "k3"), &i) && i == 3 && !jl_i64(&j, JL_FIND(&j, "k199"), &i) &&
		      i == 199 && JL_FIND(&j, "k200") < 0);
	}
	{
		/* a line parsed in place: the bytes after it (the next line) are its
		 * padding; the same line at the very end of a buffer is copied */
		static char buf[256];
		const char *l1 = "{\"a\":12}\n{\"b\":\"", *tail = "0123456789012345678901234567890123456789"
			"01234567890123456789012345678901234567890123456789\"}\n";
		snprintf(buf, sizeof buf, "%s%s", l1, tail);
		static struct jline p;
		p.pad_end = buf + strlen(buf);
		CHECK("fast: in place, the next line as padding", jl_parse(&p, buf, 8) == JL_OK && p.fast &&
		      !jl_i64(&p, 2, &i) && i == 12 && p.pad == NULL);
		size_t n = strlen(buf) - 1, s0 = 9;
		CHECK("fast: at the buffer's end, a copy", jl_parse(&p, buf + s0, n - s0) == JL_OK && p.fast &&
		      p.pad != NULL && p.tok[2].start == 6 && p.tok[2].end == 96);
		jl_free(&p);
	}
}

/* Every line of buf (NUL-terminated, lines ending in a newline) parsed by
 * regions of lines (jsonl.h's many_end, as kvio-ingest reads a block) and by
 * the full parser, line by line: the same verdicts, tokens and member
 * lookups. *walked: the lines the region walk or a template took (flat
 * objects in step); templ_lines counts the template's. */
static int templ_lines; /* of region_agrees: the lines a shape's template took */

static int region_agrees(const char *buf, int *walked, int *verdicts, int nv)
{
	static struct jline r, full;
	size_t n = strlen(buf);
	static char pad[8192];
	if (n + JL_PADDING > sizeof pad)
		return 0;
	memcpy(pad, buf, n);
	memset(pad + n, 'x', JL_PADDING);
	r.pad_end = pad + n + JL_PADDING;
	r.many_end = strrchr(buf, '\n') ? pad + (strrchr(buf, '\n') - buf) + 1 : NULL;
	r.many_stop = r.many_skip = NULL;
	*walked = 0;
	int line = 0;
	for (const char *p = pad, *e = pad + n; p < e; line++) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
		jl_fast = 0;
		int e0 = jl_parse(&full, p, len);
		jl_fast = 1;
		int e1 = jl_parse(&r, p, len);
		if (line < nv)
			verdicts[line] = e1;
		if (e0 != e1 || (e0 == JL_OK && (full.ntok != r.ntok || full.nmem != r.nmem)))
			return 0;
		for (int t = 0; e0 == JL_OK && t < r.ntok; t++)
			if (full.tok[t].type != r.tok[t].type || full.tok[t].start != r.tok[t].start ||
			    full.tok[t].end != r.tok[t].end || full.tok[t].size != r.tok[t].size)
				return 0;
		for (int m = 0; e0 == JL_OK && m < full.nmem; m++) {
			uint64_t a = 1, b = 2;
			int ta = jl_find(&full, full.mem[m].key, (size_t)full.mem[m].klen);
			int tb = jl_find(&r, full.mem[m].key, (size_t)full.mem[m].klen);
			if (ta != tb || jl_u64(&full, ta, &a) != jl_u64(&r, tb, &b) || (jl_u64(&full, ta, &a) == 0 && a != b))
				return 0;
		}
		*walked += e1 == JL_OK && (r.walked || r.templ);
		templ_lines += e1 == JL_OK && r.templ;
		p += len + 1;
	}
	return 1;
}

/* The fast path by regions of lines: a broken line does not move the lines
 * after it; what the walk cannot vouch for goes to the line-by-line path. */
static void region_checks(void)
{
	const char *buf =
		"{\"event_type\":\"nvme_cmd\",\"ts\":5,\"user_data\":4294967296}\n" /* 0 ok, walked */
		"{\"c\":{\"d\":1}}\n"                                               /* 1 ok, nested: alone */
		"{\"e\":1}{\"f\":2}\n"                                              /* 2 syntax */
		"   {\"g\" : 1 , \"h\":\"x\"}  \n"                                    /* 3 ok, walked */
		"\n"                                                                /* 4 blank */
		"{\"i\":\"a\\\"b\"}\n"                                             /* 5 ok, an escape: alone */
		"{\"j\":tru}\n"                                                     /* 6 syntax */
		"{}\n"                                                              /* 7 ok, walked */
		"[1,2]\n"                                                           /* 8 not an object */
		"{\"k\":1,}\n"      /* 9 ok: jsmn takes a trailing comma (today's verdict, kept); the walk does not */
		"{\"l\":-0.5e3,\"m\":null,\"n\":false,\"l\":18446744073709551615}\n" /* 10 ok, walked, a duplicate */
		"{\"o\":1} x\n"                                                     /* 11 syntax */
		"{\"p\":7}\n";                                                      /* 12 ok, walked */
	int walked = 0, v[13];
	int want[13] = {JL_OK, JL_OK, JL_SYNTAX, JL_OK, JL_BLANK, JL_OK, JL_SYNTAX, JL_OK, JL_NOTOBJ, JL_OK, JL_OK,
			JL_SYNTAX, JL_OK};
	CHECK("regions: every line as the full parser has it", region_agrees(buf, &walked, v, 13));
	CHECK("regions: the verdicts by hand", !memcmp(v, want, sizeof want));
	CHECK("regions: the flat lines walked (0 3 7 10 12), the rest alone", walked == 5);
	/* an unclosed string runs into the next line: a raw newline in a string,
	 * which simdjson refuses: the region's lines go alone (none is read out
	 * of step, as braces inside a string would be) */
	const char *step = "{\"a\":1}\n{\"b\":\"x}\n{\"c\":2}\n{\"d\":\"y}\n{\"e\":3}\n";
	int vs[5], want_s[5] = {JL_OK, JL_SYNTAX, JL_OK, JL_SYNTAX, JL_OK};
	CHECK("regions: a broken line does not move the next ones", region_agrees(step, &walked, vs, 5) &&
	      !memcmp(vs, want_s, sizeof want_s) && walked == 0);
	const char *utf =
		"{\"a\":1}\n"
		"{\"p\":\"\xff\"}\n" /* invalid UTF-8: the region is refused, its lines go alone */
		"{\"q\":7}\n";
	int vu[3], want_u[3] = {JL_OK, JL_UTF8, JL_OK};
	CHECK("regions: invalid UTF-8 in a region", region_agrees(utf, &walked, vu, 3) &&
	      !memcmp(vu, want_u, sizeof want_u) && walked == 0);
	/* lines of one key layout reuse its table: a key that differs in its 10th
	 * byte, the same keys in another order, a duplicate, are other layouts */
	const char *shapes = "{\"abcdefghij\":1,\"k\":2}\n{\"abcdefghij\":3,\"k\":4}\n{\"abcdefghiX\":5,\"k\":6}\n"
			     "{\"k\":7,\"abcdefghij\":8}\n{\"abcdefghij\":9,\"k\":10,\"k\":11}\n"
			     "{\"abcdefghij\":12,\"k\":13}\n{\"abcdefghijklmnopq\":14}\n{\"abcdefghijklmnopX\":15}\n";
	int vsh[8];
	CHECK("regions: key layouts, each line's keys found as the full parser finds them",
	      region_agrees(shapes, &walked, vsh, 8) && walked == 8);
	const char *many = /* broken again and again */
		"{\"a\":\"x}\n{\"b\":\"x}\n{\"c\":\"x}\n{\"d\":\"x}\n{\"e\":\"x}\n{\"f\":\"x}\n{\"g\":1}\n";
	int vm[7];
	CHECK("regions: lines that keep breaking the region", region_agrees(many, &walked, vm, 7) && vm[6] == JL_OK &&
	      vm[0] == JL_SYNTAX);
}

/* A line of a known key layout, byte for byte the same text between its
 * values, is parsed by the layout's template (no stage 1): the same tokens,
 * values and verdicts as the full parser; any other text goes to the walk
 * or alone, which decides. */
static void template_checks(void)
{
	const char *buf =
		"{\"event_type\":\"nvme_cmd\",\"ts\":5000000180280,\"user_data\":4294967296,\"op\":\"write\",\"x\":null}\n" /* 0 learned */
		"{\"event_type\":\"nvme_cmd\",\"ts\":7,\"user_data\":18446744073709551615,\"op\":\"\",\"x\":true}\n" /* 1 t */
		"{\"event_type\":\"nvme_cmp\",\"ts\":-1.5e3,\"user_data\":0,\"op\":\"a b\",\"x\":\"s\"}\n"      /* 2 t */
		"{\"event_type\":5,\"ts\":12345678901234567890,\"user_data\":1,\"op\":2,\"x\":false}\n"            /* 3 t: 20 digits */
		"{\"event_type\":\"e\",\"ts\":01,\"user_data\":1,\"op\":\"w\",\"x\":1}\n"    /* 4 syntax: a leading zero */
		"{\"event_type\":\"e\",\"ts\":12x,\"user_data\":1,\"op\":\"w\",\"x\":1}\n"   /* 5 syntax */
		"{\"event_type\":\"\xc3\xa9\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1}\n" /* 6 ok, UTF-8: walked */
		"{\"event_type\":\"a\\\"b\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1}\n" /* 7 ok, an escape: alone */
		"{\"event_type\":\"e\", \"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1}\n"   /* 8 ok, a blank: walked */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1}x\n"   /* 9 syntax: text after */
		"{\"event_type\":\"e\",\"ts\":{\"a\":1},\"user_data\":1,\"op\":\"w\",\"x\":1}\n" /* 10 ok, nested */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":tru}\n"  /* 11 syntax */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1,}\n"   /* 12 ok (jsmn's trailing comma) */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":\"\xc3\xa9\"}\n" /* 13 ok, UTF-8: walked */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":1}\n"    /* 14 t */
		"{\"event_type\":\"e\",\"ts\":1,\"user_data\":1,\"op\":\"w\",\"x\":12";      /* 15 syntax: truncated */
	int v[16], walked = 0;
	int want[16] = {JL_OK, JL_OK, JL_OK, JL_OK, JL_SYNTAX, JL_SYNTAX, JL_OK, JL_OK,
			JL_OK, JL_SYNTAX, JL_OK, JL_SYNTAX, JL_OK, JL_OK, JL_OK, JL_SYNTAX};
	templ_lines = 0;
	CHECK("template: every line as the full parser has it", region_agrees(buf, &walked, v, 16));
	CHECK("template: the verdicts by hand", !memcmp(v, want, sizeof want));
	CHECK("template: lines 1 2 3 14 by the template, 0 6 8 13 walked", templ_lines == 4 && walked == 8);
	/* the template's values read back as the line has them; a value cut
	 * at the buffer's end (a growing file's last line) is not completed by
	 * the bytes after it */
	static char pad[512];
	const char *l0 = "{\"a\":1,\"b\":\"xy\"}", *l1 = "{\"a\":18446744073709551615,\"b\":\"z\ty\"}", *l2 = "{\"a\":12";
	size_t n0 = strlen(l0), n1 = strlen(l1), n2 = strlen(l2);
	snprintf(pad, sizeof pad, "%s\n%s\n%s", l0, l1, l2);
	size_t n = strlen(pad);
	for (size_t k = 0; k < JL_PADDING; k++)
		pad[n + k] = k % 2 ? '}' : '9';
	static struct jline t;
	t.pad_end = pad + n + JL_PADDING;
	t.many_end = pad + n0 + 1; /* a region of l0 alone (simdjson's stage 1 refuses l1's TAB) */
	uint64_t u = 0;
	int r0 = jl_parse(&t, pad, n0), w0 = t.walked;
	int r1 = jl_parse(&t, pad + n0 + 1, n1), t1 = t.templ;
	CHECK("template: values of a template line (a TAB in a string, as the full parser takes it)",
	      r0 == JL_OK && w0 && r1 == JL_OK && t1 && !jl_u64(&t, JL_FIND(&t, "a"), &u) &&
	      u == 18446744073709551615ull && JL_STREQ(&t, JL_FIND(&t, "b"), "z\ty"));
	jl_fast = 0;
	CHECK("template: the full parser takes that line too", jl_parse(&j, pad + n0 + 1, n1) == JL_OK);
	jl_fast = 1;
	CHECK("template: a value cut at the buffer's end", jl_parse(&t, pad + n0 + n1 + 2, n2) == JL_SYNTAX && !t.templ);
	jl_free(&t);
}

int main(void)
{
	parser_checks();
	more_parser_checks();
	fast_path_checks();
	fast_path_grammar();
	fast_path_buffers();
	region_checks();
	template_checks();
	jl_free(&j);
	return fails != 0;
}
