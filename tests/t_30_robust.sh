# Bad input: fixtures/bad/ebpf.jsonl has 12 lines (hand-counted):
#  1 valid cmd | 2 blank | 3 broken JSON | 4 array, not an object | 5 cmd without ts
#  6 invalid UTF-8 | 7 unescaped quote in comm | 8 lone CR | 9 valid cmd, CRLF ending
#  10 unknown event_type (other) | 11 valid cmp | 12 unterminated tail
# fixtures/bad/sem.jsonl: one store record, one record without ts.
DB=$T/bad.db
"$BUILD/kvio-ingest" -q -o "$DB" --sem fixtures/bad/sem.jsonl --ebpf fixtures/bad/ebpf.jsonl 2>"$T/bad.err"
eq "bad: ingest still exits 0" 0 $?
eq "bad: per-file counts (lines records blank malformed truncated other)" \
	"ebpf|12|3|1|6|1|1 sem|2|1|0|1|0|0" \
	"$(q "$DB" "select kind, lines, records, blank, malformed, truncated_tail, other from kvio_file order by kind" | tr '\n' ' ' | sed 's/ $//')"
eq "bad: first five reasons name file:line" "5" "$(grep -c 'fixtures/bad/ebpf.jsonl:[0-9]*: ' "$T/bad.err")"
eq "bad: the line number of the broken JSON" "1" "$(grep -c 'ebpf.jsonl:3: not valid JSON' "$T/bad.err")"
eq "bad: CRLF line kept; commands in the db" "2" "$(q "$DB" "select count(*) from slice where name = 'write'")"

# still-growing file: the unterminated tail is skipped, the rest is used (its
# first 300 bytes hold the clock anchor and no command yet: exit 1, unusable)
head -c 300 fixtures/tiny/ebpf.jsonl > "$T/grow.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/grow.db" --ebpf "$T/grow.jsonl" 2>/dev/null
eq "growing, no command yet: exit 1" 1 $?
eq "growing: 1 anchor used, 1 truncated tail" "2|1|1" \
	"$(q "$T/grow.db" "select lines, records, truncated_tail from kvio_file")"
mkfifo "$T/grow.fifo"
head -c 300 fixtures/tiny/ebpf.jsonl > "$T/grow.fifo" & writer=$!
KVIO_BLOCK_BYTES=64 "$BUILD/kvio-ingest" -q -o "$T/grow2.db" --ebpf "$T/grow.fifo" 2>/dev/null
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
eq "growing, through a pipe in 64-byte blocks: the same" "2|1|1" \
	"$(q "$T/grow2.db" "select lines, records, truncated_tail from kvio_file")"

# A line longer than the limit (1 MiB; KVIO_MAX_LINE=1000 here) is one malformed
# line, dropped unread: a crashed capture can hold gigabytes of NUL bytes without
# a newline. Lines before and after it are used; the count and line number are
# right whatever the block size; a region of NUL bytes at the end is the same.
head -n 3 fixtures/tiny/ebpf.jsonl > "$T/long.jsonl"
head -c 5000 /dev/zero | tr '\0' 'x' >> "$T/long.jsonl"
printf '\n' >> "$T/long.jsonl"
tail -n +4 fixtures/tiny/ebpf.jsonl >> "$T/long.jsonl"
want="$(($(wc -l < fixtures/tiny/ebpf.jsonl) + 1))|1|$(q "$T/tiny.db" "select records from kvio_file where kind = 'ebpf'")"
for bs in 200 4096 1048576; do
	KVIO_MAX_LINE=1000 KVIO_BLOCK_BYTES=$bs "$BUILD/kvio-ingest" -q -o "$T/long.db" --ebpf "$T/long.jsonl" 2>"$T/long.err"
	eq "overlong line, $bs-byte blocks: lines, malformed, records" "$want" \
		"$(q "$T/long.db" "select lines, malformed, records from kvio_file where kind = 'ebpf'")"
	eq "overlong line, $bs-byte blocks: its line number and reason" 1 "$(grep -c 'long.jsonl:4: line longer than' "$T/long.err")"
