/* cli.h — option parsing shared by the commands (cli.c). */
#ifndef KVIO_CLI_H
#define KVIO_CLI_H

/* Option parsing shared by the commands: long options "--name VALUE" or
 * "--name=VALUE". opt_value returns the value and advances *i, or NULL with a
 * one-line usage error when it is missing. */
int opt_is(const char *arg, const char *name);
const char *opt_value(int argc, char **argv, int *i, const char *name);

#endif
