"""html_check.py — checks a kvio-report --html page, for tests/t_45_html.sh.

  python3 html_check.py DB EXT PAGE DOM JSON TEXT [--label L ...] [--batch-gap-us N] [--time-range S,E]

PAGE is the file kvio-report wrote, DOM what `chromium --headless --dump-dom`
made of it (after html.js drew the charts and wrote #kvio-summary), JSON and
TEXT the --json and text reports of the same run. Prints one "ok - " or
"FAIL - " line per check. Expected values come from elsewhere than the page:
  - the charts and their series' point counts: the sql/html_*.sql files run
    in the plain sqlite3 CLI (each after its metric file), plus the marker
    lines the JSON implies (a service-time line per arm with qd1.<op>.svc, a
    zero line per A/B chart);
  - point values: recomputed in Python from the slices (model_report.load):
    the latency CDFs, the slba sample, the batch and gap counts, the time at
    depth against qd.pct_time_le1, the throughput buckets against the bytes;
  - the banner: the JSON report's values, as json.dumps writes them.
"""
import html, html.parser, json, math, os, re, subprocess, sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALWAYS = ['lat:read', 'lat:write', 'qd1:load', 'qd1:store', 'qd:time', 'qd:depth', 'batch:size', 'span:store',
          'span:load', 'pre:store', 'pre:load', 'tput:mbs', 'tput:cmds', 'slba:write']
BANNER = ['qd1.load.verdict', 'qd1.store.verdict', 'lat_read.p50', 'lat_read.p99', 'lat_write.p50', 'lat_write.p99',
          'qd.mean', 'throughput_gbs', 'commands.n', 'failed_ops', 'capture.malformed_lines',
          'capture.truncated_tail', 'capture.drops', 'capture.cq_overflow', 'capture.cmp_unpaired']
LOST = ['capture.malformed_lines', 'capture.truncated_tail', 'capture.drops', 'capture.cq_overflow',
        'capture.cmp_unpaired']
GRID = sorted({k / 200 for k in range(201)} | {k / 1000 for k in range(991, 1000)} | {0.9995, 0.9999})

fails = 0


def check(name, cond, detail=''):
    global fails
    if cond:
        print('ok - html: ' + name)
    else:
        fails += 1
        print('FAIL - html: ' + name + ('\n    ' + detail if detail else ''))


WINDOW = None  # --time-range: (lo_ns, hi_ns)
BASE = None  # --base LABEL


def cli_rows(db, ext, metric, gap_ns):
    """The rows of sql/html_<metric>.sql in the sqlite3 CLI, after prelude and <metric>.sql."""
    sql = os.path.join(ROOT, 'sql')
    win = ['.parameter set :win_lo %d' % WINDOW[0], '.parameter set :win_hi %d' % WINDOW[1]] if WINDOW else []
    win += ['.parameter set :base_label "\'%s\'"' % BASE] if BASE else []
    win += ['.parameter set :batch_gap_ns %d' % gap_ns]  # read by prelude.sql (kvio_rule), as the window's
    out = subprocess.run(['sqlite3', '-batch', '-cmd', '.load ' + ext, db] + win + ['.read %s/prelude.sql' % sql,
                          '.output /dev/null',
                          '.read %s/%s.sql' % (sql, metric), '.output', '.read %s/html_%s.sql' % (sql, metric)],
                         check=True, capture_output=True, text=True).stdout
    return [line.split('|') for line in out.splitlines() if line]


def jpath(R, path):
    for k in path.split('.'):
        if not isinstance(R, dict) or k not in R:
            return None
        R = R[k]
    return R


def expected_charts(db, ext, J, labels, gap_ns):
    """{chart id: {dataset name: points}} from the CLI rows and the JSON."""
    charts = defaultdict(dict)
    metrics = sorted(f[5:-4] for f in os.listdir(os.path.join(ROOT, 'sql')) if f.startswith('html_'))
    for m in metrics:
        for chart, label, role, x, y in cli_rows(db, ext, m, gap_ns):
            if label not in labels or (chart.startswith('ab:') and 'ab' not in J[label]):
                continue
            if x == '' or y == '':
                continue
            name = label + (' ' + role if role else '')
            charts[chart][name] = charts[chart].get(name, 0) + 1
    for chart in list(charts):
        if chart.startswith('qd1:'):
            for label in labels:
                if label in charts[chart] and jpath(J[label], 'qd1.%s.svc' % chart[4:]) is not None:
                    charts[chart][label + ' service time p25'] = 2
        if chart.startswith('ab:'):
            charts[chart]['zero (no difference)'] = 2
    for cid in ALWAYS + (['ab:load', 'ab:store'] if len(labels) > 1 else []):
        charts.setdefault(cid, {})
    return charts


