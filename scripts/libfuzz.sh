#!/bin/sh
# libfuzz.sh — the libFuzzer part of `make fuzz` (issue 21: a trace.db is untrusted input).
#
#   sh scripts/libfuzz.sh BUILD_DIR FUZZ_DIR CORPUS_DIR SECONDS
#
# BUILD_DIR: kvio-ingest (the ASan build); FUZZ_DIR: the targets fuzz_chunk and fuzz_db
# (tests/fuzz_chunk.c, tests/fuzz_db.c). Seeds, made here into CORPUS_DIR (not committed):
# CORPUS_DIR/db, small databases of fixtures/tiny, the A/B merge of fixtures/ab and fixtures/kv
# --join-by-key (VACUUMed to 512-byte pages: ~30 KiB each), and CORPUS_DIR/chunk, their chunk
# blobs; what a target adds to its corpus stays there for the next run. Each target runs
# SECONDS seconds (niced) and stops at its first finding, which it leaves in
# FUZZ_DIR/artifacts (crash-, leak-, timeout-, oom- files: run the target on one to see it).
# One line per target: executions, executions per second, findings. Exit 1 on a finding.
set -u
B=$1 F=$2 C=$3 S=$4
fail() { echo "libfuzz: $*" >&2; exit 2; }
[ -x "$B/kvio-ingest" ] || fail "$B/kvio-ingest: not built"
command -v sqlite3 > /dev/null || fail "no sqlite3 command"
mkdir -p "$C/db" "$C/chunk" "$F/artifacts" || fail "cannot make $C"
X=fixtures
seed() {
	name=$1; shift
	t="$C/$name.tmp.db"
	rm -f "$t"
	ASAN_OPTIONS=detect_leaks=0 "$B/kvio-ingest" -q -o "$t" "$@" 2> "$C/$name.err" || fail "kvio-ingest $*: $(cat "$C/$name.err")"
	sqlite3 "$t" "PRAGMA page_size = 512; VACUUM;" || fail "vacuum $t"
	cp "$t" "$C/db/seed-$name.db"
	sqlite3 "$t" "SELECT writefile('$C/chunk/seed-$name-' || id, data) FROM kvio_cmd_chunk" > /dev/null || fail "chunks of $t"
	rm -f "$t" "$C/$name.err"
}
seed tiny --sem $X/tiny/sem.jsonl --ebpf $X/tiny/ebpf.jsonl
seed ab --merge A=$X/ab/a.sem.jsonl,$X/ab/a.ebpf.jsonl,$X/ab/a.serving.jsonl --merge B=$X/ab/b.sem.jsonl,$X/ab/b.ebpf.jsonl
seed kv --sem $X/kv/sem.jsonl --ebpf $X/kv/ebpf.jsonl --join-by-key

rc=0
for t in chunk db; do
	exe="$F/fuzz_$t"
	[ -x "$exe" ] || fail "$exe: not built"
	log="$F/fuzz_$t.log"
	before=$(ls "$F/artifacts" | grep -c "^fuzz_$t-")
	# max_len: a chunk of 8192 commands is 344 KiB; a seed database ~40 KiB
	case $t in chunk) len=360000 ;; db) len=131072 ;; esac
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		nice -n 10 "$exe" -max_total_time="$S" -print_final_stats=1 -max_len=$len -timeout=20 -rss_limit_mb=2048 \
		-artifact_prefix="$F/artifacts/fuzz_$t-" "$C/$t" > "$log" 2>&1
	code=$?
	after=$(ls "$F/artifacts" | grep -c "^fuzz_$t-")
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	found=$((after - before))
	[ $code -ne 0 ] && [ $found -eq 0 ] && found=1 # a finding without an artifact (the target died)
	what=""
	if [ $found -gt 0 ]; then
		rc=1
		what=": $(grep -m1 -E 'ERROR: |runtime error|SUMMARY|fuzz_chunk: chunk_check passed|deadly signal|timeout' "$log" | cut -c1-200)"
		what="$what (log $log; artifacts $F/artifacts/fuzz_$t-*)"
	fi
	echo "libfuzz fuzz_$t: ${n:-?} executions in ${S} s (${eps:-?} exec/s), $found finding$( [ $found = 1 ] || echo s)$what"
done
exit $rc
