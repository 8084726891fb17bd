# .pftrace export and import: structure (an independent decoder, tests/pfwire.py,
# and protoc --decode against lib/kvio.proto), and the round trip
# ingest -> export -> ingest --pftrace compared table by table (tests/canon.sql).
canon() { sqlite3 -batch -cmd ".load $BUILD/kvio" "$1" ".read tests/canon.sql"; }

# KV-mode commands (NVMe Key-Value namespaces): key_hex/key_len/value_len, no slba;
# then a write on the store's lane (its sequence has no default slba counter
# track, so the write's slba point names its track itself)
printf '%s\n' \
 '{"event_type":"nvme_cmd","user_data":4294967296,"op_name":"store","key_hex":"6b6579","key_len":3,"value_len":4096,"data_len":4096,"ts":1000}' \
 '{"event_type":"nvme_cmp","user_data":4294967296,"ts":6000}' \
 '{"event_type":"nvme_cmd","user_data":4294967297,"op_name":"retrieve","key_hex":"6b6579","key_len":3,"value_len":4096,"data_len":4096,"ts":9000}' \
 '{"event_type":"nvme_cmd","user_data":4294967298,"op_name":"write","slba":77,"data_len":4096,"ts":20000}' \
 > "$T/kv.ebpf.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/kv.db" --ebpf "$T/kv.ebpf.jsonl"
"$BUILD/kvio-gen" --sem "$T/g.sem.jsonl" --ebpf "$T/g.ebpf.jsonl" --serving "$T/g.srv.jsonl" --lines 20000 --mode batched --ranks 2
"$BUILD/kvio-ingest" -q -o "$T/g.db" --merge "g=$T/g.sem.jsonl,$T/g.ebpf.jsonl,$T/g.srv.jsonl" --merge "tiny=fixtures/tiny/sem.jsonl,fixtures/tiny/ebpf.jsonl"

for db in tiny ab kv g; do
	"$BUILD/kvio-export" "$T/$db.db" -o "$T/$db.pftrace" >/dev/null
	eq "export $db: exit 0" 0 $?
	ok "export $db: pfwire structure (BEGIN/END pairs, no overlap, flows start and end once, seq ids, timestamps)" \
		python3 tests/pfwire.py check "$T/$db.pftrace"
	ok "export $db: protoc --decode against lib/kvio.proto" \
		sh -c "protoc --decode=kvio.pf.Trace --proto_path=lib lib/kvio.proto < '$T/$db.pftrace' > '$T/$db.txt'"
	"$BUILD/kvio-ingest" -q -o "$T/$db.rt.db" --pftrace "$T/$db.pftrace"
	eq "export $db: ingest --pftrace exit 0" 0 $?
	canon "$T/$db.db" > "$T/$db.canon"
	# the findings group (tests/t_51_findings.sh checks it) is the trace's addition
	canon "$T/$db.rt.db" | grep -v 'kvio findings' > "$T/$db.rt.canon"
	eq "round trip $db: same processes, tracks, slices, args, flows, counters" "" "$(diff "$T/$db.canon" "$T/$db.rt.canon" | head -5)"
done
eq "round trip kv: the write's slba point on its lane, back as a counter" "writes slba|19000|77.0" \
	"$(q "$T/kv.rt.db" "select t.name, c.ts, c.value from counter c join counter_track t on t.id = c.track_id where t.name like '%slba'")"
eq "round trip g: the comparison covers every table" "arg=1 counter=1 flow=1 process=1 slice=1 track=1" \
	"$(cut -d'|' -f1 "$T/g.canon" | sort | uniq -c | awk '{printf "%s%s=%d", (NR > 1 ? " " : ""), $2, ($1 > 0)}')"
eq "round trip g: report JSON equal after the round trip (but capture bookkeeping)" \
	"$("$BUILD/kvio-report" "$T/g.db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); [v.pop("capture", None) for v in d.values()]; print(json.dumps(d, sort_keys=True))')" \
	"$("$BUILD/kvio-report" "$T/g.rt.db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); [v.pop("capture", None) for v in d.values()]; print(json.dumps(d, sort_keys=True))')"
