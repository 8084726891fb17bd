# --time-range, --trace-id and --no-slba-counter at ingest (and kvio2perfetto),
# on fixtures/tiny (its timeline is laid out in t_20_ingest_tiny.sh; rebased ns):
#   A write tid 1 [50000000, 50050000]   B write tid 1 [50010000, 50090000]
#   C read  tid 2 [550000000, 550100000] D read  tid 2 [550200000, 550208000]
#   E read untagged [650000000, +20000]  F write tid 4294967295 [800000000, +8000]
#   store tid 1 [0, 250000000]  load tid 2 [500000000, 750000000]  delete tid 3 instant 875000000
# A window keeps what overlaps it, both edges inclusive.
tiny() { o=$1; shift; "$BUILD/kvio-ingest" -q -o "$o" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl "$@"; }
cmds() { q "$1" "select ts from slice where name in ('read','write') order by ts" | tr '\n' ' ' | sed 's/ $//'; }
objs() { q "$1" "select s.name from slice s join process_track pt on s.track_id = pt.id where pt.name like 'objects.%' or s.name like '%no device%' order by s.ts" | tr '\n' '|' | sed 's/|$//'; }
flows() { q "$1" "select o.ts || '>' || i.ts from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in order by i.ts, o.ts" | tr '\n' ' ' | sed 's/ $//'; }

# lo = 50050000 = A's end exactly, hi = 550200000 = D's start exactly: both kept
W=$T/w1.db; tiny "$W" --time-range 0.05005,0.5502 >/dev/null
eq "window: commands touching each edge are kept (A ends at lo, D starts at hi); E, F after hi are not" \
	"50000000 50010000 550000000 550200000" "$(cmds "$W")"
eq "window: store and load overlap, delete at 875 ms is outside" "store kv 0.2MiB|load kv 0.2MiB" "$(objs "$W")"
eq "window: all four flows have both ends inside" "0>50000000 50000000>50010000 500000000>550000000 550000000>550200000" "$(flows "$W")"
# 1 us and 0.1 us inside: A (ends 1 us before lo) and D (starts 0.1 us after hi) fall out
W=$T/w2.db; tiny "$W" --time-range 0.050051,0.5501999 >/dev/null
eq "window: a slice ending just before lo and one starting just after hi are dropped" "50010000 550000000" "$(cmds "$W")"
eq "window: flows with one end outside are dropped (store>A, A>B, C>D), load>C stays" "500000000>550000000" "$(flows "$W")"
eq "window: B alone keeps the single 'writes' track (lanes of the window)" "writes" \
	"$(q "$W" "select pt.name from slice s join process_track pt on s.track_id = pt.id where s.name = 'write'")"
eq "window: counters keep their points inside the window (cmds/ms 51 ms zero, 550 ms = 2)" "51000000|0.0 550000000|2.0" \
	"$(q "$W" "select c.ts || '|' || c.value from counter c join counter_track t on c.track_id = t.id where t.name = 'cmds/ms' order by c.ts" | tr '\n' ' ' | sed 's/ $//')"
eq "window: ingest statistics describe the input, emitted_* the window" \
	"emitted_cmds=2 emitted_object_instants=0 emitted_object_spans=2 emitted_serving_spans=0 nvme_cmd_lines=6 sem_records=3" \
	"$(q "$W" "select name || '=' || value from kvio_stats where name like 'emitted%' or name in ('nvme_cmd_lines','sem_records') order by name" | tr '\n' ' ' | sed 's/ $//')"
eq "window: metadata records the window (ns) and the join" "kvio_join||user_data kvio_time_range_end_ns|550199900| kvio_time_range_start_ns|50051000|" \
	"$(q "$W" "select name || '|' || coalesce(int_value, '') || '|' || coalesce(str_value, '') from metadata where name like 'kvio_%' and name <> 'kvio_schema_version' order by name" | tr '\n' ' ' | sed 's/ $//')"
eq "window: the summary states input and emitted counts" "  emitted : 2 object spans, 0 object instants, 2 command slices, 0 serving spans" \
	"$("$BUILD/kvio-ingest" -o "$T/w3.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl --time-range 0.050051,0.5501999 | grep emitted)"

# --trace-id: single and range; untagged (E) and tid 4294967295 (F) never in 1-3
W=$T/t1.db; tiny "$W" --trace-id 2 >/dev/null
eq "trace-id 2: its two reads and its load only" "550000000 550200000|load kv 0.2MiB" "$(cmds "$W")|$(objs "$W")"
eq "trace-id 2: its flows" "500000000>550000000 550000000>550200000" "$(flows "$W")"
eq "trace-id 2: the rate counters count its commands (cmds/ms 2 at 550 ms)" "550000000|2.0 551000000|0.0" \
	"$(q "$W" "select c.ts || '|' || c.value from counter c join counter_track t on c.track_id = t.id where t.name = 'cmds/ms' order by c.ts" | tr '\n' ' ' | sed 's/ $//')"
