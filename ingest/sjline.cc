// sjline.cc — see sjline.h. The one C++ file of kvio: simdjson (Debian's
// libsimdjson-dev) behind a C interface. Stage 1 (structural indexing and UTF-8
// validation) runs in the kernel simdjson's library picks for this CPU at run
// time; the On-Demand walk below is header code, built without -march so the
// binary runs on any x86-64.
#include "sjline.h"
#include <simdjson.h>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

using namespace simdjson;

struct sjline {
	ondemand::parser parser; // one line at a time (sj_flat)
	// A region of lines: simdjson's stage 1 (the kernel chosen for this CPU
	// at run time) indexes its structural characters, walked here line by line.
	std::unique_ptr<internal::dom_parser_implementation> stage1;
	size_t cap;
	uint32_t nidx; // the region's structural indexes
};

extern "C" struct sjline *sj_new(void)
{
	sjline *p = new (std::nothrow) sjline();
	if (p) {
		p->cap = 0;
		p->nidx = 0;
	}
	return p;
}

extern "C" void sj_free(struct sjline *p)
{
	delete p;
}

extern "C" const char *sj_kernel(void)
{
	return get_active_implementation()->name().data();
}

// Length of a scalar's raw text without the whitespace simdjson keeps after it.
static size_t trim_len(std::string_view raw)
{
	size_t l = raw.size();
	while (l && (raw[l - 1] == ' ' || raw[l - 1] == '\t'))
		l--;
	return l;
}

// s[a..b) is blanks around one comma (comma 1) or blanks alone (comma 0).
static bool separator(const char *a, const char *b, bool comma)
{
	for (; a < b; a++) {
		if (*a == ',' && comma)
			comma = false;
		else if (*a != ' ' && *a != '\t')
			return false;
	}
	return !comma;
}

extern "C" int sj_flat(struct sjline *p, const char *s, size_t n, jsmntok_t *tok, int tokcap)
{
	ondemand::document doc;
	ondemand::object obj;
	if (p->parser.iterate(s, n, n + SJ_PADDING).get(doc) || doc.get_object().get(obj))
		return 0;
	const char *end = s + n;
	const char *pe = s + 1; // past the '{', then past each value
	int nt = 1;
	for (auto fr : obj) {
		ondemand::field f;
		if (std::move(fr).get(f))
			return 0;
		const char *k = reinterpret_cast<const char *>(f.key().raw()); // just after the quote
		std::string_view raw = f.value().raw_json_token();
		const char *v = raw.data();
		size_t l = trim_len(raw);
		if (v <= k || v + l > end || l == 0 || *v == '{' || *v == '[') // nested: the full parser's
			return 0;
		// On-Demand does not check what lies between a value and the next
		// key ("a":"x":"y" passed): blanks, then one comma after a value
		if (!separator(pe, k - 1, nt > 1))
			return 0;
		// the key's closing quote: back from the value over the colon
		const char *ke = v - 1;
		while (ke > k && (*ke == ' ' || *ke == '\t'))
			ke--;
		if (ke == k || *ke-- != ':')
			return 0;
		while (ke > k && (*ke == ' ' || *ke == '\t'))
			ke--;
		if (ke < k || *ke != '"')
			return 0;
		if (nt + 2 > tokcap)
			return -1;
		tok[nt++] = jsmntok_t{JSMN_STRING, (int)(k - s), (int)(ke - s), 1};
		if (*v == '"') {
			if (l < 2 || v[l - 1] != '"')
				return 0;
			tok[nt++] = jsmntok_t{JSMN_STRING, (int)(v + 1 - s), (int)(v + l - 1 - s), 0};
		} else {
			tok[nt++] = jsmntok_t{JSMN_PRIMITIVE, (int)(v - s), (int)(v + l - s), 0};
		}
		pe = v + l;
	}
	// after the last value (or the '{'): blanks, the '}' closing the line's
	// text (jsonl.c trimmed the blanks after it): {"a":1}} passed
	while (pe < end && (*pe == ' ' || *pe == '\t'))
		pe++;
	if (pe != end - 1 || *pe != '}')
		return 0;
	// 3.0.1 has no at_end(): past the object, the location must be out of bounds
	const char *loc;
	if (doc.current_location().get(loc) != OUT_OF_BOUNDS)
		return 0;
	tok[0] = jsmntok_t{JSMN_OBJECT, 0, (int)n, (nt - 1) / 2};
	return nt;
}

extern "C" int sj_many_begin(struct sjline *p, const char *s, size_t n)
{
	if (n > 0xffffffffu - 64)
		return -1;
	if (!p->stage1 || p->cap < n) {
		size_t cap = n < 65536 ? 65536 : n;
		error_code e = p->stage1 ? p->stage1->allocate(cap, 64)
					 : get_active_implementation()->create_dom_parser_implementation(cap, 64, p->stage1);
		if (e)
			return -1;
		p->cap = cap;
	}
	// invalid UTF-8, a control character in a string, an unclosed string:
	// refused, the region's lines go one at a time
	if (p->stage1->stage1(reinterpret_cast<const uint8_t *>(s), n, stage1_mode::regular))
		return -1;
	p->nidx = p->stage1->n_structural_indexes;
	return 0;
}

extern "C" const uint32_t *sj_many_index(const struct sjline *p, uint32_t *n)
{
	*n = p->nidx;
	return p->stage1->structural_indexes.get();
}
