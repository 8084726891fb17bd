"""model_report.py — a second method for kvio-report's metrics, for the tests.

  python3 model_report.py DB EXT REPORT_JSON [--batch-gap-us N]

Reads the slices of DB the way a trace_processor user would (plain sqlite3 with
kvio's extension EXT: slice JOIN process_track JOIN process, extract_arg), then
computes every metric in Python, straight from the issue's definitions (one
sorted list and one loop per metric; no SQL beyond fetching the rows), and
compares with the JSON kvio-report wrote. Prints each difference; exits 1 on
any. Sections kvio computes from ingest statistics (capture) are not modelled.
"""
import json, math, subprocess, sys
from collections import defaultdict


def rows(db, ext, sql):
    out = subprocess.run(['sqlite3', '-json', '-cmd', '.load ' + ext, db, sql],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def label_of(proc):
    for p in ('LMCache ', 'Serving '):
        if proc.startswith(p):
            return proc[len(p):]
    if proc.startswith('NVMe '):
        return proc.split(' ', 2)[-1]
    return proc


JOIN = ' FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN process pr ON pt.upid = pr.upid '


def load(db, ext):
    arg = lambda k, a=None: "extract_arg(s.arg_set_id, 'debug.%s') AS %s" % (k, a or k)
    cmds = rows(db, ext, 'SELECT s.id, pr.name AS proc, s.ts, s.dur, s.name AS op, ' + ', '.join(
        [arg('trace_id', 'tid'), arg('slba'), arg('data_len', 'dlen'), arg('role'), arg('real_dur', 'real')]) + JOIN +
        "WHERE pt.name LIKE 'writes%' OR pt.name LIKE 'reads%' OR pt.name LIKE 'other%' OR pt.name LIKE 'untagged%'"
        ' ORDER BY s.id')
    objs = rows(db, ext, 'SELECT s.id, pr.name AS proc, s.ts, s.dur, ' + ', '.join(
        [arg('trace_id', 'tid'), arg('op'), arg('bytes'), arg('fmt'), arg('chunk'), arg('key'), arg('error'),
         arg('tp_rank'), arg('tp_world'), arg('tp_chunk'), arg('n_cmds')]) + JOIN +
        "WHERE pt.name LIKE 'objects%' ORDER BY s.id")
    info = rows(db, ext, 'SELECT pr.name AS proc, ' + ', '.join(
        [arg('kvio_schema', 'schema'), arg('hostname'), arg('device_path', 'device'), arg('lba_bytes'),
         arg('header_bytes')]) + JOIN + "WHERE s.name = 'capture_info'")
    serving = rows(db, ext, 'SELECT pr.name AS proc, s.dur, s.name, ' + arg('op') + JOIN +
                   "WHERE pr.name LIKE 'Serving %' ORDER BY s.id")
    by = lambda rs: {l: [r for r in rs if label_of(r['proc']) == l] for l in {label_of(r['proc']) for r in rs}}
    return by(cmds), by(objs), by(info), by(serving)


flows = {}  # slice_out -> slice_in: an object's flow to its own first command


def failed(o):
    return o['error'] not in (None, '', 0)


def low_spans(real, max_depth, min_len):
    """The sweep's maximal spans at depth <= max_depth (intervals between consecutive
    events, sorted by (time, delta), that last > 0), those lasting >= min_len."""
    ev = sorted([(c['ts'], 1) for c in real] + [(c['ts'] + c['dur'], -1) for c in real])
    out, cur, d = [], None, 0
    for (t, dd), nxt in zip(ev, ev[1:]):
        d += dd
        if nxt[0] == t:
            continue
        if d <= max_depth:
            cur = [t, nxt[0]] if cur is None or cur[1] != t else [cur[0], nxt[0]]
        elif cur:
            out.append(cur)
            cur = None
    if cur:
        out.append(cur)
    return [x for x in out if x[1] - x[0] >= min_len]


def qd1_objects(R, objs, by_tid):
    """The objects the QD1 detector judges on their own gaps, not pipelined: each trace_id
    with >= 4 tagged commands (its first object), its gap p50 against the class's service
    time (R['qd1']); {object id: 'qd1_load' | 'qd1_store' (+ '_suspicious' without one)}."""
    first_obj = {}
    for o in sorted(objs, key=lambda o: o['id']):
        if o['tid'] is not None:
            first_obj.setdefault(o['tid'], o['id'])
    judged = {}
    for tid, cl in by_tid.items():
        if len(cl) < 4 or tid not in first_obj:
            continue
        kind = 'load' if cl[0]['op'] == 'read' else 'store'
        g50 = pct([b['ts'] - a['ts'] for a, b in zip(cl, cl[1:])], .5)
        svc = (R['qd1'].get(kind) or {}).get('svc')
        v = ('serialized' if g50 >= 0.5 * svc else None) if svc else ('suspicious' if g50 >= 40000 else None)
        if v:
            judged[first_obj[tid]] = 'qd1_' + kind + ('_suspicious' if v == 'suspicious' else '')
    return judged


def findings(R, tagged, pool, real, objs, ok, by_tid, sizes_runs, barr):
    """The count of each kind of finding (sql/findings.sql), from the definitions."""
    F = dict.fromkeys(['qd1_load', 'qd1_store', 'qd1_load_suspicious', 'qd1_store_suspicious', 'qd_le1', 'batch',
                       'batch_singles', 'slow_object', 'failed', 'tp_barrier'], 0)
    # QD~1: each trace_id with >= 4 tagged commands judged on its own gaps; runs of
    # judged (not pipelined) objects of one class and kind among all objects in start order
    judged = qd1_objects(R, objs, by_tid)
    R['_judged'] = sorted((k, o['tid']) for o in objs for i, k in judged.items() if i == o['id'])
    prev = None
    for o in sorted(objs, key=lambda o: (o['ts'], o['id'])):
        k = judged.get(o['id'])
        if k and k != prev:
            F[k] += 1
        prev = k
    # QD<=1: depth <= 1 for > 1 ms while an object with commands was in flight
    busy = []
    for o in sorted((o for o in objs if o['dur'] > 0 and (o['n_cmds'] or 0) > 0), key=lambda o: (o['ts'], o['ts'] + o['dur'])):
        if busy and busy[-1][1] >= o['ts']:
            busy[-1][1] = max(busy[-1][1], o['ts'] + o['dur'])
        else:
            busy.append([o['ts'], o['ts'] + o['dur']])
    for a, b in low_spans(real, 1, 1000000):
        F['qd_le1'] += sum(1 for s, e in busy if min(b, e) - max(a, s) > 1000000)
    # batches: the inferred batches of more than one command (above p95 on a label with
    # more than 10,000 of them), and the runs of one-command batches
    if sizes_runs:
        p95 = pct(sizes_runs, .95)
        F['batch'] = sum(1 for n in sizes_runs if n > 1 and (len(sizes_runs) <= 10000 or n > p95))
        F['batch_singles'] = sum(1 for i, n in enumerate(sizes_runs) if n == 1 and (i == 0 or sizes_runs[i - 1] != 1))
    for op in ('store', 'load', 'delete'):
        spans = [o['dur'] for o in ok if o['op'] == op]
        if spans:
            F['slow_object'] += sum(1 for x in spans if x > pct(spans, .99))
    F['failed'] = sum(1 for o in objs if failed(o))
    if barr:
        F['tp_barrier'] = sum(1 for x in barr if x > pct(barr, .95))
    return F


def label_metrics(cmds, objs, info, serving, gap_ns):
    R = {}
    if info:
        R['info'] = {k: info[0][k] for k in ('schema', 'hostname', 'device', 'lba_bytes', 'header_bytes')}
    lba = (info[0]['lba_bytes'] if info else None) or 4096
    tagged = [c for c in cmds if c['tid']]
    pool = tagged or cmds
    real = [c for c in pool if c['real']]
    # commands, qd1 and objects are present even when empty (the reference's shape)
    wall = max(c['ts'] + c['dur'] for c in cmds) - min(c['ts'] for c in cmds) if cmds else 0
    tb = sum(c['dlen'] or 0 for c in pool)
    R['commands'] = {'n': len(cmds), 'tagged': len(tagged), 'untagged': len(cmds) - len(tagged),
                     'tagged_bytes': tb, 'wall_ns': wall,
                     'real_cover': sum(1 for c in cmds if c['real']) / max(1, len(cmds))}
    if wall:
        R['throughput_gbs'] = tb / wall
    for op in ('read', 'write'):
        ls = [c['dur'] for c in real if c['op'] == op]
        if ls:
            R['lat_' + op] = {'p50': pct(ls, .5), 'p95': pct(ls, .95), 'p99': pct(ls, .99), 'max': max(ls),
                              'n': len(ls)}
    # QD1: per trace_id with >= 4 tagged commands, gaps between consecutive submits
    by_tid = defaultdict(list)
    for c in tagged:
        by_tid[c['tid']].append(c)
    gaps, nobj = defaultdict(list), defaultdict(int)
    for cl in by_tid.values():
        cl.sort(key=lambda c: (c['ts'], c['id']))
        if len(cl) >= 4:
            kind = 'load' if cl[0]['op'] == 'read' else 'store'
            nobj[kind] += 1
            gaps[kind] += [b['ts'] - a['ts'] for a, b in zip(cl, cl[1:])]
    R['qd1'] = {}
    for kind in sorted(gaps):
        svc_op = 'read' if kind == 'load' else 'write'
        sv = [c['dur'] for c in tagged if c['real'] and c['op'] == svc_op]
        svc = pct(sv, .25) if sv else None
        g50 = pct(gaps[kind], .5)
        if svc:
            verdict = 'QD~1 (gap ~= service time \u2014 serialized)' if g50 >= 0.5 * svc else 'pipelined'
        else:
            verdict = 'QD~1 suspicious (gap >= 40us)' if g50 >= 40000 else 'pipelined'
        R['qd1'][kind] = {'gap_p50': g50, 'gap_p95': pct(gaps[kind], .95), 'verdict': verdict, 'svc': svc,
                          'n_objects': nobj[kind]}
    # achieved QD: sweep (ts, delta) events
    ev = sorted([(c['ts'], 1) for c in real] + [(c['ts'] + c['dur'], -1) for c in real])
    if ev and ev[-1][0] > ev[0][0]:
        qd = qmax = area = le1 = 0
        for (t, d), nxt in zip(ev, ev[1:] + [None]):
            qd += d
            qmax = max(qmax, qd)
            if nxt:
                area += qd * (nxt[0] - t)
                le1 += (nxt[0] - t) if qd <= 1 else 0
        span = ev[-1][0] - ev[0][0]
        R['qd'] = {'mean': area / span, 'max': qmax, 'pct_time_le1': le1 / span}
    # inferred batches
    subs = sorted(c['ts'] for c in pool)
    sizes = []
    if subs:
        sizes, cur = [], 1
        for a, b in zip(subs, subs[1:]):
            if b - a > gap_ns:
                sizes.append(cur)
                cur = 1
            else:
                cur += 1
        sizes.append(cur)
        R['batches'] = {'n': len(sizes), 'size_p50': pct(sizes, .5), 'size_p95': pct(sizes, .95)}
    # objects
    ok = [o for o in objs if not failed(o)]
    first = {t: min(c['ts'] for c in cl) for t, cl in by_tid.items()}
    cmd_ts = {c['id']: c['ts'] for c in cmds}
    R['objects'] = {}
    for op in ('store', 'load', 'delete'):
        ol = [o for o in ok if o['op'] == op]
        if not ol:
            continue
        mb = [(o['bytes'] or 0) / max(1e-9, o['dur'] / 1e9) / 1e6 for o in ol if o['dur']]
        pre = [first[o['tid']] - o['ts'] for o in ol if o['tid'] in first]
        own = [cmd_ts[flows[o['id']]] - o['ts'] for o in ol if flows.get(o['id']) in cmd_ts]
        R['objects'][op] = {
            'n': len(ol), 'span_p50': pct([o['dur'] for o in ol], .5), 'span_p99': pct([o['dur'] for o in ol], .99),
            'eff_mbs_p50': pct(mb, .5) if mb else None, 'presubmit_p50': pct(pre, .5) if pre else None,
            'presubmit_own_p50': pct(own, .5) if own else None}
    nf = sum(1 for o in objs if failed(o))
    if nf:
        R['failed_ops'] = nf
    # TP barrier by the key's fmt field, and by the decoded rank
    fmts = {o['fmt'] for o in ok if o['fmt']}
    barr = []
    if len(fmts) > 1:
        ends = defaultdict(list)
        for o in ok:
            if o['chunk'] and o['op'] in ('store', 'load'):
                ends[(o['op'], o['chunk'])].append(o['ts'] + o['dur'])
        barr = [max(e) - min(e) for e in ends.values() if len(e) == len(fmts)]
        if barr:
            R['tp_barrier'] = {'shards': len(fmts), 'gap_p50': pct(barr, .5), 'gap_p99': pct(barr, .99)}
    rk = [o for o in ok if o['tp_rank'] is not None and o['op'] in ('store', 'load')]
    ranks = {o['tp_rank'] for o in rk}
    if len(ranks) > 1:
        grp = defaultdict(list)
        for o in rk:
            grp[(o['op'], o['tp_chunk'])].append(o)
        barr = [max(o['ts'] + o['dur'] for o in g) - min(o['ts'] + o['dur'] for o in g)
                for g in grp.values() if len({o['tp_rank'] for o in g}) == len(ranks)]
        if barr:
            worlds = [o['tp_world'] for o in objs if o['tp_world'] is not None]   # any object of the label
            R['tp_ranks'] = {'world_size': max(worlds) if worlds else None, 'ranks': len(ranks),
                             'gap_p50': pct(barr, .5), 'gap_p99': pct(barr, .99), 'chunks': len(barr)}
    # space axis: pool writes in submit order
    w = sorted((c for c in pool if c['op'] == 'write'), key=lambda c: (c['ts'], c['id']))
    if w:
        seen, reuse, seq = set(), 0, 0
        for i, c in enumerate(w):
            reuse += c['slba'] in seen
            seen.add(c['slba'])
            if i and c['slba'] is not None and w[i - 1]['slba'] is not None and \
                    c['slba'] == w[i - 1]['slba'] + (w[i - 1]['dlen'] or 0) // lba:
                seq += 1
        R['space'] = {'lba_reuse': reuse, 'seq_pct': seq / max(1, len(w) - 1),
                      'header_cmds': sum(1 for c in w if c['role'] == 'header')}
    R['findings'] = findings(R, tagged, pool, real, objs, ok, by_tid, sizes, barr)
    # serving spans by op, else name
    if serving:
        by_op = defaultdict(list)
        for s in serving:
            by_op[s['op'] or s['name']].append(s['dur'])
        R['serving'] = {op: {'n': len(d), 'p50': pct(d, .5), 'p99': pct(d, .99)} for op, d in by_op.items()}
    return R


def binom_le(k, n):
    """P(X <= k), X ~ Binomial(n, 1/2), exactly (integers), as a float."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def sign_stats(d, b):
    """The sign test's interval of the median delta, p-value and verdict (ab.sql's rules)."""
    n, pos, neg = len(d), sum(x > 0 for x in d), sum(x < 0 for x in d)
    m, k = pos + neg, min(pos, neg)
    p = 1.0 if m == 0 or 2 * k == m else min(1.0, 2 * binom_le(k, m))
    l = 0  # the largest l with P(X <= l-1) <= 0.025
    while 2 * l < n and binom_le(l, n) <= 0.025:
        l += 1
    s, bp = sorted(d), pct(b, .5)
    lo, hi = (s[l - 1], s[n - l]) if l else (None, None)
    rel = pct(d, .5) / bp if bp else None
    verdict = ('untested' if l == 0 else 'slower' if lo > 0 and rel >= 0.02 else
               'faster' if hi < 0 and rel <= -0.02 else 'no change')
    return {'ci_low': lo, 'ci_high': hi, 'p_value': p, 'rel': rel, 'verdict': verdict}


def ab_pairs(objs_by_label):
    """{other label: {op: (deltas, base spans)}} paired on (key, op, k-th occurrence)
    against the first label in sorted order."""
    labels = sorted(objs_by_label)

    def keyed(objs):
        d = defaultdict(list)
        for o in sorted(objs, key=lambda o: (o['ts'], o['id'])):
            if o['key'] and o['op'] in ('store', 'load'):
                d[(o['key'], o['op'])].append(o['dur'])
        return d
    base, out = keyed(objs_by_label[labels[0]]) if labels else {}, {}
    for other in labels[1:]:
        ko, pairs = keyed(objs_by_label[other]), defaultdict(lambda: ([], []))
        for k, bl in base.items():
            for bd, od in zip(bl, ko.get(k, [])):
                pairs[k[1]][0].append(od - bd)
                pairs[k[1]][1].append(bd)
        out[other] = pairs
    return out


def ab(objs_by_label, R):
    labels = sorted(objs_by_label)
    for other, pairs in ab_pairs(objs_by_label).items():
        out = {'vs': labels[0]}
        for op, (d, b) in pairs.items():
            out[op] = {'n': len(d), 'delta_p50': pct(d, .5), 'delta_p95': pct(d, .95)}
            out[op].update(sign_stats(d, b))
        if len(out) > 1:
            R[other]['ab'] = out


def diff(path, want, got, errs):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            errs.append('%s: want an object, kvio has %r' % (path, got))
            return
        for k in want:
            if k not in got:
                errs.append('%s.%s: missing in kvio (model %r)' % (path, k, want[k]))
            else:
                diff(path + '.' + k, want[k], got[k], errs)
    elif isinstance(want, float) or isinstance(got, float):
        if want is None or got is None or not math.isclose(want, got, rel_tol=1e-12, abs_tol=1e-12):
            errs.append('%s: model %r, kvio %r' % (path, want, got))
    elif want != got:
        errs.append('%s: model %r, kvio %r' % (path, want, got))


def main():
    db, ext, rep = sys.argv[1:4]
    gap_us = int(sys.argv[sys.argv.index('--batch-gap-us') + 1]) if '--batch-gap-us' in sys.argv else 50
    cmds, objs, info, serving = load(db, ext)
    # the flow from each object to its own first command (presubmit_own_p50)
    # (an object's other flows, to a finding slice of an exported trace read back, end at no command)
    cmd_ids = {r['id'] for r in rows(db, ext, 'SELECT id FROM kvio_cmd')}
    flows.update({r['slice_out']: r['slice_in'] for r in rows(db, ext, 'SELECT slice_out, slice_in FROM flow')
                  if r['slice_in'] in cmd_ids})
    labels = sorted(set(cmds) | set(objs))
    R = {l: label_metrics(cmds.get(l, []), objs.get(l, []), info.get(l, []), serving.get(l, []), gap_us * 1000)
         for l in labels}
    ab(objs, R)
    judged = {l: R[l].pop('_judged', []) for l in labels}
    if rep == '--qd1-objects':
        for l in labels:
            for kind, tid in judged[l]:
                print(l, kind, tid)
        return
    got = json.load(open(rep))
    errs = []
    if sorted(got) != labels:
        errs.append('labels: model %s, kvio %s' % (labels, sorted(got)))
    for l in labels:
        diff(l, R[l], got.get(l, {}), errs)
        extra = set(got.get(l, {})) - set(R[l]) - {'label', 'capture'}
        if extra:
            errs.append('%s: kvio has sections the model does not: %s' % (l, sorted(extra)))
    for e in errs:
        print('model_report: ' + e)
    print('model_report: %d labels, %s' % (len(labels), 'differences: %d' % len(errs) if errs else 'all values equal'))
    sys.exit(1 if errs else 0)


if __name__ == '__main__':
    main()
