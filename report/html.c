/* html.c — kvio-report --html: the report as one self-contained page.
 *
 * The charts' points are the rows of the sql/html_*.sql files (each row:
 * chart, label, role, x, y; one file per chart family, each run right after
 * the metric file whose samples it draws). This file groups the rows into
 * series, gives each chart its title, axes and units from the table below,
 * and writes one page: the banner of each label (the JSON report's own values,
 * formatted by its formatter), the chart specs as JSON, Chart.js (read from
 * its installed path) and html.js that draws them, and the text report's
 * lines. Nothing on the page is fetched: a CSP forbids every connection. */
#include "html.h"
#include "../lib/outfile.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char kvio_html_js[], kvio_html_css[]; /* build/htmlassets.c */

/* ---- the charts ------------------------------------------------------------ */

enum { N_ALWAYS = 1, N_CMP = 2, N_AB = 4, N_CMPALL = 8 }; /* kind.need */
enum { MARK_NONE, MARK_SVC, MARK_ZERO };     /* kind.mark */

struct axis {
	const char *label, *unit;
	double scale; /* display value = row value * scale */
	int log;      /* drawn log when every value allows */
};

/* One chart, or one family of charts (id ending in ':', e.g. serving:<op>). */
struct kind {
	const char *id;
	const char *title; /* %s: the id's part after the family prefix */
	const char *type;  /* line | step | scatter | bar (html.js) */
	struct axis x, y;
	int need;          /* N_ALWAYS: shown (saying why) without rows; N_CMP: an arm without
			      completions lacks part (cmp), N_CMPALL: all of it; N_AB: shown when
			      more than one label is reported */
	const char *empty; /* the note when no arm has a point */
	const char *cmp;   /* what an arm without completions lacks here */
	int mark;          /* MARK_SVC: qd1's service time per arm; MARK_ZERO: x = 0 */
};

