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

# still-growing file: the unterminated tail is skipped, the rest is used
head -c 300 fixtures/tiny/ebpf.jsonl > "$T/grow.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/grow.db" --ebpf "$T/grow.jsonl" 2>/dev/null
eq "growing: exit 0" 0 $?
eq "growing: 1 anchor used, 1 truncated tail" "2|1|1" \
	"$(q "$T/grow.db" "select lines, records, truncated_tail from kvio_file")"

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

# the same bad file read in two halves on two threads (forced split): same
# counts, and the reported line numbers are still absolute
KVIO_SPLIT_MIN=100 "$BUILD/kvio-ingest" -q -o "$T/bad2.db" --sem fixtures/bad/sem.jsonl --ebpf fixtures/bad/ebpf.jsonl 2>"$T/bad2.err"
eq "bad, split read: same per-file counts" \
	"ebpf|12|3|1|6|1|1 sem|2|1|0|1|0|0" \
	"$(q "$T/bad2.db" "select kind, lines, records, blank, malformed, truncated_tail, other from kvio_file order by kind" | tr '\n' ' ' | sed 's/ $//')"
eq "bad, split read: same messages" "$(cat "$T/bad.err")" "$(cat "$T/bad2.err")"
KVIO_SPLIT_MIN=100 "$BUILD/kvio-ingest" -q -o "$T/tiny2.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
eq "tiny, split read: same slices" \
	"$(q "$T/tiny.db" "select ts, dur, name, track_id, arg_set_id from slice order by id")" \
	"$(q "$T/tiny2.db" "select ts, dur, name, track_id, arg_set_id from slice order by id")"
eq "tiny, split read: same threads" \
	"$(q "$T/tiny.db" "select tid, name from thread order by tid, name")" \
	"$(q "$T/tiny2.db" "select tid, name from thread order by tid, name")"

# a uint above 2^63 keeps value_type 'uint' and prints unsigned (extract_arg gives
# the int64 bit pattern, as trace_processor does)
printf '%s\n' '{"event_type":"nvme_cmd","user_data":1,"op_name":"write","slba":18446744073709551615,"data_len":4096,"ts":5}' > "$T/big.jsonl"
"$BUILD/kvio-ingest" -q -o "$T/big.db" --ebpf "$T/big.jsonl"
eq "uint above 2^63: args row" "uint|-1|18446744073709551615" \
	"$(q "$T/big.db" "select value_type, int_value, display_value from args where key = 'debug.slba'")"

# empty inputs: a database all the same, and a warning that says what is likely wrong
: > "$T/empty.jsonl"
"$BUILD/kvio-ingest" -o "$T/empty.db" --sem "$T/empty.jsonl" --ebpf "$T/empty.jsonl" > "$T/empty.out" 2>&1
eq "empty inputs: exit 0" 0 $?
eq "empty inputs: both warnings" 2 "$(grep -c 'WARNING: .*empty.jsonl has no' "$T/empty.out")"
eq "empty inputs: warnings kept in the database" 2 "$(q "$T/empty.db" "select count(*) from kvio_warning")"
