# t_46_progress.sh — the progress line of long work (lib/progress.c, issue 24),
# run on a terminal made by util-linux `script`: kvio-ingest, kvio-export,
# kvio-report (--html too) and kvio2perfetto draw "NAME: N UNIT, P% (...)" on
# stderr, at most ~10 times a second, only on a terminal and never with -q;
# what they write is the same byte for byte as with -q. The expected counts
# come from wc and sqlite3, not from kvio. KVIO_PROGRESS_DELAY_MS=0 draws from
# the first block (the default waits 0.5 s); KVIO_BLOCK_BYTES makes many blocks.
if ! command -v script >/dev/null 2>&1; then
	FAIL=$((FAIL + 1)); echo "FAIL - progress: no util-linux script (a terminal for the tests)"
	return 0 2>/dev/null || exit 0
fi
P=$T/prog
mkdir -p "$P"
"$BUILD/kvio-gen" --sem "$P/s.jsonl" --ebpf "$P/e.jsonl" --lines 20000 --mode batched --seed 3 2>/dev/null
gzip -c "$P/e.jsonl" > "$P/e.jsonl.gz"
NL=$(wc -l < "$P/e.jsonl" | tr -d ' ')
# on_tty NAME 'COMMAND': COMMAND on a terminal (stdout and stderr both), what the
# terminal showed in $P/NAME.tty (\r made a line end), its exit status in $P/NAME.rc
on_tty() {
	script -qec "env KVIO_PROGRESS_DELAY_MS=0 $2" /dev/null < /dev/null > "$P/$1.raw" 2>&1
	echo $? > "$P/$1.rc"
	tr '\r' '\n' < "$P/$1.raw" | sed 's/\x1b\[K//g' > "$P/$1.tty"
}
# plines NAME PATTERN: the lines of NAME's terminal that match PATTERN (grep -E)
plines() { grep -Ec -- "$2" "$P/$1.tty"; }

## kvio-ingest: a regular file (a share of its bytes), gzip (of its compressed bytes), a pipe (no share)
t0=$(date +%s.%N)
on_tty ing "KVIO_BLOCK_BYTES=4096 $BUILD/kvio-ingest -o $P/tty.db --sem $P/s.jsonl --ebpf $P/e.jsonl"
dt=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
"$BUILD/kvio-ingest" -q -o "$P/q.db" --sem "$P/s.jsonl" --ebpf "$P/e.jsonl" > "$P/q.out" 2> "$P/q.err"
eq "ingest on a terminal: exit 0; lines 'e.jsonl: N lines, P% (R MB/s, ETA T s)' drawn" "0 1" \
	"$(cat "$P/ing.rc") $([ "$(plines ing '^kvio-ingest: [^ ]*e\.jsonl: [0-9]+ lines, [0-9]+% \([0-9]+ MB/s, ETA [0-9.]+ s\)$')" -ge 1 ] && echo 1)"
eq "ingest on a terminal: the last line is every line of the file ($NL, wc -l), 100%, the time taken" 1 \
	"$(plines ing "^kvio-ingest: [^ ]*e\.jsonl: $NL lines, 100% \([0-9]+ MB/s, [0-9.]+ s\)$")"
# ~1,000 blocks of 4 KB, one tick each: at most ~10 redraws a second (and 2 more: the first, the last)
draws=$(plines ing '^kvio-ingest: [^ ]*e\.jsonl: [0-9]+ lines')
eq "ingest on a terminal: $(($(wc -c < "$P/e.jsonl") / 4096)) blocks in ${dt}s, at most 10 redraws a second + 2 ($draws drawn)" 1 \
	"$(awk "BEGIN{print $draws <= 2 + 10 * $dt}")"
eq "ingest on a terminal: the same database as with -q (sqlite3 .dump)" "" \
	"$(sqlite3 "$P/tty.db" .dump > "$P/tty.dump"; sqlite3 "$P/q.db" .dump > "$P/q.dump"; cmp "$P/tty.dump" "$P/q.dump" 2>&1)"
eq "ingest on a terminal: the summary on stdout is today's (the progress line stays above it)" 1 \
	"$(plines ing '^kvio-ingest: wrote .*/tty\.db$')"

on_tty gz "KVIO_BLOCK_BYTES=4096 $BUILD/kvio-ingest -o $P/gz.db --sem $P/s.jsonl --ebpf $P/e.jsonl.gz"
eq "ingest of a gzip file: a share of its compressed bytes, 100% at the end with all $NL lines" "0 1 1" \
	"$(cat "$P/gz.rc") $([ "$(plines gz '^kvio-ingest: [^ ]*e\.jsonl\.gz: [0-9]+ lines, [0-9]+% \(')" -ge 1 ] && echo 1) $(plines gz "e\.jsonl\.gz: $NL lines, 100% ")"

on_tty pipe "sh -c 'cat $P/e.jsonl | KVIO_BLOCK_BYTES=4096 $BUILD/kvio-ingest -o $P/pipe.db --sem $P/s.jsonl --ebpf -'"
eq "ingest of a pipe: the count and the rate, no share (its size is not known)" "0 0 1" \
	"$(cat "$P/pipe.rc") $(plines pipe '^kvio-ingest: (-|/dev/stdin): [0-9]+ lines.*%') $(plines pipe "^kvio-ingest: (-|/dev/stdin): $NL lines \([0-9]+ MB/s, [0-9.]+ s\)$")"