eq "export kv: KV args survive" "6b6579|3|4096|store
6b6579|3|4096|retrieve" \
	"$(q "$T/kv.rt.db" "select extract_arg(arg_set_id,'debug.key_hex'), extract_arg(arg_set_id,'debug.key_len'), extract_arg(arg_set_id,'debug.value_len'), name from slice where name in ('store', 'retrieve') order by ts")"
# interning: names and annotation names are interned (the role strings too)
# (each command lane is its own sequence: names are interned once per sequence)
interned() { # FIELD: "total duplicates" of InternedData entries (iid, name) per sequence
python3 -c "
import sys; sys.path.insert(0, 'tests'); import pfwire
seen = {}; dup = 0
for p in pfwire.packets(sys.argv[1]):
    fl = list(pfwire.fields(p)); seq = [v for f, _, v in fl if f == 10]
    for f, _, v in fl:
        if f != 12: continue
        for g, _, w in pfwire.fields(v):
            if g != int(sys.argv[2]): continue
            name = [x for h, _, x in pfwire.fields(w) if h == 2][0]
            k = (seq[0] if seq else None, name); dup += k in seen; seen[k] = 1
print(len(seen), dup)" "$T/tiny.pftrace" "$1"
}
eq "export tiny: event names interned once per sequence (5 sequences; write on 4 of them)" "0 4" \
	"$(interned 2 | cut -d' ' -f2) $(grep -c 'name: "write"' "$T/tiny.txt")"
eq "export tiny: no inline event or annotation names" "0 0" \
	"$(python3 -c "
import sys; sys.path.insert(0, 'tests'); import pfwire
ev = an = 0
for p in pfwire.packets(sys.argv[1]):
    for f, wt, v in pfwire.fields(p):
        if f != 11: continue
        for g, _, w in pfwire.fields(v):
            ev += g == 23
            if g == 4: an += any(h == 10 for h, _, _ in pfwire.fields(w))
print(ev, an)" "$T/tiny.pftrace")"
eq "export tiny: role strings interned, once per sequence" "0 8" \
	"$(interned 29 | cut -d' ' -f2) $(grep -c 'str: "\(header\|payload\)"' "$T/tiny.txt")"

# gzip
"$BUILD/kvio-export" "$T/tiny.db" -o "$T/tiny.pftrace.gz" >/dev/null
eq "export .gz: gzip magic" "1f8b" "$(head -c 2 "$T/tiny.pftrace.gz" | od -An -tx1 | tr -d ' \n')"
eq "export .gz: same packets" "$(md5sum < "$T/tiny.pftrace")" "$(gzip -dc "$T/tiny.pftrace.gz" | md5sum)"

# kvio2perfetto = kvio-ingest + kvio-export
"$BUILD/kvio2perfetto" -q --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl -o "$T/one.pftrace"
eq "kvio2perfetto: exit 0" 0 $?
"$BUILD/kvio-ingest" -q -o "$T/two.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
"$BUILD/kvio-export" "$T/two.db" -o "$T/two.pftrace" >/dev/null
eq "kvio2perfetto: byte-identical to ingest + export" "$(md5sum < "$T/two.pftrace")" "$(md5sum < "$T/one.pftrace")"
eq "kvio2perfetto: leaves nothing beside its output" "0" "$(ls "$T" | grep -c '^one.pftrace.')"

# a file shaped like the reference converter's (inline names, no interning)
python3 tests/pfwire.py refstyle "$T/ref.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/ref.db" --pftrace "$T/ref.pftrace"
eq "import reference-style: exit 0" 0 $?
# two writes at 100000 (dur 50000, header) and 200000 (dur 8000), one object 0..1 ms
eq "import reference-style: commands land in kvio_cmd" "100000|50000|header|1 200000|8000|payload|0" \
	"$(q "$T/ref.db" "select ts || '|' || dur || '|' || role || '|' || real_dur from kvio_cmd order by ts" | tr '\n' ' ' | sed 's/ $//')"