W=$T/t2.db; tiny "$W" --trace-id=1-3 >/dev/null
eq "trace-id 1-3: A-D, no untagged E, no F" "50000000 50010000 550000000 550200000" "$(cmds "$W")"
eq "trace-id 1-3: the delete instant (tid 3) too" "store kv 0.2MiB|load kv 0.2MiB|delete (no device cmds)" "$(objs "$W")"
eq "trace-id 1-3: metadata" "1-3" "$(q "$W" "select (select int_value from metadata where name = 'kvio_trace_id_lo') || '-' || (select int_value from metadata where name = 'kvio_trace_id_hi')")"
W=$T/t3.db; tiny "$W" --trace-id 2 --time-range 0,0.5501 >/dev/null
eq "trace-id 2 + window: both filters" "550000000" "$(cmds "$W")"
# per arm under --merge: each arm is rebased to 0, the same window applies to both
"$BUILD/kvio-ingest" -q -o "$T/m.db" --merge a=fixtures/tiny/sem.jsonl,fixtures/tiny/ebpf.jsonl \
	--merge b=fixtures/tiny/sem.jsonl,fixtures/tiny/ebpf.jsonl --trace-id 2
eq "trace-id under --merge: applies to every arm" "4" "$(q "$T/m.db" "select count(*) from slice where name = 'read'")"

# usage errors: exit 2, one line, no database
for bad in "--time-range 2,1" "--time-range a,1" "--time-range 1,1" "--time-range 1," "--time-range inf,2" "--trace-id 3-2" "--trace-id x" "--trace-id 1-"; do
	rm -f "$T/bad.db"
	# shellcheck disable=SC2086
	"$BUILD/kvio-ingest" -q -o "$T/bad.db" --sem fixtures/tiny/sem.jsonl $bad 2>"$T/bad.err"
	eq "usage error: $bad -> exit 2, one line, no database" "2 1 no" "$? $(wc -l < "$T/bad.err") $([ -e "$T/bad.db" ] && echo yes || echo no)"
done

# --no-slba-counter: no slba counter tracks or points; everything else the same
W=$T/ns.db; tiny "$W" --no-slba-counter >/dev/null
eq "no-slba-counter: no slba tracks, no slba points" "0 0" \
	"$(q "$W" "select count(*) from counter_track where name like '%slba'") $(q "$W" "select count(*) from counter c join counter_track t on t.id = c.track_id where t.unit = 'LBA'")"
eq "no-slba-counter: the commands keep their slba arg" "10|11|11|43|0|100" \
	"$(q "$W" "select extract_arg(arg_set_id, 'debug.slba') from slice where name in ('read','write') order by ts" | tr '\n' '|' | sed 's/|$//')"
"$BUILD/kvio2perfetto" -q --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl --no-slba-counter --trace-id 2 -o "$T/ns.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/ns.rt.db" --pftrace "$T/ns.pftrace"
eq "kvio2perfetto --no-slba-counter --trace-id 2: two reads, no slba track in the file" "550000000 550200000|0" \
	"$(cmds "$T/ns.rt.db")|$(q "$T/ns.rt.db" "select count(*) from counter_track where name like '%slba'")"
ok "kvio2perfetto window file: pfwire structure" python3 tests/pfwire.py check "$T/ns.pftrace"

# kvio-export --time-range / --trace-id on an existing database: the same
# selection as at ingest (second method: the ingest-side filter; --no-findings:
# the findings' own flows are t_51_findings.sh's), and only
# the chunks that can hold the window are read (a damaged chunk outside it
# does not matter; the full export names it)
"$BUILD/kvio-ingest" -q -o "$T/full.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
rt() { "$BUILD/kvio-ingest" -q -o "$2" --pftrace "$1"; }
"$BUILD/kvio-export" "$T/full.db" -o "$T/xw.pftrace" --time-range 0.050051,0.5501999 --no-findings >/dev/null
eq "export window: exit 0" 0 $?
ok "export window: pfwire structure (flows start and end once)" python3 tests/pfwire.py check "$T/xw.pftrace"
rt "$T/xw.pftrace" "$T/xw.db"
eq "export window: commands as the ingest window (B, C)" "$(cmds "$T/w2.db")" "$(cmds "$T/xw.db")"
eq "export window: objects and flows as the ingest window" "$(objs "$T/w2.db")|$(flows "$T/w2.db")" "$(objs "$T/xw.db")|$(flows "$T/xw.db")"
eq "export window: capture_info kept, the delete instant and E, F not" "1|0|0" \
	"$(q "$T/xw.db" "select count(*) from slice where name = 'capture_info'")|$(q "$T/xw.db" "select count(*) from slice where name like 'delete%'")|$(q "$T/xw.db" "select count(*) from slice where ts >= 650000000 and name in ('read','write')")"
