# The report's findings in the exported trace (sql/findings.sql; kvio-export and
# kvio2perfetto, --no-findings): counted by hand on fixtures/ab, by the
# independent model (tests/model_report.py) on generated captures, read back with
# kvio-ingest --pftrace (trace_processor's import rules) and checked slice by slice
# against the rows of sql/findings.sql, with their flows to the objects.
#
# fixtures/ab by hand (rebased: a's store 0..125 ms, load tid 2 250..375 ms, load tid 3
# failed (EIO) without commands; the writes at 10.000, .001, .002, .003 ms, 100 us
# each; a's reads at 260.0, 260.1, 260.2, 260.3 ms, 90 us each; b's reads 1 us apart):
#   a qd1_load 1       load tid 2: gaps 100 us >= 0.5 x svc 90 us (p25 of the reads)
#   a qd_le1 2         depth <= 1 from the writes' last-but-one completion (10.102 ms)
#                      to the last read's end (260.39 ms), while the store (to 125 ms)
#                      and the load (from 250 ms) are in flight: 114.898 ms, 10.39 ms
#   a batch 1          the 4 writes (1 us apart); a batch_singles 1: the 4 reads (100 us apart)
#   a failed 1         load tid 3
#   b qd_le1 2         10.102 .. 125 ms and 250 .. 260.001 ms (its second read)
#   b batch 2          the writes, the reads; nothing else (one object per op and shard:
#                      no span above its p99, one TP chunk: none above its p95)
F=fixtures/ab
AB=$T/fab.db
"$BUILD/kvio-ingest" -q -o "$AB" --merge a=$F/a.sem.jsonl,$F/a.ebpf.jsonl,$F/a.serving.jsonl --merge b=$F/b.sem.jsonl,$F/b.ebpf.jsonl
fj() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%s:%s=%d' % (l, k, n) for l in sorted(d) for k, n in d[l]['findings'].items() if n))" "$1"; }
"$BUILD/kvio-report" "$AB" --json > "$T/fab.json"
eq "report: findings counts by hand (fixtures/ab)" \
	"a:qd1_load=1 a:qd_le1=2 a:batch=1 a:batch_singles=1 a:failed=1 b:qd_le1=2 b:batch=2" "$(fj "$T/fab.json")"
eq "report: every kind is a key, 0 when none" "10 0" \
	"$(python3 -c "import json; f=json.load(open('$T/fab.json'))['b']['findings']; print(len(f), f['qd1_load'])")"
eq "report text: one findings line per label" \
	"  findings: 1 QD~1 load, 2 QD<=1, 1 batches, 1 runs of 1-cmd batches, 1 failed (kvio-export: the 'kvio findings' tracks)" \
	"$("$BUILD/kvio-report" "$AB" --label a | grep '^  findings:')"

# the trace: exported, read back, the finding slices by label and track
"$BUILD/kvio-export" "$AB" -o "$T/fab.pftrace" > "$T/fab.out"
eq "export: exit 0, the summary counts the findings" "0 1" "$? $(grep -c '; 10 findings)$' "$T/fab.out")"
ok "export: pfwire structure (flows start and end once, no overlap on a track)" python3 tests/pfwire.py check "$T/fab.pftrace"
ok "export: protoc --decode against lib/kvio.proto" \
	sh -c "protoc --decode=kvio.pf.Trace --proto_path=lib lib/kvio.proto < '$T/fab.pftrace' > /dev/null"
"$BUILD/kvio-ingest" -q -o "$T/fab.rt.db" --pftrace "$T/fab.pftrace"
# finding slices of DB: label, track (a lane: its group's name), ts, dur, name
FS="WITH RECURSIVE g AS (SELECT id FROM kvio_track WHERE name = 'kvio findings'),
 ft(id, tname) AS (SELECT t.id, t.name FROM kvio_track t JOIN g ON t.parent_id = g.id
   UNION ALL SELECT t.id, ft.tname FROM kvio_track t JOIN ft ON t.parent_id = ft.id)
 SELECT substr(p.name, 9) AS label, ft.tname AS track, s.ts, s.dur, s.name, s.arg_set_id, s.id
 FROM slice s JOIN ft ON ft.id = s.track_id JOIN kvio_track k ON k.id = s.track_id JOIN process p ON p.upid = k.upid"
