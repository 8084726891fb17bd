# kvio-report over several databases: the JSON list and --csv, --compare (within one run
# and across runs), the --fail-on grammar. The expected numbers come from the captures'
# construction (kvio-gen --read-slower-us shifts every payload read by exactly N us and
# draws nothing else: each read quantile moves by exactly N*1000 ns, the writes not at
# all), from scipy (tests/compare_check.py: the U test's p on the same values, with
# Debian's /usr/bin/python3) and from nearest-rank percentiles computed in Python.
R=$BUILD/kvio-report
PY=/usr/bin/python3
C=$T/cmp
mkdir -p "$C"
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2], {'d': d}), sort_keys=True))" "$@"; }
# capture NAME SEED [kvio-gen options]: NAME.db, batched, 20000 device lines
capture() {
	n=$1 s=$2; shift 2
	"$BUILD/kvio-gen" --sem "$C/$n.s" --ebpf "$C/$n.e" --lines 20000 --mode batched --seed "$s" "$@" 2>/dev/null &&
		"$BUILD/kvio-ingest" -q -o "$C/$n.db" --sem "$C/$n.s" --ebpf "$C/$n.e"
}
for i in 1 2 3 4 5; do
	capture "b$i" "$i"
	capture "n$i" "$i" --read-slower-us 20
