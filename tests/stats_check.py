#!/usr/bin/python3
"""stats_check.py — report/stats.c against scipy and numpy (run with /usr/bin/python3).

Builds tests/stats_drv.c, feeds it seeded samples (small, tied, large, equal,
shifted) and checks:
  - Mann-Whitney U: U1 equal and the two-sided p within 1e-9 relative of
    scipy.stats.mannwhitneyu(x, y) (defaults: method='auto', continuity);
  - bootstrap intervals, across runs and within a run: each endpoint the C
    code gives must sit, under the reference bootstrap distribution of the
    delta, at a probability level within Monte-Carlo error of 2.5% / 97.5%.
    The reference is the same resampling scheme done literally in numpy: every
    resample enumerated when there are few (3 or 4 runs a side), else many
    brute-force resamples. This checks the within-run shortcuts (Beta order
    statistics for a quantile; tail-exact + bulk-normal for a mean) against
    plain resampling of the same quantile or mean.
Prints "ok - ..." / "FAIL - ..." lines and "N passed, N failed"; exit 1 on a failure.
Usage: /usr/bin/python3 tests/stats_check.py [--quick] [-v]  (-v: the details of passing checks too)
Environment: CC (default cc), STATS_CFLAGS (extra compiler flags, e.g. -fsanitize=address,undefined).
"""
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = '--quick' in sys.argv
VERBOSE = '-v' in sys.argv
PASS = FAIL = 0
ALPHAS = (0.025, 0.975)


def check(name, cond, detail=''):
    global PASS, FAIL
    if cond:
        PASS += 1
        print(f'ok - stats: {name}' + (f'\n    {detail}' if detail and VERBOSE else ''))
    else:
        FAIL += 1
        print(f'FAIL - stats: {name}' + (f'\n    {detail}' if detail else ''))


def build(tmp):
    exe = os.path.join(tmp, 'stats_drv')
    cc = os.environ.get('CC', 'cc')
    extra = os.environ.get('STATS_CFLAGS', '').split()  # e.g. -fsanitize=address,undefined
    subprocess.run([cc, *extra, '-std=c11', '-Wall', '-Wextra', '-Werror', '-D_GNU_SOURCE', '-O2', '-o', exe,
                    os.path.join(ROOT, 'tests/stats_drv.c'), os.path.join(ROOT, 'report/stats.c'), '-lm'],
                   check=True)
    return exe


def line(xs):
    return ' '.join(repr(float(x)) for x in xs) + '\n'


def drive(exe, cases):
    """cases: (header, x, y) triples; returns the driver's output lines."""
    text = ''.join(h + '\n' + line(x) + line(y) for h, x, y in cases)
    out = subprocess.run([exe], input=text, capture_output=True, text=True, check=True).stdout
    rows = out.splitlines()
    assert len(rows) == len(cases), (len(rows), len(cases))
    return rows


def kvio_q(v, q):
    """kvio's quantile: sorted[min(n-1, floor(q*n))], as the C double product computes it."""
    v = np.sort(np.asarray(v, dtype=float))
    n = len(v)
    return v[min(n - 1, int(q * float(n)))]


# ------------------------------------------------------------ Mann-Whitney U

