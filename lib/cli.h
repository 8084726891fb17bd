/* cli.h — the command table (git-style builtins) and shared option parsing. */
#ifndef KVIO_CLI_H
#define KVIO_CLI_H

int cmd_ingest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_kvio2perfetto(int argc, char **argv);

/* Option parsing shared by the commands: long options "--name VALUE" or
 * "--name=VALUE". opt_value returns the value and advances *i, or NULL with a
 * one-line usage error when it is missing. */
int opt_is(const char *arg, const char *name);
const char *opt_value(int argc, char **argv, int *i, const char *name);

#endif
