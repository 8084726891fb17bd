# --join-by-offset on fixtures/offset (laid out in the comments of the generator
# there; header_bytes 4096, block_align 4096, lba 4096 unless bytes/nlb say):
#   slot S1 base 0     [0, 4096 + 8192 = 12288)   ops: store 11 @1.000-1.001, load 12 @1.003-1.004,
#                                                      store 15 @2.000-2.001, load 16 @3.000-3.001
#   gap [12288, 16384)
#   slot S2 base 16384 [16384, 16384 + 4096 + roundup(4000) = 24576)   store 13 @1.100-1.101
#   slot S3 base 24576 [24576, 32768)   store 14, ts 1.200 without ts_start: window [1.195, 1.205]
#   store 17 without slot_offset: takes no part (no commands)
# Synthetic trace_ids = file position: 11->1, 12->2, 13->3, 14->4, 15->5, 16->6, 17->7.
# Commands (rebased ms) and their class by hand:
#   0.1  write S1        -> windows of store 11 and load 12 hold it: the write takes the store (1)
#   0.2  KV store, no slba -> unmatched
#   3.5  read [4096, 12288) ends exactly at S1's end -> inside; the load (2) by direction
#   3.6  write [8192, 16384) past S1's end, next base 16384 not before 16384 -> gap_spill
#   4.0  write at 12288 = S1's end -> unmatched (the gap)
#   50   write inside S2, no window holds 1.05 s -> unmatched
#   100.5 write [20480, 36864) past S2, S3's base 24576 is before its end -> cross_object
#   100.6 write [16384, 24576) in S2 -> store 13 (3)
#   200  write slba 48 nlb 8 bytes 4096: lba 512, [24576, 28672) in S3 -> store 14 (4)
#   1000.5 write S1, pass 2 -> store 15 (5), its cookie 77 disagrees
#   1000.6 read without nlb/bytes (lba --lba-bytes, len data_len) S1 pass 2: only the store's
#        window holds it -> the first op, store 15 (5)
#   2000.5 read S1 pass 3 -> load 16 (6), its cookie 99 disagrees
#   4000 write S1 after every window -> unmatched
# unique 7, cross_object 1, gap_spill 1, unmatched 4; cookie commands 9, attributed 7, agree 5.
O=$T/off.db
"$BUILD/kvio-ingest" -q -o "$O" --sem fixtures/offset/sem.jsonl --ebpf fixtures/offset/ebpf.jsonl --join-by-offset 2>"$T/off.err"
eq "offset join: exit 0" 0 $?
eq "offset join: each command's object (rebased ts | synthetic trace_id)" \
	"100000|1 200000| 3500000|2 3600000| 4000000| 50000000| 100500000| 100600000|3 200000000|4 1000500000|5 1000600000|5 2000500000|6 4000000000|" \
	"$(q "$O" "select ts || '|' || coalesce(trace_id, '') from kvio_cmd order by ts" | tr '\n' ' ' | sed 's/ $//')"
eq "offset join: classes and parity in kvio_stats" \
	"offset_cookie_cmds=9 offset_cross_object=1 offset_gap_spill=1 offset_parity_agree=5 offset_parity_total=7 offset_unique=7 offset_unmatched=4" \
	"$(q "$O" "select name || '=' || value from kvio_stats where name like 'offset%' order by name" | tr '\n' ' ' | sed 's/ $//')"
eq "offset join: parity below 100% is a warning (2 of 7)" "1" "$(grep -c 'offset: 2 of 7 cookie commands' "$T/off.err")"
eq "offset join: unattributed commands are untagged, attributed ones on their role" "writes=5 reads=3 untagged=5" \
	"$(q "$O" "select 'writes=' || sum(t.name like 'writes%') || ' reads=' || sum(t.name like 'reads%') || ' untagged=' || sum(t.name like 'untagged%') from slice s join track t on t.id = s.track_id where s.name in ('read','write','store')")"
eq "offset join: the object of the third pass, with its flow" "load kv 0.0MiB|6|1|2000500000" \
	"$(q "$O" "select o.name, extract_arg(o.arg_set_id, 'debug.trace_id'), extract_arg(o.arg_set_id, 'debug.n_cmds'), i.ts from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in where extract_arg(o.arg_set_id, 'debug.trace_id') = 6")"
eq "offset join: no duplicate trace_ids (every record its own id)" "0" "$(q "$O" "select value from kvio_stats where name = 'dup_trace_id'")"
"$BUILD/kvio-report" "$O" --json > "$T/off.json" 2>/dev/null
eq "offset join: report JSON capture.offset_join and capture.join" \
	"offset {'unique': 7, 'cross_object': 1, 'gap_spill': 1, 'unmatched': 4, 'cookie_cmds': 9, 'parity_agree': 5, 'parity_total': 7}" \
	"$(python3 -c "import json; c = json.load(open('$T/off.json'))['capture']['capture']; print(c['join'], c['offset_join'])")"
eq "offset join: report text, the reference's parity line" \
	"  offset-join parity vs user_data cookies: 5/7 (71.43%) agree  <-- INVESTIGATE | offset-attributed cookieless cmds: 0" \
	"$("$BUILD/kvio-report" "$O" 2>/dev/null | grep 'parity vs')"