done
capture ser 9 --mode serialized
for i in 1 2 3; do capture "s$i" "$i" --read-slower-us 300; done # far slower: lower throughput, deeper queues
for f in b1 b2 b3 b4 b5 n1 n2 n3 n4 n5 s1 s2 s3; do "$R" "$C/$f.db" --json > "$C/$f.json"; done
# cmp_entry FILE LABEL METRIC [SIDE]: that --compare entry as JSON
entry() { j "$1" "[e for e in d['compare'] if e['label'] == '$2' and e['metric'] == '$3' and e['side'] == '${4:-new}'][0]"; }
field() { $PY -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
have_scipy=0
$PY -c 'import scipy' 2>/dev/null && have_scipy=1
[ $have_scipy = 1 ] || { FAIL=$((FAIL + 1)); echo "FAIL - compare: /usr/bin/python3 has no scipy (scripts/install-deps installs python3-scipy)"; }

# --- samples.sql: the value sets behind the within-run test give the report's numbers ---
for f in b1 n1 ser; do
	"$R" "$C/$f.db" --rows samples.sql > "$C/$f.rows"
	[ -f "$C/$f.json" ] || "$R" "$C/$f.db" --json > "$C/$f.json"
	# read/write p50 p95 p99, load/store span p50 p99 and own p50, gaps p50 p95, batch p50 p95
	eq "samples.sql $f: every set's nearest-rank percentiles are the report's (18 numbers)" "same 18" \
		"$($PY tests/compare_check.py quantiles "$C/$f.rows" "$C/$f.json")"
done
eq "samples.sql: as many read values as the report's lat_read.n" "$(j "$C/b1.json" "d['capture']['lat_read']['n']")" \
	"$(awk -F'|' '$2 == "read" { n += $4 } END { print n }' "$C/b1.rows")"

# --- the same database on both sides: nothing moved ---
"$R" --compare "$C/b1.db" "$C/b1.db" --json > "$C/same.json"
eq "compare same db: exit 0" 0 $?
eq "compare same db: every delta 0, every verdict 'no change' (or untested: no within-run sample)" "[]" \
	"$(j "$C/same.json" "[(e['metric'], e['delta'], e['verdict']) for e in d['compare'] if e['delta'] != 0 or e['verdict'] not in ('no change', 'untested')]")"
eq "compare same db: base and new are the report's (read.p50)" \
	"[$(j "$C/b1.json" "d['capture']['lat_read']['p50']"), $(j "$C/b1.json" "d['capture']['lat_read']['p50']")]" \
	"$(j "$C/same.json" "[[e['base'], e['new']] for e in d['compare'] if e['metric'] == 'read.p50'][0]")"
eq "compare: the JSON keeps each side's reports (base, new)" '[["capture"], ["capture"]]' "$(j "$C/same.json" "[list(d['base'][0]), list(d['new'][0])]")"

# --- within one run: b1 vs n1 (reads +20 us) ---
"$R" --compare "$C/b1.db" "$C/n1.db" --json > "$C/w.json"
for m in read.p50 read.p95 read.p99; do
	e=$(entry "$C/w.json" capture $m)
	eq "compare within-run: $m delta is the shift (20000 ns)" 20000 "$(field "$e" delta)"
	eq "compare within-run: $m slower, the interval above 0, method within-run" "slower True within-run" \
		"$(field "$e" verdict) $($PY -c "import json,sys; e=json.loads(sys.argv[1]); print(e['ci_low'] > 0 and e['ci_high'] >= e['delta'] >= e['ci_low'])" "$e") $(field "$e" method)"
done
for m in write.p50 write.p95 write.p99; do
	e=$(entry "$C/w.json" capture $m)
	eq "compare within-run: $m unchanged (delta 0, interval holds 0)" "0 no change True" \
		"$(field "$e" delta) $(field "$e" verdict) $($PY -c "import json,sys; e=json.loads(sys.argv[1]); print(e['ci_low'] <= 0 <= e['ci_high'])" "$e")"
done
eq "compare --json: every entry has the issue's keys (label, metric, base, new, delta, rel, ci_low, ci_high, p_value, verdict, method, n_base, n_new) and within_noise, side" \
	'[["base", "ci_high", "ci_low", "delta", "label", "method", "metric", "n_base", "n_new", "new", "p_value", "rel", "side", "verdict", "within_noise"]]' \
	"$(j "$C/w.json" "sorted(set(tuple(sorted(e)) for e in d['compare']))")"
eq "compare within-run: n_base/n_new are the reads counted" \
	"$(j "$C/b1.json" "d['capture']['lat_read']['n']") $(j "$C/n1.json" "d['capture']['lat_read']['n']")" \
	"$(field "$(entry "$C/w.json" capture read.p50)" n_base) $(field "$(entry "$C/w.json" capture read.p50)" n_new)"
if [ $have_scipy = 1 ]; then
	for s in read write; do
		want=$($PY tests/compare_check.py mwu_within "$C/b1.rows" "$C/n1.rows" $s)
		got=$(field "$(entry "$C/w.json" capture $s.p50)" p_value)
		eq "compare within-run: $s p-value = scipy.stats.mannwhitneyu(new, base) on the same values ($want)" True \
			"$($PY -c "import math,sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(math.isclose(a, b, rel_tol=1e-9))" "$want" "$got")"
	done
fi
# the value sets come from each side's own report, on the connection its analyses ran on (its
# snapshot, its gathers; no database opened again after the reports): one handover a side,
# the same JSON; across runs (no test within a run) none
KVIO_TIMING=1 "$R" --compare "$C/b1.db" "$C/n1.db" --json > "$C/wt.json" 2> "$C/wt.err"
eq "compare within-run: each side's report hands over its value sets (2 sides: 2), the same JSON" "2 same" \
	"$(grep -c 'timing: conn 0 samples.sql (to --compare)' "$C/wt.err") $(cmp -s "$C/wt.json" "$C/w.json" && echo same)"
KVIO_TIMING=1 "$R" --compare "$C/b1.db,$C/b2.db,$C/b3.db" "$C/n1.db,$C/n2.db,$C/n3.db" --json > /dev/null 2> "$C/wt.err"
eq "compare across runs: no value sets handed over" 0 "$(grep -c 'samples.sql (to --compare)' "$C/wt.err")"
# batch.size reads the report's own batches (kvio_batch): the same set as batches.sql's sizes,
# at --batch-gap-us 1 too (the within-run n is the report's batch count)
"$R" "$C/b1.db" --batch-gap-us 1 --json > "$C/g1.json"
"$R" --compare "$C/b1.db" "$C/n1.db" --batch-gap-us 1 --json > "$C/wg1.json"
eq "compare --batch-gap-us 1: batches.size_p50 base and n_base = the report's size_p50 and batch count" \
	"$(j "$C/g1.json" "[d['capture']['batches']['size_p50'], d['capture']['batches']['n']]")" \
	"$(j "$C/wg1.json" "[[e['base'], e['n_base']] for e in d['compare'] if e['metric'] == 'batches.size_p50'][0]")"
"$R" --compare "$C/b1.db" "$C/n1.db" > "$C/w.txt"
eq "compare within-run text: says the test is within the run" 1 "$(grep -c 'run-to-run variance not measured' "$C/w.txt")"
eq "compare within-run text: read.p50 line reads slower" 1 "$(grep -E -c '^ +read\.p50 .* slower$' "$C/w.txt")"

# --- across runs: 3 and 5 a side ---
for k in 3 5; do
	bs=$(seq -s, 1 $k | sed "s|\([0-9]\)|$C/b\1.db|g"); ns=$(echo "$bs" | sed 's|/b\([0-9]\)\.db|/n\1.db|g')
	bj=$(echo "$bs" | sed 's|\.db|.json|g'); nj=$(echo "$ns" | sed 's|\.db|.json|g')
	"$R" --compare "$bs" "$ns" --json > "$C/r$k.json"
	eq "compare $k v $k: exit 0" 0 $?
	# each run's read quantile moved by exactly 20 us, and the new runs all sit above the
	# base runs (asserted from the reports), so every bootstrap mean of new exceeds every
	# one of base: the interval is above 0; the writes are the same runs' exactly
	e=$(entry "$C/r$k.json" capture read.p50)
	eq "compare $k v $k: the new runs' read.p50 all above the base runs' (the premise)" True \
		"$($PY -c "
import json,sys
v = lambda fs: [json.load(open(f))['capture']['lat_read']['p50'] for f in fs.split(',')]
print(min(v(sys.argv[2])) > max(v(sys.argv[1])))" "$bj" "$nj")"
	eq "compare $k v $k: read.p50 base = mean of the base runs' values" True \
		"$($PY -c "
import json,sys,math
v = [json.load(open(f))['capture']['lat_read']['p50'] for f in sys.argv[1].split(',')]
print(math.isclose(sum(v) / len(v), float(sys.argv[2]), rel_tol=1e-12))" "$bj" "$(field "$e" base)")"
	eq "compare $k v $k: read.p50 delta 20000, slower, interval above 0, method runs, n $k/$k" "20000 slower True runs $k $k" \
		"$(field "$e" delta) $(field "$e" verdict) $($PY -c "import json,sys; e=json.loads(sys.argv[1]); print(e['ci_low'] > 0)" "$e") $(field "$e" method) $(field "$e" n_base) $(field "$e" n_new)"
	e=$(entry "$C/r$k.json" capture write.p99)
	eq "compare $k v $k: write.p99 delta 0, no change" "0 no change" "$(field "$e" delta) $(field "$e" verdict)"
	if [ $have_scipy = 1 ]; then
		want=$($PY tests/compare_check.py mwu_runs "$bj" "$nj" capture.lat_read.p50)
		eq "compare $k v $k: read.p50 p-value = scipy's exact U test over the runs ($want)" True \
			"$($PY -c "import math,sys; print(math.isclose(float(sys.argv[1]), float(sys.argv[2]), rel_tol=1e-9))" "$want" "$(field "$(entry "$C/r$k.json" capture read.p50)" p_value)")"
	fi
done
# 3 v 3 all apart: the smallest two-sided exact p, 2 / C(6, 3) = 0.1; 5 v 5: 2 / 252
eq "compare 3 v 3: p = 2/C(6,3)" 0.1 "$(field "$(entry "$C/r3.json" capture read.p50)" p_value)"
eq "compare 5 v 5: p = 2/C(10,5)" True "$($PY -c "import sys; print(abs(float(sys.argv[1]) - 2 / 252) < 1e-12)" "$(field "$(entry "$C/r5.json" capture read.p50)" p_value)")"
# two NEW sides: each compared with BASE
"$R" --compare "$C/b1.db" "$C/n1.db" "$C/b1.db" --json > "$C/two.json"
eq "compare two NEW sides: read.p50 slower on the first, no change on the second" "slower no change" \
	"$(field "$(entry "$C/two.json" capture read.p50 new)" verdict) $(field "$(entry "$C/two.json" capture read.p50 new2)" verdict)"
"$R" --compare "$C/b1.db,$C/b2.db" "$C/n1.db,$C/n2.db" > /dev/null 2> "$C/err"
eq "compare 2 runs a side: exit 2, says why (one run, or 3 and more)" "2 1" "$? $(grep -c 'has 2 runs: one run on every side' "$C/err")"
"$R" --compare "$C/b1.db" "$C/n1.db,$C/n2.db,$C/n3.db" > /dev/null 2> "$C/err"
eq "compare 1 run against 3: exit 2 (the two kinds of test do not mix)" "2 1" "$? $(grep -c 'has 1 run, ' "$C/err")"
"$R" --compare "$C/b1.db" > /dev/null 2> "$C/err"
eq "compare with one side: exit 2" 2 $?
"$R" --compare "$C/b1.db" "$C/missing.db" > /dev/null 2> "$C/err"
eq "compare with a missing database: exit 2, names it" "2 1" "$? $(grep -c 'missing.db' "$C/err")"

# --- --fail-on ---
p50=$(j "$C/b1.json" "d['capture']['lat_read']['p50']")
gate() { "$R" "$@" > "$C/g.out" 2> "$C/g.err"; echo $?; }
eq "gate read.p50>(p50-1)ns fires: exit 3" 3 "$(gate "$C/b1.db" --fail-on "read.p50>$((p50 - 1))ns")"
eq "gate: one line naming the spec" 1 "$(grep -c -- "--fail-on 'read.p50>$((p50 - 1))ns' fired" "$C/g.err")"
eq "gate read.p50>(p50)ns does not fire (strictly greater)" 0 "$(gate "$C/b1.db" --fail-on "read.p50>${p50}ns")"
eq "gate read.p50<(p50+1)ns fires" 3 "$(gate "$C/b1.db" --fail-on "read.p50<$((p50 + 1))ns")"
us=$($PY -c "print($p50 / 1000 - 0.0005)")
eq "gate in us: read.p50>${us}us fires" 3 "$(gate "$C/b1.db" --fail-on "read.p50>${us}us")"
eq "gate in ms: read.p50>1ms does not fire" 0 "$(gate "$C/b1.db" --fail-on 'read.p50>1ms')"
eq "gate in s: read.p50<1s fires" 3 "$(gate "$C/b1.db" --fail-on 'read.p50<1s')"
pt=$(j "$C/b1.json" "d['capture']['qd']['pct_time_le1']")
lo=$($PY -c "print($pt * 100 - 0.01)"); hi=$($PY -c "print($pt * 100 + 0.01)")
eq "gate percent: qd.pct_time_le1>${lo}% fires" 3 "$(gate "$C/b1.db" --fail-on "qd.pct_time_le1>${lo}%")"
eq "gate percent: qd.pct_time_le1>${hi}% does not" 0 "$(gate "$C/b1.db" --fail-on "qd.pct_time_le1>${hi}%")"
sp=$(j "$C/b1.json" "d['capture']['objects']['load']['span_p50']")
eq "gate on an object metric: load.span_p50>(p50-1)ns fires, the line names label, metric, value, threshold" "3 1" \
	"$(gate "$C/b1.db" --fail-on "load.span_p50>$((sp - 1))ns") $(grep -F -c "fired: $C/b1.db [capture] load.span_p50 = $(awk -v v=$sp 'BEGIN { printf "%.1f us > %.1f us", v / 1000, (v - 1) / 1000 }')" "$C/g.err")"
eq "gate on an object metric: load.span_p50>(p50)ns does not fire" 0 "$(gate "$C/b1.db" --fail-on "load.span_p50>${sp}ns")"
eq "gate two firing: two lines, exit 3" "3 2" "$(gate "$C/b1.db" --fail-on 'read.p50<1s' --fail-on 'write.p99<1s') $(grep -c fired "$C/g.err")"
eq "gate qd1 on a serialized capture fires" 3 "$(gate "$C/ser.db" --fail-on qd1)"
eq "gate qd1 on a batched capture does not" 0 "$(gate "$C/b1.db" --fail-on qd1)"
eq "gate unknown metric: exit 2" 2 "$(gate "$C/b1.db" --fail-on 'read.p42>1ms')"
eq "gate unknown metric: the message lists the names" 1 "$(grep -c 'read.p50.*write.p99\|write.p99.*read.p50' "$C/g.err")"
for bad in 'read.p50>' 'read.p50>1parsec' 'read.p50=1ms' 'regress:read.p50>x%' ''; do
	eq "gate malformed '$bad': exit 2" 2 "$(gate "$C/b1.db" --fail-on "$bad")"
done
eq "gate regress: without --compare: exit 2" 2 "$(gate "$C/b1.db" --fail-on 'regress:read.p50>5%')"
eq "gate regress:read.p50>5% fires (+14%, significantly)" 3 "$(gate --compare "$C/b1.db" "$C/n1.db" --fail-on 'regress:read.p50>5%')"
eq "gate regress: the line names label, metric and the change" 1 "$(grep -c "fired: \[capture\] read.p50 worse by" "$C/g.err")"
eq "gate regress:read.p50>50% does not fire" 0 "$(gate --compare "$C/b1.db" "$C/n1.db" --fail-on 'regress:read.p50>50%')"
eq "gate regress:write.p50>1% does not fire (no change)" 0 "$(gate --compare "$C/b1.db" "$C/n1.db" --fail-on 'regress:write.p50>1%')"
eq "gate regress: a faster NEW is not a regression" 0 "$(gate --compare "$C/n1.db" "$C/b1.db" --fail-on 'regress:read.p50>5%')"
# bigger-is-better metrics: reads 300 us slower lower the runs' throughput and deepen their queues;
# when every slow run's value is on one side of every base run's (the premise, from the
# reports), the bootstrap interval of the means' difference is on that side of 0: throughput
# "slower" (worse): a regress gate at half the drop fires, reversed it does not; mean QD up is
# "faster" (better): no regression, reversed it fires
b3s="$C/b1.db,$C/b2.db,$C/b3.db"; s3s="$C/s1.db,$C/s2.db,$C/s3.db"
half() { $PY -c "
import json,sys
v = lambda fs: [json.load(open(f.replace('.db', '.json')))['capture'][sys.argv[3]] for f in fs.split(',')]
b, n = v(sys.argv[1]), v(sys.argv[2])
print('%.6f' % (50 * abs(1 - sum(n) / sum(b))) if max(n) < min(b) or min(n) > max(b) else 'premise fails')" "$@"; }
h=$(half "$b3s" "$s3s" throughput_gbs)
eq "gate regress on throughput (bigger is better): a drop fires at half of it ($h%)" 3 "$(gate --compare "$b3s" "$s3s" --fail-on "regress:throughput_gbs>$h%")"
eq "gate regress on throughput: the line says slower" 1 "$(grep -c 'fired: \[capture\] throughput_gbs worse by' "$C/g.err")"
eq "gate regress on throughput: a gain is not a regression" 0 "$(gate --compare "$s3s" "$b3s" --fail-on "regress:throughput_gbs>$h%")"
h=$($PY -c "
import json,sys
v = lambda fs: [json.load(open(f.replace('.db', '.json')))['capture']['qd']['mean'] for f in fs.split(',')]
b, n = v(sys.argv[1]), v(sys.argv[2])
print('%.6f' % (50 * abs(1 - sum(n) / sum(b))) if min(n) > max(b) else 'premise fails')" "$b3s" "$s3s")
eq "gate regress on qd.mean (bigger is better): deeper queues are no regression ($h%)" 0 "$(gate --compare "$b3s" "$s3s" --fail-on "regress:qd.mean>$h%")"
eq "gate regress on qd.mean: shallower ones are" 3 "$(gate --compare "$s3s" "$b3s" --fail-on "regress:qd.mean>$h%")"
eq "gate under --compare: a value gate looks at NEW (read.p50 > p50 + 10 us)" 3 \
	"$(gate --compare "$C/b1.db" "$C/n1.db" --fail-on "read.p50>$((p50 + 10000))ns")"
eq "gate under --compare: BASE alone over the value does not fire" 0 \
	"$(gate --compare "$C/n1.db" "$C/b1.db" --fail-on "read.p50>$((p50 + 10000))ns")"
eq "gate qd1 under --compare: a serialized NEW fires" 3 "$(gate --compare "$C/b1.db" "$C/ser.db" --fail-on qd1)"
eq "gate qd1 under --compare: the line names the database, label and op" 1 "$(grep -c "qd1: $C/ser.db \[capture\] load.* looks serialized" "$C/g.err")"
eq "gate qd1 under --compare: a serialized BASE does not" 0 "$(gate --compare "$C/ser.db" "$C/b1.db" --fail-on qd1)"
eq "help: no doubled percent signs" 0 "$("$R" --help | grep -c '%%')"

# --- --compare --html FILE: one self-contained page, the same entries, drawn by Chart.js ---
"$R" --compare "$b3s" "$C/n1.db,$C/n2.db,$C/n3.db" --html "$C/cmp.html" > "$C/cmp.txt"
eq "compare --html: exit 0, the text report still printed" "0 1" "$? $(grep -c '^=== kvio-report --compare' "$C/cmp.txt")"
"$R" --compare "$b3s" "$C/n1.db,$C/n2.db,$C/n3.db" --json > "$C/cmph.json"
eq "compare --html: a table row per entry, its verdict the JSON's (read.p50 slower, write.p99 no change)" \
	"$(j "$C/cmph.json" "len(d['compare'])") 1 1" \
	"$(grep -c '^<tr class=' "$C/cmp.html") $(grep -c '<tr class="bad"><td>read.p50</td>' "$C/cmp.html") $(grep -c '<tr class="same"><td>write.p99</td>.*no change (within noise)' "$C/cmp.html")"
eq "compare --html: nothing fetched (no http, a CSP of inline only)" "0 1" \
	"$(grep -c 'src="http\|href="http' "$C/cmp.html") $(grep -c "connect-src 'none'" "$C/cmp.html")"
if command -v chromium > /dev/null 2>&1; then
	u=$(mktemp -d "$T/chr.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--user-data-dir="$u" --dump-dom "file://$C/cmp.html" > "$C/cmp.dom" 2>/dev/null
	rm -rf "$u"
	eq "compare --html in Chromium: one chart, a bar per metric, an interval for each tested one, no error" \
		"[1, $(j "$C/cmph.json" "len(d['compare'])"), $(j "$C/cmph.json" "len([e for e in d['compare'] if e['ci_low'] is not None])"), []]" \
		"$($PY -c "
import json,re,sys,html
m = re.search(r'<pre id=\"kvio-summary\">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
s = json.loads(html.unescape(m.group(1))) if m else {'charts': [], 'errors': ['no summary']}
c = s['charts'][0] if s['charts'] else {}
print(json.dumps([len(s['charts']), c.get('metrics'), c.get('intervals'), s['errors']]))" "$C/cmp.dom")"
else
	FAIL=$((FAIL + 1)); echo "FAIL - compare --html: no chromium (scripts/install-deps installs it)"
fi
"$R" --compare "$C/b1.db" "$C/n1.db" --html - > /dev/null 2> "$C/err"
eq "compare --html -: a usage error (standard output holds the comparison)" "2 1" "$? $(grep -c 'compare --html: a FILE' "$C/err")"
rm -f "$C/gone.html"
"$R" --compare "$C/b1.db" "$C/missing.db" --html "$C/gone.html" > /dev/null 2>&1
eq "compare --html with a missing database: exit 2, no page, no temp file" "2 0" "$? $(ls "$C" | grep -c 'gone.html')"
"$R" "$C/b1.db" "$C/b2.db" --html "$C/gone.html" > /dev/null 2>&1
eq "--html with several databases (no --compare): a usage error, no page" "2 0" "$? $(ls "$C" | grep -c 'gone.html')"

# --- the in-database A/B diff (--merge arms): the p50 delta's interval, p-value, verdict ---
# arm b = arm a's capture with reads 20 us slower: every load (its reads in one batch)
# ends 20 us later, every store the same: load deltas all +20000 (interval [20000, 20000],
# sign test 2 * 2^-n), store deltas all 0 (no signs: p 1)
ab() { "$BUILD/kvio-ingest" -q -o "$C/$1.db" --merge "a=$C/$2.s,$C/$2.e" --merge "b=$C/$3.s,$C/$3.e" &&
	"$R" "$C/$1.db" --json > "$C/$1.json"; }
ab abs b1 n1
ab abf n1 b1
ab abn b1 b2
nl=$(j "$C/abs.json" "d['b']['ab']['load']['n']")
eq "A/B shifted arm: load slower, interval [20000, 20000], p = 2 * 2^-n (n $nl)" "20000 20000 slower True" \
	"$(j "$C/abs.json" "d['b']['ab']['load']['ci_low']") $(j "$C/abs.json" "d['b']['ab']['load']['ci_high']") $(j "$C/abs.json" "d['b']['ab']['load']['verdict']" | tr -d '"') $($PY -c "import sys,math; print(math.isclose(float(sys.argv[1]), 2 * 2.0 ** -int(sys.argv[2]), rel_tol=1e-9))" "$(j "$C/abs.json" "d['b']['ab']['load']['p_value']")" "$nl")"
eq "A/B shifted arm: store unchanged (interval [0, 0], p 1, no change)" '[0, 0, 1.0, "no change"]' \
	"$(j "$C/abs.json" "[d['b']['ab']['store'][k] for k in ('ci_low', 'ci_high', 'p_value', 'verdict')]")"
eq "A/B the other way round: load faster" '"faster"' "$(j "$C/abf.json" "d['b']['ab']['load']['verdict']")"
eq "A/B two seeds (noise only): both ops no change, the interval holds 0" '[["no change", true], ["no change", true]]' \
	"$(j "$C/abn.json" "[[d['b']['ab'][o]['verdict'], d['b']['ab'][o]['ci_low'] <= 0 <= d['b']['ab'][o]['ci_high']] for o in ('load', 'store')]")"
if [ $have_scipy = 1 ]; then
	for f in abs abf abn; do
		eq "A/B $f: p-value = scipy.stats.binomtest, interval = scipy's binomial ranks (load, store)" "same 2" \
			"$($PY tests/compare_check.py ab "$C/$f.db" "$BUILD/kvio" "$C/$f.json")"
	done
fi
for f in abs abn; do
	ok "A/B $f: the model (tests/model_report.py) = kvio-report" $PY tests/model_report.py "$C/$f.db" "$BUILD/kvio" "$C/$f.json"
done
eq "A/B text: the interval, p and verdict on the line" 1 \
	"$("$R" "$C/abs.db" | grep -c '^  b vs a \[load\]: span delta p50 0.02ms (n=[0-9]* paired; negative = b faster), 95% CI \[0.02ms, 0.02ms\] p=[0-9.e-]*: slower$')"

# --- pre-submit as a comparable number: fixtures/kv under --join-by-key (its timeline: t_26_join_key.sh).
# The load of obj-a at 10 ms is trace_id 1's second occurrence, whose first command is the store's
# at 0.1 ms: presubmit_p50 (the reference's rule) = 0.1 - 10 = -9.9 ms; from its own first command
# (the retrieve at 10.2 ms) presubmit_own_p50 = +0.2 ms. The two stores: 0.1 ms either way ---
"$BUILD/kvio-ingest" -q -o "$C/kv.db" --sem fixtures/kv/sem.jsonl --ebpf fixtures/kv/ebpf.jsonl --join-by-key
"$R" "$C/kv.db" --json > "$C/kv.json"
eq "presubmit on fixtures/kv: load -9.9 ms by the reference's rule, +0.2 ms from its own command; stores 0.1 ms" \
	"[-9900000, 200000, 100000, 100000]" \
	"$(j "$C/kv.json" "[d['capture']['objects'][o][k] for o, k in (('load', 'presubmit_p50'), ('load', 'presubmit_own_p50'), ('store', 'presubmit_p50'), ('store', 'presubmit_own_p50'))]")"
"$R" --compare "$C/kv.db" "$C/kv.db" --json > "$C/kvc.json"
eq "compare on fixtures/kv: load.presubmit_own_p50 compared (base 200000, 1 object a side), presubmit_p50 not" \
	'[[200000, 1, 1], []]' \
	"$(j "$C/kvc.json" "[[[e['base'], e['n_base'], e['n_new']] for e in d['compare'] if e['metric'] == 'load.presubmit_own_p50'][0], [e for e in d['compare'] if e['metric'].endswith('.presubmit_p50')]]")"

# --- delete objects' spans are compared too: 12 deletes (spans 1 ms + i x 10 us) and 12 stores
# (1 ms) a database, written by hand; in the second every delete ends 0.5 ms later ---
for n in d1 d2; do
	$PY -c "
import json, sys
slow = float(sys.argv[2])
with open(sys.argv[1], 'w') as f:
    f.write(json.dumps({'event_type': 'kvio_meta', 'kvio_schema': 2, 'hostname': 'h1', 'device_path': '/dev/ng1n1'}) + '\\n')
    for i in range(12):
        t = 1.0 + i * 0.01
        f.write(json.dumps({'trace_id': 100 + i, 'op': 'delete', 'key': 'k%d' % i, 'bytes': 0, 'ts_start': t, 'ts': t + 0.001 + slow + i * 1e-5}) + '\\n')
        f.write(json.dumps({'trace_id': 200 + i, 'op': 'store', 'key': 's%d' % i, 'bytes': 4096, 'ts_start': t + 0.005, 'ts': t + 0.006}) + '\\n')
" "$C/$n.sem" "$([ $n = d1 ] && echo 0 || echo 0.0005)"
	"$BUILD/kvio-ingest" -q -o "$C/$n.db" --sem "$C/$n.sem" 2>/dev/null
	"$R" "$C/$n.db" --json > "$C/$n.json" 2>/dev/null
	"$R" "$C/$n.db" --rows samples.sql > "$C/$n.rows" 2>/dev/null
done
eq "samples.sql on the deletes: the span sets give the report's delete and store span percentiles" "same 4" \
	"$($PY tests/compare_check.py quantiles "$C/d1.rows" "$C/d1.json")"
"$R" --compare "$C/d1.db" "$C/d2.db" --json > "$C/dc.json" 2>/dev/null
for m in delete.span_p50 delete.span_p99; do
	e=$(entry "$C/dc.json" capture $m)
	eq "compare deletes: $m delta the 0.5 ms (to a ns of rounding), slower, interval above 0, within-run, n 12/12" "True slower True within-run 12 12" \
		"$($PY -c "import json,sys; e=json.loads(sys.argv[1]); print(abs(e['delta'] - 500000) <= 1)" "$e") $(field "$e" verdict) $($PY -c "import json,sys; e=json.loads(sys.argv[1]); print(e['ci_low'] > 0)" "$e") $(field "$e" method) $(field "$e" n_base) $(field "$e" n_new)"
done
eq "compare deletes: store.span_p50 no change (delta 0)" "0 no change" \
	"$(field "$(entry "$C/dc.json" capture store.span_p50)" delta) $(field "$(entry "$C/dc.json" capture store.span_p50)" verdict)"
if [ $have_scipy = 1 ]; then
	want=$($PY tests/compare_check.py mwu_within "$C/d1.rows" "$C/d2.rows" delete.span)
	eq "compare deletes: delete.span_p50 p-value = scipy.stats.mannwhitneyu on the same spans ($want)" True \
		"$($PY -c "import math,sys; print(math.isclose(float(sys.argv[1]), float(sys.argv[2]), rel_tol=1e-9))" "$want" "$(field "$(entry "$C/dc.json" capture delete.span_p50)" p_value)")"
fi

# --- options apply to every run: --label, --time-range ---
"$R" --compare "$C/abs.db" "$C/abs.db" --label b --json > "$C/lab.json"
eq "compare --label b: only label b's entries, and each side's reports hold only b" '[["b"], [["b"]], [["b"]]]' \
	"$(j "$C/lab.json" "[sorted(set(e['label'] for e in d['compare'])), [sorted(r) for r in d['base']], [sorted(r) for r in d['new']]]")"
"$R" "$C/b1.db" --trace-id 1-50 --json > "$C/t1.json"
"$R" --compare "$C/b1.db" "$C/n1.db" --trace-id 1-50 --json > "$C/ct.json"
eq "compare --trace-id: base read.p50 and n_base (the within-run test's reads) = the trace-id report's" \
	"$(j "$C/t1.json" "[d['capture']['lat_read']['p50'], d['capture']['lat_read']['n']]")" \
	"$(j "$C/ct.json" "[[e['base'], e['n_base']] for e in d['compare'] if e['metric'] == 'read.p50'][0]")"
"$R" "$C/b1.db" --time-range 0.01,0.03 --json > "$C/w1.json"
"$R" --compare "$C/b1.db" "$C/n1.db" --time-range 0.01,0.03 --json > "$C/cw.json"
eq "compare --time-range: base read.p50 = the windowed report's" "$(j "$C/w1.json" "d['capture']['lat_read']['p50']")" \
	"$(j "$C/cw.json" "[e['base'] for e in d['compare'] if e['metric'] == 'read.p50'][0]")"
eq "compare --time-range: the within-run test's reads are the window's (n_base = its lat_read.n)" "$(j "$C/w1.json" "d['capture']['lat_read']['n']")" \
	"$(j "$C/cw.json" "[e['n_base'] for e in d['compare'] if e['metric'] == 'read.p50'][0]")"

# --- several databases: the JSON list and --csv ---
"$BUILD/kvio-ingest" -q -o "$C/ab.db" --merge a=fixtures/ab/a.sem.jsonl,fixtures/ab/a.ebpf.jsonl,fixtures/ab/a.serving.jsonl \
	--merge b=fixtures/ab/b.sem.jsonl,fixtures/ab/b.ebpf.jsonl
"$R" "$C/ab.db" --json > "$C/ab.json"
"$R" "$C/b1.db" "$C/ab.db" "$C/b2.db" --json > "$C/list.json"
eq "several dbs --json: exit 0" 0 $?
eq "several dbs --json: the list of the single reports, in order" True \
	"$($PY -c "
import json,sys
print(json.load(open(sys.argv[1])) == [json.load(open(f)) for f in sys.argv[2:]])" "$C/list.json" "$C/b1.json" "$C/ab.json" "$C/b2.json")"
"$R" "$C/b1.db" "$C/ab.db" "$C/b2.db" --jobs 1 --json > "$C/list1.json"
eq "several dbs --json: --jobs 1 the same bytes" "" "$(cmp "$C/list.json" "$C/list1.json" 2>&1)"
"$R" "$C/b1.db" "$C/ab.db" "$C/b2.db" --csv "$C/runs.csv" > /dev/null
eq "several dbs --csv FILE: exit 0" 0 $?
eq "--csv: the header" "database,label,metric,value,host,device,options" "$(head -1 "$C/runs.csv")"
eq "--csv read back = --json (every value, both ways)" "same" \
	"$($PY tests/compare_check.py csv "$C/runs.csv" "$C/list.json" "$C/b1.db,$C/ab.db,$C/b2.db" | cut -d' ' -f1)"
"$R" "$C/b1.db" --csv - > "$C/one.csv"
eq "--csv - one database: its rows" "same" \
	"$($PY -c "import json,sys; json.dump([json.load(open(sys.argv[1]))], open(sys.argv[2], 'w'))" "$C/b1.json" "$C/one.json"; $PY tests/compare_check.py csv "$C/one.csv" "$C/one.json" "$C/b1.db" | cut -d' ' -f1)"
"$R" "$C/b1.db" "$C/nope.db" --json > "$C/list2.json" 2> "$C/err"
eq "several dbs, one missing: exit 2 (the worst), the error names it" "2 1" "$? $(grep -c 'nope.db' "$C/err")"

# --- from Python (README "Campaigns from Python"): pandas over --csv; Python's sqlite3 with
# kvio's extension loaded, pandas.read_sql of a cookbook query and of an operator query ---
if $PY -c 'import pandas' 2>/dev/null; then
	eq "pandas.read_csv of --csv: lat_read.p50 per database = the reports'" \
		"$(j "$C/b1.json" "d['capture']['lat_read']['p50']") $(j "$C/b2.json" "d['capture']['lat_read']['p50']")" \
		"$($PY -c "
import pandas as pd, sys
df = pd.read_csv(sys.argv[1])
r = df[(df.metric == 'lat_read.p50') & (df.label == 'capture')]
print(' '.join(str(int(float(v))) for v in r.value))" "$C/runs.csv")"
else
	FAIL=$((FAIL + 1)); echo "FAIL - compare: /usr/bin/python3 has no pandas (scripts/install-deps installs python3-pandas)"
fi
if $PY -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
	got=$($PY -c "
import sqlite3, sys
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
db.enable_load_extension(True)
db.load_extension(sys.argv[2])
n = db.execute(\"select count(*) from slice s join process_track pt on s.track_id = pt.id \"
               \"where pt.name like 'reads%' and extract_arg(s.arg_set_id, 'debug.real_dur') = 1\").fetchone()[0]
db.executescript(open(sys.argv[3]).read())
try:
    import pandas as pd
    df = pd.read_sql('SELECT k2 AS op, p50 FROM kvio_pct((SELECT kvio_pct_gather(lid, op, dur) '
                     'FROM kvio_pool_batches WHERE real = 1))', db)
    p50 = int(df[df.op == 'read'].p50.iloc[0])
except ImportError:
    p50 = 'no pandas'
print(n, p50)" "$C/b1.db" "$BUILD/kvio" sql/prelude.sql)
	eq "Python sqlite3 + load_extension: a cookbook count and kvio_pct after prelude.sql = the report's lat_read n, p50" \
		"$(j "$C/b1.json" "d['capture']['lat_read']['n']") $p50" "$got"
else
	echo "# skip: /usr/bin/python3's sqlite3 cannot load extensions"
fi