done
cp fixtures/tiny/ebpf.jsonl "$T/nul.jsonl"
head -c 3000000 /dev/zero >> "$T/nul.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/nul.db" --ebpf "$T/nul.jsonl" 2>/dev/null
eq "3 MB of NUL bytes at the end: one malformed line, the rest used" \
	"$(($(wc -l < fixtures/tiny/ebpf.jsonl) + 1))|1|$(q "$T/tiny.db" "select records from kvio_file where kind = 'ebpf'")" \
	"$(q "$T/nul.db" "select lines, malformed, records from kvio_file where kind = 'ebpf'")"
KVIO_MAX_LINE=1000 "$BUILD/kvio-ingest" -q -o "$T/longsem.db" --sem "$T/long.jsonl" 2>/dev/null
eq "overlong line in a file read whole (as --sem): counted malformed" 1 \
	"$(q "$T/longsem.db" "select malformed from kvio_file where kind = 'sem'")"

# Occurrences (docs/formats.md, the join, 1): trace_id 5 logged twice (two
# producers sharing the file), op ends at 1.0005 s and 2.0005 s. A command goes
# to the first occurrence whose op end is >= its submit, else to the last:
# 1.0001 s and 1.0002 s -> the first; 2.0001 s and 3.0 s -> the second.
printf '%s\n' '{"trace_id":5,"op":"store","key":"m@f@0@aa","bytes":8192,"ts":2.0005}' \
	'{"trace_id":5,"op":"store","key":"m@f@0@bb","bytes":8192,"ts":1.0005}' > "$T/occ.sem.jsonl"
for t in 1000100000 1000200000 2000100000 3000000000; do
	printf '{"event_type":"nvme_cmd","ts":%s,"user_data":21474836480,"op_name":"write","slba":1,"nlb":0,"data_len":4096}\n' $t
done > "$T/occ.ebpf.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/occ.db" --sem "$T/occ.sem.jsonl" --ebpf "$T/occ.ebpf.jsonl" 2>/dev/null
eq "occurrences: commands per occurrence in op-end order, dup_trace_id" "bb|2 aa|2 dup=1" \
	"$(q "$T/occ.db" "select substr(extract_arg(s.arg_set_id, 'debug.key'), -2) || '|' || extract_arg(s.arg_set_id, 'debug.n_cmds')
	                  from slice s join process_track pt on pt.id = s.track_id where pt.name like 'objects%' order by s.ts" | tr '\n' ' ')dup=$(q "$T/occ.db" "select value from kvio_stats where name = 'dup_trace_id'")"

# missing input: one-line error, exit 2, no database left behind
"$BUILD/kvio-ingest" -q -o "$T/missing.db" --ebpf "$T/nope.jsonl" 2>"$T/missing.err"
eq "missing input: exit 2" 2 $?
eq "missing input: one line naming the file" "1" "$(grep -c 'nope.jsonl: cannot open' "$T/missing.err")"
eq "missing input: no output database" "absent" "$([ -e "$T/missing.db" ] && echo present || echo absent)"
ls "$T"/missing.db.tmp-* >/dev/null 2>&1
eq "missing input: no temp file left" 2 $?

# an existing database is replaced only by a complete one
cp "$T/bad.db" "$T/keep.db"
"$BUILD/kvio-ingest" -q -o "$T/keep.db" --ebpf "$T/nope.jsonl" 2>/dev/null
eq "failed ingest keeps the previous database" "2" "$(q "$T/keep.db" "select count(*) from slice where name = 'write'")"

# usage errors
"$BUILD/kvio-ingest" -o "$T/x.db" 2>/dev/null; eq "no inputs: exit 2" 2 $?
"$BUILD/kvio-ingest" --sem a 2>/dev/null; eq "no -o: exit 2" 2 $?
"$BUILD/kvio-ingest" -o "$T/x.db" --merge nolabel 2>/dev/null; eq "bad --merge: exit 2" 2 $?
"$BUILD/kvio-ingest" -o "$T/x.db" --lba-bytes zero --ebpf x 2>/dev/null; eq "bad --lba-bytes: exit 2" 2 $?
for c in kvio-ingest kvio-report kvio-export kvio2perfetto; do
	ok "$c --help exits 0" "$BUILD/$c" --help