"$BUILD/kvio-export" "$T/full.db" -o "$T/xt.pftrace" --trace-id 1-3 --no-findings >/dev/null && rt "$T/xt.pftrace" "$T/xt.db"
eq "export trace-id 1-3: as the ingest's" "$(cmds "$T/t2.db")|$(objs "$T/t2.db")|$(flows "$T/t2.db")" "$(cmds "$T/xt.db")|$(objs "$T/xt.db")|$(flows "$T/xt.db")"
"$BUILD/kvio-export" "$T/full.db" -o "$T/xbad.pftrace" --time-range 3,2 2>"$T/xbad.err"
eq "export: --time-range 3,2 is a usage error, nothing written" "2 1 no" "$? $(wc -l < "$T/xbad.err") $([ -e "$T/xbad.pftrace" ] && echo yes || echo no)"

"$BUILD/kvio-gen" --sem "$T/gw.sem.jsonl" --ebpf "$T/gw.ebpf.jsonl" --lines 40000 --mode batched 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/gw.db" --sem "$T/gw.sem.jsonl" --ebpf "$T/gw.ebpf.jsonl"
# brute force over the virtual table (every command) before damaging anything
N50=$(q "$T/gw.db" "select count(*) from kvio_cmd where ts <= 50000000 and ts + dur >= 0")
NT=$(q "$T/gw.db" "select count(*) from kvio_cmd where trace_id between 300 and 302")
eq "export window fixture: three chunks, the first alone reaches below 50 ms, the last alone holds trace_id >= 300" "3 1 1" \
	"$(q "$T/gw.db" "select count(*) from kvio_cmd_range") $(q "$T/gw.db" "select count(*) from kvio_cmd_range where ts_min <= 50000000") $(q "$T/gw.db" "select count(*) from kvio_cmd_range where tid_max >= 300")"
cp "$T/gw.db" "$T/gw1.db"
q "$T/gw1.db" "update kvio_cmd_chunk set data = x'00' where id <> (select min(id) from kvio_cmd_chunk)" >/dev/null
"$BUILD/kvio-export" "$T/gw1.db" -o "$T/gw1.pftrace" --time-range 0,0.05 >/dev/null 2>"$T/gw1.err"
eq "export window reads only its chunks (two damaged chunks outside it)" "0" "$?"
rt "$T/gw1.pftrace" "$T/gw1.rt.db"
eq "export window: as many commands as a brute-force count over every command" "$N50" \
	"$(q "$T/gw1.rt.db" "select count(*) from slice where name in ('read','write')")"
"$BUILD/kvio-export" "$T/gw1.db" -o "$T/gw1f.pftrace" >/dev/null 2>&1
eq "export without a window reads every chunk (and names the damaged one: exit 2)" "2" "$?"
cp "$T/gw.db" "$T/gw2.db"
q "$T/gw2.db" "update kvio_cmd_chunk set data = x'00' where id <> (select max(id) from kvio_cmd_chunk)" >/dev/null
"$BUILD/kvio-export" "$T/gw2.db" -o "$T/gw2.pftrace" --trace-id 300-302 >/dev/null && rt "$T/gw2.pftrace" "$T/gw2.rt.db"
eq "export --trace-id 300-302 reads only the chunk holding them; count as brute force" "$NT" \
	"$(q "$T/gw2.rt.db" "select count(*) from slice where name in ('read','write')")"

# a read error inside the window's first chunk (an overflow page of its blob, found with
# dbstat) is named with the chunk and SQLite's reason, on one line (it said "reading flows: failed")
pg=$(sqlite3 "$T/gw.db" "select pageno from dbstat where name = 'kvio_cmd_chunk' and pagetype = 'overflow' order by path limit 1")
cp "$T/gw.db" "$T/gw5.db"
python3 -c "f = open('$T/gw5.db', 'r+b'); f.seek(($pg - 1) * 65536); f.write(b'\xff' * 64)"
"$BUILD/kvio-export" "$T/gw5.db" -o "$T/gw5.pftrace" --time-range 0,0.05 > /dev/null 2>"$T/gw5.err"
eq "export window: a damaged page of a chunk it reads: exit 2, one line with SQLite's reason, no trace" \
	"2 1 1 no" "$? $(wc -l < "$T/gw5.err") $(grep -c 'gw5.db: database damaged or not written by kvio: kvio_cmd_chunk 1: database disk image is malformed' "$T/gw5.err") $([ -e "$T/gw5.pftrace" ] && echo yes || echo no)"

