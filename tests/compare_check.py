#!/usr/bin/python3
"""compare_check.py — independent numbers for tests/t_41_compare.sh (run with /usr/bin/python3:
Debian's scipy). Each sub-command prints one line the shell test compares with kvio's.

  quantiles ROWS JSON     the report's percentiles from sql/samples.sql's value sets (ROWS:
                          kvio-report --rows samples.sql), by nearest rank
                          pct(xs, q) = sorted(xs)[min(n-1, floor(q*n))], next to the
                          report's own JSON numbers: prints "same" or the first difference
  mwu_within BASE NEW SAMPLE  scipy.stats.mannwhitneyu(new, base).pvalue over SAMPLE's values
                          (the two --rows samples.sql outputs, counts expanded)
  mwu_runs BASE,.. NEW,.. PATH  the same test over one value per run (PATH into each run's
                          report JSON, e.g. capture.lat_read.p50)
  ab DB EXT JSON          the in-database A/B interval and p-value (sql/ab.sql) from scipy:
                          the pairs as tests/model_report.py makes them, p =
                          scipy.stats.binomtest(min(#>0, #<0), #>0 + #<0).pvalue, the
                          interval's rank l the largest with binom.cdf(l-1, n, 1/2) <= 0.025;
                          prints "same N" or the first difference
  csv CSV JSON            the --csv rows against the --json list of reports: every row's
                          value is the JSON's at (database, label, metric) and every JSON
                          number, string, bool or null is a row (lists are not rows; a
                          label's own 'label' key is the label column): prints "same" or the first difference
"""
import csv
import json
import math
import sys


def samples(path):
    out = {}
    for line in open(path):
        label, sample, v, n = line.rstrip('\n').split('|')
        out.setdefault((label, sample), []).extend([float(v)] * int(n))
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


# sample -> the report JSON numbers it must give: (path under the label, q)
EXPECT = {
    'read': [('lat_read.p50', .5), ('lat_read.p95', .95), ('lat_read.p99', .99)],
    'write': [('lat_write.p50', .5), ('lat_write.p95', .95), ('lat_write.p99', .99)],
    'load.span': [('objects.load.span_p50', .5), ('objects.load.span_p99', .99)],
    'store.span': [('objects.store.span_p50', .5), ('objects.store.span_p99', .99)],
    'delete.span': [('objects.delete.span_p50', .5), ('objects.delete.span_p99', .99)],
    'load.own': [('objects.load.presubmit_own_p50', .5)],
    'store.own': [('objects.store.presubmit_own_p50', .5)],
    'load.gap': [('qd1.load.gap_p50', .5), ('qd1.load.gap_p95', .95)],
    'store.gap': [('qd1.store.gap_p50', .5), ('qd1.store.gap_p95', .95)],
    'batch.size': [('batches.size_p50', .5), ('batches.size_p95', .95)],
}


def at(d, path):
    for k in path.split('.'):
        d = d[k]
    return d


def quantiles(rows, js):
    s, d = samples(rows), json.load(open(js))
    seen = 0
    for (label, sample), xs in sorted(s.items()):
        for path, q in EXPECT[sample]:
            want = at(d[label], path)
            if pct(xs, q) != want:
                return f'{label} {sample} q={q}: samples give {pct(xs, q)}, the report {path} = {want}'
            seen += 1
    return f'same {seen}'


def mwu(x, y):
    from scipy import stats
    return stats.mannwhitneyu(x, y).pvalue


def mwu_within(base, new, sample):
    key = ('capture', sample)
    return repr(mwu(samples(new)[key], samples(base)[key]))


def mwu_runs(base, new, path):
    val = lambda f: float(at(json.load(open(f)), path))
    return repr(mwu([val(f) for f in new.split(',')], [val(f) for f in base.split(',')]))


def ab_check(db, ext, js):
    import os
    from scipy import stats
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import model_report as M
    _, objs, _, _ = M.load(db, ext)
    got, seen = json.load(open(js)), 0
    for other, pairs in M.ab_pairs(objs).items():
        for op, (d, b) in pairs.items():
            e = got[other]['ab'][op]
            n, pos, neg = len(d), sum(x > 0 for x in d), sum(x < 0 for x in d)
            p = stats.binomtest(min(pos, neg), pos + neg).pvalue if pos + neg else 1.0
            l = max([k for k in range(1, n + 1) if stats.binom.cdf(k - 1, n, .5) <= 0.025], default=0)
            lo, hi = (sorted(d)[l - 1], sorted(d)[n - l]) if l else (None, None)
            if not math.isclose(p, e['p_value'], rel_tol=1e-9) or (lo, hi) != (e['ci_low'], e['ci_high']):
                return f'{other} {op}: scipy p {p} interval {lo, hi}, kvio {e["p_value"]} {e["ci_low"], e["ci_high"]}'
            seen += 1
    return f'same {seen}'


def leaves(d, prefix=''):
    for k, v in d.items():
        p = prefix + k
        if isinstance(v, dict):
            yield from leaves(v, p + '.')
        elif isinstance(v, (int, float, str, bool)) or v is None:
            yield p, v


def same_value(text, v):
    if v is None:
        return text == ''
    if isinstance(v, bool):
        return text == ('true' if v else 'false')
    if isinstance(v, str):
        return text == v
    return math.isclose(float(text), float(v), rel_tol=1e-15, abs_tol=0)


def csv_check(path, js, dbs):
    reports = json.load(open(js))
    want = {}
    for db, rep in zip(dbs.split(','), reports):
        for label, sec in rep.items():
            for metric, v in leaves(sec):
                if metric != 'label':  # the label column says it
                    want[(db, label, metric)] = v
    rows = list(csv.DictReader(open(path, newline='')))
    for r in rows:
        key = (r['database'], r['label'], r['metric'])
        if key not in want:
            return f'row {key} is not in the JSON'
        if not same_value(r['value'], want[key]):
            return f'row {key}: {r["value"]!r}, the JSON {want[key]!r}'
    missing = set(want) - {(r['database'], r['label'], r['metric']) for r in rows}
    if missing:
        return f'not in the CSV: {sorted(missing)[0]}'
    return f'same {len(rows)}'


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    print({'quantiles': quantiles, 'mwu_within': mwu_within, 'mwu_runs': mwu_runs,
           'csv': csv_check, 'ab': ab_check}[cmd](*args))
