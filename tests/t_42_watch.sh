# kvio-report --last SECONDS and --watch [SECONDS].
#
# fixtures/tiny's timeline (rebased ns; t_20_ingest_tiny.sh lays it out):
#   A write tid 1 [50000000, +50000] 4 KiB      B write tid 1 [50010000, +80000] 128 KiB
#   C read  tid 2 [550000000, +100000] 128 KiB  D read  tid 2 [550200000, +8000 nominal] 128 KiB
#   E read untagged [650000000, +20000] 4 KiB   F write tid 4294967295 [800000000, +8000 nominal] 4 KiB
#   store tid 1 [0, 250000000]   load tid 2 [500000000, 750000000]   (F has no object)
# The latest command or object end: F's, 800008000 (the load ends at 750000000).
#   --last 0.5: [300008000, 800008000] holds C, D, E, F (4 commands, 3 tagged: the pool
#     C + D + F = 131072 + 131072 + 4096 = 266240 bytes), the load (not the store);
#     read latency over the pool's real reads: C alone, 100000 ns; in flight at the end:
#     F's trace_id (commands, no object), age 800008000 - 800000000 = 8000 ns;
#     rates over the 0.5 s: 8 cmds/s, 266240 / 0.5 / 1e6 = 0.53248 MB/s
#   --last 0.2: [600008000, 800008000] holds E and F (2 commands, 1 tagged), the load
R=$BUILD/kvio-report
TD=$T/w42
mkdir -p "$TD"
DB=$TD/tiny.db
"$BUILD/kvio-ingest" -q -o "$DB" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
# jget FILE EXPR: python's value of EXPR over the JSON document d in FILE
jget() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>&1; }

"$R" "$DB" --last 0.5 --json > "$TD/l5.json"
eq "--last 0.5: exit 0" 0 $?
eq "--last 0.5: C, D, E, F (4 commands, 3 tagged, 1 untagged, pool bytes 266240)" "4 3 1 266240" \
	"$(jget "$TD/l5.json" "d['capture']['commands']['n'], d['capture']['commands']['tagged'], d['capture']['commands']['untagged'], d['capture']['commands']['tagged_bytes']" | tr -d '(),')"
eq "--last 0.5: the window recorded as --time-range's: [0.300008, 0.800008]" "[0.300008, 0.800008]" \
	"$(jget "$TD/l5.json" "d['capture']['capture']['time_range']")"
eq "--last 0.5: the load only (the store ended before the window)" "['load'] 1" \
	"$(jget "$TD/l5.json" "sorted(d['capture']['objects']), d['capture']['objects']['load']['n']" | tr -d '(),')"
eq "--last 0.5: read latency of C alone (D is nominal, E untagged)" "100000 1" \
	"$(jget "$TD/l5.json" "d['capture']['lat_read']['p50'], d['capture']['lat_read']['n']" | tr -d '(),')"
"$R" "$DB" --last 0.2 --json > "$TD/l2.json"
eq "--last 0.2: E and F (2 commands, 1 tagged), window [0.600008, 0.800008]" "2 1 [0.600008, 0.800008]" \
	"$(jget "$TD/l2.json" "'%d %d %s' % (d['capture']['commands']['n'], d['capture']['commands']['tagged'], d['capture']['capture']['time_range'])")"
# --last equals --time-range of the same window, byte for byte (text, --json, --label, --html)
"$R" "$DB" --time-range 0.300008,0.800008 --json > "$TD/t5.json"
ok "--last 0.5 --json = --time-range 0.300008,0.800008 --json, byte for byte" cmp "$TD/l5.json" "$TD/t5.json"
"$R" "$DB" --last 0.5 > "$TD/l5.txt"; "$R" "$DB" --time-range 0.300008,0.800008 > "$TD/t5.txt"
ok "--last 0.5 text = --time-range text, byte for byte" cmp "$TD/l5.txt" "$TD/t5.txt"
eq "--last 0.5 text: the window line" "  window  : time [0.300008, 0.800008] s (the metrics describe this window only)" \
	"$(grep '^  window' "$TD/l5.txt")"
"$R" "$DB" --last 0.2 --label capture --json > "$TD/l2l.json"; "$R" "$DB" --time-range 0.600008,0.800008 --label capture --json > "$TD/t2l.json"
ok "--last 0.2 --label = --time-range --label, byte for byte" cmp "$TD/l2l.json" "$TD/t2l.json"
"$R" "$DB" --last 0.5 --html "$TD/l5.html" >/dev/null; "$R" "$DB" --time-range 0.300008,0.800008 --html "$TD/t5.html" >/dev/null
ok "--last 0.5 --html = --time-range --html, byte for byte" cmp "$TD/l5.html" "$TD/t5.html"

