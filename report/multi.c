/* multi.c — kvio-report over several databases: each one's report runs in a
 * child process (the one-database kvio-report, --jobs 1), up to --jobs at
 * once, its standard output kept in memory; the parent reads the JSON back
 * (jn_parse: json.c, integers exact) for --csv, --json lists, --fail-on and --compare. A child's error
 * line is its own (it names its database); the parent's exit status is the
 * worst of theirs. */
#include "multi.h"
#include "report.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child: kvio-report PATH [--json -] --jobs 1 PASS..., its stdout into fd
 * (its value sets into sfd, >= 0 with j->samples). */
static void child(const char *path, const struct multi_job *j, int fd, int sfd)
{
	char *argv[80];
	int n = 0;
	argv[n++] = (char *)"kvio-report";
	argv[n++] = (char *)path;
	if (j->json) {
		argv[n++] = (char *)"--json";
		argv[n++] = (char *)"-";
	}
	argv[n++] = (char *)"--jobs";
	argv[n++] = (char *)"1";
	for (int i = 0; i < j->npass && n < 79; i++)
		argv[n++] = j->pass[i];
	argv[n] = NULL;
	if (dup2(fd, 1) < 0)
		_exit(2);
	close(fd);
	setenv("KVIO_PROGRESS", "0", 1); /* the children draw no progress line over each other */
	if (sfd >= 0)
		run_send_samples(sfd);
	int rc = j->report(n, argv);
	if (fflush(stdout) != 0)
		rc = 2;
	_exit(rc);
}

/* Start run r's child; 0, or -1 after a one-line error. */
static int start(struct dbrun *r, const struct multi_job *j)
{
	int p[2] = {-1, -1}, sp[2] = {-1, -1};
	pid_t pid = -1;
	if (pipe(p) != 0 || (j->samples && pipe(sp) != 0))
		kvio_err("%s: cannot make a pipe: %s", r->path, strerror(errno));
	else if (fflush(stdout), fflush(stderr), (pid = fork()) < 0)
		kvio_err("%s: cannot start a report: %s", r->path, strerror(errno));
	if (pid < 0) {
		for (int k = 0; k < 2; k++) {
			if (p[k] >= 0)
				close(p[k]);
			if (sp[k] >= 0)
				close(sp[k]);
		}
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (sp[0] >= 0)
			close(sp[0]);
		child(r->path, j, p[1], sp[1]);
	}
	close(p[1]);
	if (sp[1] >= 0)
		close(sp[1]);
	r->pid = pid;
	r->fd = p[0];
	r->sfd = sp[0];
	return 0;
}

/* Read what came on *fd into *out (NUL-terminated, *len bytes of *cap); 1 at its end,
 * -1 on an error (either way *fd closed and -1), 0 more to come. */
static int drain(int *fd, char **out, size_t *len, size_t *cap)
{
	char buf[65536];
	ssize_t k = read(*fd, buf, sizeof buf);
	if (k < 0 && errno == EINTR)
		return 0;
	if (k <= 0) {
		close(*fd);
		*fd = -1;
		return k < 0 ? -1 : 1;
	}
	if (*len + (size_t)k + 1 > *cap) /* doubling: a 4 MB stream is not copied 64 times */
		*out = xrealloc(*out, *cap = (*len + (size_t)k + 1) * 2);
	memcpy(*out + *len, buf, (size_t)k);
	*len += (size_t)k;
	(*out)[*len] = 0;
	return 0;
}

