/* compare_html.c — kvio-report --compare --html FILE: the comparison as one
 * self-contained page (offline: Chart.js inlined, as --html's page): per NEW side
 * and label, the table of the text output and a chart of each metric's relative
 * change, its 95% interval as a bar and the change itself as a point, coloured by
 * the verdict. The numbers are the entries' (compare.c), nothing recomputed. */
#include "compare.h"
#include "html.h"
#include "report.h"
#include "../lib/outfile.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const char kvio_html_css[]; /* build/htmlassets.c */

/* Draws each block's chart from the JSON in #kvio-cmp, and writes what it drew
 * (charts, points, errors) into #kvio-summary for the tests. */
static const char cmp_js[] =
	"(function () {\n"
	"  'use strict';\n"
	"  var errors = [], summary = {charts: [], errors: errors};\n"
	"  window.addEventListener('error', function (e) { errors.push('error: ' + e.message); });\n"
	"  var COLOR = {slower: '#d62728', faster: '#2ca02c'};\n"
	"  var data = JSON.parse(document.getElementById('kvio-cmp').textContent);\n"
	"  data.blocks.forEach(function (b, i) {\n"
	"    var rows = b.rows.filter(function (r) { return r.rel !== null; });\n"
	"    var pct = function (v, r) { return v === null || r.base === 0 ? null : 100 * v / Math.abs(r.base); };\n"
	"    var names = rows.map(function (r) { return r.metric; });\n"
	"    var col = rows.map(function (r) { return COLOR[r.verdict] || '#9e9e9e'; });\n"
	"    var ci = rows.map(function (r) {\n"
	"      var lo = pct(r.ci_low, r), hi = pct(r.ci_high, r); return lo === null ? null : [lo, hi]; });\n"
	"    var pts = rows.map(function (r) { return {x: 100 * r.rel, y: r.metric}; });\n"
	"    try {\n"
	"      new Chart(document.getElementById('cmp-' + i), {\n"
	"        type: 'bar',\n"
	"        data: {labels: names, datasets: [\n"
	"          {label: '95% interval of the change (%)', data: ci, backgroundColor: col, barPercentage: 0.5, order: 2},\n"
	"          {type: 'scatter', label: 'change (%)', data: pts, backgroundColor: '#000', pointRadius: 4, order: 1}]},\n"
	"        options: {indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,\n"
	"          scales: {x: {title: {display: true, text: 'new vs base (%)'}},\n"
	"            y: {type: 'category', labels: names, ticks: {autoSkip: false}}},\n"
	"          plugins: {legend: {position: 'bottom'}}}\n"
	"      });\n"
	"      summary.charts.push({id: 'cmp-' + i, metrics: names.length,\n"
	"        intervals: ci.filter(function (c) { return c !== null; }).length});\n"
	"    } catch (e) { errors.push('chart ' + i + ': ' + e.message); }\n"
	"  });\n"
	"  document.getElementById('kvio-summary').textContent = JSON.stringify(summary);\n"
	"})();\n";

