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