/* Wait for run r's child; its exit status (128 + N for a signal). */
static int reap(struct dbrun *r)
{
	int st = 0;
	while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int multi_worse(int a, int b)
{
	int ra = a == 0 ? 0 : a == 1 ? 1 : a == 3 ? 2 : 3, rb = b == 0 ? 0 : b == 1 ? 1 : b == 3 ? 2 : 3;
	int w = ra > rb ? a : b;
	return w != 0 && w != 1 && w != 3 ? 2 : w; /* a signal or an error: 2 */
}

int multi_run(struct dbrun *r, int n, const struct multi_job *j)
{
	int next = 0, live = 0, worst = 0;
	struct pollfd pf[2 * MULTI_MAX];
	int who[2 * MULTI_MAX];
	for (int i = 0; i < n; i++)
		r[i] = (struct dbrun){.path = r[i].path, .fd = -1, .status = -1, .sfd = -1};
	while (next < n || live) {
		while (next < n && live < j->jobs) {
			if (start(&r[next], j) != 0)
				return 2;
			next++, live++;
		}
		int np = 0;
		for (int i = 0; i < next; i++)
			for (int s = 0; s < 2; s++)
				if ((s ? r[i].sfd : r[i].fd) >= 0) {
					pf[np] = (struct pollfd){.fd = s ? r[i].sfd : r[i].fd, .events = POLLIN};
					who[np++] = 2 * i + s;
				}
		if (poll(pf, (nfds_t)np, -1) < 0 && errno != EINTR)
			return 2;
		for (int k = 0; k < np; k++) {
			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct dbrun *x = &r[who[k] / 2];
			int d = who[k] % 2 ? drain(&x->sfd, &x->sout, &x->slen, &x->scap)
					     : drain(&x->fd, &x->out, &x->len, &x->ocap);
			if (d < 0)
				x->status = 2; /* a read failed: this run's output is not whole */
			if (d != 0 && x->fd < 0 && x->sfd < 0) { /* both ends seen: the child is done */
				int st = reap(x);
				x->status = x->status == 2 ? 2 : st;
				worst = multi_worse(worst, x->status);
				live--;
			}
		}
	}
	return worst;
}

void multi_free(struct dbrun *r, int n)
{
	for (int i = 0; i < n; i++) {
		free(r[i].out);
		free(r[i].sout);
		jn_free(r[i].doc);
		r[i].out = r[i].sout = NULL;
		r[i].doc = NULL;
	}
}

int multi_parse(struct dbrun *r, int n)
{
	for (int i = 0; i < n; i++) {
		if (r[i].status != 0 && r[i].status != 3)
			continue; /* exit 1: nothing to report there (said); 2: failed (said); 3: a gate fired (said) */
		if (!(r[i].doc = jn_parse(r[i].out ? r[i].out : "", r[i].len)) || r[i].doc->t != J_OBJ) {
			kvio_err("%s: its report is not JSON", r[i].path);
			return -1;
		}
	}
	return 0;
}

void multi_json_list(FILE *f, const struct dbrun *r, int n)
{
	fputs("[", f);
	int first = 1;
	for (int i = 0; i < n; i++) {
		const char *p = r[i].status == 0 && r[i].out ? r[i].out : "{}\n";
		fputs(first ? "\n " : ",\n ", f);
		first = 0;
		for (; *p; p++) { /* each line one space deeper; the report's last newline dropped */
			if (*p == '\n' && !p[1])
				break;
			fputc(*p, f);
			if (*p == '\n')
				fputc(' ', f);
		}
	}
	fputs(n ? "\n]\n" : "]\n", f);
}

/* s as one CSV field (quoted when it holds a comma, a quote or a line break). */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A scalar as the CSV writes it: integers exactly, reals as python3's repr,
 * strings as they are, true/false, null as an empty field. */
static void csv_value(FILE *f, const struct jnode *v)
{
	char buf[64];
	if (v->t == J_INT)
		fprintf(f, "%lld", (long long)v->i);
	else if (v->t == J_REAL) {
		fmt_double(buf, sizeof buf, v->d);
		fputs(buf, f);
	} else if (v->t == J_STR)
		csv_field(f, v->s);
	else if (v->t == J_BOOL)
		fputs(v->i ? "true" : "false", f);
}

/* The rows of one label's report o under path prefix. */
static void csv_walk(FILE *f, const char *db, const char *label, const struct jnode *o, const char *prefix,
		     const char *meta)
{
	for (int k = 0; k < o->n; k++) {
		const struct jnode *c = o->vals[k];
		char path[512];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", o->keys[k]);
		if (c->t == J_OBJ) {
			csv_walk(f, db, label, c, path, meta);
			continue;
		}
		if (c->t == J_ARR || (!*prefix && !strcmp(path, "label")))
			continue;
		csv_field(f, db);
		fputc(',', f);
		csv_field(f, label);
		fputc(',', f);
		csv_field(f, path);
		fputc(',', f);
		csv_value(f, c);
		fprintf(f, ",%s\n", meta);
	}
}

/* The database's host, device (its first label's) and ingest options as CSV fields. */
static void csv_meta(const char *path, const struct jnode *doc, char *out, size_t n)
{
	const struct jnode *info = doc && doc->n ? jn_get(doc->vals[0], "info") : NULL;
	const struct jnode *h = jn_get(info, "hostname"), *d = jn_get(info, "device");
	char opts[400] = "";
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT substr(name, 6), coalesce(str_value, int_value) FROM metadata WHERE name LIKE"
			       " 'kvio\\_%' ESCAPE '\\' AND name <> 'kvio_schema_version' ORDER BY rowid", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			size_t l = strlen(opts);
			snprintf(opts + l, sizeof opts - l, "%s%s=%s", l ? " " : "", nz(sqlite3_column_text(st, 0)),
				 nz(sqlite3_column_text(st, 1)));
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	FILE *m = fmemopen(out, n, "w");
	if (!m)
		return;
	csv_field(m, h && h->t == J_STR ? h->s : "");
	fputc(',', m);
	csv_field(m, d && d->t == J_STR ? d->s : "");
	fputc(',', m);
	csv_field(m, opts);
	fclose(m);
}

int multi_csv(FILE *f, const struct dbrun *r, int n)
{
	fputs("database,label,metric,value,host,device,options\n", f);
	for (int i = 0; i < n; i++) {
		if (!r[i].doc)
			continue;
		char meta[1024] = ",,";
		csv_meta(r[i].path, r[i].doc, meta, sizeof meta);
		for (int k = 0; k < r[i].doc->n; k++)
			if (r[i].doc->vals[k]->t == J_OBJ)
				csv_walk(f, r[i].path, r[i].doc->keys[k], r[i].doc->vals[k], "", meta);
	}
	return ferror(f) ? -1 : 0;
}

int multi_report(FILE *out, char **dbs, int n, struct multi_job j, int mode)
{
	struct dbrun *r = xcalloc((size_t)n, sizeof *r);
	for (int i = 0; i < n; i++)
		r[i].path = dbs[i];
	j.jobs = j.jobs > 0 ? j.jobs : 2;
	j.json = mode != MULTI_TEXT;
	int worst = multi_run(r, n, &j);
	if (mode == MULTI_TEXT) {
		for (int i = 0; i < n; i++)
			if (r[i].out)
				fwrite(r[i].out, 1, r[i].len, out);
	} else if (multi_parse(r, n)) {
		worst = 2;
	} else if (mode == MULTI_JSON) {
		multi_json_list(out, r, n);
	} else if (multi_csv(out, r, n)) {
		worst = 2;
	}
	multi_free(r, n);
	free(r);
	return ferror(out) ? 2 : worst;
}
