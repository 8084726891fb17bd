/* export.c — kvio-export: a trace.db as a Perfetto TrackEvent trace.
 *
 * The file is a stream of length-delimited TracePackets (Trace.packet = 1),
 * written as the database is read, never built whole in memory. Track
 * descriptors come first; then slices as SLICE_BEGIN/SLICE_END (instants for
 * zero-length slices), counters as TYPE_COUNTER, flows as flow_ids /
 * terminating_flow_ids. Event names, annotation names and the role strings are
 * interned on one trusted packet sequence. Events are not globally sorted by
 * time: trace_processor sorts them (within a track, kvio's slices never overlap
 * or touch, so the order is unambiguous). The pieces: pfwrite.c writes
 * packets, window.c decides what a window keeps, slices.c and cmds.c read
 * the tables; this file runs them in order and is the command. */
#include "export_int.h"
#include "../db/schema.h"
#include "../db/valid.h"
#include "../db/memo.h"
#include "../lib/cli.h"
#include "../lib/outfile.h"
#include <stdio.h>
#include <stdlib.h>

/* The checks of db and what the export reads before it writes: the tables'
 * chunks' directory, the tables' sums and values, the window's keep-list, the flows. 0, or 2
 * after the one line saying why. */
static int export_prepare(sqlite3 *db, struct exporter *x, struct kept *keep, struct flows *fl)
{
	char *why = NULL;
	/* the directory first (its own words for its damage, as a report's first read of
	 * the commands gives them), then every table it reads: sums, values, references */
	int drc = dir_load(db, "\"main\"", &x->dir, &why);
	if (drc == SQLITE_OK)
		drc = db_check_tables(db, "main", DB_TABLES, &why);
	if (drc == SQLITE_OK) /* the chunks this process checked, shared with the findings' connection */
		x->checked = memo_chunks(memo_of(db, "main"), x->dir.nchunks);
	if (drc != SQLITE_OK) {
		if (drc == SQLITE_CORRUPT && why && !strncmp(why, KVIO_DAMAGED, strlen(KVIO_DAMAGED)))
			say_once("%s: %s", db_name(db), why);
		else if (drc == SQLITE_CORRUPT && why)
			chunk_damaged(db, why);
		else
			db_failed(db, "reading the database");
		sqlite3_free(why);
		return 2;
	}
	if ((x->win && window_kept(db, x, keep)) || load_flows(db, x->keep, fl)) {
		db_failed(db, "reading flows");
		return 2;
	}
	return 0;
}

/* KVIO_TIMING: the export's step done, and when (s since the first). */
static void export_mark(const char *step)
{
	static double t0;
	if (!getenv("KVIO_TIMING"))
		return;
	double t = now_s();
	if (!t0)
		t0 = t;
	kvio_err("timing: export: +%.3fs %s (the thread's CPU %.3fs)", t - t0, step, thread_cpu_s());
}

/* With the findings, once the commands and counters are written: the slices
 * into memory while the findings' SQL runs (without a window), the wait;
 * then the findings' tracks, the slices (those a finding's flow reaches
 * encoded again with it), the findings. 0, -1 (a read failed), or 2 (said). */
static int pieces_findings(sqlite3 *db, struct exporter *x, struct flows *fl, struct findings *f)
{
	struct early ea = {0};
	int ahead = !x->keep, rc = 0;
	export_mark("commands and counters");
	if (ahead && export_slices_early(db, x, fl, &ea)) {
		early_free(&ea);
		return -1 - findings_finish(db, f, 1);
	}
	export_mark("slices ahead");
	if (findings_finish(db, f, 0)) {
		early_free(&ea);
		return 2; /* said */
	}
	export_mark("findings waited for");
	findings_tracks(x, f);
	findings_flows(x, f, fl);
	if (ahead) {
		int64_t *ids;
		size_t n = findings_objects(f, &ids);
		rc = export_slices_replay(db, x, fl, &ea, ids, n);
		free(ids);
	} else {
		rc = export_slices(db, x, fl);
	}
	early_free(&ea);
	export_mark("objects");
	if (!rc)
		findings_slices(x, f);
	return rc;
}

/* The pieces in order: without findings the tracks, the slices, the commands,
 * the counters; with them (f started, fst its start's result), the tracks, the
 * commands and the counters while the findings' SQL runs, then the findings'
 * tracks, the slices (objects with the findings' flows), the findings. 0, or 2
 * after the one line. */
