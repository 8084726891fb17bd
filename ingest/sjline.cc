// sjline.cc — see sjline.h. The one C++ file of kvio: simdjson (Debian's
// libsimdjson-dev) behind a C interface. Stage 1 (structural indexing and UTF-8
// validation) runs in the kernel simdjson's library picks for this CPU at run
// time; the On-Demand walk below is header code, built without -march so the
// binary runs on any x86-64.
#include "sjline.h"
#include <simdjson.h>
#include <cstring>
#include <new>
#include <utility>

using namespace simdjson;

struct sjline {
	ondemand::parser parser;
};

extern "C" struct sjline *sj_new(void)
{
	return new (std::nothrow) sjline();
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

extern "C" int sj_flat(struct sjline *p, const char *s, size_t n, jsmntok_t *tok, int tokcap)
{
	ondemand::document doc;
	ondemand::object obj;
	if (p->parser.iterate(s, n, n + SJ_PADDING).get(doc) || doc.get_object().get(obj))
		return 0;
	const char *end = s + n;
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
	}
	// 3.0.1 has no at_end(): past the object, the location must be out of bounds
	const char *loc;
	if (doc.current_location().get(loc) != OUT_OF_BOUNDS)
		return 0;
	tok[0] = jsmntok_t{JSMN_OBJECT, 0, (int)n, (nt - 1) / 2};
	return nt;
}