#define US {"", "µs", 1e-3, 1}
#define PCT(what) {what " ≤ x (%)", "%", 100, 0}
#define TIME_MS {"time since the capture's start (ms)", "ms", 1e-6, 0}
static const struct kind kinds[] = {
	{"lat:read", "Per-command latency CDF — read", "line", {"command latency (µs)", "µs", 1e-3, 1},
	 PCT("commands"), N_ALWAYS | N_CMP | N_CMPALL, "no read with a completion", "per-command latency", 0},
	{"lat:write", "Per-command latency CDF — write", "line", {"command latency (µs)", "µs", 1e-3, 1},
	 PCT("commands"), N_ALWAYS | N_CMP | N_CMPALL, "no write with a completion", "per-command latency", 0},
	{"qd1:load", "QD1 picture — submission gaps within load objects", "step",
	 {"gap between an object's consecutive submits (µs)", "µs", 1e-3, 1}, {"gaps per bin (10 per decade)", "gaps", 1, 0},
	 N_ALWAYS | N_CMP, "no load object with ≥ 4 commands", "service-time line", MARK_SVC},
	{"qd1:store", "QD1 picture — submission gaps within store objects", "step",
	 {"gap between an object's consecutive submits (µs)", "µs", 1e-3, 1}, {"gaps per bin (10 per decade)", "gaps", 1, 0},
	 N_ALWAYS | N_CMP, "no store object with ≥ 4 commands", "service-time line", MARK_SVC},
	{"qd:time", "Achieved queue depth over time (400 buckets)", "line", TIME_MS,
	 {"queue depth (commands in flight)", "", 1, 0}, N_ALWAYS | N_CMP | N_CMPALL, "no command with a completion", "queue depth", 0},
	{"qd:depth", "Time at each queue depth", "bar", {"queue depth", "", 1, 0},
	 {"share of the swept time (%)", "%", 100, 1}, N_ALWAYS | N_CMP | N_CMPALL, "no command with a completion", "queue depth", 0},
	{"batch:size", "Inferred batch sizes", "bar", {"commands per batch", "commands", 1, 1},
	 {"batches", "batches", 1, 1}, N_ALWAYS, "no pool commands", NULL, 0},
	{"span:store", "Object span CDF — store", "line", {"object span (ms)", "ms", 1e-6, 1}, PCT("objects"),
	 N_ALWAYS, "no store object", NULL, 0},
	{"span:load", "Object span CDF — load", "line", {"object span (ms)", "ms", 1e-6, 1}, PCT("objects"),
	 N_ALWAYS, "no load object", NULL, 0},
	{"span:delete", "Object span CDF — delete", "line", {"object span (ms)", "ms", 1e-6, 1}, PCT("objects"),
	 0, NULL, NULL, 0},
	{"pre:store", "Pre-submit time and device window CDF — store", "line", {"time (ms)", "ms", 1e-6, 1},
	 PCT("objects"), N_ALWAYS | N_CMP, "no store object", "device window", 0},
	{"pre:load", "Pre-submit time and device window CDF — load", "line", {"time (ms)", "ms", 1e-6, 1},
	 PCT("objects"), N_ALWAYS | N_CMP, "no load object", "device window", 0},
	{"pre:delete", "Pre-submit time and device window CDF — delete", "line", {"time (ms)", "ms", 1e-6, 1},
	 PCT("objects"), N_CMP, NULL, "device window", 0},
	{"tput:mbs", "Throughput over time (400 buckets)", "line", TIME_MS, {"MB/s submitted (pool data_len)", "MB/s", 1, 0},
	 N_ALWAYS, "no pool commands", NULL, 0},
	{"tput:cmds", "Commands submitted per ms over time (400 buckets)", "line", TIME_MS,
	 {"commands per ms", "cmds/ms", 1, 0}, N_ALWAYS, "no pool commands", NULL, 0},
	{"slba:write", "Space axis — write start LBA over time", "scatter", TIME_MS, {"start LBA (slba)", "", 1, 0},
	 N_ALWAYS, "no pool writes", NULL, 0},
	{"tp:gap", "TP barrier — per-chunk all-shard skew CDF", "line",
	 {"last − first object end of a chunk (ms)", "ms", 1e-6, 1}, PCT("chunks"), 0, NULL, NULL, 0},
	{"serving:", "Serving span CDF — %s", "line", {"span (ms)", "ms", 1e-6, 1}, PCT("spans"), 0, NULL, NULL, 0},
	{"ab:load", "A/B paired object span delta CDF — load (arm − base)", "line",
	 {"span delta, arm − base (ms; < 0: the arm is faster)", "ms", 1e-6, 0}, PCT("pairs"), N_AB,
	 "no load object paired across the arms", NULL, MARK_ZERO},
	{"ab:store", "A/B paired object span delta CDF — store (arm − base)", "line",
	 {"span delta, arm − base (ms; < 0: the arm is faster)", "ms", 1e-6, 0}, PCT("pairs"), N_AB,
	 "no store object paired across the arms", NULL, MARK_ZERO},
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])
/* a chart an edited sql/html_*.sql file names that the table does not know */
static const struct kind unknown_kind = {"", "%s", "line", {"x", "", 1, 0}, {"y", "", 1, 0}, 0, NULL, NULL, 0};

/* A series: rows r0..r1 of one html file, of one (chart, label, role). */
struct series {
	const struct rows *r;
	size_t r0, r1;
	const char *label, *role;
	int color; /* the label's index */
};

struct chart {
	const struct kind *k;
	char id[96];
	struct vec ser; /* struct series */
};

static const struct kind *kind_of(const char *id)
{
	for (int i = 0; i < NKINDS; i++) {
		size_t n = strlen(kinds[i].id);
		if (kinds[i].id[n - 1] == ':' ? !strncmp(id, kinds[i].id, n) : !strcmp(id, kinds[i].id))
			return &kinds[i];
	}
	return &unknown_kind;
}

static int label_index(const struct html_page *p, const char *name)
{
	for (int i = 0; i < p->nl; i++)
		if (name && !strcmp(p->ls[i].name, name))
			return i;
	return -1;
}

/* The JSON value at dotted path ("qd1.load.svc") in R, or NULL. */
static const struct jnode *jpath(const struct jnode *R, const char *path)
{
	char key[64];
	while (R && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		R = jn_get(R, key);
		path += n + (path[n] == '.');
	}
	return R;
}

