/* label.c — what the formatters (fmt_text.c, fmt_json.c) share: a file's
 * rows, a label by name, the lines a label's text report collects, and
 * capture.sql's counter columns. */
#include "report.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* capture: the ingest's counters that the database has. */
const char *const capture_keys[] = {"malformed_lines", "truncated_tail", "drops", "cq_overflow", "clock_anomalies",
				    "cmp_unpaired", "cmp_after_horizon", "late_lines", "completion_probe", NULL};

const struct rows *report_rows(const struct rctx *c, const char *file)
{
	for (int i = 0; i < c->rn->nfiles; i++)
		if (!strcmp(c->rn->files[i], file))
			return c->rn->res[i].done ? &c->rn->res[i].rows : NULL;
	return NULL;
}

struct label *find_label(const struct rctx *c, const char *name)
{
	for (int i = 0; i < c->nl; i++)
		if (name && !strcmp(c->ls[i].name, name))
			return &c->ls[i];
	return NULL;
}

/* Format fmt into a new line at the end of v. */
static void vsay(struct vec *v, const char *fmt, va_list ap)
{
	char buf[2048];
	vsnprintf(buf, sizeof buf, fmt, ap);
	*(char **)vec_push(v, sizeof(char *)) = xstrdup(buf);
}

void say(struct label *L, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(&L->text, fmt, ap);
	va_end(ap);
}

void say_tail(struct label *L, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(&L->tail, fmt, ap);
	va_end(ap);
}
