/* watch.c — kvio-report --last SECONDS and --watch [SECONDS] (watch.h).
 *
 * --last: the report of [end - SECONDS, end], end = the latest command or
 * object end (ts + dur) in the database: the moment of the last thing the
 * capture saw happen (a completion, an object's end). A submit time (ts)
 * would put the window's end before the last command completed, cutting the
 * completions of the very commands it reports. The window is then exactly
 * --time-range's (lib/window.h: the slices overlapping it, edges inclusive).
 *
 * --watch: the report of that window every SECONDS on a database that may be
 * growing (kvio-ingest --follow, in WAL mode): each refresh opens it again
 * (report.c's refresh reads it in one read transaction per connection), a
 * refresh that cannot read it says so in one line and the next tries again.
 * A terminal gets a compact screen redrawn in place, one block per label;
 * anything else one JSON line per refresh: {"refresh", "window", "live", "report"}. */
#include "watch.h"
#include "../lib/util.h"
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int last_window(sqlite3 *db, const char *dbpath, int64_t last_ns, struct kvio_window *w, int64_t *start)
{
	/* kvio_cmd_range holds each chunk's extent (checked at open); objects are their slices */
	static const char q[] =
		"SELECT max(e), min(s) FROM ("
		" SELECT max(end_max) AS e, min(ts_min) AS s FROM main.kvio_cmd_range"
		" UNION ALL SELECT max(s.ts + max(s.dur, 0)), min(s.ts) FROM main.kvio_slice s"
		" JOIN main.process_track pt ON pt.id = s.track_id WHERE pt.name LIKE 'objects%')";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		kvio_err("%s: --last: %s", dbpath, sqlite3_errmsg(db));
		return 2;
	}
	int rc = sqlite3_step(st), none = rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL;
	int64_t end = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	*start = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW) {
		kvio_err("%s: --last: %s", dbpath, sqlite3_errmsg(db));
		return 2;
	}
	if (none) {
		kvio_err("%s: no command or object slice yet: nothing to report", dbpath);
		return 1;
	}
	w->has_time = 1;
	w->hi_ns = end;
	w->lo_ns = end - last_ns;
	return 0;
}

/* ---- the loop ---------------------------------------------------------------- */

static volatile sig_atomic_t stop_sig;

/* SIGINT/SIGTERM end the watch: the refresh under way finishes, then exit 0;
 * a second one exits at once (nothing is being written: no temp file to remove). */
static void on_stop(int sig)
{
	if (stop_sig)
		_exit(0);
	stop_sig = sig;
}

static void stop_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, old;
		if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue; /* ignored when the command started: stays ignored (docs/formats.md) */
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL); /* no SA_RESTART: the sleep ends */
	}
}

/* Sleep until now_s() reaches t (a signal ends it). */
static void sleep_until(double t)
{
	double d;
	while (!stop_sig && (d = t - now_s()) > 0) {
		struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
		if (nanosleep(&ts, NULL) != 0 && errno != EINTR)
			break;
	}
}

int watch_loop(struct watch *w, watch_refresh *fn, void *ctx)
{
	int status = 0;
	stop_signals();
	w->last_hi = INT64_MIN;
	for (w->n = 1; !stop_sig; w->n++) {
		double t0 = now_s();
		status = fn(ctx);
		fflush(stdout);
		if (status == 3 || (w->count && w->n >= w->count))
			return status;
		sleep_until(t0 + w->every_s);
	}
	return 0;
}

/* ---- what a refresh shows ------------------------------------------------------ */

/* The node at dotted path in o, or NULL when there is none. */
static const struct jnode *jpath(const struct jnode *o, const char *path)
{
	char p[96];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p, *dot; o && s; s = dot ? dot + 1 : NULL) {
		if ((dot = strchr(s, '.')))
			*dot = 0;
		o = jn_get(o, s);
	}
	return o;
}

