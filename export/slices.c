/* slices.c — the tracks, the generic slices (objects, serving, capture info,
 * overview) with their args and flows, and the stored counters. */
#include "export_int.h"
#include <stdlib.h>

int export_tracks(sqlite3 *db, struct exporter *x)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db,
		"SELECT t.id, t.name, t.parent_id, t.is_counter, t.unit, t.sibling_order_rank,"
		" t.child_ordering, p.pid, p.name FROM kvio_track t LEFT JOIN process p"
		" ON p.upid = t.upid AND t.parent_id IS NULL AND t.name IS NULL ORDER BY t.id", -1, &st, NULL);
	if (rc)
		return -1;
	while (!out_failed(&x->o) && sqlite3_step(st) == SQLITE_ROW) {
		Kvio__Pf__TracePacket p = KVIO__PF__TRACE_PACKET__INIT;
		Kvio__Pf__TrackDescriptor d = KVIO__PF__TRACK_DESCRIPTOR__INIT;
		Kvio__Pf__ProcessDescriptor pd = KVIO__PF__PROCESS_DESCRIPTOR__INIT;
		Kvio__Pf__CounterDescriptor cd = KVIO__PF__COUNTER_DESCRIPTOR__INIT;
		p.track_descriptor = &d;
		d.has_uuid = 1;
		d.uuid = (uint64_t)sqlite3_column_int64(st, 0);
		d.name = (char *)sqlite3_column_text(st, 1);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			d.has_parent_uuid = 1;
			d.parent_uuid = (uint64_t)sqlite3_column_int64(st, 2);
		}
		if (sqlite3_column_int(st, 3)) {
			d.counter = &cd;
			cd.unit_name = (char *)sqlite3_column_text(st, 4);
		}
		if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
			d.has_sibling_order_rank = 1;
			d.sibling_order_rank = sqlite3_column_int(st, 5);
		}
		if (sqlite3_column_type(st, 6) != SQLITE_NULL) {
			d.has_child_ordering = 1;
			d.child_ordering = KVIO__PF__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
		}
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			d.process = &pd;
			pd.has_pid = 1;
			pd.pid = sqlite3_column_int(st, 7);
			pd.process_name = (char *)sqlite3_column_text(st, 8);
		}
		out_packet(&x->o, &p);
		x->packets++;
	}
	return sqlite3_finalize(st) != SQLITE_OK ? -1 : 0; /* a read error: not fewer tracks */
}

/* Put cursor st (rows ordered by their first column, an id, from ?1 on) on
 * the rows of id, the ids asked for ascending: a merge step, or with `jump`
 * (the ids are sparse: a window's) a new lookup from id when it is more than a
 * few rows ahead. rc is the cursor's last step result; returns the new one. */
#define SEEK_STEPS 8
static int seek(sqlite3_stmt *st, int rc, int jump, int64_t id)
{
	for (int n = 0; rc == SQLITE_ROW && sqlite3_column_int64(st, 0) < id; n++) {
		if (jump && n == SEEK_STEPS) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, id);
			return sqlite3_step(st);
		}
		rc = sqlite3_step(st);
	}
	return rc;
}

/* The annotation keys and string values of the event being built: the
 * protobuf messages reference them, so they live until it is emitted. */
struct ann_strs {
	char *keys[MAXANN], *vals[MAXANN];
	int n;
};

static void ann_strs_free(struct ann_strs *k)
{
	for (int i = 0; i < k->n; i++) {
		free(k->keys[i]);
		free(k->vals[i]);
	}
	k->n = 0;
}

/* The slices' three cursors: the slices, their args, their objects' columns. */
struct slice_cur {
	sqlite3_stmt *s, *a, *ob;
	int jump; /* under a window: the args' and objects' cursors jump over what it leaves out */
	int arc, orc; /* the last step result of a and ob */
};

/* Finalize st; -1 (said, with SQLite's reason) when its last read failed. */
static int fin_said(sqlite3_stmt *st)
{
	sqlite3 *db = st ? sqlite3_db_handle(st) : NULL;
	if (sqlite3_finalize(st) == SQLITE_OK)
		return 0;
	say_once("reading the database: %s", sqlite3_errmsg(db));
	return -1;
}

/* Close c's statements; -1 when a read of one of them failed (not a shorter list). */
static int slice_cur_close(struct slice_cur *c)
{
	int a = fin_said(c->s), b = fin_said(c->a), o = fin_said(c->ob);
	return a || b || o ? -1 : 0;
}

/* Generic slices in id order, with cursors on their args and object columns
 * merged with them. */