static void put_num(FILE *f, double v, int has)
{
	if (has && isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

/* Block (side k, label)'s rows as JSON for the chart. */
static void put_rows(FILE *f, const struct cmp_entry *e, size_t n, int k, const char *label)
{
	int first = 1;
	fputs("\"rows\":[", f);
	for (size_t i = 0; i < n; i++) {
		if (e[i].side != k || strcmp(e[i].label, label))
			continue;
		fputs(first ? "\n{\"metric\":" : ",\n{\"metric\":", f);
		html_jstr(f, e[i].m->name);
		fputs(",\"base\":", f);
		put_num(f, e[i].base, 1);
		fputs(",\"rel\":", f);
		put_num(f, e[i].rel, 1);
		fputs(",\"ci_low\":", f);
		put_num(f, e[i].lo, e[i].has_ci);
		fputs(",\"ci_high\":", f);
		put_num(f, e[i].hi, e[i].has_ci);
		fputs(",\"verdict\":", f);
		html_jstr(f, e[i].verdict);
		fputs("}", f);
		first = 0;
	}
	fputs("]", f);
}

/* One entry's row of the table: the text output's columns. */
static void put_row(FILE *f, const struct cmp_entry *e)
{
	struct cmp_cells c;
	cmp_cells(e, &c);
	const char *cls = !strcmp(e->verdict, "slower") ? "bad" : !strcmp(e->verdict, "faster") ? "good" : "same";
	fprintf(f, "<tr class=\"%s\"><td>", cls);
	html_text(f, e->m->name);
	fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s%s%s</td></tr>\n", c.base,
		c.new_, c.delta, c.rel, c.ci, c.p, e->verdict, e->within_noise ? " (within noise)" : "", e->negligible ? " (under 2%)" : "");
}

/* The page's blocks (a NEW side's label): heading, the test's words, table, chart. */
static void put_blocks(FILE *f, const struct cmp_entry *e, size_t n, const struct side *sides, int nsides, int *nb)
{
	*nb = 0;
	for (int k = 1; k < nsides; k++) {
		fputs("<h2>base ", f);
		html_text(f, sides[0].arg);
		fprintf(f, " (%d run%s) vs new ", sides[0].n, sides[0].n == 1 ? "" : "s");
		html_text(f, sides[k].arg);
		fprintf(f, " (%d run%s)</h2>\n<p class=\"note\">%s</p>\n", sides[k].n, sides[k].n == 1 ? "" : "s",
			sides[0].n == 1 ? "One run each: the test is within the run, over its commands or objects (as if "
					  "independent: they are not), run-to-run variance is not measured, and a change "
					  "under 2% is no change."
					: "Across runs: each run's value one sample (Mann-Whitney U, a bootstrap of the mean "
					  "over runs); the verdict rests on the interval.");
		for (size_t i = 0; i < n; i++) {
			if (e[i].side != k || (i && e[i - 1].side == k && !strcmp(e[i - 1].label, e[i].label)))
				continue;
			fputs("<div class=\"card\"><h3>[", f);
			html_text(f, e[i].label);
			fputs("]</h3>\n<table class=\"cmp\"><tr><th>metric</th><th>base</th><th>new</th><th>delta</th>"
			      "<th>rel</th><th>95% interval of the delta</th><th>p</th><th>verdict</th></tr>\n", f);
			size_t j = i;
			for (; j < n && e[j].side == k && !strcmp(e[j].label, e[i].label); j++)
				put_row(f, &e[j]);
			/* a row per metric, each tall enough for its name */
			fprintf(f, "</table>\n<div class=\"plot\" style=\"height: %zupx\"><canvas id=\"cmp-%d\"></canvas></div></div>\n",
				24 * (j - i) + 90, (*nb)++);
		}
	}
}

/* The chart data: one block per (NEW side, label), in the order of put_blocks. */
static void put_data(FILE *f, const struct cmp_entry *e, size_t n, int nsides)
{
	int first = 1;
	fputs("<script type=\"application/json\" id=\"kvio-cmp\">{\"blocks\":[", f);
	for (int k = 1; k < nsides; k++)
		for (size_t i = 0; i < n; i++) {
			if (e[i].side != k || (i && e[i - 1].side == k && !strcmp(e[i - 1].label, e[i].label)))
				continue;
			fputs(first ? "\n{\"label\":" : ",\n{\"label\":", f);
			html_jstr(f, e[i].label);
			fputc(',', f);
			put_rows(f, e, n, k, e[i].label);
			fputs("}", f);
			first = 0;
		}
	fputs("]}</script>\n", f);
}

int compare_html(struct outfile *o, const char *chartjs, const struct cmp_entry *e, size_t n, const struct side *sides,
		 int nsides)
{
	FILE *f = outfile_stdio(o);
	if (!f) {
		outfile_abort(o);
		return 2;
	}
	int nb;
	fputs(html_page_head, f);
	fputs("<title>kvio compare: ", f);
	html_text(f, sides[0].arg);
	fprintf(f, "</title>\n<style>\n%s"
		   "table.cmp { border-collapse: collapse; font-size: 13px; margin: 6px 0; }\n"
		   "table.cmp td, table.cmp th { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: right; }\n"
		   "table.cmp td:first-child, table.cmp td:last-child { text-align: left; }\n"
		   "tr.bad td:last-child { color: #c62828; font-weight: 600; } tr.good td:last-child { color: #2a8a3e; }\n"
		   "</style>\n</head><body>\n<h1>kvio-report --compare</h1>\n", kvio_html_css);
	put_blocks(f, e, n, sides, nsides, &nb);
	if (!nb)
		fputs("<p>No label on both sides.</p>\n", f);
	put_data(f, e, n, nsides);
	fputs("<pre id=\"kvio-summary\"></pre>\n<script>\n", f);
	fputs(chartjs, f);
	fprintf(f, "\n</script>\n<script>\n%s</script>\n</body></html>\n", cmp_js);
	return outfile_commit(o);
}