/* The number at dotted path in o, or NAN when there is none. */
static double jnum(const struct jnode *o, const char *path)
{
	o = jpath(o, path);
	return !o ? NAN : o->t == J_INT ? (double)o->i : o->t == J_REAL ? o->d : NAN;
}

static const char *jstr(const struct jnode *o, const char *a, const char *b, const char *c)
{
	o = o ? jn_get(o, a) : NULL;
	o = o ? jn_get(o, b) : NULL;
	o = o ? jn_get(o, c) : NULL;
	return o && o->t == J_STR ? o->s : NULL;
}

/* A label's live numbers: rates over the window's seconds (the window clipped
 * to the capture's first event), objects in flight (inflight.sql's row). */
struct live {
	double cmds_s, mb_s;
	int64_t inflight, oldest_ns; /* oldest_ns -1: none in flight */
	/* an interim --follow commit's capture.follow.waiting (NAN: none) */
	double waiting, unpaired, unpaired_objs, unpaired_written, unpaired_age_ns, oldest_tid, quiet_s;
	double quiet_after_s; /* the follower's quiet commit's threshold (2 s: a database without it) */
	int gone; /* its follower does not run (on this host) */
};

static struct live live_of(const struct watch *w, const struct report_opts *o, const struct label *L,
			   const struct rows *inf)
{
	struct live v = {0, 0, 0, -1, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 2, 0};
	int64_t lo = o->win.lo_ns > w->start_ns ? o->win.lo_ns : w->start_ns;
	double dt = (double)(o->win.hi_ns - lo) / 1e9, n = jnum(L->R, "commands.n"),
	       b = jnum(L->R, "commands.tagged_bytes");
	if (dt > 0) {
		v.cmds_s = isnan(n) ? 0 : n / dt;
		v.mb_s = isnan(b) ? 0 : b / dt / 1e6;
	}
	v.waiting = jnum(L->R, "capture.follow.waiting.cmds");
	v.unpaired = jnum(L->R, "capture.follow.waiting.unpaired_cmds");
	v.unpaired_objs = jnum(L->R, "capture.follow.waiting.unpaired_objects");
	v.unpaired_written = jnum(L->R, "capture.follow.waiting.unpaired_written");
	v.unpaired_age_ns = jnum(L->R, "capture.follow.waiting.unpaired_age_ns");
	v.oldest_tid = jnum(L->R, "capture.follow.waiting.unpaired_oldest_trace_id");
	v.quiet_s = jnum(L->R, "capture.follow.waiting.device_quiet_s");
	double qa = jnum(L->R, "capture.follow.waiting.quiet_commit_after_ms");
	if (!isnan(qa))
		v.quiet_after_s = qa / 1e3;
	const struct jnode *fr = jpath(L->R, "capture.follow.waiting.follower_running");
	v.gone = fr && fr->t == J_BOOL && !fr->i;
	for (size_t k = 0; inf && k < inf->nrow; k++) {
		const char *l = cstr(cell(inf, k, "label"));
		if (l && !strcmp(l, L->name)) {
			v.inflight = (int64_t)cnum(cell(inf, k, "n"));
			v.oldest_ns = (int64_t)cnum(cell(inf, k, "oldest_ns"));
		}
	}
	return v;
}

/* One JSON line: {"refresh": N, "window": [start_s, end_s], "live": {label:
 * {...}}, "report": <the --json report of the window>}. */