# kvio-report's window reads only the chunks whose extent meets it, too: the
# damaged chunks outside it are never read (exit 0), and the metrics are those of
# the undamaged database; a copy without kvio_cmd_range (the chunks' directory) is damaged
"$BUILD/kvio-report" "$T/gw.db" --json --time-range 0,0.05 > "$T/gwr.json"
"$BUILD/kvio-report" "$T/gw1.db" --json --time-range 0,0.05 > "$T/gwr1.json"
eq "report window skips the chunks outside it (two damaged there): exit 0, same JSON" "0 same" \
	"$? $(cmp -s "$T/gwr.json" "$T/gwr1.json" && echo same || echo differs)"
cp "$T/gw.db" "$T/gw3.db"
q "$T/gw3.db" "drop table kvio_cmd_range" >/dev/null
"$BUILD/kvio-report" "$T/gw3.db" --json --time-range 0,0.05 > "$T/gwr3.json" 2> "$T/gwr3.err"
eq "report without kvio_cmd_range: exit 2, the directory named missing, no JSON" "2 1 0" \
	"$? $(grep -c 'gw3.db: database damaged or not written by kvio: kvio_cmd_range is missing' "$T/gwr3.err") $(wc -c < "$T/gwr3.json")"
"$BUILD/kvio-report" "$T/gw.db" --json --trace-id 300-302 > "$T/gwt.json"
"$BUILD/kvio-report" "$T/gw2.db" --json --trace-id 300-302 > "$T/gwt2.json"
eq "report --trace-id 300-302 reads only the chunk holding them: exit 0, same JSON" "0 same" \
	"$? $(cmp -s "$T/gwt.json" "$T/gwt2.json" && echo same || echo differs)"
eq "report window fixture: the window's commands counted by brute force" "$N50" \
	"$(python3 -c "import json; print(json.load(open('$T/gwr.json'))['capture']['commands']['n'])")"

# kvio-report --time-range / --trace-id: the metrics of the window only. By hand for
# [50051000, 550199900] on tiny: B (write, 80 us, 128 KiB) and C (read, 100 us, 128 KiB);
# wall = C's end - B's ts = 550100000 - 50010000 = 500090000 ns; qd mean = (80000 + 100000) / wall;
# store pre-submit = B - 0 = 50010000, load's = C - 500000000 = 50000000
"$BUILD/kvio-report" "$T/full.db" --time-range 0.050051,0.5501999 --json > "$T/rw.json"
eq "report window by hand: n, tagged bytes, wall, write/read p50, qd mean, pre-submit, time_range, join" \
	"2 262144 500090000 80000 100000 0.0003599352 50010000 50000000 [0.050051, 0.5501999] user_data" \
	"$(python3 -c "
import json; d = json.load(open('$T/rw.json'))['capture']; c = d['commands']; o = d['objects']
print(c['n'], c['tagged_bytes'], c['wall_ns'], d['lat_write']['p50'], d['lat_read']['p50'], round(d['qd']['mean'], 10),
      o['store']['presubmit_p50'], o['load']['presubmit_p50'], d['capture']['time_range'], d['capture']['join'])")"
"$BUILD/kvio-report" "$T/full.db" --trace-id 2 --json > "$T/rt.json"
eq "report trace-id 2 by hand: two reads, latency of the real one only (D is nominal), no writes, no store, capture.trace_id" "2 1 0 [2, 2] None" \
	"$(python3 -c "
import json; d = json.load(open('$T/rt.json'))['capture']
print(d['commands']['n'], d['lat_read']['n'], d.get('lat_write', {}).get('n', 0), d['capture']['trace_id'], d['objects'].get('store'))")"
eq "report of an ingest-window database: the capture section says the window (text)" \
	"  window  : time [0.050051, 0.5501999] s (the metrics describe this window only)" \
	"$("$BUILD/kvio-report" "$T/w2.db" | grep '^  window')"
eq "report without a window: no window keys" "user_data False False" \
	"$("$BUILD/kvio-report" "$T/full.db" --json | python3 -c "import json,sys; c = json.load(sys.stdin)['capture']['capture']; print(c['join'], 'time_range' in c, 'trace_id' in c)")"