class Dom(html.parser.HTMLParser):
    """The banner items and the text report's <pre> blocks of the DOM dump."""

    def __init__(self):
        super().__init__()
        self.banner, self.bad, self.pre, self.label, self.key, self.span = {}, {}, [], None, None, None
        self.text, self.in_pre = '', False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get('class', '') or ''
        if tag == 'section' and 'banner' in cls.split():
            self.label = a.get('data-label')
            self.banner[self.label] = {}
            self.bad[self.label] = 'bad' in cls.split()
        elif tag == 'dd' and self.label is not None:
            self.key = a.get('data-key')
        elif tag == 'span' and self.key:
            self.span, self.text = cls, ''
            self.exact = a.get('data-v')  # the JSON's text (the span shows a real rounded)
        elif tag == 'pre' and cls == 'text':
            self.in_pre, self.text = True, ''

    def handle_endtag(self, tag):
        if tag == 'span' and self.span is not None:
            if self.span in ('v', 'absent'):
                self.banner[self.label][self.key] = (self.span, self.exact if self.span == 'v' else self.text)
            self.span = None
        elif tag == 'dd':
            self.key = None
        elif tag == 'section':
            self.label = None
        elif tag == 'pre' and self.in_pre:
            self.pre.append(self.text)
            self.in_pre = False

    def handle_data(self, data):
        if self.span is not None or self.in_pre:
            self.text += data


def page_data(page):
    m = re.search(r'<script type="application/json" id="kvio-data">(.*?)</script>', page, re.S)
    return {c['id']: c for c in json.loads(m.group(1))['charts']}


def series_xy(spec, name):
    for s in spec['series']:
        if s['name'] == name:
            return list(zip(s['xy'][0::2], s['xy'][1::2]))
    return None


def cdf(xs):
    xs = sorted(xs)
    n = len(xs)
    idx = sorted({min(n - 1, int(q * n)) for q in GRID})
    return [(xs[i], (i + 1) / n) for i in idx]


def check_static(page):
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    check('a CSP forbids every fetch (default-src, connect-src none)',
          csp and "default-src 'none'" in csp.group(1) and "connect-src 'none'" in csp.group(1))
    ext = re.findall(r'''(?:\bsrc|\bhref)\s*=\s*["']?\s*(?:https?:|//)[^"'\s>]*''', page, re.I)
    check('no http(s) URL in a src or href', not ext, str(ext[:3]))
    styles = ''.join(re.findall(r'<style>(.*?)</style>', page, re.S))
    check('no <script src>, <link>, <img>, <iframe>, no url(...) in the styles',
          not re.search(r'<script[^>]*\bsrc=|<link\b|<img\b|<iframe\b', page, re.I) and 'url(' not in styles)


def check_summary(summ, exp, model_cmp):
    check('no error while drawing', summ['errors'] == [], str(summ['errors'][:5]))
    got = {c['id']: c for c in summ['charts']}
    check('the expected charts', sorted(got) == sorted(exp), 'expected %s\n    got %s' % (sorted(exp), sorted(got)))
    for cid in sorted(exp):
        c = got.get(cid, {'datasets': [], 'canvas': False, 'note': ''})
        ds = {d['label']: d['points'] for d in c['datasets']}
        check('%s: series and points' % cid, ds == exp[cid], 'expected %s\n    got %s' % (exp[cid], ds))
        if exp[cid]:
            check('%s: drawn on a canvas' % cid, c['canvas'])
        else:
            check('%s: says why it is empty' % cid, len(c['note']) > 10, repr(c['note']))
    for cid in ('lat:read', 'lat:write', 'qd:time', 'qd:depth'):
        if model_cmp < 2 and got.get(cid):
            want = 'No completions' if model_cmp else 'No commands'
            check('%s: the note says "%s"' % (cid, want), want in got[cid]['note'], got[cid]['note'])