eq "export a: the QD~1 load slice over the load object, its numbers" \
	"a|QD~1 load|250000000|125000000|QD~1 load: gap p50 100.0us ~ svc 90.0us|2|1|4|100000|90000" \
	"$(q "$T/fab.rt.db" "SELECT label, track, ts, dur, name, extract_arg(arg_set_id, 'debug.trace_id'), extract_arg(arg_set_id, 'debug.n_objects'),
	  extract_arg(arg_set_id, 'debug.n_cmds'), extract_arg(arg_set_id, 'debug.gap_p50_ns'), extract_arg(arg_set_id, 'debug.svc_ns')
	  FROM ($FS) WHERE track LIKE 'QD~1%'")"
eq "export a: QD<=1 slices (by hand)" "QD<=1 for 114.90ms|10102000|114898000 QD<=1 for 10.39ms|250000000|10390000" \
	"$(q "$T/fab.rt.db" "SELECT name, ts, dur FROM ($FS) WHERE label = 'a' AND track = 'QD<=1' ORDER BY ts" | tr '\n' ' ' | sed 's/ $//')"
eq "export: the findings group sits in each label's LMCache process, a track per kind" \
	"a|LMCache a|QD<=1,QD~1 load,batches,failed ops b|LMCache b|QD<=1,batches" \
	"$(q "$T/fab.rt.db" "SELECT substr(p.name, 9), p.name, (SELECT group_concat(name) FROM (SELECT c.name FROM kvio_track c WHERE c.parent_id = g.id ORDER BY c.name))
	  FROM kvio_track g JOIN process p ON p.upid = g.upid WHERE g.name = 'kvio findings' ORDER BY 1" | tr '\n' ' ' | sed 's/ $//')"