on_tty quiet "KVIO_BLOCK_BYTES=4096 $BUILD/kvio-ingest -q -o $P/quiet.db --sem $P/s.jsonl --ebpf $P/e.jsonl"
KVIO_PROGRESS_DELAY_MS=0 KVIO_BLOCK_BYTES=4096 "$BUILD/kvio-ingest" -o "$P/notty.db" --sem "$P/s.jsonl" --ebpf "$P/e.jsonl" \
	> "$P/notty.out" 2> "$P/notty.err"
eq "ingest: no progress line with -q on a terminal, nor when stderr is a file" "0 0 0" \
	"$(plines quiet ' lines') $(grep -c ' lines' "$P/notty.err") $(wc -c < "$P/notty.err" | tr -d ' ')"

# a line that is not JSON late in the file: its error starts a line of its own (the progress line cleared first)
{ head -n 15000 "$P/e.jsonl"; echo '{"event_type": nope'; tail -n +15001 "$P/e.jsonl"; } > "$P/bad.jsonl"
on_tty bad "KVIO_BLOCK_BYTES=4096 $BUILD/kvio-ingest -o $P/bad.db --sem $P/s.jsonl --ebpf $P/bad.jsonl"
eq "ingest: an error after the progress line was drawn is on a line of its own" 1 \
	"$(grep -c '^kvio-ingest: [^ ]*bad\.jsonl:15001: ' "$P/bad.tty")"

## kvio-export: command chunks written of the database's
NC=$(sqlite3 "$P/q.db" "select count(*) from kvio_cmd_chunk")
on_tty exp "$BUILD/kvio-export $P/q.db -o $P/tty.pftrace"
"$BUILD/kvio-export" -q "$P/q.db" -o "$P/q.pftrace" > "$P/xq.out" 2>&1
eq "export on a terminal: 'q.db: K of $NC chunks, P%' ($NC: sqlite3's count), the line cleared at the end" "0 1 1" \
	"$(cat "$P/exp.rc") $([ "$(plines exp "^kvio-export: [^ ]*q\.db: [0-9]+ of $NC chunks, [0-9]+%")" -ge 1 ] && echo 1) $(plines exp '^kvio-export: wrote ')"
eq "export: the same .pftrace as with -q, which prints nothing" "|0" "$(cmp "$P/tty.pftrace" "$P/q.pftrace" 2>&1)|$(wc -c < "$P/xq.out" | tr -d ' ')"

## kvio-report --json --html: analyses run of the queue's
on_tty rep "$BUILD/kvio-report $P/q.db --json=$P/tty.json --html $P/tty.html"
"$BUILD/kvio-report" "$P/q.db" --json="$P/q.json" --html "$P/q.html" > "$P/rq.out" 2> "$P/rq.err"
eq "report --html on a terminal: 'q.db: K of N analyses, P%' drawn, then cleared (the text report follows)" "0 1 0" \
	"$(cat "$P/rep.rc") $([ "$(plines rep '^kvio-report: [^ ]*q\.db: [0-9]+ of [0-9]+ analyses, [0-9]+%')" -ge 1 ] && echo 1) $(grep -c 'analyses' "$P/rq.err")"
eq "report on a terminal: the text report's first line starts a line (off a terminal: no progress on stderr)" "1|" \
	"$(grep -Fxc -- "$(head -n 1 "$P/rq.out")" "$P/rep.tty" | awk '{print ($1 >= 1)}')|$(cat "$P/rq.err")"
eq "report on a terminal: the same JSON and the same page as off it" "" "$(cmp "$P/tty.json" "$P/q.json" 2>&1)$(cmp "$P/tty.html" "$P/q.html" 2>&1)"
on_tty rep2 "$BUILD/kvio-report $P/q.db $P/gz.db --json=$P/two.json"
eq "report of two databases (children): no child draws a progress line" "0 0" "$(cat "$P/rep2.rc") $(plines rep2 'analyses')"

## kvio2perfetto: the ingest's line, then the export's
on_tty k2p "KVIO_BLOCK_BYTES=4096 $BUILD/kvio2perfetto -o $P/tty.k.pftrace --sem $P/s.jsonl --ebpf $P/e.jsonl"
"$BUILD/kvio2perfetto" -q -o "$P/q.k.pftrace" --sem "$P/s.jsonl" --ebpf "$P/e.jsonl"
eq "kvio2perfetto on a terminal: the ingest's 100% line and the export's chunks; the same trace as with -q" "0 1 1 " \
	"$(cat "$P/k2p.rc") $(plines k2p "^kvio2perfetto: [^ ]*e\.jsonl: $NL lines, 100% ") $([ "$(plines k2p "^kvio2perfetto: [^ ]*tty\.k\.pftrace: [0-9]+ of $NC chunks")" -ge 1 ] && echo 1) $(cmp "$P/tty.k.pftrace" "$P/q.k.pftrace" 2>&1)"