/* 2: the label has commands with completions; 1: commands, none completed; 0: no commands. */
static int label_cmp(const struct label *L)
{
	const struct jnode *n = jpath(L->R, "commands.n"), *c = jpath(L->R, "commands.real_cover");
	if (!n || n->t != J_INT || n->i == 0)
		return 0;
	return c && c->t == J_REAL && c->d > 0 ? 2 : 1;
}

/* The chart with id in cs (appending it when new). */
static struct chart *chart_get(struct vec *cs, const char *id)
{
	for (size_t i = 0; i < cs->n; i++)
		if (!strcmp(VEC_AT(cs, struct chart, i).id, id))
			return &VEC_AT(cs, struct chart, i);
	struct chart *c = vec_push(cs, sizeof *c);
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s", id);
	c->k = kind_of(id);
	return c;
}

/* Group the rows of every html file into charts of series: a run of rows with
 * the same (chart, label, role) is one series. Rows of labels not reported,
 * and A/B rows of a label without an ab object (its base not reported), are
 * left out. */
static void group_rows(const struct html_page *p, struct vec *cs)
{
	for (int f = 0; f < p->nseries; f++) {
		const struct rows *r = p->series[f];
		struct series *last = NULL;
		for (size_t k = 0; r && k < r->nrow; k++) {
			const char *id = cstr(cell(r, k, "chart")), *label = cstr(cell(r, k, "label"));
			const char *role = cstr(cell(r, k, "role"));
			int li = label_index(p, label);
			if (!id || li < 0 || (!strncmp(id, "ab:", 3) && !jn_get(p->ls[li].R, "ab")))
				continue;
			if (last && last->r1 == k && !strcmp(last->label, label) && !strcmp(last->role, role ? role : "") &&
			    !strcmp(cstr(cell(r, last->r0, "chart")), id)) {
				last->r1 = k + 1;
				continue;
			}
			struct chart *c = chart_get(cs, id);
			last = vec_push(&c->ser, sizeof *last);
			*last = (struct series){r, k, k + 1, label, role ? role : "", li};
		}
	}
}

/* ---- writing ---------------------------------------------------------------- */

/* s as HTML text (or attribute) content. */
void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* s as a JSON string inside a <script> element: '<', '>' and '&' escaped too,
 * so no "</script" can appear. */
void html_jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&')
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* A scalar JSON value as the JSON report writes it (strings unquoted). */
static void jn_text(const struct jnode *v, char *buf, size_t n)
{
	if (!v)
		snprintf(buf, n, "null");
	else if (v->t == J_INT)
		snprintf(buf, n, "%lld", (long long)v->i);
	else if (v->t == J_REAL)
		fmt_double(buf, n, v->d);
	else if (v->t == J_STR)
		snprintf(buf, n, "%s", v->s);
	else
		snprintf(buf, n, v->t == J_BOOL ? (v->i ? "true" : "false") : "null");
}

/* Whether a cell is a finite number. */
static int num_ok(const struct cell *c)
{
	return c && (c->t == SQLITE_INTEGER || (c->t == SQLITE_FLOAT && isfinite(c->d)));
}

/* A number cell (num_ok) as JSON. */
static void put_num(FILE *f, const struct cell *c)
{
	char b[40];
	if (c->t == SQLITE_INTEGER)
		fprintf(f, "%lld", (long long)c->i);
	else {
		fmt_double(b, sizeof b, c->d);
		fputs(b, f);
	}
}

static void put_axis(FILE *f, const char *name, const struct axis *a, int zero)
{
	char b[40];
	fmt_double(b, sizeof b, a->scale);
	fprintf(f, "\"%s\":{\"label\":", name);
	html_jstr(f, a->label);
	fputs(",\"unit\":", f);
	html_jstr(f, a->unit);
	fprintf(f, ",\"scale\":%s,\"log\":%d,\"zero\":%d}", b, a->log, zero);
}