static int export_pieces(sqlite3 *db, struct exporter *x, const struct export_opts *eo, struct flows *fl,
			 struct findings *f, int fst)
{
	int on = eo && eo->findings, rc = 0;
	if (export_tracks(db, x) || (on && fst))
		rc = -1 - findings_finish(db, f, 1);
	else if (!on || f->imported)
		rc = export_slices(db, x, fl) || export_cmds(db, x, fl) || export_counters(db, x);
	else if (export_cmds(db, x, fl) || export_counters(db, x))
		rc = -1 - findings_finish(db, f, 1); /* the commands failed: the findings are not waited for */
	else if ((rc = pieces_findings(db, x, fl, f)) == 2)
		return 2; /* said */
	export_mark("pieces");
	if (rc) {
		db_failed(db, "reading the database");
		return 2;
	}
	return 0;
}

int export_db(sqlite3 *db, struct outfile *of, const struct export_opts *eo, struct export_stats *stats)
{
	struct exporter x;
	memset(&x, 0, sizeof x);
	fieldnums_init();
	size_t pl = strlen(of->path);
	int rc;
	x.o.f = of;
	x.o.gz = pl > 3 && !strcmp(of->path + pl - 3, ".gz");
	if (x.o.gz) {
		/* windowBits 15 + 16: a gzip wrapper, as gzopen(..., "wb6") writes */
		if (deflateInit2(&x.o.z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			kvio_err("%s: cannot start gzip", of->path);
			return 2;
		}
		x.o.zbuf = xmalloc(ZBUF_BYTES);
	}
	const struct kvio_window *win = eo ? eo->win : NULL;
	x.win = win && (win->has_time || win->has_tid) ? win : NULL;
	x.o.cap = 1 << 20;
	x.o.buf = xmalloc(x.o.cap);
	progress_start(&x.prog, eo && eo->progress, eo && eo->progress ? eo->progress : "", "chunks");
	struct flows fl = {0};
	struct kept keep = {{0}, {0}};
	x.keep = x.win ? &keep : NULL;
	/* the findings' SQL starts first: it runs while the database is checked and the commands written */
	struct findings f;
	memset(&f, 0, sizeof f);
	export_mark("start");
	int fst = eo && eo->findings ? findings_start(db, &f, eo) : 0;
	rc = export_prepare(db, &x, &keep, &fl);
	export_mark("prepared");
	if (rc)
		findings_finish(db, &f, 1);
	else { /* the sequence starts with cleared incremental state */
		Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
		p.has_trusted_packet_sequence_id = 1;
		p.trusted_packet_sequence_id = SEQ_ID;
		p.has_sequence_flags = 1;
		p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
		out_packet(&x.o, &p);
		x.packets++;
		rc = export_pieces(db, &x, eo, &fl, &f, fst);
	}
	findings_free(&f);
	out_flush(&x.o, 1);
	progress_end(&x.prog, 0, 0, 0);
	if (x.o.gz)
		deflateEnd(&x.o.z);
	if (stats)
		*stats = (struct export_stats){x.packets, x.o.bytes, x.kept, x.slices, x.findings};
	free(fl.r);
	kept_free(&keep);
	dir_free(&x.dir, 0);
	sqlite3_free(x.buf);
	free(x.o.buf);
	free(x.o.zbuf);
	strpool_free(&x.names);
	strpool_free(&x.ann_names);
	strpool_free(&x.str_values);
	return rc;
}

static const char export_help[] =
	"usage: kvio-export trace.db -o kv.pftrace[.gz] [--time-range S,E] [--trace-id A[-B]]\n"
	"                   [--no-findings] [--batch-gap-us 50]\n\n"
	"Writes the database as a Perfetto TrackEvent trace: drag it onto\n"
	"https://ui.perfetto.dev (processing stays in the browser) or open it with\n"
	"trace_processor. A .gz suffix gzips. The file appears only when complete.\n"
	"Per label, a 'kvio findings' track group holds what kvio-report finds (QD~1\n"
	"objects, QD<=1 spans, inferred batches, slow and failed objects, TP barrier\n"
	"skew: sql/findings.sql), each slice linked by a flow to its object.\n\n"
	"options:\n"
	"  -o, --out FILE        the .pftrace to write ('-': standard output, plain)\n"
	"  --time-range S,E      only what overlaps [S, E] seconds of the database's time\n"
	"                        (rebased per arm; absolute if ingested with --no-rebase);\n"
	"                        reads only the command chunks of the window\n"
	"  --trace-id A[-B]      only the commands and objects of trace_id A..B\n"
	"  --no-findings         leave the findings tracks out\n"
	"  -q, --quiet           no summary on stdout, no progress line on stderr\n"
	"  --batch-gap-us N      submit gap that splits the findings' inferred batches\n"
	"                        (kvio-report's --batch-gap-us; default 50)\n\n"
	"EXAMPLES\n"
	"  kvio-export trace.db -o kv.pftrace\n"
	"  kvio-export ab.db -o ab.pftrace.gz\n"
	"  kvio-export trace.db -o stall.pftrace --time-range 12.5,14.5\n\n"
	"exit status: 0 ok; 1 the database, or its --time-range/--trace-id window, holds no\n"
	"  slice (the trace is written); 2 usage or I/O error: unreadable database, an output that\n"
	"  could not be written (nothing left behind); 130/143 interrupted by\n"
	"  SIGINT/SIGTERM (nothing left behind)\n";

/* --no-findings, --batch-gap-us N (argv[*i] one of them) into eo. 0, or 2
 * after a one-line usage error. */
int export_parse_opt(struct export_opts *eo, int argc, char **argv, int *i, int *seen_gap)
{
	const char *v;
	int64_t n;
	if (!strcmp(argv[*i], "--no-findings")) {
		eo->findings = 0;
		return 0;
	}
	if ((*seen_gap)++) {
		kvio_err("--batch-gap-us given twice (see --help)");
		return 2;
	}
	if (!(v = opt_value(argc, argv, i, "--batch-gap-us")))
		return 2;
	if (parse_i64(v, &n) || n < 0 || n > INT64_MAX / 1000) {
		kvio_err("--batch-gap-us: '%s' is not a non-negative integer", v);
		return 2;
	}
	eo->batch_gap_ns = n * 1000;
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *dbpath = NULL, *out = NULL;
	struct kvio_window win = {0};
	struct export_opts eo = {&win, 1, 50000, NULL};
	int seen_gap = 0, quiet = 0;
	for (int i = 1; i < argc; i++) {
		int r;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(export_help, stdout);
			return 0;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			quiet = 1;
		} else if ((r = window_parse_opt(&win, argc, argv, &i)) != 0) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--no-findings") || opt_is(argv[i], "--batch-gap-us")) {
			if (export_parse_opt(&eo, argc, argv, &i, &seen_gap))
				return 2;
		} else if (!strcmp(argv[i], "-o") || opt_is(argv[i], "--out")) {
			if (out) {
				kvio_err("-o given twice (see --help)");
				return 2;
			}
			if (!(out = opt_value(argc, argv, &i, argv[i][1] == 'o' ? "-o" : "--out")))
				return 2;
		} else if (argv[i][0] == '-') {
			kvio_err("unknown option '%s' (see --help)", argv[i]);
			return 2;
		} else if (!dbpath) {
			dbpath = argv[i];
		} else {
			kvio_err("unexpected argument '%s' (see --help)", argv[i]);
			return 2;
		}
	}
	if (!dbpath || !out) {
		kvio_err("need a trace.db and -o FILE (see --help)");
		return 2;
	}
	struct outfile of;
	const char *in[] = {dbpath};
	if (outfile_open(&of, out, in, 1))
		return 2;
	sqlite3 *db = db_open_ro(dbpath);
	/* one read transaction: one snapshot of a database another process may be
	 * writing (kvio-ingest --follow); the findings' connections take the same */
	if (db && db_exec(db, "BEGIN", "starting a read transaction") != SQLITE_OK) {
		sqlite3_close(db);
		db = NULL;
	}
	if (!db) {
		outfile_abort(&of);
		return 2;
	}
	struct export_stats s;
	eo.progress = progress_wanted(quiet) ? dbpath : NULL;
	int rc = export_db(db, &of, &eo, &s);
	sqlite3_close(db);
	if (rc)
		outfile_abort(&of);
	else
		rc = outfile_commit(&of);
	char fnd[48] = "";
	if (eo.findings)
		snprintf(fnd, sizeof fnd, "; %llu findings", (unsigned long long)s.findings);
	if (!rc && !quiet) /* with -o -, standard output holds the trace: the line goes to stderr */
		fprintf(of.std ? stderr : stdout, "kvio-export: wrote %s (%llu packets, %llu bytes before compression%s)\n",
			of.path, (unsigned long long)s.packets, (unsigned long long)s.bytes, fnd);
	if (!rc && !s.slices) { /* written, as ingest writes its database, but nothing in it to look at */
		char wd[128];
		if (win.has_time || win.has_tid)
			kvio_err("%s: the %s window holds no command or object: %s holds nothing to look at (exit 1)",
				 dbpath, window_desc(&win, wd, sizeof wd), of.path);
		else
			kvio_err("%s holds no slice: %s holds nothing to look at (exit 1)", dbpath, of.path);
		rc = 1;
	}
	return rc;
}

