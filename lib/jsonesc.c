/* jsonesc.c — a string as a JSON string body, byte for byte as python3's
 * json.dumps writes it (ASCII only), so that a driver comparing kvio's JSON
 * with the reference's sees the same text. */
#include "jsonesc.h"

static char *put_u(char *o, unsigned v)
{
	static const char hex[] = "0123456789abcdef";
	*o++ = '\\';
	*o++ = 'u';
	for (int sh = 12; sh >= 0; sh -= 4)
		*o++ = hex[(v >> sh) & 15];
	return o;
}

size_t json_escape(const char *s, size_t n, char *out)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	char *o = out;
	while (p < e) {
		unsigned c = *p;
		switch (c) {
		case '"': *o++ = '\\'; *o++ = '"'; p++; continue;
		case '\\': *o++ = '\\'; *o++ = '\\'; p++; continue;
		case '\n': *o++ = '\\'; *o++ = 'n'; p++; continue;
		case '\r': *o++ = '\\'; *o++ = 'r'; p++; continue;
		case '\t': *o++ = '\\'; *o++ = 't'; p++; continue;
		case '\b': *o++ = '\\'; *o++ = 'b'; p++; continue;
		case '\f': *o++ = '\\'; *o++ = 'f'; p++; continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			*o++ = (char)c;
			p++;
			continue;
		}
		/* everything else as \uXXXX (UTF-16 surrogates above U+FFFF); a byte
		 * that does not start a valid UTF-8 sequence stands for itself */
		unsigned cp = c, len = 1;
		if (c >= 0xc2 && c <= 0xdf)
			cp = c & 0x1f, len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			cp = c & 0x0f, len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			cp = c & 0x07, len = 4;
		if (len > 1 && (size_t)(e - p) >= len) {
			unsigned v = cp, ok = 1;
			for (unsigned k = 1; k < len; k++) {
				if ((p[k] & 0xc0) != 0x80)
					ok = 0;
				v = v << 6 | (p[k] & 0x3f);
			}
			if (ok && !(len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) &&
			    !(len == 4 && (v < 0x10000 || v > 0x10ffff))) {
				if (v > 0xffff) {
					v -= 0x10000;
					o = put_u(o, 0xd800 | (v >> 10));
					o = put_u(o, 0xdc00 | (v & 0x3ff));
				} else {
					o = put_u(o, v);
				}
				p += len;
				continue;
			}
		}
		o = put_u(o, c);
		p++;
	}
	*o = 0;
	return o - out;
}
