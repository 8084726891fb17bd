# Ingest of fixtures/tiny: six commands, three objects, hand-laid-out.
# Clock: earliest timestamp of any kind is obj1's ts_start 1.25 s = 1250000000 ns,
# so every ts below is raw - 1250000000.
#   A write ud 1<<32|0  slba 10  4096 B  ts 1300000000 cmp +50000   (store header: 10*4096 = slot 40960)
#   B write ud 1<<32|1  slba 11  128 KiB ts 1300010000 cmp +80000   (overlaps A -> second lane)
#   C read  ud 2<<32|0  slba 11  ts 1800000000 cmp +100000 (cmp line comes BEFORE the cmd line)
#   D read  ud 2<<32|1  slba 43  ts 1800200000 no cmp -> nominal 8000 (last of its role)
#   E read  ud 5 (untagged)      ts 1900000000 cmp +20000, comm with escapes
#   F write ud 2^64-1 -> trace_id 4294967295, no semantic record, no cmp -> nominal 8000
# The monitor's tid (4321/4322) must never be read as a trace id.
DB=$T/tiny.db
ok "tiny: ingest exits 0" "$BUILD/kvio-ingest" -q -o "$DB" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
eq "tiny: processes (placeholder + LMCache + NVMe)" "0||1000|LMCache capture|1001|NVMe ng capture" \
	"$(q "$DB" "select pid, name from process order by upid" | tr '\n' '|' | sed 's/|$//')"
