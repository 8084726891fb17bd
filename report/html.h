/* html.h — kvio-report --html: the report as one self-contained page. */
#ifndef KVIO_HTML_H
#define KVIO_HTML_H
#include "report.h"
#include <stdio.h>

/* What the page is made of: the labels as the text and JSON formatters left
 * them (their JSON objects and text lines), and the rows of the sql/html_*.sql
 * files (each row a point: chart, label, role, x, y). */
struct html_page {
	const char *dbpath;
	const struct label *ls; /* the reported labels, in report order */
	int nl;
	const struct rows *const *series; /* one per html_*.sql file that ran */
	int nseries;
	int64_t batch_gap_ns;
	const char *chartjs; /* html_chartjs()'s text */
};

/* Chart.js from its installed path ($KVIO_CHARTJS overrides it), checked to
 * be safe inside <script>: malloc'd, or NULL after a one-line error. */
char *html_chartjs(void);

/* Write the page into o (outfile_open'ed) and commit it: it appears whole or
 * not at all. 0, or 2 after a one-line error. */
struct outfile;
int html_write(struct outfile *o, const struct html_page *p);

/* s as HTML text or attribute content (& < > " escaped). */
void html_text(FILE *f, const char *s);
/* s as a JSON string inside a <script> element (< > & escaped too: no "</script"). */
void html_jstr(FILE *f, const char *s);
/* A page's <head> start: charset, the Content-Security-Policy (inline only, no network), viewport. */
extern const char html_page_head[];

/* The installed Chart.js that html_write inlines. */
#define KVIO_CHARTJS_PATH "/usr/share/javascript/chart.js/chart.min.js"

#endif