"$R" "$DB" --last 0.2 --trace-id 4294967295 --json > "$TD/l2t.json"
eq "--last 0.2 --trace-id 4294967295: both windows apply (F alone)" "1 [0.600008, 0.800008] [4294967295, 4294967295]" \
	"$(jget "$TD/l2t.json" "'%d %s %s' % (d['capture']['commands']['n'], d['capture']['capture']['time_range'], d['capture']['capture']['trace_id'])")"
"$R" "$DB" "$DB" --last 0.2 --json > "$TD/l2m.json"
eq "--last with two databases: each report's window (2 commands each)" "[2, 2]" \
	"$(jget "$TD/l2m.json" "[x['capture']['commands']['n'] for x in d]")"

# usage: --last with --time-range, --count without --watch, --watch with an output file: exit 2, one line
for bad in "--last 1 --time-range 0,1" "--last 0" "--last x" "--last -1" "--count 2" "--watch --html $TD/x.html" \
	"--watch --json $TD/x.json" "--watch --count 0" "--last 1 --compare $DB"; do
	# shellcheck disable=SC2086
	"$R" "$DB" $bad > "$TD/bad.out" 2> "$TD/bad.err"
	eq "usage: $bad -> exit 2, one line on stderr, nothing on stdout" "2 1 0" \
		"$? $(wc -l < "$TD/bad.err") $(wc -c < "$TD/bad.out")"
done

# a number after --watch that is not a refresh time is said as one (not taken for a second
# database); a --last or --watch above a year says its bound
for bad in "--watch 0" "--watch -1" "--watch 1e9" "--watch=0" "--last 99999999999"; do
	# shellcheck disable=SC2086
	"$R" "$DB" $bad --count 1 > "$TD/bad.out" 2> "$TD/bad.err"
	eq "usage: $bad -> exit 2, the seconds' bounds said" "2 1" \
		"$? $(grep -c "'${bad#*[ =]}': expected a number of seconds above 0, at most 32000000 (a year)" "$TD/bad.err")"
done

# a database whose name starts with a digit after --watch is a database, not a refresh time
cp "$DB" "$TD/2026-12-04.db"
(cd "$TD" && "$R" --watch 2026-12-04.db --count 1 > d.out 2> d.err)
eq "--watch 2026-12-04.db: that database watched (exit 0, one JSON line)" "0 1" "$? $(wc -l < "$TD/d.out")"

# --watch without a terminal: one JSON line per refresh, --count of them
"$R" "$DB" --watch 0.1 --count 3 --last 0.5 > "$TD/w3.out" 2> "$TD/w3.err"
eq "--watch --count 3: exit 0, 3 lines, nothing on stderr" "0 3 0" "$? $(wc -l < "$TD/w3.out") $(wc -c < "$TD/w3.err")"
eq "--watch --count 3: each line one JSON document: refresh 1..3, the window, the report's counts" \
	"1 [0.300008, 0.800008] 4|2 [0.300008, 0.800008] 4|3 [0.300008, 0.800008] 4|" \
	"$(/usr/bin/python3 -c "
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(d['refresh'], d['window'], d['report']['capture']['commands']['n'], end='|')" "$TD/w3.out" 2>&1)"
eq "--watch: live numbers: 8 cmds/s, 0.53248 MB/s, 1 in flight (F), 8000 ns old" "8.0 0.53248 1 8000" \
	"$(/usr/bin/python3 -c "
import json, sys
d = json.loads(open(sys.argv[1]).readline())['live']['capture']
print(round(d['cmds_per_s'], 6), round(d['mb_per_s'], 6), d['inflight'], d['oldest_inflight_ns'])" "$TD/w3.out" 2>&1)"
/usr/bin/python3 -c "
import json, sys
a = json.loads(open(sys.argv[1]).readline())['report']; b = json.load(open(sys.argv[2]))
sys.exit(a != b)" "$TD/w3.out" "$TD/l5.json"
eq "--watch: a line's report is the --json report of the window" 0 $?
eq "--watch: the JSON lines are compact (no blank after ':' or ',')" 0 "$(grep -c '": \|, "' "$TD/w3.out")"
"$R" "$DB" --watch 0.1 --count 2 > "$TD/wd.out" 2>/dev/null
eq "--watch alone: --last 10 (the window [-9.199992, 0.800008], all 6 commands)" "[-9.199992, 0.800008] 6" \
	"$(/usr/bin/python3 -c "