/* One series' points as "xy":[x,y,...] (rows with a NULL x or y left out). */
static void put_points(FILE *f, const struct series *s)
{
	fputs("\"xy\":[", f);
	int first = 1;
	for (size_t k = s->r0; k < s->r1; k++) {
		const struct cell *x = cell(s->r, k, "x"), *y = cell(s->r, k, "y");
		if (!num_ok(x) || !num_ok(y))
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		put_num(f, x);
		fputc(',', f);
		put_num(f, y);
	}
	fputc(']', f);
}

static void put_series_head(FILE *f, const char *name, const char *label, const char *role, int color, int marker)
{
	fputs("{\"name\":", f);
	html_jstr(f, name);
	fputs(",\"label\":", f);
	html_jstr(f, label);
	fputs(",\"role\":", f);
	html_jstr(f, role);
	fprintf(f, ",\"color\":%d,\"marker\":%d,", color, marker);
}

/* The marker lines of chart c: each arm's qd1 service time (from the JSON
 * report's qd1.<op>.svc, exactly as written there), or x = 0. */
static void put_marks(FILE *f, const struct chart *c, const struct html_page *p, double ymax, int *first)
{
	char b[64], yb[40], path[64], name[160];
	fmt_double(yb, sizeof yb, ymax > 0 ? ymax : 1);
	if (c->k->mark == MARK_ZERO) {
		fputs(*first ? "" : ",", f);
		put_series_head(f, "zero (no difference)", "", "zero", 0, 1);
		fprintf(f, "\"xy\":[0,0,0,%s]}", yb);
		*first = 0;
		return;
	}
	for (size_t i = 0; c->k->mark == MARK_SVC && i < c->ser.n; i++) {
		const struct series *s = &VEC_AT(&c->ser, struct series, i);
		snprintf(path, sizeof path, "qd1.%s.svc", c->id + 4);
		const struct jnode *v = jpath(p->ls[s->color].R, path);
		if (!v || (v->t != J_INT && v->t != J_REAL))
			continue;
		jn_text(v, b, sizeof b);
		snprintf(name, sizeof name, "%s service time p25", s->label);
		fputs(*first ? "" : ",", f);
		put_series_head(f, name, s->label, "service time p25", s->color, 1);
		fprintf(f, "\"xy\":[%s,0,%s,%s]}", b, b, yb);
		*first = 0;
	}
}

/* The note under chart c: why it is empty, or which arms it lacks. */
static void chart_note(const struct chart *c, const struct html_page *p, char *buf, size_t n)
{
	int best = 0; /* the best label_cmp of the arms */
	size_t o = 0;
	for (int li = 0; li < p->nl; li++)
		if (label_cmp(&p->ls[li]) > best)
			best = label_cmp(&p->ls[li]);
	buf[0] = 0;
	if (!c->ser.n && (c->k->need & N_CMPALL) && best < 2)
		o += snprintf(buf, n, best ? "No completions in this capture (the tracer's nvme_cmp records), so no %s."
					   : "No commands in this capture.", c->k->cmp);
	else if (!c->ser.n && c->k->empty)
		o += snprintf(buf, n, "%c%s.", toupper((unsigned char)c->k->empty[0]), c->k->empty + 1);
	for (int li = 0; (c->k->need & N_CMP) && (c->ser.n || p->nl > 1) && li < p->nl && o < n; li++) {
		int st = label_cmp(&p->ls[li]);
		if (st < 2)
			o += snprintf(buf + o, n - o, "%sArm %s: %s, so no %s.", o ? " " : "", p->ls[li].name,
				      st ? "no completions in its capture" : "no commands", c->k->cmp);
	}
	if (!strcmp(c->id, "batch:size") && o < n)
		snprintf(buf + o, n - o, "%sA batch ends where the submit gap exceeds %lld µs (--batch-gap-us).",
			 o ? " " : "", (long long)(p->batch_gap_ns / 1000));
}