static int slice_cur_open(sqlite3 *db, const struct kvio_window *w, struct slice_cur *c)
{
	memset(c, 0, sizeof *c);
	c->jump = w != NULL;
	if (sqlite3_prepare_v2(db, "SELECT id, ts, dur, track_id, name FROM kvio_slice WHERE id >= ?1 ORDER BY id", -1, &c->s,
			       NULL) ||
	    sqlite3_prepare_v2(db, "SELECT arg_set_id, key, int_value, string_value, real_value, value_type"
				   " FROM kvio_arg WHERE arg_set_id >= ?1 ORDER BY arg_set_id, key", -1, &c->a, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT * FROM kvio_obj WHERE id >= ?1 ORDER BY id", -1, &c->ob, NULL)) {
		slice_cur_close(c);
		return -1;
	}
	sqlite3_bind_int64(c->s, 1, INT64_MIN);
	sqlite3_bind_int64(c->a, 1, INT64_MIN);
	sqlite3_bind_int64(c->ob, 1, INT64_MIN);
	c->arc = sqlite3_step(c->a);
	c->orc = sqlite3_step(c->ob);
	return 0;
}

/* Slice id's kvio_arg rows as annotations, each with its value type. */
static void slice_args(struct exporter *x, struct slice_cur *c, int64_t id, struct ann_strs *k)
{
	sqlite3_stmt *a = c->a;
	c->arc = seek(a, c->arc, c->jump, id);
	for (; c->arc == SQLITE_ROW && sqlite3_column_int64(a, 0) == id; c->arc = sqlite3_step(a)) {
		if (k->n == MAXANN)
			continue;
		const char *vt = nz(sqlite3_column_text(a, 5));
		char *key = k->keys[k->n] = xstrdup(nz(sqlite3_column_text(a, 1)));
		k->vals[k->n] = NULL;
		if (!strcmp(vt, "string")) {
			const char *v = (const char *)sqlite3_column_text(a, 3);
			k->vals[k->n] = xstrdup(v ? v : "");
			ann_str(x, key, k->vals[k->n], 0);
		} else if (!strcmp(vt, "real")) {
			ann_double(x, key, sqlite3_column_double(a, 4));
		} else if (!strcmp(vt, "bool")) {
			ann_bool(x, key, sqlite3_column_int(a, 2));
		} else if (!strcmp(vt, "int")) {
			ann_int(x, key, sqlite3_column_int64(a, 2));
		} else {
			ann_uint(x, key, (uint64_t)sqlite3_column_int64(a, 2));
		}
		k->n++;
	}
}

/* An object's args: the typed columns of its kvio_obj row, each value with its
 * own type (NULL columns left out). Returns 1 when id is an object. */
static int slice_obj_args(struct exporter *x, struct slice_cur *c, int64_t id, struct ann_strs *k)
{
	sqlite3_stmt *ob = c->ob;
	c->orc = seek(ob, c->orc, c->jump, id);
	if (c->orc != SQLITE_ROW || sqlite3_column_int64(ob, 0) != id)
		return 0;
	for (int col = 1; col < sqlite3_column_count(ob) && k->n < MAXANN; col++) {
		int t = sqlite3_column_type(ob, col);
		if (t == SQLITE_NULL)
			continue;
		char *key = k->keys[k->n] = xstrdup(sqlite3_column_name(ob, col));
		k->vals[k->n] = NULL;
		if (t == SQLITE_INTEGER) {
			int64_t v = sqlite3_column_int64(ob, col);
			if (v < 0)
				ann_int(x, key, v);
			else
				ann_uint(x, key, (uint64_t)v);
		} else if (t == SQLITE_FLOAT) {
			ann_double(x, key, sqlite3_column_double(ob, col));
		} else {
			k->vals[k->n] = xstrdup(nz(sqlite3_column_text(ob, col)));
			ann_str(x, key, k->vals[k->n], 0);
		}
		k->n++;
	}
	return 1;
}

/* The slice on c->s's current row: BEGIN (or an instant) with its args and
 * flows, then its END. */
static void export_slice(struct exporter *x, struct slice_cur *c, const struct flows *fl)
{
	sqlite3_stmt *s = c->s;
	int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 1), dur = sqlite3_column_int64(s, 2);
	uint64_t track = (uint64_t)sqlite3_column_int64(s, 3);
	ev_reset(x, dur ? KVIO__PF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN : KVIO__PF__TRACK_EVENT__TYPE__TYPE_INSTANT, ts,
		 track);
	ev_name(x, (const char *)sqlite3_column_text(s, 4));
	struct ann_strs k = {.n = 0};
	slice_args(x, c, id, &k);
	if (slice_obj_args(x, c, id, &k))
		x->kept++;
	const unsigned char *nm = sqlite3_column_text(s, 4);
	if (!nm || strcmp((const char *)nm, "capture_info")) /* the capture's metadata is no content */
		x->slices++;
	ev_flows(x, fl, id);
	ev_emit(x);
	ann_strs_free(&k);
	if (dur > 0) /* dur -1: a slice that never ended (imported): its BEGIN only */
		emit_end(x, SEQ_ID, ts + dur, track);
}