"$BUILD/kvio-report" "$T/full.db" --time-range 5,6 > /dev/null 2>"$T/re.err"
eq "report of an empty window: exit 1 (unusable), one line naming the window" \
	"1 kvio-report: $T/full.db: the --time-range 5,6 window holds no command or object slice: nothing to report" "$? $(cat "$T/re.err")"
# An empty window (tiny ends at 875 ms; no tag 99999) is exit 1 and one line naming it from every command
tiny "$T/ew.db" --time-range 100,200 > /dev/null 2>"$T/ew.err"
eq "ingest of an empty window: exit 1, the database written, one line naming the window" \
	"1 yes [capture] the --time-range 100,200 window holds no command or object: $T/ew.db holds nothing to report (exit 1)" \
	"$? $([ -f "$T/ew.db" ] && echo yes) $(sed 's/^kvio-ingest: //' "$T/ew.err")"
tiny "$T/ewt.db" --trace-id 99999 > /dev/null 2>"$T/ewt.err"
eq "ingest of an empty --trace-id window: exit 1, one line naming it" \
	"1 [capture] the --trace-id 99999 window holds no command or object: $T/ewt.db holds nothing to report (exit 1)" \
	"$? $(sed 's/^kvio-ingest: //' "$T/ewt.err")"
"$BUILD/kvio-report" "$T/ew.db" > /dev/null 2>"$T/ewr.err"
eq "report of an empty-window ingest: exit 1, says the ingest's window was empty (not the input)" \
	"1 kvio-report: $T/ew.db: no kvio command or object slices: the ingest's --time-range 100,200 window held none" \
	"$? $(cat "$T/ewr.err")"
"$BUILD/kvio-export" "$T/full.db" -o "$T/ew.pftrace" --time-range 100,200 > /dev/null 2>"$T/ewx.err"
eq "export of an empty window: exit 1, the trace written, one line naming the window" \
	"1 yes kvio-export: $T/full.db: the --time-range 100,200 window holds no command or object: $T/ew.pftrace holds nothing to look at (exit 1)" \
	"$? $([ -f "$T/ew.pftrace" ] && echo yes) $(cat "$T/ewx.err")"
"$BUILD/kvio2perfetto" -q -o "$T/ew2.pftrace" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl --trace-id 99999 > /dev/null 2>"$T/ew2.err"
eq "kvio2perfetto of an empty window: exit 1, nothing written (its rule for exit 1), one line" \
	"1 no 1" "$? $([ -f "$T/ew2.pftrace" ] && echo yes || echo no) $(grep -c "the --trace-id 99999 window holds no command or object: nothing to convert, $T/ew2.pftrace not written (exit 1)" "$T/ew2.err")"
"$BUILD/kvio-report" "$T/full.db" --trace-id 9-1 > /dev/null 2>&1
eq "report: --trace-id 9-1 is a usage error" "2" "$?"
# second methods on a generated capture: kvio-report --time-range of the whole database =
# kvio-report of the ingest-window database (same slices) = tests/model_report.py on that database
"$BUILD/kvio-ingest" -q -o "$T/gwin.db" --sem "$T/gw.sem.jsonl" --ebpf "$T/gw.ebpf.jsonl" --time-range 0.03,0.09
nocap() { python3 -c 'import json,sys; d=json.load(sys.stdin); [v.pop("capture", None) for v in d.values()]; print(json.dumps(d, sort_keys=True))'; }
eq "report --time-range of the whole database = report of the ingest-window database (but capture)" \
	"$("$BUILD/kvio-report" "$T/gw.db" --time-range 0.03,0.09 --json | nocap)" "$("$BUILD/kvio-report" "$T/gwin.db" --json | nocap)"
"$BUILD/kvio-report" "$T/gwin.db" --json > "$T/gwin.json"
ok "model = kvio-report on an ingest-window database" python3 tests/model_report.py "$T/gwin.db" "$BUILD/kvio" "$T/gwin.json"
"$BUILD/kvio-ingest" -q -o "$T/gtid.db" --sem "$T/gw.sem.jsonl" --ebpf "$T/gw.ebpf.jsonl" --trace-id 40-120
"$BUILD/kvio-report" "$T/gtid.db" --json > "$T/gtid.json"
ok "model = kvio-report on an ingest --trace-id database" python3 tests/model_report.py "$T/gtid.db" "$BUILD/kvio" "$T/gtid.json"
eq "report --trace-id of the whole database = report of the ingest --trace-id database (but capture)" \
	"$("$BUILD/kvio-report" "$T/gw.db" --trace-id 40-120 --json | nocap)" "$(nocap < "$T/gtid.json")"
