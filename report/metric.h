/* metric.h — the metrics campaigns decide with, and the --fail-on gates (metric.c). */
#ifndef KVIO_METRIC_H
#define KVIO_METRIC_H
#include "json.h"
#include <stddef.h>

enum unit { U_NS, U_FRAC, U_NUM };

struct metric {
	const char *name;   /* as --fail-on and --compare name it */
	const char *path;   /* its key in a label's JSON report, dotted */
	int worse;          /* +1: bigger is worse; -1: bigger is better */
	enum unit unit;     /* U_NS: nanoseconds; U_FRAC: a share (0..1); U_NUM: a number */
	const char *sample; /* its value set in sql/samples.sql (the within-run test), NULL: none */
	int compare;        /* in --compare's table */
};
extern const struct metric metrics[]; /* NULL-terminated */

/* The metric of name[0..len), or NULL. */
const struct metric *metric_named(const char *name, size_t len);
/* Metric m of a label's JSON report into *v: 1, or 0 when the label has none. */
int metric_value(const struct jnode *label, const struct metric *m, double *v);
/* v in m's unit for people (ms/us/ns, a percentage, a number). */
void metric_fmt(char *buf, size_t n, const struct metric *m, double v);

/* --fail-on SPEC: qd1; METRIC>VALUE or METRIC<VALUE (a time with ns/us/ms/s, a
 * share with % or as a fraction); regress:METRIC>N% (with --compare: the
 * comparison says worse, significantly, by more than N%). */
enum gate_kind { GATE_QD1, GATE_VALUE, GATE_REGRESS };
struct gate {
	const char *spec;
	enum gate_kind kind;
	const struct metric *m;
	char op;      /* '>' or '<' */
	double limit; /* in m's unit (GATE_REGRESS: a fraction) */
};
/* Parse spec into g: 0, or -1 after a usage line (an unknown metric lists the names). */
int gate_parse(const char *spec, struct gate *g);
/* Whether value gate g fires on a label's report (lab; db NULL or its
 * database's path, for the line); a firing says one line on stderr. */
int gate_value(const struct gate *g, const char *db, const char *label, const struct jnode *lab);
/* Whether qd1 gate g fires on a label's report (its load or store verdict is
 * QD~1), the same way. */
int gate_qd1(const struct gate *g, const char *db, const char *label, const struct jnode *lab);

#endif