static void show_json(const struct watch *w, const struct report_opts *o, struct label *ls, int nl,
		      const struct rows *inf)
{
	struct jnode *root = jn_obj(), *win = jn_arr(), *live = jn_obj(), *rep = jn_obj();
	jn_set(root, "refresh", jn_int(w->n));
	jn_push(win, jn_real((double)o->win.lo_ns / 1e9));
	jn_push(win, jn_real((double)o->win.hi_ns / 1e9));
	jn_set(root, "window", win);
	jn_set(root, "live", live);
	for (int li = 0; li < nl; li++) {
		struct live v = live_of(w, o, &ls[li], inf);
		struct jnode *L = jn_set(live, ls[li].name, jn_obj());
		jn_set(L, "cmds_per_s", jn_real(v.cmds_s));
		jn_set(L, "mb_per_s", jn_real(v.mb_s));
		jn_set(L, "inflight", jn_int(v.inflight));
		jn_set(L, "oldest_inflight_ns", v.oldest_ns < 0 ? jn_null() : jn_int(v.oldest_ns));
		if (!isnan(v.waiting)) { /* an interim --follow commit's */
			jn_set(L, "waiting_cmds", jn_int((int64_t)v.waiting));
			jn_set(L, "unpaired_cmds", jn_int((int64_t)v.unpaired));
			jn_set(L, "unpaired_written", isnan(v.unpaired_written) ? jn_null() : jn_int((int64_t)v.unpaired_written));
			jn_set(L, "unpaired_age_ns", isnan(v.unpaired_age_ns) ? jn_null() : jn_int((int64_t)v.unpaired_age_ns));
			jn_set(L, "unpaired_oldest_trace_id", isnan(v.oldest_tid) ? jn_null() : jn_int((int64_t)v.oldest_tid));
			jn_set(L, "device_quiet_s", isnan(v.quiet_s) ? jn_null() : jn_real(v.quiet_s));
			jn_set(L, "follower_gone", jn_bool(v.gone));
		}
	}
	jn_set(root, "report", rep);
	for (int li = 0; li < nl; li++) { /* lent, taken back below */
		jn_set(rep, ls[li].name, ls[li].R);
	}
	jn_print(stdout, root, -1);
	for (int li = 0; li < nl; li++)
		rep->vals[li] = jn_null();
	jn_free(root);
}

#define RED "\033[31;1m"
#define OFF "\033[0m"

/* The QD1 verdict of op (load, store) in red when it says QD~1. */
static void put_verdict(FILE *f, const struct label *L, const char *op)
{
	const char *v = jstr(L->R, "qd1", op, "verdict");
	int bad = v && !strncmp(v, "QD~1", 4);
	fprintf(f, "  %s %s%s%s", op, bad ? RED : "", v ? v : "-", bad ? OFF : "");
}

/* A count in red when it is not 0 (lost or unusable data). */
static void put_loss(FILE *f, const char *name, double v)
{
	int bad = !isnan(v) && v != 0;
	fprintf(f, "  %s %s%.0f%s", name, bad ? RED : "", isnan(v) ? 0 : v, bad ? OFF : "");
}

/* What the follower holds that the database does not show yet (an interim
 * commit's), in red when a command has waited its completion >= 1 s of
 * capture time or the device file has been quiet with one waiting as long as
 * the follower waits before its quiet commit (KVIO_FOLLOW_QUIET_MS, 2 s). */
static void put_waiting(FILE *f, const struct live *v)
{
	char a[32];
	if (isnan(v->waiting))
		return;
	int bad = v->unpaired > 0 && (v->unpaired_age_ns >= 1e9 || v->quiet_s >= v->quiet_after_s);
	fprintf(f, "  waiting %.0f cmds, %s%.0f without completion", v->waiting, bad ? RED : "", v->unpaired);
	if (v->unpaired > 0)
		fprintf(f, " (%.0f object(s)), oldest trace_id %.0f %s before the last record", v->unpaired_objs,
			v->oldest_tid, ns_text(a, sizeof a, v->unpaired_age_ns));
	if (v->unpaired_written > 0) /* a quiet commit drew them with the nominal duration */
		fprintf(f, ", %.0f drawn", v->unpaired_written);
	fprintf(f, "%s", bad ? OFF : "");
	if (!isnan(v->quiet_s))
		fprintf(f, "  device quiet %.1fs", v->quiet_s);
	if (v->gone)
		fprintf(f, "  %sfollower gone%s", RED, OFF);
	fputc('\n', f);
}