/* Chart c as a JSON spec for html.js. */
static void put_chart(FILE *f, const struct chart *c, const struct html_page *p)
{
	char title[256], note[1024];
	const char *suffix = strchr(c->id, ':') ? strchr(c->id, ':') + 1 : c->id;
	snprintf(title, sizeof title, c->k->title, c->k == &unknown_kind ? c->id : suffix);
	chart_note(c, p, note, sizeof note);
	fputs("{\"id\":", f);
	html_jstr(f, c->id);
	fputs(",\"title\":", f);
	html_jstr(f, title);
	fprintf(f, ",\"type\":\"%s\",", c->k->type);
	put_axis(f, "x", &c->k->x, 0);
	fputc(',', f);
	put_axis(f, "y", &c->k->y, 1);
	fputs(",\"note\":", f);
	html_jstr(f, note);
	fputs(",\"series\":[", f);
	double ymax = 0;
	int first = 1;
	for (size_t i = 0; i < c->ser.n; i++) {
		const struct series *s = &VEC_AT(&c->ser, struct series, i);
		char name[256];
		snprintf(name, sizeof name, "%s%s%s", s->label, *s->role ? " " : "", s->role);
		fputs(first ? "" : ",", f);
		put_series_head(f, name, s->label, s->role, s->color, 0);
		put_points(f, s);
		fputc('}', f);
		first = 0;
		for (size_t k = s->r0; k < s->r1; k++)
			if (cnum(cell(s->r, k, "y")) > ymax)
				ymax = cnum(cell(s->r, k, "y"));
	}
	if (c->ser.n)
		put_marks(f, c, p, ymax, &first);
	fputs("]}", f);
}

/* The charts in the page's order: the table's, then any it does not know. */
static void order_charts(struct vec *cs, const struct html_page *p, struct vec *out)
{
	for (int i = 0; i < NKINDS; i++) {
		const struct kind *k = &kinds[i];
		size_t n = strlen(k->id);
		int found = 0;
		for (size_t c = 0; c < cs->n; c++) {
			struct chart *ch = &VEC_AT(cs, struct chart, c);
			if (ch->k == k) {
				*(struct chart **)vec_push(out, sizeof ch) = ch;
				found = 1;
			}
		}
		if (!found && k->id[n - 1] != ':' && ((k->need & N_ALWAYS) || ((k->need & N_AB) && p->nl > 1))) {
			struct chart *ch = chart_get(cs, k->id);
			*(struct chart **)vec_push(out, sizeof ch) = ch;
		}
	}
	for (size_t c = 0; c < cs->n; c++)
		if (VEC_AT(cs, struct chart, c).k == &unknown_kind) {
			struct chart *ch = &VEC_AT(cs, struct chart, c);
			*(struct chart **)vec_push(out, sizeof ch) = ch;
		}
}

/* ---- the banner -------------------------------------------------------------- */

struct item {
	const char *name, *path, *unit;
	const char *absent; /* said when the JSON has no such key */
	int lost;           /* a count > 0 means data were lost */
};

static const struct item items[] = {
	{"QD1 load", "qd1.load.verdict", "", "no load object with ≥ 4 commands", 0},
	{"QD1 store", "qd1.store.verdict", "", "no store object with ≥ 4 commands", 0},
	{"read latency p50", "lat_read.p50", "ns", "no completed reads", 0},
	{"read latency p99", "lat_read.p99", "ns", "no completed reads", 0},
	{"write latency p50", "lat_write.p50", "ns", "no completed writes", 0},
	{"write latency p99", "lat_write.p99", "ns", "no completed writes", 0},
	{"mean queue depth", "qd.mean", "", "no completions", 0},
	{"throughput", "throughput_gbs", "GB/s", "no commands", 0},
	{"commands", "commands.n", "", "none", 0},
	{"failed ops", "failed_ops", "", "none", 0},
	{"malformed lines", "capture.malformed_lines", "", "not counted", 1},
	{"truncated tail", "capture.truncated_tail", "", "not counted", 1},
	{"drops", "capture.drops", "", "no drops line", 1},
	{"cq_overflow", "capture.cq_overflow", "", "not counted", 1},
	{"unpaired completions", "capture.cmp_unpaired", "", "not counted", 1},
};
#define NITEMS (int)(sizeof items / sizeof items[0])