def mwu_cases(rng):
    groups = {}
    g = groups.setdefault('exact path: no ties, either side <= 8 (sizes 1-8 x 1-30)', [])
    for n1 in range(1, 9):
        for n2 in (1, 2, 3, 5, 8, 9, 13, 30):
            shift = rng.choice([0.0, 0.5, 1.5, 4.0])
            g.append((rng.normal(size=n1) + shift, rng.normal(size=n2)))
            g.append((rng.normal(size=n2), rng.normal(size=n1) + shift))
    g = groups.setdefault('exact path, one side long: 3 vs 400, 8 vs 60, 1 vs 300, 5 vs 120', [])
    for n1, n2 in ((3, 400), (8, 60), (1, 300), (5, 120), (400, 3)):
        g.append((rng.normal(size=n1) + 0.7, rng.normal(size=n2)))
    g = groups.setdefault('asymptotic: small samples with ties (integers 0..3, sizes 2-12)', [])
    for _ in range(60):
        n1, n2 = rng.integers(2, 13, size=2)
        g.append((rng.integers(0, 4, size=n1).astype(float), rng.integers(0, 4, size=n2).astype(float)))
    g = groups.setdefault('asymptotic: both > 8, no ties (9 vs 9 .. 40 vs 25, shifted and not)', [])
    for n1, n2 in ((9, 9), (9, 12), (12, 9), (20, 20), (40, 25)):
        for shift in (0.0, 0.8, 3.0):
            g.append((rng.normal(size=n1) + shift, rng.normal(size=n2)))
    g = groups.setdefault('large: 2000 vs 3000 shifted 0.05 sd; 5000 vs 5000 equal laws; 3 vs 3 equal values', [])
    g.append((rng.normal(size=2000) + 0.05, rng.normal(size=3000)))
    g.append((rng.normal(size=5000), rng.normal(size=5000)))
    g.append((np.full(3, 7.0), np.full(3, 7.0)))
    g.append((np.full(50, 7.0), np.full(60, 7.0)))
    g = groups.setdefault('large with ties: integral lognormal latencies 200k vs 200k (2% slower), batch sizes {1,2,4,8}', [])
    n = 20000 if QUICK else 200000
    g.append((np.floor(20400 * np.exp(0.5 * rng.normal(size=n))), np.floor(20000 * np.exp(0.5 * rng.normal(size=n)))))
    g.append((rng.choice([1.0, 2, 4, 8], p=[.5, .3, .15, .05], size=3000),
              rng.choice([1.0, 2, 4, 8], p=[.45, .3, .18, .07], size=2500)))
    return groups


def test_mwu(exe, rng):
    groups = mwu_cases(rng)
    flat = [(name, x, y) for name, cs in groups.items() for x, y in cs]
    rows = drive(exe, [('mwu', x, y) for _, x, y in flat])
    by = {}
    for (name, x, y), row in zip(flat, rows):
        u1, p, meth, _z = row.split()
        u1, p = float(u1), float(p)
        ref = stats.mannwhitneyu(x, y)
        ru, rp = float(ref.statistic), float(ref.pvalue)
        rel = abs(p - rp) / max(abs(rp), 1e-300)
        b = by.setdefault(name, [0, 0.0, set(), []])
        b[0] += 1
        b[1] = max(b[1], rel)
        b[2].add(meth)
        if u1 != ru or rel > 1e-9:
            b[3].append(f'n={len(x)},{len(y)}: C U1 {u1} p {p!r} {meth}; scipy U1 {ru} p {rp!r}')
    for name, (n, worst, meths, bad) in by.items():
        check(f'U test vs scipy.stats.mannwhitneyu, {name}: {n} cases, U1 equal, p within 1e-9 '
              f'(worst {worst:.1e}; method {"/".join(sorted(meths))})', not bad, '; '.join(bad[:3]))


# ---------------------------------------------------------------- bootstrap

def stat_rows(v, kind, q):
    """The statistic of each row of a resample matrix."""
    if kind == 'mean':
        return v.mean(axis=1)
    r = min(v.shape[1] - 1, int(q * float(v.shape[1])))
    return np.partition(v, r, axis=1)[:, r]


def exact_side(v, kind, q):
    """Every ordered resample of a few runs (n^n of them), each one's statistic."""
    v = np.asarray(v, dtype=float)
    idx = np.array(list(itertools.product(range(len(v)), repeat=len(v))))
    return stat_rows(v[idx], kind, q)


def brute_side(v, kind, q, B, rng, chunk=400):
    """B brute-force resamples (n values with replacement) of v, each one's statistic."""
    v = np.asarray(v, dtype=float)
    out = []
    while sum(len(o) for o in out) < B:
        m = min(chunk, B - sum(len(o) for o in out))
        out.append(stat_rows(v[rng.integers(0, len(v), size=(m, len(v)))], kind, q))
    return np.concatenate(out)