static void show_label(FILE *f, const struct watch *w, const struct report_opts *o, const struct label *L,
		       const struct rows *inf)
{
	char a[32], b[32], c[32], d[32];
	struct live v = live_of(w, o, L, inf);
	const struct jnode *R = L->R;
	fprintf(f, "[%s]  cmds/s %.0f  MB/s %.1f  commands %.0f\n", L->name, v.cmds_s, v.mb_s,
		isnan(jnum(R, "commands.n")) ? 0 : jnum(R, "commands.n"));
	fprintf(f, "  read  p50 %-9s p99 %-9s  write p50 %-9s p99 %s\n", ns_text(a, sizeof a, jnum(R, "lat_read.p50")),
		ns_text(b, sizeof b, jnum(R, "lat_read.p99")), ns_text(c, sizeof c, jnum(R, "lat_write.p50")),
		ns_text(d, sizeof d, jnum(R, "lat_write.p99")));
	double le1 = jnum(R, "qd.pct_time_le1");
	fprintf(f, "  QD mean %.1f  max %.0f  %%time at QD<=1 %.1f%%\n", isnan(jnum(R, "qd.mean")) ? 0 : jnum(R, "qd.mean"),
		isnan(jnum(R, "qd.max")) ? 0 : jnum(R, "qd.max"), isnan(le1) ? 0 : 100 * le1);
	fputs("  QD1:", f);
	put_verdict(f, L, "load");
	put_verdict(f, L, "store");
	fprintf(f, "\n  objects in flight %lld  oldest %s\n", (long long)v.inflight, ns_text(a, sizeof a, (double)v.oldest_ns));
	put_waiting(f, &v);
	put_loss(f, "drops", jnum(R, "capture.drops"));
	put_loss(f, "malformed", jnum(R, "capture.malformed_lines"));
	put_loss(f, "truncated", jnum(R, "capture.truncated_tail"));
	put_loss(f, "cq_overflow", jnum(R, "capture.cq_overflow"));
	fputc('\n', f);
}

/* The screen, drawn whole into memory and written at once (no flicker). */
static void show_screen(const struct watch *w, const struct report_opts *o, const char *dbpath,
			const struct label *ls, int nl, const struct rows *inf)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	time_t now = time(NULL);
	char hms[16];
	strftime(hms, sizeof hms, "%H:%M:%S", localtime(&now));
	fputs("\033[H\033[2J", f); /* home, clear */
	fprintf(f, "kvio-report --watch %s  %s  refresh %lld every %gs\n", dbpath, hms, (long long)w->n, w->every_s);
	fprintf(f, "window [%.3f, %.3f] s (the last %gs to the latest event)%s\n\n", (double)o->win.lo_ns / 1e9,
		(double)o->win.hi_ns / 1e9, (double)(o->win.hi_ns - o->win.lo_ns) / 1e9,
		w->same ? "  no new event since the refresh before" : "");
	for (int li = 0; li < nl; li++)
		show_label(f, w, o, &ls[li], inf);
	fputs("\n(Ctrl-C to stop)\n", f);
	fclose(f);
	fwrite(buf, 1, len, stdout);
	free(buf);
}

int watch_show(struct watch *w, sqlite3 *db, const struct report_opts *o, const char *dbpath, struct label *ls,
	       int nl)
{
	struct rows inf = {0};
	if (run_sql(db, "inflight.sql", o, &inf))
		return 2;
	w->same = w->last_hi == o->win.hi_ns ? w->same + 1 : 0;
	w->last_hi = o->win.hi_ns;
	if (w->json)
		show_json(w, o, ls, nl, &inf);
	else
		show_screen(w, o, dbpath, ls, nl, &inf);
	rows_free(&inf);
	return 0;
}