/* Whether item it of L is bad (a QD~1 verdict, data lost), and why into why. */
static int item_bad(const struct item *it, const struct jnode *v, char *why, size_t n)
{
	size_t o = strlen(why);
	if (v && v->t == J_STR && !strncmp(v->s, "QD~1", 4)) {
		snprintf(why + o, n - o, "%slooks serialized (QD~1): %s", o ? "; " : "", it->name + 4);
		return 1;
	}
	if (it->lost && v && v->t == J_INT && v->i > 0) {
		snprintf(why + o, n - o, "%sdata lost: %s %lld", o ? "; " : "", it->name, (long long)v->i);
		return 1;
	}
	return 0;
}

/* One label's banner: every item's value (data-key names its JSON path, data-v
 * holds it exactly as the JSON report writes it; a real shows 4 digits), red
 * when serialized or data were lost. */
static void put_banner(FILE *f, const struct label *L)
{
	char why[512] = "", v[256];
	int bad = 0;
	for (int i = 0; i < NITEMS; i++)
		bad |= item_bad(&items[i], jpath(L->R, items[i].path), why, sizeof why);
	if (label_cmp(L) == 0) {
		snprintf(why + strlen(why), sizeof why - strlen(why), "%sno commands", *why ? "; " : "");
		bad = 1;
	}
	fprintf(f, "<section class=\"banner%s\" data-label=\"", bad ? " bad" : "");
	html_text(f, L->name);
	fputs("\"><h2>", f);
	html_text(f, L->name);
	fprintf(f, "</h2><p class=\"why\">%s", bad ? "" : "</p>");
	if (bad) {
		html_text(f, why);
		fputs("</p>", f);
	}
	fputs("<dl>\n", f);
	for (int i = 0; i < NITEMS; i++) {
		const struct jnode *x = jpath(L->R, items[i].path);
		char w[8] = "";
		fprintf(f, "<dt>%s</dt><dd data-key=\"%s\"%s>", items[i].name, items[i].path,
			item_bad(&items[i], x, w, sizeof w) ? " class=\"bad\"" : "");
		if (!x) {
			fprintf(f, "<span class=\"absent\">%s</span></dd>\n", items[i].absent);
			continue;
		}
		jn_text(x, v, sizeof v);
		/* a real reads rounded; the JSON report's exact text stays in data-v (and the tooltip) */
		fputs("<span class=\"v\" data-v=\"", f);
		html_text(f, v);
		fputs("\" title=\"", f);
		html_text(f, v);
		fputs("\">", f);
		if (x->t == J_REAL && isfinite(x->d))
			fprintf(f, "%.4g", x->d);
		else
			html_text(f, v);
		fprintf(f, "</span>%s%s", *items[i].unit ? " " : "", items[i].unit);
		if (!strcmp(items[i].unit, "ns") && (x->t == J_INT || x->t == J_REAL))
			fprintf(f, "<span class=\"h\">(%.1f µs)</span>", (x->t == J_INT ? (double)x->i : x->d) / 1e3);
		fputs("</dd>\n", f);
	}
	fputs("</dl></section>\n", f);
}

/* The text report's lines (each label's, then the A/B lines) under the charts. */
static void put_text(FILE *f, const struct html_page *p)
{
	size_t ntail = 0;
	fputs("<h2>The text report</h2>\n", f);
	for (int li = 0; li < p->nl; li++) {
		const struct label *L = &p->ls[li];
		fputs("<h3>[", f);
		html_text(f, L->name);
		fputs("]</h3><pre class=\"text\">", f);
		for (size_t q = 0; q < L->text.n; q++) {
			html_text(f, VEC_AT(&L->text, char *, q));
			fputc('\n', f);
		}
		fputs("</pre>\n", f);
		ntail += L->tail.n;
	}
	if (ntail)
		fputs("<h3>A/B paired object diff</h3><pre class=\"text\">", f);
	for (int li = 0; li < p->nl; li++)
		for (size_t q = 0; q < p->ls[li].tail.n; q++) {
			html_text(f, VEC_AT(&p->ls[li].tail, char *, q));
			fputc('\n', f);
		}
	if (ntail)
		fputs("</pre>\n", f);
}

/* ---- the page ------------------------------------------------------------------ */