# every finding slice read back = a row of sql/findings.sql (label, track, ts, dur, name,
# each non-NULL arg with its value), and its flow reaches its object (the earlier end first)
same_findings() { # DB RT: "ok" or the differences
python3 - "$1" "$2" "$BUILD/kvio" "$FS" <<'PY'
import json, subprocess, sys
db, rt, ext, fs = sys.argv[1:5]
def rows(d, *sql):
    out = subprocess.run(['sqlite3', '-json', '-cmd', '.load ' + ext, d] + list(sql), check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []
want = rows(db, '.read sql/prelude.sql', '.read sql/findings.sql')
fixed = ('label', 'kind', 'track', 'ts', 'dur', 'name', 'obj', 'obj_ts')
w = sorted((r['label'], r['track'], r['ts'], r['dur'], r['name'],
            tuple(sorted((k, v) for k, v in r.items() if k not in fixed and v is not None))) for r in want)
got = rows(rt, 'SELECT f.*, (SELECT json_group_array(json_array(substr(a.key, 7), coalesce(a.int_value, a.string_value, a.real_value)))'
               ' FROM args a WHERE a.arg_set_id = f.arg_set_id) AS args FROM (%s) f' % fs)
g = sorted((r['label'], r['track'], r['ts'], r['dur'], r['name'], tuple(sorted(tuple(x) for x in json.loads(r['args']))))
           for r in got)
bad = [] if w == g else ['rows: %d in findings.sql, %d read back; first differences: %s' % (
    len(w), len(g), [x for x in w if x not in g][:2] + [x for x in g if x not in w][:2])]
# flows: each finding with an object has one flow, to a slice on an objects track at the object's ts
fl = rows(rt, 'SELECT f.id, (SELECT count(*) FROM flow x WHERE x.slice_out = f.id OR x.slice_in = f.id) AS n,'
              ' (SELECT o.ts FROM flow x JOIN slice o ON o.id = CASE WHEN x.slice_out = f.id THEN x.slice_in ELSE x.slice_out END'
              '  JOIN track t ON t.id = o.track_id WHERE (x.slice_out = f.id OR x.slice_in = f.id) AND t.name LIKE \'objects%%\') AS ots,'
              ' (SELECT count(*) FROM flow x JOIN slice o ON o.id = x.slice_out WHERE x.slice_in = f.id AND o.ts > f.ts) AS late'
              ' FROM (%s) f ORDER BY f.label, f.track, f.ts' % fs)
wo = sorted(r['obj_ts'] for r in want if r['obj'] is not None)
go = sorted(r['ots'] for r in fl if r['ots'] is not None)
if wo != go or any(r['n'] > 1 or r['late'] for r in fl):
    bad.append('flows: %d objects in findings.sql, %d reached; %d with more than one flow, %d from a later slice' % (
        len(wo), len(go), sum(r['n'] > 1 for r in fl), sum(r['late'] for r in fl)))
print('\n'.join(bad) if bad else 'ok %d' % len(w))
PY
}
eq "read back (fixtures/ab): the finding slices are findings.sql's rows, each flow-linked to its object" "ok 10" \
	"$(same_findings "$AB" "$T/fab.rt.db")"
canon() { sqlite3 -batch -cmd ".load $BUILD/kvio" "$1" ".read tests/canon.sql"; }
canon "$AB" > "$T/fab.canon"
eq "read back: the rest of the trace is the database's (without the findings group's lines)" "" \
	"$(canon "$T/fab.rt.db" | grep -v 'kvio findings' | diff "$T/fab.canon" - | head -5)"
"$BUILD/kvio-export" "$AB" -o "$T/fab0.pftrace" --no-findings > "$T/fab0.out"
"$BUILD/kvio-ingest" -q -o "$T/fab0.rt.db" --pftrace "$T/fab0.pftrace"
eq "--no-findings: no findings track, the round trip is the database; the summary as before" "0||1" \
	"$(grep -c 'kvio findings' "$T/fab0.pftrace")|$(canon "$T/fab0.rt.db" | diff "$T/fab.canon" - | head -3)|$(grep -c 'bytes before compression)$' "$T/fab0.out")"
"$BUILD/kvio-export" "$T/fab.rt.db" -o "$T/fab2.pftrace" > /dev/null && "$BUILD/kvio-ingest" -q -o "$T/fab2.rt.db" --pftrace "$T/fab2.pftrace"
eq "a trace read back exports its findings as they are (no second group)" "2 10" \
	"$(q "$T/fab2.rt.db" "SELECT (SELECT count(*) FROM kvio_track WHERE name = 'kvio findings') || ' ' || (SELECT count(*) FROM ($FS))")"
"$BUILD/kvio-report" "$T/fab.rt.db" --json > "$T/fab.rt.json"
eq "the report of the trace read back finds the same" "$(fj "$T/fab.json")" "$(fj "$T/fab.rt.json")"

# --batch-gap-us: the export's batches are the report's at the same gap (1 ms: a's reads,
# 100 us apart, are one batch too)
"$BUILD/kvio-export" "$AB" -o "$T/g1.pftrace" --batch-gap-us 1000 >/dev/null && "$BUILD/kvio-ingest" -q -o "$T/g1.db" --pftrace "$T/g1.pftrace"
eq "--batch-gap-us 1000: a's reads (100 us apart) are one batch of 4" "a|batch 4 cmds|10000000 a|batch 4 cmds|260000000 b|batch 4 cmds|10000000 b|batch 4 cmds|260000000" \
	"$(q "$T/g1.db" "SELECT label, name, ts FROM ($FS) WHERE track = 'batches' ORDER BY label, ts" | tr '\n' ' ' | sed 's/ $//')"
"$BUILD/kvio-export" "$AB" -o "$T/g2.pftrace" --batch-gap-us 1000 --batch-gap-us 2 2>"$T/g2.err"
eq "--batch-gap-us given twice: exit 2, nothing written" "2 no" "$? $([ -e "$T/g2.pftrace" ] && echo yes || echo no)"

# the demo's A/B database (scripts/demo.sh: serialized vs batched loads): the QD~1 load
# track holds exactly the stock arm's serialized loads (the model's, one per run: the
# arm alternates stores and loads) and none of the batched arm's
"$BUILD/kvio-gen" --sem "$T/stock.sem.jsonl" --ebpf "$T/stock.ebpf.jsonl" --lines 20000 --mode serialized 2>/dev/null
"$BUILD/kvio-gen" --sem "$T/batched.sem.jsonl" --ebpf "$T/batched.ebpf.jsonl" --lines 20000 --mode batched --seed 2 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/demo.db" --merge "stock=$T/stock.sem.jsonl,$T/stock.ebpf.jsonl" \
	--merge "batched=$T/batched.sem.jsonl,$T/batched.ebpf.jsonl"
"$BUILD/kvio-export" "$T/demo.db" -o "$T/demo.pftrace" > /dev/null && "$BUILD/kvio-ingest" -q -o "$T/demo.rt.db" --pftrace "$T/demo.pftrace"
python3 tests/model_report.py "$T/demo.db" "$BUILD/kvio" --qd1-objects > "$T/demo.model"
eq "demo: the model finds serialized loads in the stock arm, none in the batched arm" "yes 0" \
	"$([ "$(grep -c '^stock qd1_load ' "$T/demo.model")" -gt 20 ] && echo yes) $(grep -c '^batched ' "$T/demo.model")"
eq "demo: the QD~1 load slices are the model's serialized stock loads (trace_ids, one object each)" \
	"$(awk '$1 == "stock" && $2 == "qd1_load" {print $3}' "$T/demo.model" | sort -n | tr '\n' ' ')" \
	"$(q "$T/demo.rt.db" "SELECT extract_arg(arg_set_id, 'debug.trace_id') FROM ($FS) WHERE label = 'stock' AND track = 'QD~1 load'
	   AND extract_arg(arg_set_id, 'debug.n_objects') = 1" | sort -n | tr '\n' ' ')"
eq "demo: no QD~1 slice in the batched arm" "0" "$(q "$T/demo.rt.db" "SELECT count(*) FROM ($FS) WHERE label = 'batched' AND track LIKE 'QD~1%'")"
eq "demo: read back = findings.sql's rows, flows to the objects" "ok" "$(same_findings "$T/demo.db" "$T/demo.rt.db" | cut -d' ' -f1)"
ok "demo: pfwire structure" python3 tests/pfwire.py check "$T/demo.pftrace"
"$BUILD/kvio-report" "$T/demo.db" --json > "$T/demo.json"
ok "demo: the report's findings counts = the model's" python3 tests/model_report.py "$T/demo.db" "$BUILD/kvio" "$T/demo.json"

# a capture without completions: no QD~1 by service time; the report's "suspicious" rule
# (gap p50 >= 40 us) instead, on its own track
grep -v '"nvme_cmp"' "$T/stock.ebpf.jsonl" > "$T/nc.ebpf.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/nc.db" --sem "$T/stock.sem.jsonl" --ebpf "$T/nc.ebpf.jsonl" 2>/dev/null
"$BUILD/kvio-export" "$T/nc.db" -o "$T/nc.pftrace" > /dev/null && "$BUILD/kvio-ingest" -q -o "$T/nc.rt.db" --pftrace "$T/nc.pftrace"
python3 tests/model_report.py "$T/nc.db" "$BUILD/kvio" --qd1-objects > "$T/nc.model"
eq "no completions: the model's suspicious loads, none by service time" "yes 0" \
	"$([ "$(grep -c ' qd1_load_suspicious ' "$T/nc.model")" -gt 20 ] && echo yes) $(grep -c ' qd1_load ' "$T/nc.model")"
eq "no completions: the QD~1? load track holds them; no QD~1 load, no QD<=1 track" \
	"$(grep -c ' qd1_load_suspicious ' "$T/nc.model") 0 0" \
	"$(q "$T/nc.rt.db" "SELECT (SELECT sum(extract_arg(arg_set_id, 'debug.n_objects')) FROM ($FS) WHERE track = 'QD~1? load')
	  || ' ' || (SELECT count(*) FROM ($FS) WHERE track IN ('QD~1 load', 'QD<=1')) || ' ' || (SELECT count(*) FROM ($FS) WHERE name NOT LIKE 'QD~1? load%' AND track LIKE 'QD~1%')")"
"$BUILD/kvio-report" "$T/nc.db" --json > "$T/nc.json" 2>/dev/null
ok "no completions: the report's findings counts = the model's" python3 tests/model_report.py "$T/nc.db" "$BUILD/kvio" "$T/nc.json"
eq "no completions: read back = findings.sql's rows" "ok" "$(same_findings "$T/nc.db" "$T/nc.rt.db" | cut -d' ' -f1)"

# a window: the findings of the window's commands and objects (as kvio-report --time-range
# counts them), flows only to the objects the window keeps
"$BUILD/kvio-export" "$T/demo.db" -o "$T/w.pftrace" --time-range 0.1,0.2 > /dev/null && "$BUILD/kvio-ingest" -q -o "$T/w.db" --pftrace "$T/w.pftrace"
ok "window: pfwire structure (no flow to an object left out)" python3 tests/pfwire.py check "$T/w.pftrace"
"$BUILD/kvio-report" "$T/demo.db" --json --time-range 0.1,0.2 > "$T/w.json"
eq "window: the finding slices are as many as the report's counts of the window" \
	"$(python3 -c "import json; d=json.load(open('$T/w.json')); print(sum(n for l in d.values() for n in l['findings'].values()))")" \
	"$(q "$T/w.db" "SELECT count(*) FROM ($FS)")"

# kvio2perfetto: ingest + export, findings included; --no-findings as kvio-export's
"$BUILD/kvio2perfetto" -q --merge a=$F/a.sem.jsonl,$F/a.ebpf.jsonl,$F/a.serving.jsonl --merge b=$F/b.sem.jsonl,$F/b.ebpf.jsonl -o "$T/k2p.pftrace"
"$BUILD/kvio2perfetto" -q --no-findings --merge a=$F/a.sem.jsonl,$F/a.ebpf.jsonl,$F/a.serving.jsonl --merge b=$F/b.sem.jsonl,$F/b.ebpf.jsonl -o "$T/k2p0.pftrace"
eq "kvio2perfetto: byte-identical to ingest + export, with and without findings" "same same" \
	"$(cmp -s "$T/k2p.pftrace" "$T/fab.pftrace" && echo same) $(cmp -s "$T/k2p0.pftrace" "$T/fab0.pftrace" && echo same)"

# the findings' SQL fails (an edited copy through KVIO_SQL_DIR, as kvio-report reads it):
# one line naming the file, exit 2, nothing written
mkdir -p "$T/badsql" && cp sql/*.sql "$T/badsql/" && echo "SELECT no_such_function();" >> "$T/badsql/findings.sql"
KVIO_SQL_DIR="$T/badsql" "$BUILD/kvio-export" "$AB" -o "$T/bad.pftrace" > /dev/null 2> "$T/bad.err"
eq "the findings' SQL fails: exit 2, one line naming sql/findings.sql, no trace" "2 1 1 no" \
	"$? $(wc -l < "$T/bad.err") $(grep -c '^kvio-export: sql/findings.sql: no such function: no_such_function$' "$T/bad.err") $([ -e "$T/bad.pftrace" ] && echo yes || echo no)"

# the findings' four command gathers (kvio_qd1_gap, kvio_latency, kvio_qd, kvio_batch) come from
# one pass (prelude.sql's kvio_pool_gather, its row filters as kvio_where): the same trace, byte
# for byte, as their four passes of their own (a findings.sql without that statement: each fill
# view gathers as kvio-report's files do)
mkdir -p "$T/sep" && cp sql/*.sql "$T/sep/" && grep -v "FROM kvio_pool_gather;" sql/findings.sql > "$T/sep/findings.sql"
eq "findings.sql without the one pass differs from findings.sql by that statement only" "1" \
	"$(diff sql/findings.sql "$T/sep/findings.sql" | grep -c '^<')"
for c in "fab:$AB" "demo:$T/demo.db" "nc:$T/nc.db" "w:$T/demo.db --time-range 0.1,0.2" "g1:$AB --batch-gap-us 1000"; do
	n=${c%%:*}
	# shellcheck disable=SC2086
	"$BUILD/kvio-export" -q ${c#*:} -o "$T/p1.$n.pftrace"
	r1=$?
	# shellcheck disable=SC2086
	KVIO_SQL_DIR="$T/sep" "$BUILD/kvio-export" -q ${c#*:} -o "$T/p4.$n.pftrace"
	r4=$?
	eq "findings' gathers in one pass or four ($n): exit 0, byte-identical, findings written" "0 0 same yes" \
		"$r1 $r4 $(cmp -s "$T/p1.$n.pftrace" "$T/p4.$n.pftrace" && echo same) $(grep -q 'kvio findings' "$T/p1.$n.pftrace" && echo yes)"
done
for v in kvio_qd_fill kvio_pool_gather; do
	mkdir -p "$T/bad$v" && cp sql/*.sql "$T/bad$v/"
	printf 'DROP VIEW temp.%s;\nCREATE TEMP VIEW %s AS SELECT no_such_function() AS k, 1, 2, 3, 4;\n' "$v" "$v" >> "$T/bad$v/prelude.sql"
	KVIO_SQL_DIR="$T/bad$v" "$BUILD/kvio-export" "$AB" -o "$T/bad$v.pftrace" > /dev/null 2> "$T/bad$v.err"
	eq "a gather fails ($v): exit 2, one line naming sql/findings.sql, no trace" "2 1 1 no" \
		"$? $(wc -l < "$T/bad$v.err") $(grep -c '^kvio-export: sql/findings.sql: no such function: no_such_function$' "$T/bad$v.err") $([ -e "$T/bad$v.pftrace" ] && echo yes || echo no)"
done