def levels(ref_deltas, e):
    """P(D < e) and P(D <= e) under the reference deltas (sorted array)."""
    n = len(ref_deltas)
    return (np.searchsorted(ref_deltas, e, side='left') / n, np.searchsorted(ref_deltas, e, side='right') / n)


def endpoint_ok(ref, n_ref_mc, B_c, lo, hi):
    """Both C endpoints at the reference's 2.5% / 97.5% levels within 4 MC sd."""
    msgs, ok = [], True
    for a, e in zip(ALPHAS, (lo, hi)):
        var = a * (1 - a) / B_c + (a * (1 - a) / n_ref_mc if n_ref_mc else 0)
        tol = 4 * np.sqrt(var) + 1.0 / B_c
        l0, l1 = levels(ref, e)
        good = l0 - tol <= a <= l1 + tol
        ok &= good
        msgs.append(f'{a}: C {e:.6g} at level [{l0:.4f}, {l1:.4f}] (tol {tol:.4f})')
    return ok, '; '.join(msgs)


def run_boot(exe, mode, cases, B_c, seed=11):
    hdr = [f'{mode} {"mean" if k == "mean" else "q" + repr(q)} {B_c} {seed + i}' for i, (k, q, _, _) in enumerate(cases)]
    rows = drive(exe, [(h, b, n) for h, (_, _, b, n) in zip(hdr, cases)])
    return [r.split() for r in rows]


def test_runs(exe, rng):
    """Across runs: 3-10 per-run values a side, statistics mean / p50 / p95."""
    B_c = 20000
    cases = []
    for kb, kn in ((3, 3), (4, 4), (3, 4), (5, 5), (8, 10), (100, 80)):  # 100: quantiles by Beta
        base = 100 + 3 * rng.normal(size=kb)
        new = 104 + 3 * rng.normal(size=kn)
        for kind, q in (('mean', 0), ('q', 0.5), ('q', 0.95)):
            cases.append((kind, q, base, new))
    rows = run_boot(exe, 'runs', cases, B_c)
    for (kind, q, base, new), row in zip(cases, rows):
        cb, cn, cd, lo, hi = map(float, row[:5])
        sb, sn = (np.mean(base), np.mean(new)) if kind == 'mean' else (kvio_q(base, q), kvio_q(new, q))
        if max(len(base), len(new)) <= 5:
            rb, rn = exact_side(base, kind, q), exact_side(new, kind, q)
            ref, nmc, how = np.sort(np.subtract.outer(rn, rb).ravel()), 0, 'every resample enumerated'
        else:
            nmc = 200000
            ref = np.sort(brute_side(new, kind, q, nmc, rng) - brute_side(base, kind, q, nmc, rng))
            how = f'{nmc} numpy resamples'
        ok, msg = endpoint_ok(ref, nmc, B_c, lo, hi)
        pt = abs(cb - sb) <= 1e-12 * abs(sb) and abs(cn - sn) <= 1e-12 * abs(sn) and cd == cn - cb
        name = 'mean' if kind == 'mean' else f'p{round(q * 100)}'
        check(f'runs bootstrap, {len(base)} vs {len(new)} runs, {name}: point values as numpy/kvio, '
              f'CI within MC error of the reference ({how})', ok and pt, msg)


