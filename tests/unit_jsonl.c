/* unit_jsonl.c — the JSON line layer: exact u64, escapes, number grammar,
 * UTF-8 checks. Prints "ok - ..." / "FAIL - ..." lines (counted by t_unit.sh). */
#include "../ingest/jsonl.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - unit: %s\n", name); \
	else { printf("FAIL - unit: %s\n", name); fails++; } } while (0)

static struct jline j;
static int parse(const char *s) { return jl_parse(&j, s, strlen(s)); }

int main(void)
{
	uint64_t u = 0;
	int64_t i = 0;
	char buf[256];

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
	jl_free(&j);
	return fails != 0;
}
