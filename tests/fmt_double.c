/* fmt_double.c — prints kvio's JSON rendering (report/json.c fmt_double) of
 * each double read from stdin as a C99 hex float, one per line; t_10_unit.sh
 * compares the output with python3's repr of the same doubles. */
#include "../report/json.h"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char line[128], buf[64];
	while (fgets(line, sizeof line, stdin)) {
		fmt_double(buf, sizeof buf, strtod(line, NULL));
		puts(buf);
	}
	return 0;
}
