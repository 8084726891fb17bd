/* jsonesc.h — JSON string escaping, as python3's json.dumps (jsonesc.c). */
#ifndef KVIO_JSONESC_H
#define KVIO_JSONESC_H
#include <stddef.h>

/* Encode s as a JSON string body (no quotes) into out, as python3's json.dumps does (ASCII only:
 * \uXXXX for the rest, surrogate pairs above U+FFFF); returns length. out must hold 6*n+1. */
size_t json_escape(const char *s, size_t n, char *out);

#endif