done

# the same bad file read in blocks of a line or two (KVIO_BLOCK_BYTES) by the
# worker threads, with a horizon of 3 records: same counts, and the reported
# line numbers are still absolute
KVIO_BLOCK_BYTES=64 "$BUILD/kvio-ingest" -q --pair-horizon 3 -o "$T/bad2.db" --sem fixtures/bad/sem.jsonl --ebpf fixtures/bad/ebpf.jsonl 2>"$T/bad2.err"
eq "bad, tiny blocks: same per-file counts" \
	"ebpf|12|3|1|6|1|1 sem|2|1|0|1|0|0" \
	"$(q "$T/bad2.db" "select kind, lines, records, blank, malformed, truncated_tail, other from kvio_file order by kind" | tr '\n' ' ' | sed 's/ $//')"
eq "bad, tiny blocks: same messages" "$(cat "$T/bad.err")" "$(cat "$T/bad2.err")"
KVIO_BLOCK_BYTES=64 "$BUILD/kvio-ingest" -q --pair-horizon 3 -o "$T/tiny2.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
eq "tiny, tiny blocks: same slices" \
	"$(q "$T/tiny.db" "select ts, dur, name, track_id, arg_set_id from slice order by id")" \
	"$(q "$T/tiny2.db" "select ts, dur, name, track_id, arg_set_id from slice order by id")"
eq "tiny, tiny blocks: same threads" \
	"$(q "$T/tiny.db" "select tid, name from thread order by tid, name")" \
	"$(q "$T/tiny2.db" "select tid, name from thread order by tid, name")"

# a uint above 2^63 keeps value_type 'uint' and prints unsigned (extract_arg gives
# the int64 bit pattern, as trace_processor does)
printf '%s\n' '{"event_type":"nvme_cmd","user_data":1,"op_name":"write","slba":18446744073709551615,"data_len":4096,"ts":5}' > "$T/big.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/big.db" --ebpf "$T/big.jsonl"
eq "uint above 2^63: args row" "uint|-1|18446744073709551615" \
	"$(q "$T/big.db" "select value_type, int_value, display_value from args where key = 'debug.slba'")"

# empty inputs: a database all the same (its counts say what was read), warnings
# that say what is likely wrong, and exit 1: the result is unusable
: > "$T/empty.jsonl"
"$BUILD/kvio-ingest" -o "$T/empty.db" --sem "$T/empty.jsonl" --ebpf "$T/empty.jsonl" > "$T/empty.out" 2> "$T/empty.err"
eq "empty inputs: exit 1" 1 $?
eq "empty inputs: both warnings, on stderr" "2 0" \
	"$(grep -c 'WARNING: .*empty.jsonl has no' "$T/empty.err") $(grep -c 'WARNING' "$T/empty.out")"
eq "empty inputs: one line says the database holds nothing" 1 \
	"$(grep -c "^kvio-ingest: \[capture\] no device command and no semantic record in its inputs: $T/empty.db holds nothing" "$T/empty.err")"
eq "empty inputs: warnings kept in the database" 2 "$(q "$T/empty.db" "select count(*) from kvio_warning")"

# ---- the streaming join (ingest/stream.c) ----
# The horizon: a completion more than --pair-horizon records after its command
# stays unpaired (documented). Hand-computed: command A (ud 1, ts 1000), then
# five commands each with its completion 500 ns later, then A's completion at
# 9000. All untagged writes, one role. Records are processed a read block at
# a time (the horizon counts processed records), so the small-horizon run also
# reads blocks of about one line.
{
	echo '{"event_type":"nvme_cmd","user_data":1,"op_name":"write","slba":0,"data_len":4096,"ts":1000}'
	for k in 2 3 4 5 6; do
		echo "{\"event_type\":\"nvme_cmd\",\"user_data\":$k,\"op_name\":\"write\",\"slba\":$k,\"data_len\":4096,\"ts\":${k}000}"
		echo "{\"event_type\":\"nvme_cmp\",\"user_data\":$k,\"ts\":${k}500}"
	done
	echo '{"event_type":"nvme_cmp","user_data":1,"ts":9000}'
} > "$T/horizon.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/hz1.db" --ebpf "$T/horizon.jsonl"
eq "horizon, default: A paired (dur 9000 - 1000), no unpaired completion" "8000|1|0" \
	"$(q "$T/hz1.db" "select dur, extract_arg(arg_set_id, 'debug.real_dur'), (select value from kvio_stats where name = 'cmp_unpaired') from slice where ts = 0 and name = 'write'")"