def test_within(exe, rng):
    """Within a run: the shortcuts against literal resampling of n values."""
    B_c = 20000
    n = 1500 if QUICK else 3000
    nref = 4000 if QUICK else 20000
    lat_b = np.floor(20000 * np.exp(0.6 * rng.normal(size=n)))
    lat_n = np.floor(20500 * np.exp(0.6 * rng.normal(size=n)))
    bat_b = rng.choice([1.0, 2, 4, 8], p=[.5, .3, .15, .05], size=2000)
    bat_n = rng.choice([1.0, 2, 4, 8], p=[.45, .3, .18, .07], size=2200)
    cases = [('q', 0.5, lat_b, lat_n, 'latency-like n=%d' % n), ('q', 0.95, lat_b, lat_n, 'latency-like n=%d' % n),
             ('q', 0.99, lat_b, lat_n, 'latency-like n=%d' % n), ('q', 0.5, bat_b, bat_n, 'batch sizes (ties) n=2000'),
             ('mean', 0, lat_b, lat_n, 'latency-like n=%d' % n), ('mean', 0, bat_b[:100], bat_n[:120], 'batch sizes n=100'),
             ('mean', 0, 1000 * (1 + rng.pareto(1.5, size=n)), 1000 * (1 + rng.pareto(1.5, size=n)),
              'Pareto(1.5) (infinite variance) n=%d' % n)]
    m = 5000 if QUICK else 20000
    ob = np.concatenate([rng.normal(1000, 50, size=m - 3), [1e6, 2e6, 5e5]])
    on = np.concatenate([rng.normal(1010, 50, size=m - 2), [1e6, 3e6]])
    cases.append(('mean', 0, ob, on, f'n={m} with 3 and 2 outliers 500-3000x'))
    # one outlier, base side only: the delta is -(outlier/n) * Poisson(1) + a small normal, a
    # lattice; its 2.5% point is ~3 lumps down, where a normal with the right skewness says 2.5
    cases.append(('mean', 0, np.concatenate([rng.normal(1000, 50, size=4999), [2e6]]), rng.normal(1000, 50, size=5000),
                  'n=5000, one outlier 2000x in base'))
    rows = run_boot(exe, 'within', [c[:4] for c in cases], B_c, seed=29)
    for (kind, q, b, nw, what), row in zip(cases, rows):
        cb, cn, _cd, lo, hi = map(float, row[:5])
        meth, kb, kn = row[5], row[6], row[7]
        sb, sn = (np.mean(b), np.mean(nw)) if kind == 'mean' else (kvio_q(b, q), kvio_q(nw, q))
        nr = nref if len(b) * nref <= 6e7 else int(6e7 // len(b))
        ref = np.sort(brute_side(nw, kind, q, nr, rng) - brute_side(b, kind, q, nr, rng))
        ok, msg = endpoint_ok(ref, nr, B_c, lo, hi)
        pt = abs(cb - sb) <= 1e-9 * abs(sb) and abs(cn - sn) <= 1e-9 * abs(sn)
        name = 'mean' if kind == 'mean' else f'p{round(q * 100)}'
        extra = f', k={kb}/{kn} extreme values exact' if meth == 'tailnorm' else ''
        check(f'within-run bootstrap ({meth}{extra}), {what}, {name}: CI within MC error of '
              f'{nr} brute-force numpy resamples', ok and pt, msg + ('' if pt else f'; point {cb} {cn} vs {sb} {sn}'))


def test_seeds(exe, rng):
    b, n = rng.normal(size=500), rng.normal(size=600) + 0.1
    cases = [('within q0.5 2000 5', b, n), ('within mean 2000 5', b, n), ('runs mean 2000 5', b[:4], n[:4])]
    a1, a2 = drive(exe, cases), drive(exe, cases)
    other = drive(exe, [(h.replace(' 5', ' 6'), x, y) for h, x, y in cases])
    check('seeded: the same inputs and seed give the same numbers, to the last digit', a1 == a2)
    check('seeded: another seed gives other intervals (same point values)',
          all(r1.split()[3:5] != r2.split()[3:5] and r1.split()[:3] == r2.split()[:3] for r1, r2 in zip(a1, other)))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            exe = build(tmp)
        except subprocess.CalledProcessError:
            check('stats_drv builds with -Wall -Wextra -Werror', False)
            print(f'{PASS} passed, {FAIL} failed')
            return 1
        test_mwu(exe, np.random.default_rng(23))
        test_runs(exe, np.random.default_rng(24))
        test_within(exe, np.random.default_rng(25))
        test_seeds(exe, np.random.default_rng(26))
    print(f'{PASS} passed, {FAIL} failed')
    return 1 if FAIL else 0


if __name__ == '__main__':
    sys.exit(main())