import json, sys
d = json.loads(open(sys.argv[1]).readline()); print(d['window'], d['report']['capture']['commands']['n'])" "$TD/wd.out" 2>&1)"

# --fail-on under --watch: exit 3 at the first firing (C's read latency is 100 us)
"$R" "$DB" --watch 0.1 --count 5 --last 0.5 --fail-on 'read.p99>1us' > "$TD/f.out" 2> "$TD/f.err"
eq "--watch --fail-on read.p99>1us: exit 3 after the first refresh (one line out, the gate's line)" "3 1 1" \
	"$? $(wc -l < "$TD/f.out") $(grep -c 'read.p99' "$TD/f.err")"
"$R" "$DB" --watch 0.1 --count 2 --last 0.5 --fail-on 'read.p99>1ms' > "$TD/f2.out" 2>&1
eq "--watch --fail-on read.p99>1ms: never fires, exit 0 after 2 refreshes" "0 2" "$? $(wc -l < "$TD/f2.out")"

# SIGINT and SIGTERM end a watch with exit 0. sigwatch SIG OUT CMD...: CMD started with
# SIGINT/SIGTERM at their defaults (a background job of a non-interactive shell has them
# ignored, and kvio keeps an ignored signal ignored), SIG sent once OUT has a line;
# prints its exit status ("timeout" if it does not end within 20 s: then killed)
sigwatch() {
	/usr/bin/python3 - "$@" <<'PY'
import os, signal, subprocess, sys, time
sig, out, cmd = getattr(signal, 'SIG' + sys.argv[1]), sys.argv[2], sys.argv[3:]
def defaults():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
with open(out, 'wb') as f:
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL, preexec_fn=defaults)
    t0 = time.monotonic()
    while os.path.getsize(out) == 0 and p.poll() is None and time.monotonic() - t0 < 20:
        time.sleep(0.05)
    p.send_signal(sig)
    try:
        print(p.wait(timeout=20))
    except subprocess.TimeoutExpired:
        p.kill(); p.wait(); print('timeout')
PY
}
for sig in INT TERM; do
	rc=$(sigwatch $sig "$TD/s.out" "$R" "$DB" --watch 0.2)
	eq "--watch: SIG$sig -> exit 0, after at least one refresh" "0 yes" "$rc $([ -s "$TD/s.out" ] && echo yes || echo no)"
done

# a missing, then damaged, database: one line per refresh, no crash, the last refresh's status
"$R" "$TD/none.db" --watch 0.1 --count 3 > "$TD/m.out" 2> "$TD/m.err"
eq "--watch on a missing database: exit 2, 3 lines on stderr (one a refresh), nothing out" "2 3 0" \
	"$? $(wc -l < "$TD/m.err") $(wc -c < "$TD/m.out")"
sz=$(wc -c < "$DB"); head -c $((sz / 2)) "$DB" > "$TD/half.db"
printf 'this is no database' > "$TD/junk.db"
for bad in half junk; do
	"$R" "$TD/$bad.db" --watch 0.1 --count 3 > "$TD/d.out" 2> "$TD/d.err"
	eq "--watch on a damaged database ($bad): exit 2, one line per refresh" "2 3" "$? $(wc -l < "$TD/d.err")"
done
# a database that appears while the watch runs: the refreshes before it say so, the ones after report it
"$R" "$TD/late.db" --watch 0.3 --count 6 --last 0.5 > "$TD/late.out" 2> "$TD/late.err" &
pid=$!
sleep 0.6
cp "$DB" "$TD/late.tmp" && mv "$TD/late.tmp" "$TD/late.db"
wait $pid
rc=$?
nerr=$(wc -l < "$TD/late.err"); nout=$(wc -l < "$TD/late.out")
eq "--watch: a database created meanwhile: 6 refreshes (lines out + lines on stderr), the last ones report it" \
	"0 6 yes" "$rc $((nerr + nout)) $([ "$nerr" -ge 1 ] && [ "$nout" -ge 1 ] && echo yes || echo no)"