KVIO_BLOCK_BYTES=100 "$BUILD/kvio-ingest" -q --pair-horizon 5 -o "$T/hz2.db" --ebpf "$T/horizon.jsonl"
eq "horizon 5, one-line blocks: A nominal (0.9 x the 1000 ns gap), its completion unpaired" "900|0|1" \
	"$(q "$T/hz2.db" "select dur, extract_arg(arg_set_id, 'debug.real_dur'), (select value from kvio_stats where name = 'cmp_unpaired') from slice where ts = 0 and name = 'write'")"

eq "horizon 5: the late completion is named (cmp_after_horizon, a warning)" "1|1" \
	"$(q "$T/hz2.db" "select (select value from kvio_stats where name = 'cmp_after_horizon'), (select count(*) from kvio_warning where message like '%more than --pair-horizon 5 records%')")"
eq "horizon 5: the report's capture section says so too" "1 1" \
	"$("$BUILD/kvio-report" "$T/hz2.db" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["capture"]["capture"]; print(c["cmp_after_horizon"], c["cmp_unpaired"])')"
"$BUILD/kvio-ingest" -q --pair-horizon 0 -o "$T/hz3.db" --ebpf "$T/horizon.jsonl" 2>"$T/hz3.err"
eq "--pair-horizon 0: usage error, exit 2" "2" "$?"

# A record more than one read block late (blocks of ~2 lines here): counted,
# warned, still written; with the default block it is simply in order.
{
	for k in 1 2 3 4 5 6 7 8 9; do
		echo "{\"event_type\":\"nvme_cmd\",\"user_data\":$k,\"op_name\":\"read\",\"slba\":$k,\"data_len\":512,\"ts\":${k}000}"
	done
	echo '{"event_type":"nvme_cmd","user_data":99,"op_name":"read","slba":99,"data_len":512,"ts":1500}'
} > "$T/late.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/late1.db" --ebpf "$T/late.jsonl"
eq "late record, default block: in order (1000 -> 450 ns before it, it 450 ns)" "0|450 500|450|0" \
	"$(q "$T/late1.db" "select ts, dur from slice where name = 'read' order by ts limit 2" | tr '\n' ' ' | sed 's/ $//')|$(q "$T/late1.db" "select value from kvio_stats where name = 'late_lines'")"
KVIO_BLOCK_BYTES=200 "$BUILD/kvio-ingest" -q -o "$T/late2.db" --ebpf "$T/late.jsonl"
eq "late record, small blocks: counted, warned, all 10 commands written" "1|1|10" \
	"$(q "$T/late2.db" "select (select value from kvio_stats where name = 'late_lines'), (select count(*) from kvio_warning where message like '%came more than one read block%'), (select count(*) from slice where name = 'read')")"

# A capture with -EAGAIN re-issues, lost completions and two interleaved
# ranks: read in 256 KiB blocks with a 2000-record horizon, it gives the same
# trace as when the whole file is one block (the whole-file join).
"$BUILD/kvio-gen" --sem "$T/st.sem.jsonl" --ebpf "$T/st.ebpf.jsonl" --lines 40000 --mode batched --ranks 2 --faults 40 2>/dev/null
KVIO_BLOCK_BYTES=1000000000 "$BUILD/kvio-ingest" -q -o "$T/st1.db" --sem "$T/st.sem.jsonl" --ebpf "$T/st.ebpf.jsonl"
KVIO_BLOCK_BYTES=262144 "$BUILD/kvio-ingest" -q --pair-horizon 2000 -o "$T/st2.db" --sem "$T/st.sem.jsonl" --ebpf "$T/st.ebpf.jsonl"
sqlite3 -batch -cmd ".load $BUILD/kvio" "$T/st1.db" ".read tests/canon.sql" > "$T/st1.canon"
sqlite3 -batch -cmd ".load $BUILD/kvio" "$T/st2.db" ".read tests/canon.sql" > "$T/st2.canon"
eq "stream: 256 KiB blocks = one block (processes, tracks, slices, args, flows, counters)" "" \
	"$(diff "$T/st1.canon" "$T/st2.canon" | head -5)"