/* Generic slices (objects, serving, capture info, overview) with their args;
 * under a window, those it keeps (x->keep's list: the window's slice query
 * runs once). */
int export_slices(sqlite3 *db, struct exporter *x, const struct flows *fl)
{
	struct slice_cur c;
	if (slice_cur_open(db, x->win, &c))
		return -1;
	if (!x->keep) {
		while (!out_failed(&x->o) && sqlite3_step(c.s) == SQLITE_ROW)
			export_slice(x, &c, fl);
	} else {
		const int64_t *id = x->keep->slices.v;
		int rc = sqlite3_step(c.s);
		for (size_t i = 0; !out_failed(&x->o) && i < x->keep->slices.n; i++) {
			rc = seek(c.s, rc, 1, id[i]);
			if (rc == SQLITE_ROW && sqlite3_column_int64(c.s, 0) == id[i])
				export_slice(x, &c, fl);
		}
	}
	return slice_cur_close(&c);
}

/* A slice written ahead: where its packets begin in the memory buffer, and
 * the three pools' sizes before it (the strings it interned fresh follow). */
struct early_at {
	int64_t id;
	size_t at;
	uint32_t pool[3];
};

int export_slices_early(sqlite3 *db, struct exporter *x, const struct flows *fl, struct early *e)
{
	struct slice_cur c;
	struct out real = x->o;
	memset(e, 0, sizeof *e);
	if (slice_cur_open(db, NULL, &c))
		return -1;
	x->o = (struct out){.f = real.f, .mem = 1, .cap = 1 << 20, .buf = xmalloc(1 << 20)};
	while (!out_failed(&x->o) && sqlite3_step(c.s) == SQLITE_ROW) {
		struct early_at *a = vec_push(&e->at, sizeof *a);
		*a = (struct early_at){sqlite3_column_int64(c.s, 0), x->o.n,
				       {(uint32_t)x->names.s.n, (uint32_t)x->ann_names.s.n, (uint32_t)x->str_values.s.n}};
		export_slice(x, &c, fl);
	}
	e->buf = x->o.buf;
	e->n = x->o.n;
	x->o = real;
	return slice_cur_close(&c);
}

int export_slices_replay(sqlite3 *db, struct exporter *x, const struct flows *fl, struct early *e, const int64_t *ids,
			 size_t nids)
{
	struct slice_cur c;
	if (slice_cur_open(db, NULL, &c))
		return -1;
	c.jump = 1; /* the ids are sparse */
	const struct early_at *a = e->at.v;
	size_t from = 0, j = 0; /* the bytes not copied yet begin at from */
	int rc = sqlite3_step(c.s);
	for (size_t i = 0; i < e->at.n && !out_failed(&x->o); i++) {
		while (j < nids && ids[j] < a[i].id)
			j++;
		if (j == nids || ids[j] != a[i].id || (rc = seek(c.s, rc, 1, a[i].id)) != SQLITE_ROW ||
		    sqlite3_column_int64(c.s, 0) != a[i].id)
			continue; /* (a row that is gone: its first encoding stays) */
		out_bytes(&x->o, e->buf + from, a[i].at - from);
		uint64_t np = x->packets, nk = x->kept, ns = x->slices;
		x->replay = 1;
		memcpy(x->replay_next, a[i].pool, sizeof x->replay_next);
		export_slice(x, &c, fl);
		x->replay = 0;
		x->packets = np, x->kept = nk, x->slices = ns; /* counted the first time */
		from = i + 1 < e->at.n ? a[i + 1].at : e->n;
	}
	out_bytes(&x->o, e->buf + from, e->n - from);
	return slice_cur_close(&c);
}

void early_free(struct early *e)
{
	free(e->buf);
	vec_free(&e->at);
}

/* Stored counters (under a window: their points inside it; counters carry
 * no trace_id, --trace-id keeps them all). */
int export_counters(sqlite3 *db, struct exporter *x)
{
	sqlite3_stmt *st;
	if (win_prepare(db, x->win, "SELECT ts, track_id, value FROM kvio_counter WHERE ts BETWEEN :lo AND :hi ORDER BY id",
			&st))
		return -1;
	while (!out_failed(&x->o) && sqlite3_step(st) == SQLITE_ROW)
		emit_counter(x, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
			     sqlite3_column_double(st, 2));
	return sqlite3_finalize(st) != SQLITE_OK ? -1 : 0;
}