eq "import reference-style: object and flows" "1000000|2" \
	"$(q "$T/ref.db" "select (select dur from slice where name like 'store%'), (select count(*) from flow)")"
eq "import reference-style: report reads it" '{"n": 2, "real_cover": 0.5, "tagged": 2, "tagged_bytes": 135168, "untagged": 0, "wall_ns": 108000}' \
	"$("$BUILD/kvio-report" "$T/ref.db" --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["ref"]["commands"], sort_keys=True))')"

# bad input
head -c 100 "$T/tiny.pftrace" > "$T/cut.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/cut.db" --pftrace "$T/cut.pftrace" 2>"$T/cut.err"
eq "import truncated: exit 2" 2 $?
eq "import truncated: one line naming the byte offset" 1 "$(grep -c 'cut.pftrace: truncated at byte' "$T/cut.err")"
eq "import truncated: no database left" absent "$([ -e "$T/cut.db" ] && echo present || echo absent)"
printf 'hello world, not a trace' > "$T/junk.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/junk2.db" --pftrace "$T/junk.pftrace" 2>/dev/null
eq "import junk: exit 2" 2 $?
# a trace with a track but no event (found by fuzzing under UBSan: the empty
# event list reached qsort as a NULL pointer): one track, no slice, exit 0
printf '\012\010\342\003\005\010\001\022\001x' > "$T/noev.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/noev.db" --pftrace "$T/noev.pftrace"
eq "import a trace without events: exit 0, one track named x, no slice" "0 x|0" \
	"$? $(q "$T/noev.db" "select (select group_concat(name) from track) || '|' || (select count(*) from slice)")"
# an interned annotation string value without its string (make fuzz, UBSan: a
# NULL pointer reached memcmp): read as the empty string
printf '\012\011\120\001\142\005\352\001\002\010\001' > "$T/nostr.pftrace"
"$BUILD/kvio-ingest" -q -o "$T/nostr.db" --pftrace "$T/nostr.pftrace"
eq "import an interned string without its bytes: exit 0" 0 $?
# nesting: BEGIN a, b, c at 1, 2, 3 ns and ENDs at 4, 5, 6 on one track -> c
# [3,4) depth 2, b [2,5) depth 1, a [1,6) depth 0; and 20,000 BEGINs that never
# end are depths 0..19999 (a depth is one more than the open slice below it:
# walking the open stack per BEGIN made this quadratic)
python3 - "$T/nest.pftrace" "$T/deep.pftrace" <<'PY'
import sys
def v(x):
    o = bytearray()
    while True:
        b, x = x & 0x7f, x >> 7
        o.append(b | 0x80 if x else b)
        if not x:
            return bytes(o)
def f(n, val):
    return v(n << 3) + v(val) if isinstance(val, int) else v(n << 3 | 2) + v(len(val)) + val
def pkt(*fs):
    b = b''.join(fs)
    return f(1, b)
def ev(ts, typ, name=None):
    te = f(9, typ) + f(11, 1) + (f(23, name) if name else b'')
    return pkt(f(8, ts), f(10, 1), f(11, te))
head = pkt(f(60, f(1, 1) + f(2, b'lane')), f(10, 1))
open(sys.argv[1], 'wb').write(head + ev(1, 1, b'a') + ev(2, 1, b'b') + ev(3, 1, b'c') + ev(4, 2) + ev(5, 2) + ev(6, 2))
open(sys.argv[2], 'wb').write(head + b''.join(ev(10 + i, 1, b'x') for i in range(20000)))
PY
"$BUILD/kvio-ingest" -q -o "$T/nest.db" --pftrace "$T/nest.pftrace"
eq "import nesting: ts, dur, depth of each slice" "a|1|5|0 b|2|3|1 c|3|1|2" \
	"$(q "$T/nest.db" "select name, ts, dur, depth from slice order by ts" | tr '\n' ' ' | sed 's/ $//')"
"$BUILD/kvio-ingest" -q -o "$T/deep.db" --pftrace "$T/deep.pftrace" 2>/dev/null
eq "import 20,000 unended BEGINs: depths 0..19999, dur -1 (as trace_processor)" "20000|0|19999|-1|-1" \
	"$(q "$T/deep.db" "select count(*), min(depth), max(depth), min(dur), max(dur) from slice")"