eq "stream: the comparison is not empty" "yes" "$([ "$(wc -l < "$T/st1.canon")" -gt 50000 ] && echo yes)"
eq "stream: same stats, no late records" \
	"$(q "$T/st1.db" "select name, value from kvio_stats order by name")" \
	"$(q "$T/st2.db" "select name, value from kvio_stats order by name")"

# A device file far out of time order (shuffled): the reorder pool is cut back
# at KVIO_POOL_MAX records (its oldest processed anyway), so memory stays
# bounded; nothing is lost, the disorder is counted.
awk 'BEGIN{srand(3)} {print rand() "\t" $0}' "$T/st.ebpf.jsonl" | sort -k1,1 | cut -f2- > "$T/shuf.jsonl"
KVIO_BLOCK_BYTES=65536 KVIO_POOL_MAX=2000 "$BUILD/kvio-ingest" -q -o "$T/shuf.db" --sem "$T/st.sem.jsonl" --ebpf "$T/shuf.jsonl" 2>/dev/null
eq "shuffled: exit 0, every command written, the disorder counted" "0|yes|yes" \
	"$?|$(q "$T/shuf.db" "select case when (select count(*) from slice where name in ('read', 'write')) = (select value from kvio_stats where name = 'nvme_cmd_lines') then 'yes' end, case when (select value from kvio_stats where name = 'late_lines') > 1000 then 'yes' end")"

# Pipes (named here, as a process substitution would be: a compressed capture
# read through zcat): the files are read with plain sequential reads, in
# 256 KiB blocks here; the result equals the one from the files themselves.
gzip -c "$T/st.ebpf.jsonl" > "$T/st.ebpf.jsonl.gz"
mkfifo "$T/sem.fifo" "$T/ebpf.fifo"
cat "$T/st.sem.jsonl" > "$T/sem.fifo" & w1=$!
zcat "$T/st.ebpf.jsonl.gz" > "$T/ebpf.fifo" & w2=$!
KVIO_BLOCK_BYTES=262144 "$BUILD/kvio-ingest" -q -o "$T/st3.db" --sem "$T/sem.fifo" --ebpf "$T/ebpf.fifo"
eq "pipe: ingest from named pipes exits 0" 0 $?
kill "$w1" "$w2" 2>/dev/null; wait "$w1" "$w2" 2>/dev/null
sqlite3 -batch -cmd ".load $BUILD/kvio" "$T/st3.db" ".read tests/canon.sql" | grep -v '_file|string' > "$T/st3.canon"
grep -v '_file|string' "$T/st1.canon" > "$T/st1f.canon"
# (but for the file names capture_info records)
eq "pipe: same trace as from the files" "" "$(diff "$T/st1f.canon" "$T/st3.canon" | head -5)"
eq "pipe: same line counts" \
	"$(q "$T/st1.db" "select kind, lines, records, malformed from kvio_file order by kind")" \
	"$(q "$T/st3.db" "select kind, lines, records, malformed from kvio_file order by kind")"