eq "tiny: command slices ts,dur,name,track" \
"50000000|50000|write|writes.000
50010000|80000|write|writes.001
550000000|100000|read|reads
550200000|8000|read|reads
650000000|20000|read|untagged
800000000|8000|write|writes.000" \
	"$(q "$DB" "select s.ts, s.dur, s.name, pt.name from slice s join process_track pt on s.track_id = pt.id
	            join process p using(upid) where p.name like 'NVMe%' and pt.name <> 'IO activity' order by s.ts")"
eq "tiny: trace_id is user_data >> 32 (never the monitor's tid)" "1|1|2|2||4294967295" \
	"$(q "$DB" "select extract_arg(arg_set_id, 'debug.trace_id') from slice s join process_track pt on s.track_id = pt.id
	            where pt.name like 'writes%' or pt.name like 'reads%' or pt.name like 'untagged%' order by ts" | tr '\n' '|' | sed 's/|$//')"
eq "tiny: header/payload roles" "header|payload||||" \
	"$(q "$DB" "select coalesce(extract_arg(arg_set_id, 'debug.role'), '') from slice where name in ('read','write') order by ts" | tr '\n' '|' | sed 's/|$//')"
eq "tiny: real_dur flags" "1|1|1|0|1|0" \
	"$(q "$DB" "select extract_arg(arg_set_id, 'debug.real_dur') from slice where name in ('read','write') order by ts" | tr '\n' '|' | sed 's/|$//')"
eq "tiny: object spans (ts, dur, name, lane)" \
"0|250000000|store kv 0.2MiB|objects.000
500000000|250000000|load kv 0.2MiB|objects.000" \
	"$(q "$DB" "select s.ts, s.dur, s.name, pt.name from slice s join process_track pt on s.track_id = pt.id where pt.name like 'objects.%' order by s.ts")"
eq "tiny: object args" "1|store|kv|262144|40960|0|f0|aaaabbbbcccc|2|250.0|i0|77|m@f0@0@aaaabbbbccccdddd" \
	"$(q "$DB" "select extract_arg(arg_set_id,'debug.trace_id'), extract_arg(arg_set_id,'debug.op'), extract_arg(arg_set_id,'debug.part'),
	            extract_arg(arg_set_id,'debug.bytes'), extract_arg(arg_set_id,'debug.slot_offset'), extract_arg(arg_set_id,'debug.rank'),
	            extract_arg(arg_set_id,'debug.fmt'), extract_arg(arg_set_id,'debug.chunk'), extract_arg(arg_set_id,'debug.n_cmds'),
	            extract_arg(arg_set_id,'debug.op_latency_ms'), extract_arg(arg_set_id,'debug.instance'), extract_arg(arg_set_id,'debug.producer_pid'),
	            extract_arg(arg_set_id,'debug.key') from slice where name like 'store%'")"
eq "tiny: delete without commands is an instant on capture info" "875000000|0|delete (no device cmds)|capture info|3|1" \
	"$(q "$DB" "select s.ts, s.dur, s.name, pt.name, extract_arg(arg_set_id,'debug.trace_id'), extract_arg(arg_set_id,'debug.no_device_cmds')
	            from slice s join process_track pt on s.track_id = pt.id where s.name like 'delete%'")"
eq "tiny: flows object -> first cmd -> last cmd" \
"store kv 0.2MiB|50000000
50000000|50010000
load kv 0.2MiB|550000000
550000000|550200000" \
	"$(q "$DB" "select case when o.name like '%MiB' then o.name else o.ts end, i.ts from flow f join slice o on o.id = f.slice_out
	            join slice i on i.id = f.slice_in order by i.ts, o.ts")"
eq "tiny: IO activity overview (100 ms runs)" \
"0|100000000|0.0 GB|2|135168
500000000|200000000|0.0 GB|3|266240
800000000|100000000|0.0 GB|1|4096" \
	"$(q "$DB" "select s.ts, s.dur, s.name, extract_arg(arg_set_id,'debug.cmds'), extract_arg(arg_set_id,'debug.bytes')
	            from slice s join process_track pt on s.track_id = pt.id where pt.name = 'IO activity' order by s.ts")"
eq "tiny: objects in flight counter" "0|1.0 250000000|0.0 500000000|1.0 750000000|0.0" \
	"$(q "$DB" "select c.ts || '|' || c.value from counter c join counter_track t on c.track_id = t.id where t.name = 'objects in flight' order by c.ts" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: cmds/ms counter (1 ms buckets, zero after each run)" \
	"50000000|2.0 51000000|0.0 550000000|2.0 551000000|0.0 650000000|1.0 651000000|0.0 800000000|1.0 801000000|0.0" \
	"$(q "$DB" "select c.ts || '|' || c.value from counter c join counter_track t on c.track_id = t.id where t.name = 'cmds/ms' order by c.ts" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: slba counters" "reads slba|550000000|11.0 reads slba|550200000|43.0 reads slba|650000000|0.0 writes slba|50000000|10.0 writes slba|50010000|11.0 writes slba|800000000|100.0" \
	"$(q "$DB" "select t.name || '|' || c.ts || '|' || c.value from counter c join counter_track t on c.track_id = t.id where t.name like '%slba' order by t.name, c.ts" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: counter track units" "LBA|LBA|MB/s|cmds|objects" \
	"$(q "$DB" "select unit from counter_track order by unit" | tr '\n' '|' | sed 's/|$//')"
eq "tiny: capture_info args" "capture|1250000000|4096|2|h1|/dev/ng0n1|4096|1" \
	"$(q "$DB" "select extract_arg(arg_set_id,'debug.label'), extract_arg(arg_set_id,'debug.base_ns'), extract_arg(arg_set_id,'debug.lba_bytes'),
	            extract_arg(arg_set_id,'debug.kvio_schema'), extract_arg(arg_set_id,'debug.hostname'), extract_arg(arg_set_id,'debug.device_path'),
	            extract_arg(arg_set_id,'debug.header_bytes'), extract_arg(arg_set_id,'debug.anchors') from slice where name = 'capture_info'")"
eq "tiny: stats" "clock_anomalies=0 cmp_unpaired=1 cq_overflow=1 drops=0 header_cmds=1 malformed_lines=0 nvme_cmd_lines=6 nvme_cmp_lines=5 sem_records=3 truncated_tail=0" \
	"$(q "$DB" "select name || '=' || value from kvio_stats where name in ('clock_anomalies','cmp_unpaired','cq_overflow','drops','header_cmds',
	            'malformed_lines','nvme_cmd_lines','nvme_cmp_lines','sem_records','truncated_tail') order by name" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: args view types (uint, bool, string, real)" "debug.data_len|uint|4096|4096 debug.real_dur|bool|1|true debug.role|string||header debug.slba|uint|10|10 debug.trace_id|uint|1|1" \
	"$(q "$DB" "select key || '|' || value_type || '|' || coalesce(int_value, '') || '|' || display_value from args
	            where arg_set_id = (select id from slice where ts = 50000000 and name = 'write') order by key" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: op_latency_ms is a real arg" "real|250.0" \
	"$(q "$DB" "select value_type, real_value from args where key = 'debug.op_latency_ms' and arg_set_id = (select id from slice where name like 'store%')")"
# the three cookbook queries of the reference's docs, unchanged, in plain sqlite3
eq "tiny: cookbook 1 (objects with command counts)" "load kv 0.2MiB|250.0|2 store kv 0.2MiB|250.0|2" \
	"$(q "$DB" "select s.name, s.dur/1e6 ms, extract_arg(s.arg_set_id,'debug.n_cmds') cmds
	            from slice s join process_track pt on s.track_id=pt.id
	            where pt.name like 'objects%' order by s.dur desc limit 20;" | sort | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: cookbook 2 (real read latency)" "1|100000|100000" \
	"$(q "$DB" "select count(*), min(dur), max(dur) from slice s
	            join process_track pt on s.track_id=pt.id
	            where pt.name like 'reads%' and extract_arg(s.arg_set_id,'debug.real_dur')=1;")"
eq "tiny: cookbook 3 (everything of trace_id 2)" "load kv 0.2MiB read read" \
	"$(q "$DB" "select name from slice where extract_arg(arg_set_id,'debug.trace_id')=2;" | sort | tr '\n' ' ' | sed 's/ $//')"
# the submitting threads (pid/tid/comm of nvme_cmd lines), the escaped comm decoded once
eq "tiny: threads (tid, comm), comm escapes decoded" '4321|python3 4322|python3 78|a"b\cé 79|fio' \
	"$(q "$DB" "select tid || '|' || name from thread where utid > 0 order by utid" | tr '\n' ' ' | sed 's/ $//')"
eq "tiny: views and extract_arg work under trusted_schema=OFF" "13|2" \
	"$(sqlite3 -batch -cmd ".load $BUILD/kvio" -cmd "pragma trusted_schema=OFF" "$DB" "select (select count(*) from slice), (select extract_arg(arg_set_id, 'debug.n_cmds') from slice where name like 'store%')")"
# The sums of kvio_slice, kvio_obj, flow and kvio_counter are taken as their rows
# are written (dbw.c, db_sum): on values SQLite stores its own way (-0.0 kept in
# kvio_obj's untyped columns, 0 in a REAL one; the largest double; an unsigned
# 64-bit integer; text that is not ASCII) kvio-check, which reads every table
# back and hashes it, must find them as written
mkdir -p "$T/odd"
sed -e 's/"bytes":262144,"slot_offset":40960/"bytes":-0.0,"slot_offset":1.7976931348623157e308/' \
    -e 's/"instance":"i0"}/"instance":-0.0,"error":"é\\u00e9 ünï","pid":18446744073709551615}/' \
    fixtures/tiny/sem.jsonl > "$T/odd/sem.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/odd/t.db" --sem "$T/odd/sem.jsonl" --ebpf fixtures/tiny/ebpf.jsonl 2>"$T/odd/err"
eq "tiny: odd semantic values: the database's sums taken as written are those read back (kvio-check)" \
	"$T/odd/t.db: clean" "$("$BUILD/kvio-check" "$T/odd/t.db" 2>&1 | tail -1)"
eq "tiny: odd semantic values are stored as SQLite keeps them (real, text, integer; slot_offset 1.8e308 saturated)" \
	"real|0.0|integer|9223372036854775807|text|éé ünï|integer|-1" \
	"$(q "$T/odd/t.db" "select typeof(instance), quote(instance), typeof(slot_offset), slot_offset, typeof(error), error,
	                    typeof(producer_pid), producer_pid from kvio_obj order by id limit 1")"
# a number no double holds (1e999) is named as what it is, not a bad string escape
sed -e 's/"instance":"i0"}/"instance":"i0","bytes":1e999}/' fixtures/tiny/sem.jsonl > "$T/odd/big.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/odd/big.db" --sem "$T/odd/big.jsonl" --ebpf fixtures/tiny/ebpf.jsonl 2>"$T/odd/big.err"
eq "tiny: a semantic number no double holds: its line is skipped, said as such" \
	"$T/odd/big.jsonl:2: semantic record has a number no double holds (1e999, or over 63 characters) (line skipped)" \
	"$(sed -n 's/^kvio-ingest: //p' "$T/odd/big.err" | head -1)"