# a database that grows: a capture re-ingested bigger and renamed over the watched path
G=$TD/gen
"$BUILD/kvio-gen" --sem "$G.s1.jsonl" --ebpf "$G.e1.jsonl" --lines 6000 2>/dev/null
"$BUILD/kvio-gen" --sem "$G.s2.jsonl" --ebpf "$G.e2.jsonl" --lines 30000 2>/dev/null
n1=$(grep -c '"nvme_cmd"' "$G.e1.jsonl"); n2=$(grep -c '"nvme_cmd"' "$G.e2.jsonl")
"$BUILD/kvio-ingest" -q -o "$TD/g1.db" --sem "$G.s1.jsonl" --ebpf "$G.e1.jsonl"
"$BUILD/kvio-ingest" -q -o "$TD/g2.db" --sem "$G.s2.jsonl" --ebpf "$G.e2.jsonl"
cp "$TD/g1.db" "$TD/grow.db"
"$R" "$TD/grow.db" --watch 0.2 --last 1000 --count 12 > "$TD/g.out" 2> "$TD/g.err" &
pid=$!
i=0; while [ ! -s "$TD/g.out" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done # its first refresh
mv "$TD/g2.db" "$TD/grow.db"
wait $pid
eq "--watch on a database replaced by a bigger one: --count 12, exit 0, the counts go from the first capture's commands to the second's" \
	"0 $n1 $n2 up" "$? $(/usr/bin/python3 -c "
import json, sys
ns = [json.loads(l)['report']['capture']['commands']['n'] for l in open(sys.argv[1])]
print(ns[0], ns[-1], 'up' if all(a <= b for a, b in zip(ns, ns[1:])) else 'DOWN: %s' % ns)" "$TD/g.out" 2>&1)"

# the terminal view (under script(1): standard output is a terminal)
if command -v script >/dev/null 2>&1; then
	script -qc "$R $DB --watch 0.1 --count 2 --last 0.5" /dev/null > "$TD/tty.out" 2>&1
	eq "terminal: exit 0" 0 $?
	tr -d '\r' < "$TD/tty.out" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' > "$TD/tty.txt"
	eq "terminal: the screen is redrawn in place (home + clear at each of the 2 refreshes)" 2 \
		"$(grep -o "$(printf '\033')\[H$(printf '\033')\[2J" "$TD/tty.out" | wc -l)"
	eq "terminal: the block's numbers (8 cmds/s, 0.5 MB/s, 4 commands)" 2 \
		"$(grep -c '^\[capture\]  cmds/s 8  MB/s 0.5  commands 4$' "$TD/tty.txt")"
	eq "terminal: read p50/p99 100.0us, no write in the pool's window but F (nominal: no latency)" \
		"  read  p50 100.0us   p99 100.0us    write p50 -         p99 -" "$(grep '^  read' "$TD/tty.txt" | head -1)"
	eq "terminal: objects in flight (F) and the oldest's age" "  objects in flight 1  oldest 8.0us" \
		"$(grep 'in flight' "$TD/tty.txt" | head -1)"
	eq "terminal: the window line" "window [0.300, 0.800] s (the last 0.5s to the latest event)" \
		"$(grep '^window' "$TD/tty.txt" | head -1)"
	eq "terminal: cq_overflow 1 (the fixture's) in red at both refreshes, drops 0 not" "2 0" \
		"$(grep -c "cq_overflow $(printf '\033')\[31;1m1" "$TD/tty.out" | head -1) $(grep -c "drops $(printf '\033')\[31" "$TD/tty.out")"
	eq "terminal: the losses' line indented as the others (2 spaces, not 3)" "0 yes" \
		"$(grep -c '   drops' "$TD/tty.out") $([ "$(grep -c '  drops' "$TD/tty.out")" -ge 1 ] && echo yes)"
	# kvio-gen's default capture loads at queue depth 1 (the QD~1 bug) and stores batched
	script -qc "$R $TD/g1.db --watch --count 1" /dev/null > "$TD/ttyq.out" 2>&1
	eq "terminal: a serialized load's verdict in red, the pipelined store's not" "1 0" \
		"$(grep -c "load $(printf '\033')\[31;1mQD~1 (gap" "$TD/ttyq.out") $(grep -c "store $(printf '\033')\[31" "$TD/ttyq.out")"
	script -qc "$R $DB --watch 0.1 --count 1 --last 0.5 --json" /dev/null > "$TD/ttyj.out" 2>&1
	eq "terminal with --json: JSON lines all the same" 1 "$(tr -d '\r' < "$TD/ttyj.out" | grep -c '^{"refresh":1,')"
else
	echo "ok - # SKIP terminal view: no script(1)"
fi

# a database whose command chunks are damaged (their own checksums): each refresh says so
cp "$DB" "$TD/dmg.db"
sqlite3 "$TD/dmg.db" "update kvio_cmd_chunk set data = zeroblob(length(data))"
"$R" "$TD/dmg.db" --watch 0.1 --count 3 --last 0.5 > "$TD/dm.out" 2> "$TD/dm.err"
eq "--watch on damaged chunks: exit 2, the damage said at each of the 3 refreshes" "2 3 3" \
	"$? $(wc -l < "$TD/dm.err") $(grep -c 'kvio_cmd_chunk 1: not a chunk' "$TD/dm.err")"