# Compressed inputs: gzip is read as is (a file, a named pipe, the semantic file
# too), the same trace as the plain files; a gzip file that ends mid-stream
# (still being written) is used up to there with one warning and its cut line
# counted; zstd/xz/bzip2 are refused in one line naming the command that works.
gzip -c "$T/st.sem.jsonl" > "$T/st.sem.jsonl.gz"
KVIO_BLOCK_BYTES=262144 "$BUILD/kvio-ingest" -q -o "$T/gz.db" --sem "$T/st.sem.jsonl.gz" --ebpf "$T/st.ebpf.jsonl.gz"
eq "gzip: exit 0" 0 $?
sqlite3 -batch -cmd ".load $BUILD/kvio" "$T/gz.db" ".read tests/canon.sql" | grep -v '_file|string' > "$T/gz.canon"
eq "gzip files: same trace as from the plain files" "" "$(diff "$T/st1f.canon" "$T/gz.canon" | head -5)"
cat "$T/st.ebpf.jsonl.gz" > "$T/ebpf.fifo" & w2=$!
KVIO_BLOCK_BYTES=262144 "$BUILD/kvio-ingest" -q -o "$T/gzp.db" --sem "$T/st.sem.jsonl" --ebpf "$T/ebpf.fifo"
kill "$w2" 2>/dev/null; wait "$w2" 2>/dev/null
sqlite3 -batch -cmd ".load $BUILD/kvio" "$T/gzp.db" ".read tests/canon.sql" | grep -v '_file|string' > "$T/gzp.canon"
eq "gzip through a pipe: same trace as from the plain files" "" "$(diff "$T/st1f.canon" "$T/gzp.canon" | head -5)"
head -c 100000 "$T/st.ebpf.jsonl.gz" > "$T/gzcut.gz"
"$BUILD/kvio-ingest" -q -o "$T/gzcut.db" --sem "$T/st.sem.jsonl" --ebpf "$T/gzcut.gz" 2>"$T/gzcut.err"
eq "gzip cut mid-stream: exit 0, one warning, the cut line counted" "0 1 1" \
	"$? $(grep -c 'gzip stream ends early' "$T/gzcut.err") $(q "$T/gzcut.db" "select truncated_tail from kvio_file where kind = 'ebpf'")"
eq "gzip cut mid-stream: the commands before the cut are kept" "yes" \
	"$([ "$(q "$T/gzcut.db" "select count(*) from slice where name in ('read', 'write')")" -gt 1000 ] && echo yes)"
printf '\050\265\057\375rest of a zstd frame' > "$T/x.jsonl.zst"
"$BUILD/kvio-ingest" -q -o "$T/zst.db" --ebpf "$T/x.jsonl.zst" 2>"$T/zst.err"
eq "zstd input: exit 2, one line naming zstdcat, no database" "2 1 1 absent" \
	"$? $(wc -l < "$T/zst.err") $(grep -c 'zstdcat' "$T/zst.err") $([ -e "$T/zst.db" ] && echo present || echo absent)"

# --sem and --ebpf swapped (a 7 MB device file read whole as the semantic one,
# from the file and through a pipe whose buffer doubles): nothing usable in
# either, so a usage error naming the two files, exit 2, no database
"$BUILD/kvio-ingest" -o "$T/swap.db" --sem "$T/st.ebpf.jsonl" --ebpf "$T/st.sem.jsonl" > "$T/swap.out" 2>"$T/swap.err"
eq "swapped inputs: exit 2, one line naming the swap, no database" "2 1 1 absent" \
	"$? $(wc -l < "$T/swap.err") $(grep -c 'st.ebpf.jsonl and .*st.sem.jsonl look swapped' "$T/swap.err") $([ -e "$T/swap.db" ] && echo present || echo absent)"
cat "$T/st.ebpf.jsonl" > "$T/sem.fifo" & w1=$!
"$BUILD/kvio-ingest" -q -o "$T/swap2.db" --sem "$T/sem.fifo" --ebpf "$T/st.sem.jsonl" 2>"$T/swap2.err"
st=$?
kill "$w1" 2>/dev/null; wait "$w1" 2>/dev/null
eq "swapped inputs through a pipe: the same" "2 1 absent" \
	"$st $(grep -c 'look swapped' "$T/swap2.err") $([ -e "$T/swap2.db" ] && echo present || echo absent)"

# A negative timestamp (CLOCK_MONOTONIC never is) is a malformed record with
# its reason, not a slice 292 years long: device and semantic lines alike.
printf '%s\n' '{"event_type":"nvme_cmd","user_data":1,"op_name":"write","slba":1,"data_len":4096,"ts":-5}' \
	'{"event_type":"nvme_cmd","user_data":2,"op_name":"write","slba":2,"data_len":4096,"ts":9000}' > "$T/neg.ebpf.jsonl"