def check_values(db, ext, data, J, labels, gap_ns):
    cmds, objs, _, _ = model_report.load(db, ext)
    for L in labels:
        cs = cmds.get(L, [])
        if WINDOW:  # the commands overlapping [lo, hi], as lib/window.h says
            cs = [c for c in cs if c['ts'] <= WINDOW[1] and c['ts'] + c['dur'] >= WINDOW[0]]
        pool = [c for c in cs if c['tid']] or cs
        for op in ('read', 'write'):
            lat = [c['dur'] for c in pool if c['real'] and c['op'] == op]
            if lat:
                got = series_xy(data['lat:' + op], L)
                check('%s lat:%s: the CDF points, recomputed' % (L, op), got == [tuple(p) for p in cdf(lat)])
        if 'batches' in J[L]:
            got = series_xy(data['batch:size'], L) or []
            check('%s batch:size: the batches add up to batches.n' % L, sum(y for _, y in got) == J[L]['batches']['n'])
        by_tid = defaultdict(list)
        for c in sorted((c for c in cs if c['tid']), key=lambda c: (c['ts'], c['id'])):
            by_tid[c['tid']].append(c)
        gaps = defaultdict(int)
        for run in by_tid.values():
            if len(run) >= 4:
                gaps['load' if run[0]['op'] == 'read' else 'store'] += len(run) - 1
        for op, n in gaps.items():
            got = series_xy(data['qd1:' + op], L) or []
            check('%s qd1:%s: the bins hold every gap (%d)' % (L, op, n), sum(y for _, y in got) == n)
        if 'qd' in J[L]:
            got = series_xy(data['qd:depth'], L)
            le1 = sum(y for x, y in got if x <= 1)
            check('%s qd:depth: shares sum to 1, those <= 1 to pct_time_le1' % L,
                  abs(sum(y for _, y in got) - 1) < 1e-9 and abs(le1 - J[L]['qd']['pct_time_le1']) < 1e-9)
        wall = J[L]['commands']['wall_ns']
        if wall > 0:
            w = max(1, (wall + 399) // 400)
            got = series_xy(data['tput:mbs'], L)
            widths = [min(w, wall - k * w) for k in range(len(got))]
            tb = sum(y * wd / 1000 for (_, y), wd in zip(got, widths))
            check('%s tput:mbs: %d buckets holding the tagged bytes' % (L, len(got)),
                  len(got) == (wall + w - 1) // w and abs(tb - J[L]['commands']['tagged_bytes']) <= 1e-6 * max(1, tb))
        writes = sorted((c for c in pool if c['op'] == 'write'), key=lambda c: (c['ts'], c['id']))
        if writes:
            k = (len(writes) + 3999) // 4000
            want = [(c['ts'], c['slba']) for c in writes[::k] if c['slba'] is not None]
            check('%s slba:write: every %d-th write' % (L, k), series_xy(data['slba:write'], L) == want)


def check_banner(dom, J, labels):
    check('one banner per label', sorted(dom.banner) == sorted(labels), str(sorted(dom.banner)))
    for L in labels:
        items = dom.banner.get(L, {})
        for key in BANNER:
            v = jpath(J[L], key)
            want = ('absent', None) if v is None else ('v', v if isinstance(v, str) else json.dumps(v))
            got = items.get(key)
            check('%s banner %s = the JSON\'s %s' % (L, key, want[1]),
                  got is not None and got[0] == want[0] and (want[1] is None or got[1] == want[1]), str(got))
        verdicts = [jpath(J[L], 'qd1.%s.verdict' % op) or '' for op in ('load', 'store')]
        bad = any(v.startswith('QD~1') for v in verdicts) or any((jpath(J[L], k) or 0) > 0 for k in LOST) \
            or J[L]['commands']['n'] == 0
        check('%s banner is %s' % (L, 'red' if bad else 'green'), dom.bad.get(L) == bad)


def check_text(dom, text):
    lines = [l for l in text.splitlines() if not l.startswith(('=== ', '===== ', '(html -> ', '(json -> '))]
    shown = ''.join(dom.pre).splitlines()
    diff = [(a, b) for a, b in zip(lines + [''] * 99, shown + [''] * 99) if a != b]
    check('the text report\'s %d lines under the charts' % len(lines), lines == shown,
          'first difference: %r' % (diff[0],) if diff else '')


def main(argv):
    db, ext, page_path, dom_path, json_path, text_path = argv[1:7]
    labels, gap_ns, rest = None, 50000, argv[7:]
    while rest:
        if rest[0] == '--label':
            labels = (labels or []) + [rest[1]]
        elif rest[0] == '--batch-gap-us':
            gap_ns = int(rest[1]) * 1000
        elif rest[0] == '--base':
            global BASE
            BASE = rest[1]
        elif rest[0] == '--time-range':
            global WINDOW
            WINDOW = tuple(int(float(v) * 1e9) for v in rest[1].split(','))
        rest = rest[2:]
    J = json.load(open(json_path))
    labels = labels or sorted(J)
    page = open(page_path, encoding='utf-8').read()
    domtext = open(dom_path, encoding='utf-8').read()
    m = re.search(r'<pre id="kvio-summary">(.*?)</pre>', domtext, re.S)
    check('html.js wrote its summary', m is not None and m.group(1).strip() != '')
    if not m or not m.group(1).strip():
        return 1
    summ = json.loads(html.unescape(m.group(1)))
    check_static(page)
    # 2: some arm has completions, 1: commands but no completions, 0: no commands
    cmp = max(2 if J[L]['commands']['real_cover'] > 0 else 1 if J[L]['commands']['n'] else 0 for L in labels)
    check_summary(summ, expected_charts(db, ext, J, labels, gap_ns), cmp)
    check_values(db, ext, page_data(page), J, labels, gap_ns)
    dom = Dom()
    dom.feed(domtext)
    check_banner(dom, J, labels)
    check_text(dom, open(text_path, encoding='utf-8').read())
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