# the same commands with the two wrong cookies set right: parity 100%, no warning
sed -e 's/"user_data":330712481801/"user_data":64424509449/' -e 's/"user_data":425201762314/"user_data":68719476746/' \
	fixtures/offset/ebpf.jsonl > "$T/off100.ebpf.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/off100.db" --sem fixtures/offset/sem.jsonl --ebpf "$T/off100.ebpf.jsonl" --join-by-offset 2>"$T/off100.err"
eq "offset join, cookies right: parity 7/7, no parity warning" "7/7 0" \
	"$(q "$T/off100.db" "select (select value from kvio_stats where name = 'offset_parity_agree') || '/' || (select value from kvio_stats where name = 'offset_parity_total')") $(grep -c 'offset' "$T/off100.err")"
eq "usage: --join-by-key with --join-by-offset is an error" "2" \
	"$("$BUILD/kvio-ingest" -q -o "$T/x.db" --sem fixtures/offset/sem.jsonl --join-by-key --join-by-offset 2>/dev/null; echo $?)"

# a second method: tests/offset_model.py applies the rules by brute force (every op of the
# slot for every command) to a capture whose 3 slots are reused over 600 passes, with
# commands across, past and between objects, some cookies wrong, the lines a little out
# of time order; every command's trace_id and every count must agree
python3 tests/offset_model.py gen "$T/om.sem" "$T/om.ebpf" --passes 600 --slots 3
python3 tests/offset_model.py expect "$T/om.sem" "$T/om.ebpf" > "$T/om.expect"
"$BUILD/kvio-ingest" -q -o "$T/om.db" --sem "$T/om.sem" --ebpf "$T/om.ebpf" --join-by-offset 2>/dev/null
q "$T/om.db" "select ts + (select extract_arg(arg_set_id, 'debug.applied_base_ns') from slice where name = 'capture_info'), coalesce(trace_id, 0) from kvio_cmd order by 1, 2" | tr '|' ' ' > "$T/om.got"
eq "offset join = brute force, command by command (10801 commands, 3600 ops)" "10801 0" \
	"$(wc -l < "$T/om.got") $(head -n -2 "$T/om.expect" | diff - "$T/om.got" | grep -c '^[<>]')"
eq "offset join = brute force: classes (unique cross gap unmatched) and parity (cookie agree total)" \
	"$(tail -2 "$T/om.expect" | cut -d' ' -f2- | tr '\n' ' ')" \
	"$(q "$T/om.db" "select group_concat(value, ' ') from (select value from kvio_stats where name in ('offset_unique','offset_cross_object','offset_gap_spill','offset_unmatched') order by case name when 'offset_unique' then 0 when 'offset_cross_object' then 1 when 'offset_gap_spill' then 2 else 3 end)") $(q "$T/om.db" "select group_concat(value, ' ') from (select value from kvio_stats where name in ('offset_cookie_cmds','offset_parity_agree','offset_parity_total') order by case name when 'offset_cookie_cmds' then 0 when 'offset_parity_agree' then 1 else 2 end)") "

# the same second method where a slot's windows overlap (passes 0.5 ms apart: ~20 windows of a
# slot open at once, each interval's answer the first op of its direction in file order) and
# 3% of the lines come 50-800 lines late in 4 KiB blocks (joined out of time order: the
# attribution does not depend on the order the commands arrive in)
python3 tests/offset_model.py gen "$T/ov.sem" "$T/ov.ebpf" --passes 200 --slots 3 --pass-gap-us 500 --late --seed 3
python3 tests/offset_model.py expect "$T/ov.sem" "$T/ov.ebpf" > "$T/ov.expect"
KVIO_BLOCK_BYTES=4096 "$BUILD/kvio-ingest" -q -o "$T/ov.db" --sem "$T/ov.sem" --ebpf "$T/ov.ebpf" --join-by-offset 2>/dev/null
q "$T/ov.db" "select ts + (select extract_arg(arg_set_id, 'debug.applied_base_ns') from slice where name = 'capture_info'), coalesce(trace_id, 0) from kvio_cmd order by 1, 2" | tr '|' ' ' > "$T/ov.got"
eq "offset join, overlapping windows, lines late = brute force, command by command (3601 commands, some late)" "3601 0 yes" \
	"$(wc -l < "$T/ov.got") $(head -n -2 "$T/ov.expect" | diff - "$T/ov.got" | grep -c '^[<>]') $(q "$T/ov.db" "select case when value > 0 then 'yes' else 'no' end from kvio_stats where name = 'late_lines'")"
eq "offset join, overlapping windows, lines late = brute force: classes and parity" \
	"$(tail -2 "$T/ov.expect" | cut -d' ' -f2- | tr '\n' ' ')" \
	"$(q "$T/ov.db" "select group_concat(value, ' ') from (select value from kvio_stats where name in ('offset_unique','offset_cross_object','offset_gap_spill','offset_unmatched') order by case name when 'offset_unique' then 0 when 'offset_cross_object' then 1 when 'offset_gap_spill' then 2 else 3 end)") $(q "$T/ov.db" "select group_concat(value, ' ') from (select value from kvio_stats where name in ('offset_cookie_cmds','offset_parity_agree','offset_parity_total') order by case name when 'offset_cookie_cmds' then 0 when 'offset_parity_agree' then 1 else 2 end)") "
