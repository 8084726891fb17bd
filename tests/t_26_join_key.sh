# --join-by-key on fixtures/kv (the tracer's --kv line format: key_hex, key_len,
# value_len, store/retrieve op names; user_data cookies are junk the join must ignore).
# Semantic records in file order and their keys (lower-case hex):
#   store trace_id 100 key "obj-a"          -> hex of its bytes 6f626a2d61 -> synthetic id 1
#   store trace_id 200 key_hex "A1B2"       -> a1b2 (key_hex wins over key) -> id 2
#   load  trace_id 300 key "obj-a"          -> 6f626a2d61 again           -> id 1 (second occurrence)
#   delete trace_id 400 key_hex "ffff"      -> id 3 (no commands: an instant at 20 ms)
#   store trace_id 500 without any key      -> id 4, claims no command
# Commands (rebased to the store's ts_start 1.0 s): store 6f626a2d61 @0.1 ms (cmp +20 us),
# store A1B2 @0.6 ms, retrieve 6f626a2d61 @10.2 ms (cmp +30 us), retrieve deadbeef @15 ms
# (no record: untagged but on reads, it has a key), write slba 5 without key_hex @16 ms
# (user_data 1<<32, but no key: untagged).
K=$T/kv.db
"$BUILD/kvio-ingest" -q -o "$K" --sem fixtures/kv/sem.jsonl --ebpf fixtures/kv/ebpf.jsonl --join-by-key 2>"$T/kv.err"
eq "key join: exit 0, no warning" "0 0" "$? $(wc -l < "$T/kv.err")"
eq "key join: commands (ts, track, synthetic trace_id, no role)" \
"100000|writes|1|
600000|writes|2|
10200000|reads|1|
15000000|reads||
16000000|untagged||" \
	"$(q "$K" "select s.ts, t.name, coalesce(extract_arg(arg_set_id, 'debug.trace_id'), ''), coalesce(extract_arg(arg_set_id, 'debug.role'), '')
	            from slice s join track t on t.id = s.track_id where s.name in ('store', 'retrieve', 'write') order by s.ts")"
eq "key join: objects (ts, name, synthetic trace_id, occurrence)" \
"0|store kv 0.0MiB|1|0
500000|store kv 0.0MiB|2|
10000000|load kv 0.0MiB|1|1
20000000|delete (no device cmds)|3|
30000000|store kv 0.0MiB|4|" \
	"$(q "$K" "select s.ts, s.name, extract_arg(arg_set_id, 'debug.trace_id'), coalesce(extract_arg(arg_set_id, 'debug.occurrence'), '')
	            from slice s join track t on t.id = s.track_id where t.name like 'objects%' or s.name like '%no device%' order by s.ts")"
eq "key join: a store and a later load of one key are two occurrences, each with its command" "0>100000 500000>600000 10000000>10200000" \
	"$(q "$K" "select o.ts || '>' || i.ts from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in order by o.ts" | tr '\n' ' ' | sed 's/ $//')"
eq "key join: stats (4 keyed commands, 3 claimed; the repeat counted, not warned; no headers)" "dup_trace_id=1 header_cmds=0 key_cmds=4 key_matched=3" \
	"$(q "$K" "select name || '=' || value from kvio_stats where name in ('dup_trace_id', 'header_cmds', 'key_cmds', 'key_matched') order by name" | tr '\n' ' ' | sed 's/ $//')"
eq "key join: metadata and report capture.join" "key key" \
	"$(q "$K" "select str_value from metadata where name = 'kvio_join'") $("$BUILD/kvio-report" "$K" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['capture']['capture']['join'])")"
# a second method: the cookie join of the same commands with user_data = id << 32 gives the same attribution
sed -e 's/"user_data":7,"nvme_opcode":1/"user_data":4294967296,"nvme_opcode":1/' \
    -e 's/"user_data":8,/"user_data":8589934592,/' \
    -e 's/"user_data":7,"nvme_opcode":2/"user_data":4294967296,"nvme_opcode":2/' \
    -e 's/"user_data":7,"err"/"user_data":4294967296,"err"/' \
    -e 's/"user_data":4294967296,"nvme_opcode":1,"op_name":"write"/"user_data":0,"nvme_opcode":1,"op_name":"write"/' fixtures/kv/ebpf.jsonl > "$T/kvc.ebpf.jsonl"
python3 -c "
import json, sys
ids = {'obj-a': 1, 'A1B2': 2, 'ffff': 3}
for l in open('fixtures/kv/sem.jsonl'):
    r = json.loads(l)
    if 'op' in r:
        r['trace_id'] = ids.get(r.get('key_hex') or r.get('key'), 4)
    print(json.dumps(r))" > "$T/kvc.sem.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/kvc.db" --sem "$T/kvc.sem.jsonl" --ebpf "$T/kvc.ebpf.jsonl" 2>/dev/null
eq "key join = cookie join with the same ids (ts, trace_id of every command)" \
	"$(q "$T/kvc.db" "select ts || ':' || coalesce(extract_arg(arg_set_id, 'debug.trace_id'), '') from slice where name in ('store', 'retrieve', 'write') order by ts" | tr '\n' ' ')" \
	"$(q "$K" "select ts || ':' || coalesce(extract_arg(arg_set_id, 'debug.trace_id'), '') from slice where name in ('store', 'retrieve', 'write') order by ts" | tr '\n' ' ')"
# --trace-id after the join: the synthetic ids
"$BUILD/kvio-ingest" -q -o "$T/kv1.db" --sem fixtures/kv/sem.jsonl --ebpf fixtures/kv/ebpf.jsonl --join-by-key --trace-id 1
eq "key join + --trace-id 1: the two commands and two objects of key obj-a" "2 2" \
	"$(q "$T/kv1.db" "select count(*) from slice where name in ('store', 'retrieve')") $(q "$T/kv1.db" "select count(*) from slice where name like '% kv %'")"
# a capture without key_hex (not taken with --kv): one warning naming --kv, every command untagged, counted
"$BUILD/kvio-ingest" -q -o "$T/kvt.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl --join-by-key 2>"$T/kvt.err"
eq "key join without key_hex: exit 0, one warning naming the tracer's --kv flag" "0 1" "$? $(grep -c -- '--kv' "$T/kvt.err")"
eq "key join without key_hex: all 6 commands untagged, key_cmds 0" "6 0" \
	"$(q "$T/kvt.db" "select count(*) from slice s join track t on t.id = s.track_id where t.name like 'untagged%'") $(q "$T/kvt.db" "select value from kvio_stats where name = 'key_cmds'")"
# kvio-gen --kv (the bench's KV capture): the key join gives every object the commands the
# cookie join of the same capture gives it (second method), all keyed commands but the
# metadata reads (key 0...0, no record) claimed
"$BUILD/kvio-gen" --kv --sem "$T/gk.sem.jsonl" --ebpf "$T/gk.ebpf.jsonl" --lines 20000 --mode batched 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/gkk.db" --sem "$T/gk.sem.jsonl" --ebpf "$T/gk.ebpf.jsonl" --join-by-key
"$BUILD/kvio-ingest" -q -o "$T/gkc.db" --sem "$T/gk.sem.jsonl" --ebpf "$T/gk.ebpf.jsonl" 2>/dev/null
objn() { q "$1" "select s.ts || ':' || s.name || ':' || extract_arg(arg_set_id, 'debug.n_cmds') from slice s join track t on t.id = s.track_id where t.name like 'objects.%' order by s.ts" | md5sum; }
eq "kvio-gen --kv: key join = cookie join, object by object (span, name, n_cmds)" "$(objn "$T/gkc.db")" "$(objn "$T/gkk.db")"
eq "kvio-gen --kv: claimed = keyed commands - metadata reads (grep)" \
	"$(($(grep -c '"event_type":"nvme_cmd"' "$T/gk.ebpf.jsonl") - $(grep -c '"key_hex":"00000000000000000000000000000000"' "$T/gk.ebpf.jsonl")))" \
	"$(q "$T/gkk.db" "select value from kvio_stats where name = 'key_matched'")"

# the QD1 heading is never empty: fixtures/kv's trace_ids have 1-2 commands each (< 4)
"$BUILD/kvio-ingest" -q -o "$T/kvq.db" --join-by-key --sem fixtures/kv/sem.jsonl --ebpf fixtures/kv/ebpf.jsonl >/dev/null 2>&1
eq "kv: the QD1 detector says why it has no lines" "    no trace_id has 4 or more tagged commands: no gaps to judge" \
	"$("$BUILD/kvio-report" "$T/kvq.db" 2>/dev/null | grep -A1 'QD1 detector' | tail -1)"