/* The whole of file path into a NUL-terminated buffer; NULL with errno set. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 18, n = 0, got;
	char *b = xmalloc(cap);
	while ((got = fread(b + n, 1, cap - n - 1, f)) > 0)
		if ((n += got) + 1 == cap)
			b = xrealloc(b, cap *= 2);
	int err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	b[n] = 0;
	return b;
}

char *html_chartjs(void)
{
	const char *path = getenv("KVIO_CHARTJS");
	if (!path || !*path)
		path = KVIO_CHARTJS_PATH;
	char *js = slurp(path);
	if (!js) {
		kvio_err("%s: cannot read Chart.js: %s (install Debian's libjs-chart.js: scripts/install-deps)", path,
			 strerror(errno));
		return NULL;
	}
	for (const char *s = js; (s = strchr(s, '<')); s++)
		if (!strncasecmp(s, "</script", 8)) {
			kvio_err("%s: Chart.js contains '</script': it cannot be inlined", path);
			free(js);
			return NULL;
		}
	if (!strstr(js, "Chart")) {
		kvio_err("%s: does not look like Chart.js", path);
		free(js);
		return NULL;
	}
	return js;
}

const char html_page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
	"style-src 'unsafe-inline'; img-src data:; connect-src 'none'; font-src 'none'; form-action 'none'\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

/* The charts' cards (html.js draws into them) and their specs' JSON. */
static void put_charts(FILE *f, const struct html_page *p)
{
	struct vec cs = {0}, order = {0};
	group_rows(p, &cs);
	order_charts(&cs, p, &order);
	fputs("<h2>Charts</h2>\n<div class=\"charts\">\n", f);
	for (size_t i = 0; i < order.n; i++) {
		const struct chart *c = VEC_AT(&order, struct chart *, i);
		char note[1024], title[256];
		const char *suffix = strchr(c->id, ':') ? strchr(c->id, ':') + 1 : c->id;
		snprintf(title, sizeof title, c->k->title, c->k == &unknown_kind ? c->id : suffix);
		chart_note(c, p, note, sizeof note);
		fprintf(f, "<div class=\"card%s\" id=\"chart-", c->ser.n ? "" : " empty");
		html_text(f, c->id);
		fputs("\">", f);
		if (!c->ser.n) {
			fputs("<h3>", f);
			html_text(f, title);
			fputs("</h3>", f);
		}
		if (*note) {
			fputs("<p class=\"note\">", f);
			html_text(f, note);
			fputs("</p>", f);
		}
		fputs("</div>\n", f);
	}
	fputs("</div>\n<script type=\"application/json\" id=\"kvio-data\">{\"charts\":[", f);
	for (size_t i = 0; i < order.n; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_chart(f, VEC_AT(&order, struct chart *, i), p);
	}
	fputs("]}</script>\n", f);
	for (size_t i = 0; i < cs.n; i++)
		vec_free(&VEC_AT(&cs, struct chart, i).ser);
	vec_free(&cs);
	vec_free(&order);
}

/* The page into f. */
static void put_page(FILE *f, const struct html_page *p, const char *chartjs)
{
	fputs(html_page_head, f);
	fputs("<title>kvio report: ", f);
	html_text(f, p->dbpath);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>kvio report: ", kvio_html_css);
	html_text(f, p->dbpath);
	fprintf(f, " (%d capture label(s))</h1>\n<div class=\"banners\">\n", p->nl);
	for (int li = 0; li < p->nl; li++)
		put_banner(f, &p->ls[li]);
	fputs("</div>\n", f);
	put_charts(f, p);
	put_text(f, p);
	fputs("<pre id=\"kvio-summary\"></pre>\n<script>\n", f);
	fputs(chartjs, f);
	fprintf(f, "\n</script>\n<script>\n%s</script>\n</body></html>\n", kvio_html_js);
}

int html_write(struct outfile *o, const struct html_page *p)
{
	FILE *f = outfile_stdio(o);
	if (!f) {
		outfile_abort(o);
		return 2;
	}
	put_page(f, p, p->chartjs);
	return outfile_commit(o);
}
