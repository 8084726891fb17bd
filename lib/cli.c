/* cli.c — option parsing shared by the commands (cli.h). */
#include "cli.h"
#include "util.h"
#include <string.h>

int opt_is(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc) {
		kvio_err("%s needs a value (see --help)", name);
		return NULL;
	}
	return argv[++*i];
}
