#!/usr/bin/env python3
"""ops_twin.py EXT [SEED] [TRIALS] — the extension's operators against brute-force twins.

Each trial writes a random table (ties, NULLs, one-element and empty groups,
integer and text labels, reals) into an in-memory database in the sqlite3 CLI
with the extension EXT loaded, runs every operator on it, and compares the
rows with the same definitions computed here in Python from the contracts in
docs/database.md ("Operators"): a sort and a loop per operator. Exit 1 on the
first difference (printed), 0 when every trial agrees."""
import math
import random
import subprocess
import sys

EXT = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
TRIALS = int(sys.argv[3]) if len(sys.argv) > 3 else 40


def q(v):
    """A value as SQLite's quote() prints it."""
    if v is None:
        return 'NULL'
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        r = repr(v)
        return r if ('e' in r or '.' in r) else r + '.0'
    return str(v)


def sort_key(v):
    """SQLite's order: NULL, numbers, text."""
    if v is None:
        return (0, 0, '')
    if isinstance(v, str):
        return (2, 0, v.encode())
    return (1, v, '')


def pct_row(vals):
    """(n, p25, p50, p95, p99, max): sorted with NULLs first, sorted[min(n-1, floor(q*n))]."""
    s = sorted(vals, key=sort_key)
    n = len(s)
    pick = [s[min(n - 1, int(f * n))] for f in (0.25, 0.50, 0.95, 0.99)]
    return [n] + pick + [s[n - 1]]


def run(sql):
    p = subprocess.run(['sqlite3', '-batch', ':memory:', '-cmd', '.load ' + EXT],
                       input=sql, capture_output=True, text=True)
    return p.stdout.splitlines(), p.stderr


def table(rows, cols):
    out = ['CREATE TABLE r(%s);' % ', '.join(cols)]
    for r in rows:
        out.append('INSERT INTO r VALUES(%s);' % ', '.join(q(v) for v in r))
    return '\n'.join(out) + '\n'


def check(name, got, want, sql):
    if got != want:
        print('FAIL %s (seed %d)\n  sql: %s\n  got:  %s\n  want: %s' % (name, SEED, sql.strip()[-400:], got[:12], want[:12]))
        sys.exit(1)


def check_sql(name, op_sql, twin_sql):
    """The operator's rows against a twin written in plain SQL, run the same way."""
    check(name, run(op_sql)[0], run(twin_sql)[0], op_sql)


def keys_of(rnd):
    return rnd.choice([[1], [1, 2], [1, 2, 3, 'a', 'b'], ['x', 'y'], [7]])