printf '%s\n' '{"trace_id":0,"op":"store","ts":-1.5}' > "$T/neg.sem.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/neg.db" --sem "$T/neg.sem.jsonl" --ebpf "$T/neg.ebpf.jsonl" 2>"$T/neg.err"
eq "negative ts: exit 0, one malformed line per file, one command kept" "0|ebpf|1 sem|1|1" \
	"$?|$(q "$T/neg.db" "select kind, malformed from kvio_file order by kind" | tr '\n' ' ' | sed 's/ $//')|$(q "$T/neg.db" "select count(*) from slice where name = 'write'")"
eq "negative ts: the reasons, with file:line" "2" "$(grep -c 'jsonl:1: .*ts is not a non-negative number' "$T/neg.err")"

# Binary input through zlib or without NULs in its first line: exit 2, nothing written, one line
# (a gzipped SQLite database; 100 KB of seeded random bytes, plain and gzipped)
gzip -c "$T/tiny.db" > "$T/bin_db.gz"
python3 -c 'import random,sys; r = random.Random(7); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(100000)))' > "$T/bin_rnd"
gzip -c "$T/bin_rnd" > "$T/bin_rnd.gz"
for f in bin_db.gz bin_rnd bin_rnd.gz; do
	"$BUILD/kvio-ingest" -q -o "$T/bin.db" --sem fixtures/tiny/sem.jsonl --ebpf "$T/$f" >/dev/null 2>"$T/bin.err"
	eq "binary input $f: exit 2, nothing written, one line saying it is not JSONL" "2 no 1 1" \
		"$? $([ -e "$T/bin.db" ] && echo yes || echo no) $(wc -l < "$T/bin.err") $(grep -c 'not a JSONL capture\|not JSONL' "$T/bin.err")"
done

# messages: a bad .gz names the file (no zlib "<fd:N>"); a JSONL given to kvio-report or --pftrace says
# what to do; one store without a device file is singular
printf '\037\213\011\000garbage' > "$T/badgz.gz"   # gzip magic, compression method 9 (unknown)
"$BUILD/kvio-ingest" -q -o "$T/m.db" --sem fixtures/tiny/sem.jsonl --ebpf "$T/badgz.gz" >/dev/null 2>"$T/m.err"
eq "bad .gz: the file named, no fd number" "kvio-ingest: $T/badgz.gz: gzip: unknown compression method" "$(cat "$T/m.err")"
"$BUILD/kvio-report" fixtures/tiny/sem.jsonl >/dev/null 2>"$T/m.err"
eq "kvio-report on a JSONL: says to make a database with kvio-ingest" 1 "$(grep -c 'not a kvio database (.*; make one with kvio-ingest)' "$T/m.err")"
"$BUILD/kvio-ingest" -q -o "$T/m.db" --pftrace fixtures/tiny/sem.jsonl >/dev/null 2>"$T/m.err"
eq "--pftrace on a JSONL: says it is JSONL for --sem/--ebpf" \
	"kvio-ingest: fixtures/tiny/sem.jsonl: starts with '{': a JSONL capture, not a Perfetto trace (give it as --sem or --ebpf)" "$(cat "$T/m.err")"
grep -m1 '"store"' fixtures/tiny/sem.jsonl > "$T/one_store.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/m.db" --sem "$T/one_store.jsonl" >/dev/null 2>"$T/m.err"
eq "one store without --ebpf: singular" 1 "$(grep -c 'the 1 store has no commands' "$T/m.err")"

# A semantic file that is refused while --ebpf is a pipe whose writer is still
# open (a tracer that has not written yet): the ingest ends at once (exit 2),
# it does not wait on the pipe (its parse threads start early only on a
# regular file; an early reader of the pipe hung here)
printf 'SQLite format 3\000not a capture' > "$T/notsem.jsonl"
mkfifo "$T/idle.fifo"
sleep 30 > "$T/idle.fifo" & idle=$!
timeout 10 "$BUILD/kvio-ingest" -q -o "$T/idle.db" --sem "$T/notsem.jsonl" --ebpf "$T/idle.fifo" 2>/dev/null
eq "a refused --sem with an idle pipe as --ebpf: exit 2 at once, not a hang" 2 $?
kill "$idle" 2>/dev/null; wait "$idle" 2>/dev/null