"$BUILD/kvio-ingest" -q -o "$T/deep.db" --pftrace "$T/deep.pftrace" 2>"$T/deep.err"
eq "import unended BEGINs: one line with their count, and kvio_stats" "1 20000" "$(grep -c ': 20000 SLICE_BEGIN events never end' "$T/deep.err") $(q "$T/deep.db" "select value from kvio_stats where name = 'pftrace_unended'")"
"$BUILD/kvio-export" "$T/deep.db" -o "$T/deep2.pftrace" >/dev/null 2>&1 &&
	"$BUILD/kvio-ingest" -q -o "$T/deep2.db" --pftrace "$T/deep2.pftrace" 2>/dev/null
eq "unended slices survive export and import (BEGIN only)" "20000|0|19999|-1|-1" \
	"$(q "$T/deep2.db" "select count(*), min(depth), max(depth), min(dur), max(dur) from slice")"
"$BUILD/kvio-export" "$T/nope.db" -o "$T/x.pftrace" 2>/dev/null; eq "export missing db: exit 2" 2 $?
"$BUILD/kvio-export" "$T/tiny.db" 2>/dev/null; eq "export without -o: exit 2" 2 $?
"$BUILD/kvio-export" "$T/tiny.db" -o "$T/no/such/dir/x.pftrace" 2>/dev/null; eq "export to an unwritable path: exit 2" 2 $?

# the generated two-arm capture, checked against what the generator knows: every
# command has its completion (some written a few lines before their command),
# no line is unusable, every trace_id joins an object
eq "generated capture: every command paired, nothing unusable" "1.0 0 0" \
	"$("$BUILD/kvio-report" "$T/g.db" --json --label g | python3 -c 'import json,sys; d=json.load(sys.stdin)["g"]; print(d["commands"]["real_cover"], d["capture"]["malformed_lines"], d["capture"]["truncated_tail"])')"
eq "generated capture: no unpaired completion, no clock anomaly" "0|0" \
	"$(q "$T/g.db" "select max(case name when 'cmp_unpaired' then value end) || '|' || max(case name when 'clock_anomalies' then value end) from kvio_stats where label = 'g'")"
eq "generated capture: every tagged command belongs to an object of its arm" "0" \
	"$(q "$T/g.db" "with cmd as (select c.trace_id from kvio_cmd c join process_track pt on pt.id = c.track_id
	                 join process p using (upid) where p.name = 'NVMe ng g' and c.trace_id is not null),
	            obj as (select extract_arg(s.arg_set_id, 'debug.trace_id') tid from slice s join process_track pt on pt.id = s.track_id
	                 join process p using (upid) where p.name = 'LMCache g')
	            select count(*) from cmd where trace_id not in (select tid from obj)")"

# completion pairing held against the generator's ground truth: every 37th payload
# command alternately hits -EAGAIN (first attempt without completion, re-issue with
# the same user_data 2 us later) or loses its completion
"$BUILD/kvio-gen" --sem "$T/f.sem.jsonl" --ebpf "$T/f.ebpf.jsonl" --lines 20000 --mode batched --faults 37 2>"$T/f.truth"
truth_cmds=$(sed -n 's/.*cmds=\([0-9]*\).*/\1/p' "$T/f.truth"); truth_eagain=$(sed -n 's/.*eagain=\([0-9]*\).*/\1/p' "$T/f.truth")
truth_lost=$(sed -n 's/.*lost=\([0-9]*\).*/\1/p' "$T/f.truth")
"$BUILD/kvio-ingest" -q -o "$T/f.db" --sem "$T/f.sem.jsonl" --ebpf "$T/f.ebpf.jsonl"
eq "faults: commands, paired, unpaired completions" "$truth_cmds $((truth_cmds - truth_eagain - truth_lost)) 0" \
	"$(q "$T/f.db" "select (select count(*) from kvio_cmd) || ' ' || (select sum(real_dur) from kvio_cmd) || ' ' || (select value from kvio_stats where name = 'cmp_unpaired')")"