def trial(rnd):
    labels = keys_of(rnd)
    n = rnd.choice([0, 1, 2, 5, 30, 200])
    rows = []
    t = {}
    for i in range(n):
        k1 = rnd.choice(labels)
        k2 = rnd.choice(['r', 'w', None, 3])
        v = rnd.choice([None, rnd.randint(-5, 5), rnd.randint(1, 3) / 4.0, rnd.randint(-2**40, 2**40), 7, 10 ** rnd.randint(0, 6)])
        tt = t.get(k1, 0) + rnd.choice([0, 0, 1, 2, 5, 100])  # ties and gaps, in order per k1
        t[k1] = tt
        dur = rnd.choice([0, 1, 3, 10, 50])
        seq = rnd.choice([1, 2, 3])
        cls = rnd.choice(['load', 'store', 'x'])
        a = rnd.choice([None, rnd.randint(0, 20)])
        b = rnd.choice([None, rnd.randint(0, 20)])
        rows.append((k1, k2, v, tt, dur, seq, cls, a, b, i))
    cols = ['k1', 'k2', 'v', 't', 'dur', 'seq', 'cls', 'a', 'b', 'id']
    sql = table(rows, cols)
    ordered = sorted(rows, key=lambda r: (sort_key(r[0]), r[3], r[9]))

    # kvio_pct_gather: percentiles of many groups
    st = sql + ("SELECT quote(k1), quote(k2), n, quote(p25), quote(p50), quote(p95), quote(p99), quote(max)"
                " FROM kvio_pct((SELECT kvio_pct_gather(k1, k2, v) FROM r));\n")
    groups = {}
    for r in rows:
        groups.setdefault((r[0], r[1]), []).append(r[2])
    want = []
    for k in sorted(groups, key=lambda k: (sort_key(k[0]), sort_key(k[1]))):
        pr = pct_row(groups[k])
        want.append('|'.join([q(k[0]), q(k[1]), str(pr[0])] + [q(x) for x in pr[1:]]))
    got, err = run(st)
    check('kvio_pct_gather', got, want, st)

    # kvio_values: each group's distinct values and counts (NULLs first; 1 and 1.0 one value)
    st = sql + ("SELECT quote(k1), quote(k2), quote(CAST(v AS REAL)), count"
                " FROM kvio_values((SELECT kvio_pct_gather(k1, k2, v) FROM r));\n")
    st2 = sql + ("SELECT quote(k1), quote(k2), quote(CAST(v AS REAL)), count(*) FROM r GROUP BY k1, k2, v"
                 " ORDER BY k1, k2, v;\n")
    check_sql('kvio_values', st, st2)  # the twin: SQL's GROUP BY over the same rows

    # kvio_runs_gather: run lengths, split where t - previous t > gap
    gap = rnd.choice([0, 1, 4, 50])
    st = sql + ("SELECT quote(k1), quote(k2), n, p25, p50, p95, p99, max FROM kvio_pct((SELECT kvio_runs_gather(k1, t, %d)"
                " FROM (SELECT * FROM r ORDER BY k1, t, id)));\n" % gap)
    runs = {}
    last = {}
    for r in ordered:
        k = r[0]
        if k in last and r[3] - last[k] <= gap:
            runs[k][-1] += 1
        else:
            runs.setdefault(k, []).append(1)
        last[k] = r[3]
    want = []
    for k in sorted(runs, key=sort_key):
        pr = pct_row(runs[k])
        want.append('|'.join([q(k), 'NULL'] + [str(x) for x in pr]))
    got, err = run(st)
    check('kvio_runs_gather', got, want, st)

    # kvio_runs: the same runs (kvio_runs_gather's five-argument form), each with its
    # first t, the largest t + dur of its rows, its rows and the tag (a) of its first row
    st = sql + ("SELECT quote(k), start, end, n, quote(tag) FROM kvio_runs((SELECT kvio_runs_gather(k1, t, %d, t + dur, a)"
                " FROM (SELECT * FROM r ORDER BY k1, t, id)));\n" % gap)
    spans = {}
    last = {}
    for r in ordered:
        k = r[0]
        if k in last and r[3] - last[k] <= gap:
            sp = spans[k][-1]
            sp[1] = max(sp[1], r[3] + r[4])
            sp[2] += 1
        else:
            spans.setdefault(k, []).append([r[3], r[3] + r[4], 1, r[7]])
        last[k] = r[3]
    want = ['%s|%d|%d|%d|%s' % (q(k), a, b, n, q(tg)) for k in sorted(spans, key=sort_key) for a, b, n, tg in spans[k]]
    got, err = run(st)
    check('kvio_runs', got, want, st)
    st = sql + ("SELECT quote(k1), quote(k2), n, p25, p50, p95, p99, max FROM kvio_pct((SELECT kvio_runs_gather(k1, t, %d,"
                " t + dur, a) FROM (SELECT * FROM r ORDER BY k1, t, id)));\n" % gap)
    st2 = sql + ("SELECT quote(k1), quote(k2), n, p25, p50, p95, p99, max FROM kvio_pct((SELECT kvio_runs_gather(k1, t, %d)"
                 " FROM (SELECT * FROM r ORDER BY k1, t, id)));\n" % gap)
    check_sql('kvio_runs_gather: the five-argument form has the same lengths', st, st2)

    # kvio_gaps_gather: differences within sequences (k1, seq) of >= min_n rows,
    # grouped by (k1, cls of the sequence's first row); members = sequences
    min_n = rnd.choice([1, 2, 4])
    st = sql + ("SELECT quote(k1), quote(k2), n, quote(p25), quote(p50), quote(p95), quote(p99), quote(max), members"
                " FROM kvio_pct((SELECT kvio_gaps_gather(k1, seq, t, cls, %d) FROM (SELECT * FROM r ORDER BY k1, t, id)));\n"
                % min_n)
    seqs = {}
    for r in ordered:
        seqs.setdefault((r[0], r[5]), []).append(r)
    out = {}
    for k, rs in seqs.items():
        if len(rs) < min_n:
            continue
        g = out.setdefault((k[0], rs[0][6]), [[], 0])
        g[0] += [rs[i][3] - rs[i - 1][3] for i in range(1, len(rs))]
        g[1] += 1
    want = []
    for k in sorted(out, key=lambda k: (sort_key(k[0]), sort_key(k[1]))):
        vals, members = out[k]
        if vals:
            pr = [q(x) for x in pct_row(vals)[1:]]
        else:
            pr = ['NULL'] * 5
        want.append('|'.join([q(k[0]), q(k[1]), str(len(vals))] + pr + [str(members)]))
    got, err = run(st)
    check('kvio_gaps_gather', got, want, st)
    # the six-argument form read by kvio_pct: the class groups' values copied in (each = 1 keeps them in the sequences')
    st = st.replace(", %d) FROM (SELECT * FROM r ORDER BY" % min_n, ", %d, 1) FROM (SELECT * FROM r ORDER BY" % min_n)
    got, err = run(st)
    check('kvio_gaps_gather, each = 1, read by kvio_pct', got, want, st)
    # kvio_gaps: the same groups (k, NULL, cls, n, p50, p95, members), then with each = 1
    # every counted sequence (k, seq, cls of its first row, its own n, p50, p95, 1)
    # (t scaled by f: wide gaps, the class percentiles' select passes of 16 bits)
    each = rnd.choice([0, 1])
    f = rnd.choice([1, 1, 65537, 2**33 + 7])
    st = sql + ("SELECT quote(k), quote(seq), quote(cls), n, quote(p50), quote(p95), members"
                " FROM kvio_gaps((SELECT kvio_gaps_gather(k1, seq, t * %d, cls, %d, %d) FROM (SELECT * FROM r ORDER BY k1, t, id)));\n"
                % (f, min_n, each))

    def gaps_row(k, seq, cls, vals, members):
        pr = [q(x) for x in pct_row([v * f for v in vals])[2:4]] if vals else ['NULL'] * 2
        return '|'.join([q(k), q(seq), q(cls), str(len(vals))] + pr + [str(members)])
    want = [gaps_row(k[0], None, k[1], *out[k]) for k in sorted(out, key=lambda k: (sort_key(k[0]), sort_key(k[1])))]
    for k in sorted(seqs, key=lambda k: (sort_key(k[0]), sort_key(k[1]))) if each else []:
        rs = seqs[k]
        if len(rs) >= min_n:
            want.append(gaps_row(k[0], k[1], rs[0][6], [rs[i][3] - rs[i - 1][3] for i in range(1, len(rs))], 1))
    got, err = run(st)
    check('kvio_gaps', got, want, st)

    # kvio_depth_gather: time at each overlap depth; the old SQL definition:
    # events (t, +1), (t + dur, -1) sorted by (time, delta), depth after each
    # event held until the group's next event
    st = sql + ("SELECT quote(k), depth, time FROM kvio_depth((SELECT kvio_depth_gather(k1, t, dur)"
                " FROM (SELECT * FROM r ORDER BY k1, t)));\n")
    ev = {}
    for r in rows:
        ev.setdefault(r[0], []).extend([(r[3], 1), (r[3] + r[4], -1)])
    want = []
    for k in sorted(ev, key=sort_key):
        e = sorted(ev[k])
        at = {}
        d = 0
        for i, (tt, dd) in enumerate(e):
            d += dd
            dt = e[i + 1][0] - tt if i + 1 < len(e) else 0
            if dt:
                at[d] = at.get(d, 0) + dt
        for depth in sorted(at):
            want.append('%s|%d|%d' % (q(k), depth, at[depth]))
    got, err = run(st)
    check('kvio_depth_gather', got, want, st)

    # kvio_depth_spans: the maximal spans of a group's sweep (first event to last) at
    # depth <= max_depth, made of the intervals between consecutive events (sorted by
    # (time, delta)) that last > 0 ns; those lasting >= min_len (and > 0)
    md, ml = rnd.choice([0, 1, 2]), rnd.choice([0, 1, 5, 30])
    st = sql + ("SELECT quote(k), start, end FROM kvio_depth_spans((SELECT kvio_depth_gather(k1, t, dur, %d, %d)"
                " FROM (SELECT * FROM r ORDER BY k1, t)));\n" % (md, ml))
    want = []
    for k in sorted(ev, key=sort_key):
        e = sorted(ev[k])
        d, cur, out = 0, None, []
        for i, (tt, dd) in enumerate(e[:-1]):
            d += dd
            a, b = tt, e[i + 1][0]
            if b == a:
                continue
            if d <= md:
                cur = [a, b] if cur is None or cur[1] != a else [cur[0], b]
            else:
                if cur:
                    out.append(cur)
                cur = None
        if cur:
            out.append(cur)
        want += ['%s|%d|%d' % (q(k), a, b) for a, b in out if b - a >= ml and b > a]
    got, err = run(st)
    check('kvio_depth_spans', got, want, st)
    # kvio_depth_and_spans: kvio_depth's rows (start, end NULL), then kvio_depth_spans' (depth, time NULL)
    g = "(SELECT kvio_depth_gather(k1, t, dur, %d, %d) FROM (SELECT * FROM r ORDER BY k1, t))" % (md, ml)
    st = sql + "SELECT quote(k), quote(depth), quote(time), quote(start), quote(end) FROM kvio_depth_and_spans(%s);\n" % g
    st2 = sql + ("SELECT quote(k), depth, time, 'NULL', 'NULL' FROM kvio_depth(%s);\n"
                 "SELECT quote(k), 'NULL', 'NULL', start, end FROM kvio_depth_spans(%s);\n" % (g, g))
    check_sql('kvio_depth_and_spans', st, st2)

    # kvio_group_gather: count(*), count(v), min, max, sum per (k1, k2)
    st = sql + ("SELECT quote(k1), quote(k2), n, count, quote(min), quote(max), quote(sum)"
                " FROM kvio_groups((SELECT kvio_group_gather(k1, k2, v) FROM r));\n")
    st2 = sql + ("SELECT quote(k1), quote(k2), count(*), count(v), quote(min(v)), quote(max(v)), quote(sum(v))"
                 " FROM r GROUP BY k1, k2 ORDER BY k1, k2;\n")
    check_sql('kvio_group_gather', st, st2)  # the brute-force twin in plain SQL

    # kvio_count_distinct: count(DISTINCT x) per k1 (numbers, text, blobs, NULLs; 1 and 1.0 are one value)
    for x in ('v', 'cls', 'CAST(cls AS BLOB)', 'k2',
              'CASE WHEN a IS NULL THEN cls WHEN b IS NULL THEN CAST(cls AS BLOB) WHEN a > 10 THEN v * 1.0 ELSE v END'):
        st = sql + "SELECT quote(k1), kvio_count_distinct(%s) FROM r GROUP BY k1 ORDER BY k1;\n" % x
        st2 = sql + "SELECT quote(k1), count(DISTINCT %s) FROM r GROUP BY k1 ORDER BY k1;\n" % x
        check_sql('kvio_count_distinct(%s)' % x, st, st2)  # the twin: SQLite's own count(DISTINCT)

    # kvio_count_distinct at int64's edges and beside reals: -2^63 and -2^63.0 are one value, 2^63 - 1
    # and 9223372036854775807.0 (= 2^63) two; 2^53 + 1 beside 2^53.0; -0.0 and 0; '' and x''
    edge = ('-9223372036854775808', '-9223372036854775808.0', '9223372036854775807', '9223372036854775807.0',
            '9007199254740993', '9007199254740992.0', '-0.0', '0', '1e300', "''", "x''", "'a'", "x'61'", 'NULL')
    pick = [rnd.choice(edge) for _ in range(rnd.randint(1, 10))]
    rows_sql = ' UNION ALL '.join('SELECT %s AS x' % e for e in pick)
    check_sql('kvio_count_distinct at the edges', "SELECT kvio_count_distinct(x) FROM (%s);\n" % rows_sql,
              "SELECT count(DISTINCT x) FROM (%s);\n" % rows_sql)

    # kvio_group_gather with several values: one row per (k1, k2, value column), col 1-based
    vals = ['v', 'a', 'b * 0.5', 'dur']
    st = sql + ("SELECT quote(k1), quote(k2), col, n, count, quote(min), quote(max), quote(sum)"
                " FROM kvio_groups((SELECT kvio_group_gather(k1, k2, %s) FROM r));\n" % ', '.join(vals))
    st2 = sql + ("SELECT quote(k1), quote(k2), col, n, c, quote(mi), quote(ma), quote(su) FROM (%s) ORDER BY k1, k2, col;\n"
                 % ' UNION ALL '.join("SELECT k1, k2, %d AS col, count(*) AS n, count(%s) AS c, min(%s) AS mi, max(%s) AS ma,"
                                      " sum(%s) AS su FROM r GROUP BY k1, k2" % (i + 1, x, x, x, x) for i, x in enumerate(vals)))
    check_sql('kvio_group_gather, 4 values', st, st2)  # the twin: one plain GROUP BY per value column

    # kvio_step_gather: a - previous b within k1 (input order), by sign
    st = sql + ("SELECT quote(k1), quote(k2), n, count, quote(min), quote(max), quote(sum)"
                " FROM kvio_groups((SELECT kvio_step_gather(k1, a, b) FROM (SELECT * FROM r ORDER BY k1, t, id)));\n")
    prev = {}
    steps = {}
    for r in ordered:
        k = r[0]
        if k in prev:
            pb = prev[k]
            d = None if r[7] is None or pb is None else r[7] - pb
            s = None if d is None else (d > 0) - (d < 0)
            steps.setdefault((k, s), []).append(d)
        prev[k] = r[8]
    want = []
    for k in sorted(steps, key=lambda k: (sort_key(k[0]), sort_key(k[1]))):
        ds = [d for d in steps[k] if d is not None]
        want.append('|'.join([q(k[0]), q(k[1]), str(len(steps[k])), str(len(ds)),
                              q(min(ds)) if ds else 'NULL', q(max(ds)) if ds else 'NULL',
                              q(sum(ds)) if ds else 'NULL']))
    got, err = run(st)
    check('kvio_step_gather', got, want, st)

    # kvio_step_gather(k, a, b, len, unit): the previous row's b + len / unit (an extent's end),
    # against the three-argument form given that expression in SQL (integer division; / 0 NULL)
    for ln, unit in (('dur', 1), ('dur', 3), ('dur', -2), ('dur', 0), ('dur', 'NULL'), ('a', 3), ('-dur', 4)):
        form = "SELECT quote(k1), quote(k2), n, count, quote(min), quote(max), quote(sum) FROM kvio_groups((" \
               "SELECT kvio_step_gather(k1, a, %s) FROM (SELECT * FROM r ORDER BY k1, t, id)));\n"
        check_sql('kvio_step_gather(k, a, b, %s, %s)' % (ln, unit), sql + form % ('b, %s, %s' % (ln, unit)),
                  sql + form % ('b + %s / %s' % (ln, unit)))

    # kvio_quantiles: each (k1, k2) group's sorted values at the distinct ranks
    # min(n-1, floor(q*n)) of a grid (given unsorted, with repeats), the first q of each
    grid = [rnd.choice([0, 1, 2, 3, 10, 19, 20]) / 20.0 for _ in range(rnd.choice([1, 3, 8]))]
    grid += rnd.choice([[], [0.999, 0.9995], [0.0, 1.0]])
    gtxt = ', '.join(repr(x) for x in grid)
    st = sql + ("SELECT quote(k1), quote(k2), n, printf('%%.6f', q), rank, quote(v)"
                " FROM kvio_quantiles((SELECT kvio_pct_gather(k1, k2, v) FROM r), '%s');\n" % gtxt)
    want = []
    for k in sorted(groups, key=lambda k: (sort_key(k[0]), sort_key(k[1]))):
        sv = sorted(groups[k], key=sort_key)
        n = len(sv)
        seen = set()
        for qq in sorted(grid):
            rk = min(n - 1, int(qq * n))
            if rk in seen:
                continue
            seen.add(rk)
            want.append('|'.join([q(k[0]), q(k[1]), str(n), '%.6f' % qq, str(rk), q(sv[rk])]))
    got, err = run(st)
    check('kvio_quantiles', got, want, st)

    # kvio_log_bins: each (k1, k2) group's non-NULL values counted by bin
    # floor(per * log10(max(v, 1))), log10 as SQLite computes it (ln v / ln 10)
    per = rnd.choice([1, 10, 3.5])
    st = sql + ("SELECT quote(k1), quote(k2), bin, count"
                " FROM kvio_log_bins((SELECT kvio_pct_gather(k1, k2, v) FROM r), %r);\n" % per)
    want = []
    for k in sorted(groups, key=lambda k: (sort_key(k[0]), sort_key(k[1]))):
        bins = {}
        for x in groups[k]:
            if x is not None:
                b = math.floor(per * (math.log(max(x, 1)) / math.log(10)))
                bins[b] = bins.get(b, 0) + 1
        want += ['%s|%s|%d|%d' % (q(k[0]), q(k[1]), b, bins[b]) for b in sorted(bins)]
    got, err = run(st)
    check('kvio_log_bins', got, want, st)

    # kvio_depth_buckets_gather: the old SQL definition of html_qd.sql's buckets:
    # intervals between a group's consecutive events (sorted by (time, delta)) at
    # the depth after the first; buckets b < ceil((end - t0) / w) of [t0 + b*w, +w);
    # an interval of depth > 0 adds depth x overlap to each bucket b in
    # [(a - t0) / w, min(nb - 1, (max(a, e - 1) - t0) / w)] and raises its max
    grid_of = {}
    for r in ordered:
        if r[0] not in grid_of:
            grid_of[r[0]] = (r[3] - rnd.choice([0, 0, 1, 3]), rnd.choice([1, 2, 7, 20]))
    gv = ' UNION ALL '.join('SELECT %s, %d, %d' % (q(k), t0, w) for k, (t0, w) in grid_of.items())
    st = sql + ("CREATE TABLE g(k, t0, w);%s\n"
                "SELECT quote(k), bucket, start, width, area, max FROM kvio_depth_buckets((SELECT"
                " kvio_depth_buckets_gather(r.k1, r.t, r.dur, g.t0, g.w) FROM (SELECT * FROM r ORDER BY k1, t) r"
                " CROSS JOIN g ON g.k = r.k1));\n" % ((' INSERT INTO g ' + gv + ';') if gv else ''))
    want = []
    for k in sorted(ev, key=sort_key):
        e = sorted(ev[k])
        t0, w = grid_of[k]
        end = max(x[0] for x in e)
        nb = (end - t0 + w - 1) // w
        area, mx = [0] * nb, [0] * nb
        d = 0
        for i, (tt, dd) in enumerate(e[:-1]):
            d += dd
            a, b = tt, e[i + 1][0]
            if d <= 0:
                continue
            for bk in range((a - t0) // w, min(nb - 1, (max(a, b - 1) - t0) // w) + 1):
                x = t0 + bk * w
                area[bk] += d * (min(b, x + w) - max(a, x))
                mx[bk] = max(mx[bk], d)
        for bk in range(nb):
            x = t0 + bk * w
            want.append('%s|%d|%d|%d|%d|%d' % (q(k), bk, x, min(w, end - x), area[bk], mx[bk]))
    got, err = run(st)
    check('kvio_depth_buckets_gather', got, want, st)


def refusals():
    """Out-of-order input and text values are errors, not wrong rows."""
    cases = [
        ("SELECT count(*) FROM kvio_depth((SELECT kvio_depth_gather(1, t, 1) FROM (SELECT 5 AS t UNION ALL SELECT 3)));",
         'not in ts order'),
        ("SELECT count(*) FROM kvio_pct((SELECT kvio_runs_gather(1, t, 1) FROM (SELECT 5 AS t UNION ALL SELECT 3)));",
         'not in t order'),
        ("SELECT count(*) FROM kvio_pct((SELECT kvio_pct_gather(1, 1, 'x')));", 'must be a number'),
        ("SELECT count(*) FROM kvio_depth((SELECT kvio_depth_gather(1, 0, -1)));", 'dur >= 0'),
        ("SELECT count(*) FROM kvio_pct(NULL);", 'not a kvio_vset'),
        ("SELECT count(*) FROM kvio_runs(NULL);", 'not a kvio_vset'),
        ("SELECT count(*) FROM kvio_depth_spans(NULL);", 'not a kvio_depth'),
        ("SELECT count(*) FROM kvio_gaps(NULL);", 'not a kvio_vset'),
        ("SELECT count(*) FROM kvio_depth_and_spans(NULL);", 'not a kvio_depth'),
        ("SELECT count(*) FROM kvio_gaps((SELECT kvio_gaps_gather(1, 1, 5, 1, 2, 2)));", 'each 0 or 1'),
        ("SELECT count(*) FROM kvio_runs((SELECT kvio_runs_gather(1, 5, 1, 6, 'x')));", 'tag an integer or NULL'),
        ("SELECT count(*) FROM kvio_depth_spans((SELECT kvio_depth_gather(1, 5, 1, -1, 0)));", 'max_depth and min_len must be integers >= 0'),
        ("SELECT count(*) FROM kvio_quantiles((SELECT kvio_pct_gather(1, 1, 2)), '0.5, 1.5');", 'in [0, 1]'),
        ("SELECT count(*) FROM kvio_quantiles((SELECT kvio_pct_gather(1, 1, 2)), 'x');", 'in [0, 1]'),
        ("SELECT count(*) FROM kvio_quantiles(NULL, '0.5');", 'not a kvio_vset'),
        ("SELECT count(*) FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(1, t, 1, 0, 5)"
         " FROM (SELECT 5 AS t UNION ALL SELECT 3)));", 'not in ts order'),
        ("SELECT count(*) FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(1, t, 1, t, 5)"
         " FROM (SELECT 5 AS t UNION ALL SELECT 6)));", 't0 and w differ'),
        ("SELECT count(*) FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(1, 5, 1, 6, 5)));", 't0 <= ts'),
        ("SELECT count(*) FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(1, 5, 1, 0, 0)));", 'w >= 1'),
        ("SELECT count(*) FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(1, 0, 100000000, 0, 1)));",
         '2^24 buckets'),
        ("SELECT count(*) FROM kvio_depth_buckets(NULL);", 'not a kvio_buckets'),
        ("SELECT count(*) FROM kvio_log_bins((SELECT kvio_pct_gather(1, 1, 2)), 0);", 'per_decade must be'),
        ("SELECT count(*) FROM kvio_log_bins(NULL, 10);", 'not a kvio_vset'),
    ]
    for sql, msg in cases:
        out, err = run(sql + '\n')
        if msg not in err:
            print('FAIL refusal %r: stderr %r' % (sql, err))
            sys.exit(1)


rnd = random.Random(SEED)
for _ in range(TRIALS):
    trial(rnd)
refusals()
print('ok %d trials' % TRIALS)
