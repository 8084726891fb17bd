/* jsonfmt.c — kvio's JSON rendering for t_10_unit.sh to compare with python3's json:
 *   jsonfmt d   each line of stdin is a double as a C99 hex float; prints
 *               report/json.c's fmt_double of it (python3: repr)
 *   jsonfmt s   each line is a string as hex bytes; prints it as a JSON string
 *               the way kvio-report writes strings (python3: json.dumps) */
#include "../lib/jsonesc.h"
#include "../report/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static char line[8192], raw[4096], esc[6 * 4096 + 1];
	char buf[64];
	int strings = argc > 1 && argv[1][0] == 's';
	while (fgets(line, sizeof line, stdin)) {
		if (!strings) {
			fmt_double(buf, sizeof buf, strtod(line, NULL));
			puts(buf);
			continue;
		}
		size_t n = 0;
		for (const char *p = line; p[0] && p[1] && p[0] != '\n' && n < sizeof raw; p += 2) {
			char hx[3] = {p[0], p[1], 0};
			raw[n++] = (char)strtoul(hx, NULL, 16);
		}
		json_escape(raw, n, esc);
		printf("\"%s\"\n", esc);
	}
	return 0;
}