eq "faults: each -EAGAIN first attempt is the one left without a completion" "$truth_eagain" \
	"$(q "$T/f.db" "select count(*) from kvio_cmd a where real_dur = 0 and exists (select 1 from kvio_cmd b where b.trace_id = a.trace_id and b.slba = a.slba and b.ts = a.ts + 2000 and b.real_dur = 1)")"
eq "faults: the ground truth is not empty" "yes" "$([ "${truth_eagain:-0}" -gt 10 ] && [ "${truth_lost:-0}" -gt 10 ] && echo yes)"

# A read error is an error, never a shorter trace: a damaged page (a table's root page
# header overwritten: an invalid page type, which SQLite always detects) in the tracks, slices, counters or objects
# makes kvio-export exit 2 with the table and SQLite's reason on one line and write nothing
# (it wrote a trace without them and exited 0 before; the table's checksum now reads it first)
"$BUILD/kvio-gen" --sem "$T/cr.s" --ebpf "$T/cr.e" --lines 20000 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/cr.db" --sem "$T/cr.s" --ebpf "$T/cr.e"
ps=$(sqlite3 "$T/cr.db" "pragma page_size")
for t in kvio_track kvio_slice kvio_counter kvio_obj; do
	root=$(sqlite3 "$T/cr.db" "select rootpage from sqlite_master where name = '$t'")
	cp "$T/cr.db" "$T/cr_$t.db"
	python3 -c "
f = open('$T/cr_$t.db', 'r+b'); off = ($root - 1) * $ps; f.seek(off); f.write(b'\xff' * 64)"
	"$BUILD/kvio-export" "$T/cr_$t.db" -o "$T/cr_$t.pftrace" > /dev/null 2>"$T/cr_$t.err"
	eq "export: a damaged $t page: exit 2, one line with the table and SQLite's reason, no trace" "2 1 1 no" \
		"$? $(wc -l < "$T/cr_$t.err") $(grep -c "cr_$t.db: database damaged or not written by kvio: $t: database disk image is malformed" "$T/cr_$t.err") $([ -e "$T/cr_$t.pftrace" ] && echo yes || echo no)"
done

# a database without any command or object (an ingest of empty inputs, exit 1 there): the
# trace is written, as for an empty window, and the exit is 1 (kvio-report's too), one line
: > "$T/empty.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/empty.db" --sem "$T/empty.jsonl" --ebpf "$T/empty.jsonl" 2>/dev/null
"$BUILD/kvio-export" "$T/empty.db" -o "$T/empty.pftrace" > /dev/null 2>"$T/empty.err"
eq "export of a database with nothing in it: exit 1, the trace written, one line saying so" \
	"1 yes kvio-export: $T/empty.db holds no slice: $T/empty.pftrace holds nothing to look at (exit 1)" \
	"$? $([ -f "$T/empty.pftrace" ] && echo yes) $(cat "$T/empty.err")"

# kvio2perfetto keeps no fixed page-cache region at its start (cmd/pcache.c: 512 x 64 KiB
# pages that SQLite touches at start, 34 MB of huge pages faulted in before the first line,
# 60-75 ms on a VM whose free memory goes back to the host): its peak RSS on the tiny
# capture is that of its ingest and export, ~17 MB (its region sized to the device file: 32
# pages; 42-46 MB with the 512-page region). Measured with malloc on 4 KiB pages
# (KVIO_HUGEMEM=0): on huge pages its heaps' RSS grows 2 MiB at a time (~23-25 MB here)
rss=$(KVIO_HUGEMEM=0 python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$BUILD/kvio2perfetto" -q --sem fixtures/tiny/sem.jsonl \
	--ebpf fixtures/tiny/ebpf.jsonl -o "$T/rss.pftrace")
eq "kvio2perfetto on the tiny capture: peak RSS under 24 MB (no page-cache region)" yes \
	"$([ "${rss:-99999}" -lt 24576 ] && echo yes || echo "no: ${rss} KB")"
