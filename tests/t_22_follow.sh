# kvio-ingest --follow (issue 22): a capture appended in bursts (lines often
# cut in the middle until the next burst) while the follower runs; a reader
# polls kvio-report --json and kvio-check throughout. The expected values are
# a second method: kvio-ingest of the same final files (its report, its
# canon.sql text, its exported .pftrace), and the lines the files hold
# (counted with grep). Small captures of build/kvio-gen.
G=$T/f22
mkdir -p "$G"
ING=$BUILD/kvio-ingest
"$BUILD/kvio-gen" --sem "$G/s.jsonl" --ebpf "$G/e.jsonl" --serving "$G/v.jsonl" --lines 60000 --seed 5 2>/dev/null
"$BUILD/kvio-gen" --sem "$G/s2.jsonl" --ebpf "$G/e2.jsonl" --lines 30000 --seed 6 --faults 40 --mode batched 2>/dev/null
NCMD=$(grep -c '"event_type":"nvme_cmd"' "$G/e.jsonl")

# rj DB: the report's JSON without capture.follow (the one key a follow adds)
rj() {
	"$BUILD/kvio-report" --json "$1" > "$1.rj" 2>"$1.rj.err" || { echo "report-failed"; return; }
	# kvio's JSON is Python's json.dumps(indent=1) text: read back and written again
	# without the key, the rest stays byte for byte
	/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for v in r.values():
    if isinstance(v, dict) and isinstance(v.get("capture"), dict):
        v["capture"].pop("follow", None)
print(json.dumps(r, indent=1))' "$1.rj"
}
canon() { sqlite3 -batch -cmd ".load $BUILD/kvio" "$1" ".read tests/canon.sql"; }
meta() { sqlite3 -batch "$1" "select int_value from metadata where name = '$2'"; }
# await WANT N FN ARGS...: FN ARGS (its output in $got) every 50 ms until it
# prints WANT, N tries, or the follower $FP has ended
await() {
	aw_want=$1 aw_n=$2
	shift 2
	got="" tries=0
	while [ "$got" != "$aw_want" ] && [ $tries -lt "$aw_n" ] && kill -0 $FP 2>/dev/null; do
		tries=$((tries + 1)); sleep 0.05; got=$("$@" 2>/dev/null)
	done
}
nchunk() { sqlite3 -readonly "$1" "select sum(n) from kvio_cmd_chunk"; }   # commands in the chunks
ncmds() { sqlite3 -readonly -cmd ".load $BUILD/kvio" "$1" "select count(*) from kvio_cmds"; }
fstat() { sqlite3 -readonly "$1" "select value from kvio_stats where name = '$2'"; }   # a kvio_stats row
# poll DB PID OUT: kvio-report --json and kvio-check on DB while PID runs; OUT
# gets one line per poll: "report-rc check-rc commands"
poll() {
	: > "$3"
	while kill -0 "$2" 2>/dev/null; do
		if [ -f "$1" ]; then
			"$BUILD/kvio-report" --json "$1" > "$3.json" 2>>"$3.err"; r=$?
			"$BUILD/kvio-check" "$1" > /dev/null 2>>"$3.err"; c=$?
			echo "$r $c $(jq '[.[] | objects | .commands.n // 0] | add // 0' "$3.json" 2>/dev/null)" >> "$3"
		fi
		sleep 0.1
	done
}
# polls_ok OUT: "N polls, all ok, counts never down" (or what went wrong)
polls_ok() {
	awk 'BEGIN { bad = 0; last = -1; n = 0 }
	     { n++; if ($1 != 0 || $2 != 0) bad++; if ($3 + 0 < last) down++; last = $3 + 0; seen[$3] = 1 }
	     END { k = 0; for (x in seen) k++;
		   printf "%s", (n >= 3 && bad == 0 && down == 0 && k >= 3) ? "ok" : "n=" n " bad=" bad " down=" down+0 " distinct=" k }' "$1"
	# a data warning on a capture-so-far is the report's to give (an arm whose
	# device file has no command yet); any other line on stderr is a failure
	grep -v -e '^kvio-report: \[[^]]*\] WARNING: ' "$1.err" > "$1.err2"
	[ -s "$1.err2" ] && { echo; head -3 "$1.err2"; }
}

# ---- bursts, a reader throughout, the stop at the tracer's drops line ----
: > "$G/fs.jsonl"; : > "$G/fe.jsonl"; : > "$G/fv.jsonl"
"$ING" -o "$G/f.db" --sem "$G/fs.jsonl" --ebpf "$G/fe.jsonl" --serving "$G/fv.jsonl" --follow --interval 100 \
	> "$G/f.out" 2> "$G/f.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 1 14 0.35 "$G/s.jsonl" "$G/fs.jsonl" "$G/e.jsonl" "$G/fe.jsonl" \
	"$G/v.jsonl" "$G/fv.jsonl" &
WP=$!
poll "$G/f.db" $FP "$G/polls"
wait $FP; frc=$?
wait $WP
eq "follow: stops at the drops line with exit 0" "0" "$frc"
eq "follow: says why it stopped" "1" "$(grep -c "following stopped (the tracer's drops line)" "$G/f.out")"
eq "follow: every poll reported and checked clean, the command count never went down, >= 3 distinct counts" \
	"ok" "$(polls_ok "$G/polls")"
eq "follow: the polls saw a partial capture (some count between 0 and the file's $NCMD commands)" "yes" \
	"$(awk -v n="$NCMD" '$3 > 0 && $3 < n { p = 1 } END { print p ? "yes" : "no" }' "$G/polls")"
"$ING" -q -o "$G/one.db" --sem "$G/fs.jsonl" --ebpf "$G/fe.jsonl" --serving "$G/fv.jsonl"
eq "follow: the final report = the one-shot ingest's of the same files (JSON bytes)" "$(rj "$G/one.db")" "$(rj "$G/f.db")"
eq "follow: the final command count = the file's nvme_cmd lines" "$NCMD" "$(jq .capture.commands.n "$G/f.db.rj")"
eq "follow: the final database's content = the one-shot's (canon.sql)" "$(canon "$G/one.db" | md5sum)" "$(canon "$G/f.db" | md5sum)"
"$BUILD/kvio-export" "$G/one.db" -o "$G/one.pftrace" > /dev/null 2>&1
"$BUILD/kvio-export" "$G/f.db" -o "$G/f.pftrace" > /dev/null 2>&1
ok "follow: the exported .pftrace = the one-shot's, byte for byte" cmp "$G/one.pftrace" "$G/f.pftrace"
eq "follow: metadata says the final commit wrote it (kvio_follow_final 1, >= 3 commits)" "1 yes" \
	"$(meta "$G/f.db" kvio_follow_final) $([ "$(meta "$G/f.db" kvio_follow_commit)" -ge 3 ] && echo yes)"
eq "follow: the final report's capture.follow = the metadata (commit N, final 1); the one-shot's report has no follow key" \
	"$(meta "$G/f.db" kvio_follow_commit) 1 0" \
	"$(jq -r '[.. | objects | .follow? | objects] | .[0] | "\(.commit) \(.final)"' "$G/f.db.rj") $(grep -c '"follow"' "$G/one.db.rj")"
eq "follow: the final database is out of WAL mode, no -wal beside it" "delete no" \
	"$(sqlite3 "$G/f.db" 'pragma journal_mode') $([ -e "$G/f.db-wal" ] && echo yes || echo no)"
ok "follow: kvio-check is clean on the final database" "$BUILD/kvio-check" "$G/f.db"

# ---- an existing output, an output naming an input ----
"$ING" -q -o "$G/f.db" --sem "$G/fs.jsonl" --ebpf "$G/fe.jsonl" --follow 2> "$G/x.err"; rc=$?
eq "follow: an existing database is refused without --force (exit 2, said)" "2 1" "$rc $(grep -c 'exists.*--force' "$G/x.err")"
"$ING" -q -o "$G/fe.jsonl" --sem "$G/fs.jsonl" --ebpf "$G/fe.jsonl" --follow --force 2> "$G/x.err"; rc=$?
eq "follow: an output that is an input is refused even with --force (exit 2), the input unchanged" \
	"2 $(md5sum < "$G/e.jsonl")" "$rc $(md5sum < "$G/fe.jsonl")"
"$ING" -q -o "$G/f.db" --sem "$G/fs.jsonl" --ebpf "$G/fe.jsonl" --follow --force --idle 1; rc=$?
eq "follow: --force replaces it (drops line already there: one commit, then the final)" "0 $NCMD" \
	"$rc $("$BUILD/kvio-report" --json "$G/f.db" | jq .capture.commands.n)"
"$ING" -q -o "$G/y.db" --sem "$G/fs.jsonl" --idle 1 2> "$G/x.err"; rc=$?
eq "follow: --idle without --follow is a usage error" "2 1" "$rc $(grep -c 'go with --follow' "$G/x.err")"

# ---- --idle: no drops line, the follow stops 1 s after the last byte ----
grep -v '"drops"' "$G/e.jsonl" > "$G/en.jsonl"
: > "$G/is.jsonl"; : > "$G/ie.jsonl"
"$ING" -q -o "$G/i.db" --sem "$G/is.jsonl" --ebpf "$G/ie.jsonl" --follow --interval 100 --idle 1 2> "$G/i.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 2 6 0.3 "$G/s.jsonl" "$G/is.jsonl" "$G/en.jsonl" "$G/ie.jsonl"
t0=$(date +%s.%N)
wait $FP; rc=$?
t1=$(date +%s.%N)
"$ING" -q -o "$G/ione.db" --sem "$G/is.jsonl" --ebpf "$G/ie.jsonl"
eq "idle: exit 0, stopped between 0.5 and 3 s after the writer's end" "0 yes" \
	"$rc $(echo "$t0 $t1" | awk '{ d = $2 - $1; print (d > 0.5 && d < 3) ? "yes" : "no: " d }')"
eq "idle: the final report = the one-shot's" "$(rj "$G/ione.db")" "$(rj "$G/i.db")"

# ---- a pipe as --ebpf: the writer writes into it in bursts; its end stops the follow ----
: > "$G/ps.jsonl"
/usr/bin/python3 tests/follow_writer.py 3 8 0.3 "$G/s.jsonl" "$G/ps.jsonl" "$G/en.jsonl" - |
	"$ING" -o "$G/p.db" --sem "$G/ps.jsonl" --ebpf - --follow --interval 100 > "$G/p.out" 2> "$G/p.err" &
FP=$!
poll "$G/p.db" $FP "$G/ppolls"
wait $FP; rc=$?
eq "pipe: exit 0 at the end of the pipe (said)" "0 1" "$rc $(grep -c 'following stopped (the end of the pipe)' "$G/p.out")"
eq "pipe: every poll ok, counts never down" "ok" "$(polls_ok "$G/ppolls")"
"$ING" -q -o "$G/pone.db" --sem "$G/ps.jsonl" --ebpf - < "$G/en.jsonl"
eq "pipe: the final report = a one-shot ingest of the same bytes through standard input" \
	"$(rj "$G/pone.db")" "$(rj "$G/p.db")"
eq "pipe: the database = the one-shot's (canon.sql, ebpf_file /dev/stdin in both)" \
	"$(canon "$G/pone.db" | md5sum)" "$(canon "$G/p.db" | md5sum)"

# the pipe is read as its bytes come, not once per --interval: a writer of the whole capture at
# once (>= 1 MB: 16 pipe buffers of 64 KiB) is done within 4 s though one interval is 5 s (before,
# a look per interval drained one buffer: minutes); the final database still the one-shot's
eq "pipe drain: the capture is more than 16 pipe buffers" "yes" "$([ "$(wc -c < "$G/en.jsonl")" -gt 1048576 ] && echo yes)"
t0=$(date +%s.%N)
( cat "$G/en.jsonl"; date +%s.%N > "$G/pw.t" ) |
	timeout 120 "$ING" -q -o "$G/pw.db" --sem "$G/s.jsonl" --ebpf - --follow --interval 5000 > /dev/null 2>&1
rc=$?
eq "pipe drain: the writer done within 4 s (an --interval is 5 s), exit 0" "0 yes" \
	"$rc $(awk -v t0="$t0" '{ d = $1 - t0; print d < 4 ? "yes" : "no: " d }' "$G/pw.t")"
"$ING" -q -o "$G/pwone.db" --sem "$G/s.jsonl" --ebpf - < "$G/en.jsonl"
eq "pipe drain: the final report = the one-shot's" "$(rj "$G/pwone.db")" "$(rj "$G/pw.db")"

# ---- --merge: two arms growing, one with lost completions and EAGAIN (--faults) ----
: > "$G/ma.s"; : > "$G/ma.e"; : > "$G/mb.s"; : > "$G/mb.e"
"$ING" -q -o "$G/m.db" --merge "a=$G/ma.s,$G/ma.e" --merge "b=$G/mb.s,$G/mb.e" --follow --interval 100 --idle 1 &
FP=$!
grep -v '"drops"' "$G/e2.jsonl" > "$G/e2n.jsonl"
/usr/bin/python3 tests/follow_writer.py 4 6 0.3 "$G/s.jsonl" "$G/ma.s" "$G/en.jsonl" "$G/ma.e" \
	"$G/s2.jsonl" "$G/mb.s" "$G/e2n.jsonl" "$G/mb.e" &
WP=$!
poll "$G/m.db" $FP "$G/mpolls"
wait $FP; rc=$?
wait $WP
"$ING" -q -o "$G/mone.db" --merge "a=$G/ma.s,$G/ma.e" --merge "b=$G/mb.s,$G/mb.e"
eq "merge: exit 0, every poll ok" "0 ok" "$rc $(polls_ok "$G/mpolls")"
eq "merge: the final report = the one-shot --merge's" "$(rj "$G/mone.db")" "$(rj "$G/m.db")"

# --merge and drops lines: the follow stops when every arm's device file has its drops line
# (arm a's is there from the start; arm b's comes with its last burst)
: > "$G/db.s"; : > "$G/db.e"
"$ING" -q -o "$G/d.db" --merge "a=$G/s2.jsonl,$G/e2.jsonl" --merge "b=$G/db.s,$G/db.e" --follow --interval 100 \
	--idle 20 > "$G/d.out" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 5 5 0.3 "$G/s.jsonl" "$G/db.s" "$G/e.jsonl" "$G/db.e"
wait $FP; rc=$?
eq "merge: the drops line of one arm does not stop the follow, the last arm's does (all of b's commands in)" \
	"0 $NCMD" "$rc $("$BUILD/kvio-report" --json "$G/d.db" | jq .b.commands.n)"

# ---- kill -9 at random moments: the database is valid as of its last commit ----
k9=""
for seed in 11 12 13 14; do
	rm -f "$G/k.db" "$G/k.db-wal" "$G/k.db-shm"
	: > "$G/ks.jsonl"; : > "$G/ke.jsonl"
	"$ING" -q -o "$G/k.db" --sem "$G/ks.jsonl" --ebpf "$G/ke.jsonl" --follow --interval 50 2>/dev/null &
	FP=$!
	/usr/bin/python3 tests/follow_writer.py "$seed" 10 0.15 "$G/s.jsonl" "$G/ks.jsonl" "$G/en.jsonl" "$G/ke.jsonl" &
	WP=$!
	while [ ! -f "$G/k.db" ] && kill -0 $FP 2>/dev/null; do sleep 0.02; done
	sleep "$(awk -v s="$seed" 'BEGIN { srand(s); printf "%.2f", 0.1 + rand() * 1.3 }')"
	kill -9 $FP 2>/dev/null
	wait $FP 2>/dev/null
	wait $WP
	n=$("$BUILD/kvio-report" --json "$G/k.db" 2>/dev/null | jq '.capture.commands.n // -1')
	"$BUILD/kvio-check" "$G/k.db" > /dev/null 2>&1; c=$?
	k9="$k9 $([ "$c" = 0 ] && [ "${n:--1}" -ge 0 ] && [ "${n:--1}" -le "$NCMD" ] && echo ok || echo "bad(check $c, n $n)")"
done
eq "kill -9 at 4 random moments: each database reports and checks clean (WAL recovered)" " ok ok ok ok" "$k9"

# ---- an input truncated, an input replaced, SIGTERM ----
head -c 4000000 "$G/en.jsonl" > "$G/te.jsonl"
"$ING" -q -o "$G/t.db" --sem "$G/s.jsonl" --ebpf "$G/te.jsonl" --follow --interval 50 2> "$G/t.err" &
FP=$!
while [ ! -f "$G/t.db" ]; do sleep 0.05; done
sleep 0.2
: > "$G/te.jsonl"
wait $FP; rc=$?
eq "truncated: a one-line warning, exit 1" "1 1" "$rc $(grep -c 'truncated under the follower' "$G/t.err")"
ok "truncated: the database reports as of its last commit" "$BUILD/kvio-report" --json "$G/t.db"
head -c 4000000 "$G/en.jsonl" > "$G/re.jsonl"
"$ING" -q -o "$G/r.db" --sem "$G/s.jsonl" --ebpf "$G/re.jsonl" --follow --interval 50 --idle 1 2> "$G/r.err" &
FP=$!
while [ ! -f "$G/r.db" ]; do sleep 0.05; done
sleep 0.2
cp "$G/en.jsonl" "$G/re.new"; mv "$G/re.new" "$G/re.jsonl"
wait $FP; rc=$?
head -c 4000000 "$G/en.jsonl" | "$ING" -q -o "$G/rone.db" --sem "$G/s.jsonl" --ebpf - 2>/dev/null
eq "replaced: a one-line warning, exit 0, the old file's commands only (no mix with the new file's)" \
	"0 1 $("$BUILD/kvio-report" --json "$G/rone.db" | jq .capture.commands.n)" \
	"$rc $(grep -c 'replaced under the follower' "$G/r.err") $("$BUILD/kvio-report" --json "$G/r.db" | jq .capture.commands.n)"
# removed (not replaced): the same, its bytes read through the follower's own
# descriptor at the stop (before: the stop opened the path, "cannot open",
# exit 2 and the database left at its last interim commit)
head -c 4000000 "$G/en.jsonl" > "$G/de.jsonl"
"$ING" -q -o "$G/dr.db" --sem "$G/s.jsonl" --ebpf "$G/de.jsonl" --follow --interval 50 --idle 1 2> "$G/dr.err" &
FP=$!
while [ ! -f "$G/dr.db" ]; do sleep 0.05; done
sleep 0.2
rm "$G/de.jsonl"
wait $FP; rc=$?
eq "removed: a one-line warning, exit 0, final, the file's commands (= the one-shot of its bytes)" \
	"0 1 1 $("$BUILD/kvio-report" --json "$G/rone.db" | jq .capture.commands.n)" \
	"$rc $(grep -c 'removed under the follower' "$G/dr.err") $(meta "$G/dr.db" kvio_follow_final) $("$BUILD/kvio-report" --json "$G/dr.db" | jq .capture.commands.n)"
"$ING" -q -o "$G/g.db" --sem "$G/s.jsonl" --ebpf "$G/en.jsonl" --follow --interval 50 &
FP=$!
while [ ! -f "$G/g.db" ]; do sleep 0.05; done
kill -TERM $FP
wait $FP; rc=$?
"$ING" -q -o "$G/gone.db" --sem "$G/s.jsonl" --ebpf "$G/en.jsonl"
eq "SIGTERM: exit 0 and the final commit (report = the one-shot's)" "0 $(rj "$G/gone.db")" "$rc $(rj "$G/g.db")"

# ---- incremental commits: each writes what arrived, never the capture again ----
# (KVIO_TIMING's commit lines: "incremental: N commands written, M objects so far")
: > "$G/ns.jsonl"; : > "$G/ne.jsonl"
KVIO_TIMING=1 "$ING" -q -o "$G/n.db" --sem "$G/ns.jsonl" --ebpf "$G/ne.jsonl" --follow --interval 100 \
	2> "$G/n.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 0 10 0.3 "$G/s.jsonl" "$G/ns.jsonl" "$G/e.jsonl" "$G/ne.jsonl"
wait $FP; rc=$?
"$ING" -q -o "$G/none.db" --sem "$G/ns.jsonl" --ebpf "$G/ne.jsonl"
written() { grep 'timing: follow commit' "$1" | sed -n 's/.*incremental: \([0-9]*\) commands written, \([0-9]*\) objects.*/\1 \2/p'; }
# incremental_ok NAME ERR TOTAL ONE FOLLOWED: the follow whose KVIO_TIMING
# lines are in ERR made >= 5 commits, none rebuilt, no interim one wrote more
# than a quarter of the TOTAL commands (a rebuild writes all so far), objects
# only appended (some before the stop); FOLLOWED's report and .pftrace = ONE's
incremental_ok() {
	grep -v '(final)' "$2" | grep 'timing: follow commit' > "$2.int"
	eq "$1: exit 0, >= 5 commits, every one incremental (none rebuilt)" "0 yes 0" \
		"$rc $([ "$(written "$2" | wc -l)" -ge 5 ] && echo yes) $(grep -c 'rebuil' "$2")"
	eq "$1: no interim commit wrote more than a quarter of the $3 commands" "yes" \
		"$(written "$2.int" | awk -v n="$3" '$1 > n / 4 { bad = 1 } END { print bad ? "no" : "yes" }')"
	eq "$1: objects appended, never taken back (their count never goes down), some before the stop" "yes" \
		"$(written "$2.int" | awk '$2 < last { bad = 1 } { last = $2 } END { print (!bad && last > 0) ? "yes" : "no" }')"
	eq "$1: the final report = the one-shot's" "$(rj "$4")" "$(rj "$5")"
	"$BUILD/kvio-export" "$4" -o "$4.pftrace" > /dev/null 2>&1
	"$BUILD/kvio-export" "$5" -o "$5.pftrace" > /dev/null 2>&1
	ok "$1: the exported .pftrace = the one-shot's, byte for byte" cmp "$4.pftrace" "$5.pftrace"
}
incremental_ok incremental "$G/n.err" "$NCMD" "$G/none.db" "$G/n.db"
eq "incremental: the commits together wrote each of the file's $NCMD commands once" "$NCMD" \
	"$(written "$G/n.err" | awk '{ s += $1 } END { print s }')"

# kvio-export while the follower commits: its connections read one snapshot
# (before: each statement its own, so a chunk rewritten by the next commit
# read as damage, "kvio_cmd_chunk N changed under the reader": 4-6 in 120
# polls on this 200k-line capture; with the findings' connections, which
# must see the export's snapshot too). Exports back to back, with findings
# and without by turns: every one exits 0.
"$BUILD/kvio-gen" --sem "$G/xs0.jsonl" --ebpf "$G/xe0.jsonl" --lines 200000 --seed 3 2>/dev/null
: > "$G/xs.jsonl"; : > "$G/xe.jsonl"
"$ING" -q -o "$G/x.db" --sem "$G/xs.jsonl" --ebpf "$G/xe.jsonl" --follow --interval 100 --idle 2 2>/dev/null &
FP=$!
/usr/bin/python3 tests/follow_writer.py 12 14 0.3 "$G/xs0.jsonl" "$G/xs.jsonl" "$G/xe0.jsonl" "$G/xe.jsonl" &
WP=$!
xn=0; xf=0; : > "$G/x.fail"
while kill -0 $FP 2>/dev/null; do
	[ -f "$G/x.db" ] || { sleep 0.05; continue; }
	nf=""; [ $((xn % 2)) = 1 ] && nf=--no-findings
	"$BUILD/kvio-export" "$G/x.db" -o "$G/x.pftrace" $nf > /dev/null 2>>"$G/x.fail" || xf=$((xf + 1))
	xn=$((xn + 1))
done
wait $WP
eq "export while following: >= 20 exports, every one exit 0" "yes 0" "$([ $xn -ge 20 ] && echo yes) $xf"
[ $xf = 0 ] || head -2 "$G/x.fail"

# a follow that cannot commit incrementally says so once, at the start (before:
# nothing said, each commit re-reading the capture so far): an arm without a
# device file, --join-by-key, --time-range; its final report = the one-shot's
for case in nodev key window; do
	opt=""; ev="--ebpf $G/e.jsonl"; want="an arm without a device file"
	[ $case = nodev ] && ev=""
	[ $case = key ] && opt=--join-by-key && want=--join-by-key
	[ $case = window ] && opt="--time-range 0.2,0.9" && want=--time-range
	rm -f "$G/w.db" "$G/wone.db"
	"$ING" -o "$G/w.db" --sem "$G/s.jsonl" $ev $opt --follow --idle 1 > /dev/null 2> "$G/w.err"; rc=$?
	"$ING" -q -o "$G/wone.db" --sem "$G/s.jsonl" $ev $opt 2>/dev/null
	eq "rebuilding ($case): exit 0, said once, the final report = the one-shot's" "0 1 $(rj "$G/wone.db")" \
		"$rc $(grep -c -- "^kvio-ingest: --follow: $want: the database is rebuilt from the files at each commit" "$G/w.err") $(rj "$G/w.db")"
done

# completions arriving late: every 400th command's completion 0.6 s later
# (lat_ns + 0.6 s, written where its time falls: ~40% of the file later, at
# the end for the last ones). Those commands wait in the stream across
# commits; the polls stay consistent; the stop equals the one-shot.
/usr/bin/python3 tests/late_cmp.py "$G/en.jsonl" "$G/el.jsonl" 400 600000000
NSLOW=$(grep -c '"lat_ns":60[0-9]\{7\},' "$G/el.jsonl")
: > "$G/ls.jsonl"; : > "$G/le.jsonl"
KVIO_TIMING=1 "$ING" -q -o "$G/l.db" --sem "$G/ls.jsonl" --ebpf "$G/le.jsonl" --follow --interval 100 --idle 1 \
	2> "$G/l.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 10 8 0.3 "$G/s.jsonl" "$G/ls.jsonl" "$G/el.jsonl" "$G/le.jsonl" &
WP=$!
poll "$G/l.db" $FP "$G/lpolls"
wait $FP; rc=$?
wait $WP
"$ING" -q -o "$G/lone.db" --sem "$G/ls.jsonl" --ebpf "$G/le.jsonl"
eq "late completions: exit 0, every poll ok, none rebuilt, $((NCMD / 400)) slow commands" \
	"0 ok 0 $((NCMD / 400))" "$rc $(polls_ok "$G/lpolls") $(grep -c 'rebuil' "$G/l.err") $NSLOW"
eq "late completions: the final report = the one-shot's (its max write or read latency >= 600 ms)" \
	"$(rj "$G/lone.db") yes" \
	"$(rj "$G/l.db") $(jq '[.capture.lat_write.max // 0, .capture.lat_read.max // 0] | max >= 600000000' "$G/l.db.rj" 2>/dev/null | sed 's/true/yes/')"

# the rate counters and the IO-activity overview while following: a commit
# writes the points of the buckets every command before whose end is written,
# so an interim database's cmds/ms and MB/s points are the final's up to its
# last point, value for value; its overview slices are the final's but the
# last, which may still grow (same start, shorter or equal). The interim
# database: the follower killed (-9) once it has made 3 commits.
: > "$G/cs.jsonl"; : > "$G/ce.jsonl"
"$ING" -q -o "$G/c.db" --sem "$G/cs.jsonl" --ebpf "$G/ce.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
/usr/bin/python3 tests/follow_writer.py 11 10 0.3 "$G/s.jsonl" "$G/cs.jsonl" "$G/en.jsonl" "$G/ce.jsonl" &
WP=$!
commits() { # (sqlite3 makes a file it opens that is not there: -readonly does not)
	c=$(sqlite3 -readonly "$1" "select int_value from metadata where name = 'kvio_follow_commit'" 2>/dev/null)
	echo "${c:-0}"
}
while [ "$(commits "$G/c.db")" -lt 3 ] && kill -0 $FP 2>/dev/null; do
	sleep 0.05
done
kill -9 $FP; wait $FP 2>/dev/null
wait $WP
"$ING" -q -o "$G/cone.db" --sem "$G/cs.jsonl" --ebpf "$G/ce.jsonl"
cq="select t.name, c.ts, c.value from kvio_counter c join kvio_track t on t.id = c.track_id
    where t.name in ('cmds/ms', 'MB/s') order by 1, 2"
oq="select ts, dur, name from kvio_slice where track_id = (select id from kvio_track where name = 'IO activity') order by ts"
sqlite3 "$G/c.db" "$cq" > "$G/c.ctr"; sqlite3 "$G/cone.db" "$cq" > "$G/cone.ctr"
sqlite3 "$G/c.db" "$oq" > "$G/c.ov"; sqlite3 "$G/cone.db" "$oq" > "$G/cone.ov"
eq "interim counters: commit >= 3 and not final, points on both tracks, = the final's up to the last of each" \
	"yes yes" "$([ "$(meta "$G/c.db" kvio_follow_final)" = 0 ] && echo yes) $(awk -F'|' '
	NR == FNR { last[$1] = $2; n[$1]++; a[NR] = $0; m = NR; next }
	($1 in last) && $2 + 0 <= last[$1] + 0 { k++; if ($0 != a[k]) bad = 1 }
	END { print (!bad && k == m && n["cmds/ms"] > 0 && n["MB/s"] > 0) ? "yes" : "no" }' "$G/c.ctr" "$G/cone.ctr")"
eq "interim text report: one 'live' line naming the commit; none once final" "1 0" \
	"$("$BUILD/kvio-report" "$G/c.db" 2>/dev/null | grep -c "^  live    : kvio-ingest --follow's commit $(commits "$G/c.db"), not its last") $("$BUILD/kvio-report" "$G/l.db" 2>/dev/null | grep -c '^  live    :')"
eq "interim overview: its slices are the final's, the last one's end at most the final's" "yes" \
	"$(awk -F'|' 'NR == FNR { a[NR] = $0; ts[NR] = $1; d[NR] = $2; m = NR; next }
	FNR <= m { if (FNR < m && $0 != a[FNR]) bad = 1; if (FNR == m && ($1 != ts[m] || $2 + 0 < d[m] + 0)) bad = 1; k++ }
	END { print (!bad && m > 0 && k == m) ? "yes" : "no" }' "$G/c.ov" "$G/cone.ov")"

# objects in flight while following (livectr.c's settle rule): at each moment
# it has a point for, its last point's value is the number of the interim
# database's object slices covering that moment (a second method: SQL over
# the slices), and its points before the earliest begin of an object the
# interim database lacks are the final's, row for row. Before: no points
# until the stop.
ifq="select ts, value from kvio_counter c where track_id = (select id from kvio_track where name = 'objects in flight')"
osq="select s.ts b, s.ts + s.dur e, s.dur d from kvio_slice s join kvio_track t on t.id = s.track_id where t.name glob 'objects.[0-9]*'"
# inflight_ok DB: "N yes" (N points at distinct moments, every one right)
inflight_ok() {
	sqlite3 -readonly "$1" "with p as ($ifq and id = (select max(id) from kvio_counter d where d.track_id = c.track_id
		and d.ts = c.ts)), o as ($osq) select count(*), case when count(*) > 0 and count(*) =
		sum(value = (select count(*) from o where b <= p.ts and e > p.ts)) then 'yes' else 'no' end from p"
}
# before_missing INTERIM FINAL DB: DB's points before the earliest begin of a FINAL object INTERIM lacks
before_missing() {
	sqlite3 -readonly "$3" "attach '$1' as i; attach '$2' as f;
		with m as (select min(b) m from (select b, d from ($(echo "$osq" | sed 's/kvio_slice/f.kvio_slice/; s/kvio_track/f.kvio_track/'))
		except select b, d from ($(echo "$osq" | sed 's/kvio_slice/i.kvio_slice/; s/kvio_track/i.kvio_track/'))))
		$ifq and ts < (select m from m) order by id"
}
before_missing "$G/c.db" "$G/cone.db" "$G/c.db" > "$G/c.if"; before_missing "$G/c.db" "$G/cone.db" "$G/cone.db" > "$G/cone.if"
eq "interim objects in flight: every point = the interim objects covering it; before the first missing object = the final's" \
	"yes yes yes" "$(inflight_ok "$G/c.db" | awk -F'|' '{ print ($2 == "yes" && $1 >= 5) ? "yes" : "no:" $0 }') $(
	[ "$(wc -l < "$G/c.if")" -ge 5 ] && echo yes || echo "no:$(wc -l < "$G/c.if")") $(cmp -s "$G/c.if" "$G/cone.if" && echo yes || echo no)"
# an object that began before points already written for good (here one of
# 4 ranks' batched objects whose start is moved to the capture's second
# record's, in the file's last quarter): the commit that takes it writes the
# counter again; the interim database, killed once it holds that object,
# still agrees with its slices (before the redo: its points after that
# begin missed it).
"$BUILD/kvio-gen" --sem "$G/rs0.jsonl" --ebpf "$G/re0.jsonl" --lines 20000 --ranks 4 --mode batched --seed 9 2>/dev/null
grep -v '"drops"' "$G/re0.jsonl" > "$G/re.jsonl" # (no final drops line: the follower goes on until killed)
/usr/bin/python3 - "$G/rs0.jsonl" "$G/rs.jsonl" <<'PY' > "$G/rs.long"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
recs = [i for i, l in enumerate(lines) if '"trace_id"' in l]
first, k = json.loads(lines[recs[1]]), recs[len(recs) * 3 // 4]
r = json.loads(lines[k])
r["ts_start"] = first["ts_start"]
lines[k] = json.dumps(r, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print(int((r["ts"] - r["ts_start"]) * 1e9 * 0.9))
PY
: > "$G/ras.jsonl"; : > "$G/rae.jsonl"
# (64 KB blocks: a 1 MB one, the default, would keep the record's block back
# until the stop; the loop gives up after ~30 s, a test that then fails)
KVIO_FOLLOW_BLOCK_BYTES=65536 "$ING" -q -o "$G/ra.db" --sem "$G/ras.jsonl" --ebpf "$G/rae.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
/usr/bin/python3 tests/follow_writer.py 12 10 0.3 "$G/rs.jsonl" "$G/ras.jsonl" "$G/re.jsonl" "$G/rae.jsonl" &
WP=$!
long=0 tries=0
while [ "$long" = 0 ] && [ $tries -lt 600 ] && kill -0 $FP 2>/dev/null; do
	tries=$((tries + 1))
	sleep 0.05
	long=$(sqlite3 -readonly "$G/ra.db" "select count(*) from ($osq) where d > $(cat "$G/rs.long")" 2>/dev/null || echo 0)
done
kill -9 $FP; wait $FP 2>/dev/null
wait $WP
eq "interim objects in flight, an object that began long before: the counter still = the objects (points > 1 deep)" \
	"1 0 yes yes" "$long $(meta "$G/ra.db" kvio_follow_final) $(inflight_ok "$G/ra.db" | awk -F'|' '{ print ($2 == "yes" && $1 >= 5) ? "yes" : "no:" $0 }') $(
	sqlite3 -readonly "$G/ra.db" "select case when max(value) > 1 then 'yes' else 'no' end from ($ifq)")"

# a tracer gone quiet (a hung run): once the device file has had no new
# bytes for KVIO_FOLLOW_QUIET_MS, its last block and the reorder pool go in;
# the interim database then holds every command and object the files hold
# (counted in the files: nvme_cmd lines, semantic records; every command here
# is completed). Before: its last 1 MB block waited for more bytes (100 of
# the 152 objects, 7548 of the 11772 commands).
cp "$G/rs0.jsonl" "$G/qs.jsonl"; cp "$G/re.jsonl" "$G/qe.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$G/q.db" --sem "$G/qs.jsonl" --ebpf "$G/qe.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
got="" tries=0
want="$(grep -c '"nvme_cmd"' "$G/qe.jsonl") $(grep -c '"trace_id"' "$G/qs.jsonl")"
while [ "$got" != "$want" ] && [ $tries -lt 300 ] && kill -0 $FP 2>/dev/null; do
	tries=$((tries + 1)); sleep 0.05
	got=$(sqlite3 -readonly -cmd ".load $BUILD/kvio" "$G/q.db" "select (select count(*) from kvio_cmds),
		(select count(*) from ($osq))" 2>/dev/null | tr '|' ' ')
done
kill -9 $FP; wait $FP 2>/dev/null
eq "a quiet tracer: the interim database holds every command and object of the files (not yet final)" \
	"$want 0" "$got $(meta "$G/q.db" kvio_follow_final)"

# the tracer's file stalls mid-stream (its first 6000 lines, the semantic
# file whole) and then goes on: after the quiet commit its records are in
# time order past the device's last one (before: the quiet commit's watermark
# was the semantic file's latest op end, and every interim report after it
# warned of device records joined out of time order, which a one-shot does
# not). The objects that ended after the device's last record went in at the
# quiet commit, so the commands that come for them make the stop rebuild
# (said); the final report is the one-shot's.
head -6000 "$G/re.jsonl" > "$G/me.jsonl"
want6=$(grep -c '"nvme_cmd"' "$G/me.jsonl")
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$G/md.db" --sem "$G/rs0.jsonl" --ebpf "$G/me.jsonl" --follow --interval 100 \
	>/dev/null 2>"$G/md.err" &
FP=$!
await "$want6" 200 ncmds "$G/md.db"
tail -n +6001 "$G/re.jsonl" >> "$G/me.jsonl"
want=$(grep -c '"nvme_cmd"' "$G/me.jsonl")
await "$want" 200 ncmds "$G/md.db"
late=$("$BUILD/kvio-report" --json "$G/md.db" 2>/dev/null | jq -r '[.[] | .capture.late_lines // 0] | add')
kill $FP; wait $FP
"$ING" -q -o "$G/mdone.db" --sem "$G/rs0.jsonl" --ebpf "$G/me.jsonl"
eq "a tracer's stall mid-stream: every command in while following, none out of time order; the stop rebuilds (said), the one-shot's report" \
	"$want 0 1 | $(rj "$G/mdone.db" | md5sum)" \
	"$got $late $(grep -c 'quiet commit.*: the database is rebuilt from the files at the final commit' "$G/md.err") | $(rj "$G/md.db" | md5sum)"

# a run hung early, with a command whose completion never comes: a capture
# smaller than a block (the database appeared only at the stop before: the
# quiet commit waited for a database, and the store commands for 8 store
# objects to decide the LBA size). Written by hand: trace_id 1's two writes
# complete; trace_id 2's read at 1.8 s never does; a read of trace_id 2 and an
# untagged read after it complete. Once the device file is quiet, the quiet
# commit writes what the follower held as the end of the file would (before:
# the 3 commands from the stuck one on waited for --pair-horizon records that
# never come, the database showed the 2 writes only): the interim database
# holds the 5 commands, is what a one-shot ingest of the files gives, and
# still counts the stuck one as without a completion (1 command, of 1 object,
# trace_id 2, drawn with the nominal duration), 1900040000 - 1800000000 =
# 100040000 ns before the latest record; it holds trace_id 1's record (its op
# end 1.5 s is within KVIO_FOLLOW_KEEP_MS, 1 s, of the last command, 1.9 s), none left
# memory; the stop writes nothing new and the follow_* rows go.
H=$G/hung; mkdir -p "$H"
head -1 fixtures/tiny/sem.jsonl > "$H/s.jsonl"
echo '{"trace_id":1,"op":"store","key":"m@f0@0@aaaa","object_id":1,"part":"kv","bytes":135168,"slot_offset":40960,"ts_start":1.25,"ts":1.5,"pid":77,"instance":"i0"}' >> "$H/s.jsonl"
hc() { echo "{\"event_type\":\"nvme_cmd\",\"pid\":77,\"tid\":$1,\"user_data\":$2,\"nvme_opcode\":$3,\"op_name\":\"$4\",\"nsid\":1,\"slba\":$5,\"nlb\":1,\"data_len\":$6,\"ts\":$7}"; }
hp() { echo "{\"event_type\":\"nvme_cmp\",\"user_data\":$1,\"err\":0,\"ts\":$2}"; }
{ hc 4321 4294967296 1 write 10 4096 1300000000; hc 4321 4294967297 1 write 11 131072 1300010000
  hp 4294967296 1300050000; hp 4294967297 1300090000
  hc 4322 8589934592 2 read 11 131072 1800000000; hc 4322 8589934593 2 read 43 131072 1800200000
  hp 8589934593 1800300000; hc 4323 5 2 read 99 4096 1900000000; hp 5 1900040000; } > "$H/e.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$H/h.db" --sem "$H/s.jsonl" --ebpf "$H/e.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
await "5" 100 nchunk "$H/h.db"
hst() { sqlite3 -readonly "$1" "select group_concat(name || '=' || value, ' ') from (select name, value from kvio_stats
	where name like 'follow%' and name not in ('follow_device_grew_ms', 'follow_pid') order by name)"; }
eq "a hung run smaller than a block: the database appears while following, with every command read" "5" "$got"
eq "a hung run: the follower's waiting commands, as kvio_stats rows (by hand)" \
	"follow_held_objects=1 follow_held_serving=0 follow_left_objects=0 follow_left_serving=0 follow_pool_records=0 follow_quiet_ms=300 follow_unpaired_age_ns=100040000 follow_unpaired_cmds=1 follow_unpaired_objects=1 follow_unpaired_oldest_tid=2 follow_unpaired_written=1 follow_waiting_cmds=0" \
	"$(hst "$H/h.db")"
"$BUILD/kvio-report" --json "$H/h.db" > "$H/h.json" 2>/dev/null
eq "a hung run: the report's capture.follow.waiting (quiet: at least the 300 ms before the commit; the follower runs)" \
	"0 0 1 1 1 100040000 2 yes $FP true" "$(jq -r '.capture.capture.follow.waiting | "\(.cmds) \(.pool_records) \(.unpaired_cmds) \(.unpaired_objects) \(.unpaired_written) \(.unpaired_age_ns) \(.unpaired_oldest_trace_id) \(if .device_quiet_s >= 0.3 then "yes" else .device_quiet_s end) \(.follower_pid) \(.follower_running)"' "$H/h.json")"
eq "a hung run: the text report says what waits" \
	"  waiting : 0 command(s) read, not written yet; 1 without a completion so far (1 object(s)), 1 of them drawn with the nominal duration (the device went quiet), the oldest (trace_id 2) submitted 100.04ms before the latest device record" \
	"$("$BUILD/kvio-report" "$H/h.db" 2>/dev/null | grep '^  waiting :' | sed 's/; the device file last grew .*//')"
eq "a hung run: --watch's JSON line (not a terminal) carries the waiting commands" "0 1 1 100040000 2" \
	"$(timeout 10 "$BUILD/kvio-report" "$H/h.db" --watch 0.2 --count 1 2>/dev/null | jq -r '.live.capture | "\(.waiting_cmds) \(.unpaired_cmds) \(.unpaired_written) \(.unpaired_age_ns) \(.unpaired_oldest_trace_id)"')"
eq "a hung run: --watch's screen (under script) says the stuck read was drawn" "1" \
	"$(timeout 10 script -qc "$BUILD/kvio-report $H/h.db --watch 0.2 --count 1" /dev/null 2>/dev/null | grep -c 'waiting 0 cmds, .*1 without completion (1 object(s)), oldest trace_id 2 100.04ms before the last record, 1 drawn')"
# the red rule's quiet wait is the follower's (KVIO_FOLLOW_QUIET_MS=300 here,
# written as follow_quiet_ms): quiet >= 0.3 s with one waiting is red (before:
# a fixed 2 s, not red here while the follower had drawn the stuck read)
eq "a hung run: the follower's quiet wait in the report, and --watch's line red past it" "300 1" \
	"$(jq -r '.capture.capture.follow.waiting.quiet_commit_after_ms' "$H/h.json") $(timeout 10 script -qc "$BUILD/kvio-report $H/h.db --watch 0.2 --count 1" /dev/null 2>/dev/null | grep -c "waiting 0 cmds, $(printf '\033')\[31;1m1 without completion")"
hint=$(rj "$H/h.db" | md5sum)
kill $FP; wait $FP
"$ING" -o "$H/one.db" --sem "$H/s.jsonl" --ebpf "$H/e.jsonl" > "$H/one.out"
eq "a hung run: the interim database (the quiet commit's) is what a one-shot ingest of the files gives" \
	"$(rj "$H/one.db" | md5sum)" "$hint"
eq "a hung run, one-shot: the summary counts the command without a completion (trace_id 2's read at 1.8 s, by hand)" \
	"  device  : 5 nvme_cmd (1 without a completion), 4 nvme_cmp (0 unpaired)" "$(grep '^  device' "$H/one.out" | cut -d, -f1-2)"
eq "a hung run, stopped: 5 commands, no follow_* row, the one-shot's report" "5 | $(rj "$H/one.db" | md5sum)" \
	"$(sqlite3 -readonly "$H/h.db" "select sum(n) from kvio_cmd_chunk")$(hst "$H/h.db") | $(rj "$H/h.db" | md5sum)"

# a hung run whose files end in a partial line (the tracer and the
# application stopped mid-write): the quiet commit counts each as the one-shot
# ingest of the files does (a truncated tail; before: 0 in the interim
# database, 1 in the one-shot's: the reports differed in truncated_tail).
# The device file's partial line is a command cut after its user_data, the
# semantic file's a record cut in its key.
cp "$H/s.jsonl" "$H/ts.jsonl"; cp "$H/e.jsonl" "$H/te.jsonl"
printf '{"trace_id":3,"op":"store","key":"m@f0' >> "$H/ts.jsonl"
printf '{"event_type":"nvme_cmd","pid":77,"tid":4323,"user_data":6' >> "$H/te.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$H/t.db" --sem "$H/ts.jsonl" --ebpf "$H/te.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
await "5" 100 nchunk "$H/t.db"
tt=$(sqlite3 -readonly "$H/t.db" "select value from kvio_stats where name = 'truncated_tail'")
tint=$(rj "$H/t.db" | md5sum)
kill $FP; wait $FP
"$ING" -q -o "$H/tone.db" --sem "$H/ts.jsonl" --ebpf "$H/te.jsonl" 2>/dev/null
eq "a hung run ending in partial lines: the quiet commit counts both truncated tails (by hand: 2), the one-shot's report" \
	"2 | $(rj "$H/tone.db" | md5sum)" "$tt | $tint"

# a hung run whose last store object (trace_id 3, writes at 1.85 s, its
# first never completes) ends after the device's last record (op end 2.1 s):
# the quiet commit decides the LBA size on it (before this session's last
# change the store commands waited for it: no database while hung), 6
# commands, the one-shot's report
{ cat "$H/s.jsonl"; echo '{"trace_id":3,"op":"store","key":"m@f0@0@bbbb","object_id":2,"part":"kv","bytes":8192,"slot_offset":81920,"ts_start":1.84,"ts":2.1,"pid":77,"instance":"i0"}'; } > "$H/ls.jsonl"
{ head -5 "$H/e.jsonl"; hc 4323 5 2 read 99 4096 1900000000; hp 5 1900040000
  hc 4324 12884901888 1 write 20 4096 1850000000; hc 4324 12884901889 1 write 21 4096 1850100000; hp 12884901889 1850200000; } > "$H/le.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$H/l.db" --sem "$H/ls.jsonl" --ebpf "$H/le.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
await "6" 100 nchunk "$H/l.db"
lint=$(rj "$H/l.db" | md5sum)
kill $FP; wait $FP
"$ING" -q -o "$H/lone.db" --sem "$H/ls.jsonl" --ebpf "$H/le.jsonl"
eq "a hung run, its last store object ending after the device's last record: 6 commands while hung, the one-shot's report" \
	"6 | $(rj "$H/lone.db" | md5sum)" "$got | $lint"

# the hung run resumes after its quiet commit: the stuck read's completion
# comes at 4.0 s, then an untagged read at 4.1 s (trace_id 2's record still
# does not: its commands stay without an object, as in a one-shot ingest).
# The follower no longer counts a command without its completion; the stuck
# read was written with the nominal duration (a one-shot pairs it: 2.2 s), so
# the stop rebuilds (said) and the final database is the one-shot ingest's of
# the final files.
cp "$H/s.jsonl" "$H/rs.jsonl"; cp "$H/e.jsonl" "$H/re.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$H/r.db" --sem "$H/rs.jsonl" --ebpf "$H/re.jsonl" --follow --interval 100 \
	>/dev/null 2>"$H/r.err" &
FP=$!
await "1" 100 fstat "$H/r.db" follow_unpaired_written
eq "a hung run resumes: first its quiet commit draws the stuck read" "1" "$got"
{ hp 8589934592 4000000000; hc 4322 6 2 read 100 4096 4100000000; hp 6 4100040000; } >> "$H/re.jsonl"
await "6 0" 100 eval 'echo $(nchunk "$H/r.db") $(fstat "$H/r.db" follow_unpaired_cmds)'
eq "a hung run resumes: 6 commands, none without its completion any more" "6 0" "$got"
"$BUILD/kvio-report" --json "$H/r.db" > "$H/r.json" 2>/dev/null
eq "a hung run resumes: the late completion is not an unpaired one nor a stall past the horizon (before: 1 and 1, a false warning)" \
	"0 0 0" "$(jq -r '.capture.capture | "\(.cmp_unpaired) \(.cmp_after_horizon) \(.follow.waiting.unpaired_written)"' "$H/r.json")"
kill $FP; wait $FP
"$ING" -q -o "$H/one2.db" --sem "$H/rs.jsonl" --ebpf "$H/re.jsonl"
eq "a hung run resumes, stopped: the stop says it rebuilds (the completion came late); the one-shot's report" \
	"1 | $(rj "$H/one2.db" | md5sum)" \
	"$(grep -c 'a quiet commit drew a command whose completion came later: the database is rebuilt from the files at the final commit' "$H/r.err") | $(rj "$H/r.db" | md5sum)"

# under --merge the stop names the arm whose drawn command's completion came
cp "$H/s.jsonl" "$H/ga.s"; cp "$H/e.jsonl" "$H/ga.e"; cp "$H/s.jsonl" "$H/gb.s"; cp "$H/e.jsonl" "$H/gb.e"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$H/g.db" --merge "a=$H/ga.s,$H/ga.e" --merge "b=$H/gb.s,$H/gb.e" --follow \
	--interval 100 >/dev/null 2>"$H/g.err" &
FP=$!
await "10" 100 nchunk "$H/g.db"
hp 8589934592 4000000000 >> "$H/ga.e"
sleep 0.5
kill $FP; wait $FP
eq "--merge: both arms drawn while hung (10 commands); the stop names arm a" "10 1" \
	"$got $(grep -c 'arm a: a quiet commit drew a command whose completion came later: the database is rebuilt' "$H/g.err")"

# the quiet commit drew a command whose next one of its role had not come:
# the nominal 8000 ns, uncapped. Untagged reads: 5 at 0.9 s completes in
# 40000 ns, 7 at 1.0 s never does; after the quiet commit 8 comes 5000 ns
# after 7 and completes in 4000 ns. A one-shot caps 7 at 0.9 x 5000 = 4500 ns
# (by hand); the stop rebuilds for it and says why (before: the final kept
# 8000 ns, a database no one-shot ingest writes).
head -1 fixtures/tiny/sem.jsonl > "$H/ns.jsonl"
{ hc 4323 5 2 read 99 4096 900000000; hp 5 900040000; hc 4323 7 2 read 98 4096 1000000000; } > "$H/ne.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$H/n.db" --sem "$H/ns.jsonl" --ebpf "$H/ne.jsonl" --follow --interval 100 \
	>/dev/null 2>"$H/n.err" &
FP=$!
durs() { sqlite3 -readonly -cmd ".load $BUILD/kvio" "$1" "select group_concat(dur, ' ') from (select dur from kvio_cmds order by ts)" 2>/dev/null; }
await "40000 8000" 100 durs "$H/n.db"
eq "a quiet commit draws the last read of its role with the nominal duration" "40000 8000" "$got"
{ hc 4323 8 2 read 97 4096 1000005000; hp 8 1000009000; } >> "$H/ne.jsonl"
await "40000 8000 4000" 100 durs "$H/n.db"
kill $FP; wait $FP
eq "its next read came: the stop rebuilds (said) and the final durations are a one-shot's (by hand)" \
	"40000 8000 4000 | 1 | 40000 4500 4000" \
	"$got | $(grep -c 'a quiet commit drew a command before the next one of its role came: the database is rebuilt from the files at the final commit' "$H/n.err") | $(durs "$H/n.db")"

# the same with the next read 1 s later: 0.9 x 1 s does not cap 8000 ns, what
# was drawn is a one-shot's: no rebuild (before: one at every such stop)
head -3 "$H/ne.jsonl" > "$H/ne2.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$H/n2.db" --sem "$H/ns.jsonl" --ebpf "$H/ne2.jsonl" --follow --interval 100 \
	>/dev/null 2>"$H/n2.err" &
FP=$!
await "40000 8000" 100 durs "$H/n2.db"
{ hc 4323 8 2 read 97 4096 2000000000; hp 8 2000004000; } >> "$H/ne2.jsonl"
await "40000 8000 4000" 100 durs "$H/n2.db"
kill $FP; wait $FP
eq "a next read 1 s after the drawn one: no rebuild, the one-shot's durations (by hand)" "40000 8000 4000 | 0 | 40000 8000 4000" \
	"$got | $(grep -c 'rebuild' "$H/n2.err") | $(durs "$H/n2.db")"

# a run hung before its semantic file has a whole line (an empty file, or a
# header still in the writer's buffer): the quiet commit reads the device
# file anyway (before: no database until the stop), 5 commands as a
# one-shot of the files gives them; the header and the records that come
# later make the stop rebuild, said
: > "$H/es.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -o "$H/es.db" --sem "$H/es.jsonl" --ebpf "$H/e.jsonl" --follow --interval 100 \
	>/dev/null 2>"$H/es.err" &
FP=$!
await "5" 100 nchunk "$H/es.db"
eq "an empty semantic file, a quiet device file: the database appears with the 5 commands" "5" "$got"
cat "$H/s.jsonl" >> "$H/es.jsonl"
sleep 0.5
kill $FP; wait $FP
eq "its records came later: the stop rebuilds (said: the records of commands it wrote without them); the one-shot's report" \
	"1 | $(rj "$H/one.db" | md5sum)" \
	"$(grep -c -e "the semantic file's first line came after a quiet commit" -e "a quiet commit wrote a command before its object's semantic record came" "$H/es.err") | $(rj "$H/es.db" | md5sum)"

# 6000 reads that never complete (1500 objects of 4 reads, one per trace_id
# 1..1500; the semantic file has no record), then the completions
# of the first 4100 come: the waiting counts follow (by hand: 6000 of 1500
# objects, then 1900 of 475: trace_ids 1026..1500). Before: capped at 4096,
# then "none of them lacks its completion".
: > "$H/ms.jsonl"
awk 'BEGIN { for (i = 0; i < 6000; i++) printf "{\"event_type\":\"nvme_cmd\",\"pid\":77,\"tid\":9,\"user_data\":%.0f,\"nvme_opcode\":2,\"op_name\":\"read\",\"nsid\":1,\"slba\":%d,\"nlb\":1,\"data_len\":4096,\"ts\":%d}\n", (int(i / 4) + 1) * 4294967296 + i % 4, i, 1000000000 + i * 1000 }' > "$H/me.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$H/m.db" --sem "$H/ms.jsonl" --ebpf "$H/me.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
wq() { sqlite3 -readonly "$1" "select group_concat(value, ' ') from (select value from kvio_stats where name in
	('follow_unpaired_cmds', 'follow_unpaired_objects', 'follow_unpaired_written') order by name)" 2>/dev/null; }
await "6000 1500 6000" 200 wq "$H/m.db"
eq "6000 reads without a completion, drawn by the quiet commit: counted whole (cmds, objects, drawn)" "6000 1500 6000" "$got"
awk 'BEGIN { for (i = 0; i < 4100; i++) printf "{\"event_type\":\"nvme_cmp\",\"user_data\":%.0f,\"err\":0,\"ts\":%d}\n", (int(i / 4) + 1) * 4294967296 + i % 4, 1100000000 + i * 1000 }' >> "$H/me.jsonl"
await "1900 475 1900" 200 wq "$H/m.db"
kill $FP; wait $FP
eq "the completions of 4100 of them came: 1900 of 475 objects still wait (by hand)" "1900 475 1900" "$got"

# one user_data reused: three untagged reads of user_data 5 never complete,
# then two completions of it come: one read still waits (by hand)
{ hc 4323 5 2 read 1 4096 1000000000; hc 4323 5 2 read 2 4096 1100000000; hc 4323 5 2 read 3 4096 1200000000; } > "$H/ue.jsonl"
KVIO_FOLLOW_QUIET_MS=300 "$ING" -q -o "$H/u.db" --sem "$H/ms.jsonl" --ebpf "$H/ue.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
await "3 0 3" 100 wq "$H/u.db"
{ hp 5 1500000000; hp 5 1500001000; } >> "$H/ue.jsonl"
first=$got
await "1 0 1" 100 wq "$H/u.db"
kill $FP; wait $FP
eq "one user_data, three drawn reads, two completions: one still waits" "3 0 3 | 1 0 1" "$first | $got"

# a healthy capture read ahead: the commands whose completion is read but
# still in the reorder pool are not "without a completion" (before: the age
# counted them, a false hang of a block's time span). Every unpaired command
# then has its completion in the bytes not read yet (the partial block), after
# the latest record read: its age is below the capture's longest latency
# (computed from the file, by user_data, in Python).
KVIO_FOLLOW_BLOCK_BYTES=65536 KVIO_FOLLOW_QUIET_MS=600000 "$ING" -q -o "$H/ra.db" --sem "$G/rs0.jsonl" \
	--ebpf "$G/re.jsonl" --follow --interval 100 2>/dev/null &
FP=$!
got="" tries=0
while [ -z "$got" ] && [ $tries -lt 200 ] && kill -0 $FP 2>/dev/null; do
	tries=$((tries + 1)); sleep 0.05
	got=$(sqlite3 -readonly "$H/ra.db" "select value from kvio_stats where name = 'follow_waiting_cmds'" 2>/dev/null)
done
age=$(sqlite3 -readonly "$H/ra.db" "select coalesce(max(case name when 'follow_unpaired_age_ns' then value end), -1)
	|| ' ' || max(case name when 'follow_pool_records' then value end) from kvio_stats" 2>/dev/null)
kill -9 $FP; wait $FP 2>/dev/null
eq "a follower killed: its interim database says the follower does not run (JSON, text)" "false $FP 1" \
	"$("$BUILD/kvio-report" --json "$H/ra.db" 2>/dev/null | jq -r '.capture.capture.follow.waiting | "\(.follower_running) \(.follower_pid)"') $(
	"$BUILD/kvio-report" "$H/ra.db" 2>/dev/null | grep -c "its follower (pid $FP) is not running on this host")"
maxlat=$(/usr/bin/python3 -c 'import json, sys
sub, m = {}, 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("event_type") == "nvme_cmd": sub[r["user_data"]] = r["ts"]
    elif r.get("event_type") == "nvme_cmp" and r["user_data"] in sub: m = max(m, r["ts"] - sub.pop(r["user_data"]))
print(m)' "$G/re.jsonl")
eq "read ahead: the interim commit's unpaired commands are younger than the longest latency (${maxlat} ns), with records in the pool" \
	"yes" "$(echo "$age" | awk -v m="$maxlat" '{ print ($1 < m && $2 > 0) ? "yes" : "age " $1 " pool " $2 }')"

# --merge follows incrementally too: each arm's stream lives across commits;
# the later arms' interim rows sit in id ranges of their own and are written
# again at the stop (their ids follow the first arm's whole). Arm b is the
# --faults capture (lost completions, EAGAIN).
NCMD2=$(grep -c '"event_type":"nvme_cmd"' "$G/e2.jsonl")
: > "$G/nma.s"; : > "$G/nma.e"; : > "$G/nmb.s"; : > "$G/nmb.e"
KVIO_TIMING=1 "$ING" -q -o "$G/nm.db" --merge "a=$G/nma.s,$G/nma.e" --merge "b=$G/nmb.s,$G/nmb.e" --follow \
	--interval 100 --idle 1 2> "$G/nm.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 7 8 0.3 "$G/s.jsonl" "$G/nma.s" "$G/en.jsonl" "$G/nma.e" \
	"$G/s2.jsonl" "$G/nmb.s" "$G/e2n.jsonl" "$G/nmb.e"
wait $FP; rc=$?
"$ING" -q -o "$G/nmone.db" --merge "a=$G/nma.s,$G/nma.e" --merge "b=$G/nmb.s,$G/nmb.e"
incremental_ok "merge incremental" "$G/nm.err" "$((NCMD + NCMD2))" "$G/nmone.db" "$G/nm.db"
eq "merge incremental: the database = the one-shot's (canon.sql)" \
	"$(canon "$G/nmone.db" | md5sum)" "$(canon "$G/nm.db" | md5sum)"
# the first arm's tracks have a room of ids while they follow (the next arm's
# begin after it); an arm that outgrows it is a rebuild, said once, not a
# failure (before: exit 2 and nothing said). KVIO_FOLLOW_TRACK_ROOM=64 with
# the --faults capture first (its 200-odd lanes).
: > "$G/nra.s"; : > "$G/nra.e"; : > "$G/nrb.s"; : > "$G/nrb.e"
KVIO_FOLLOW_TRACK_ROOM=64 "$ING" -o "$G/nr.db" --merge "a=$G/nra.s,$G/nra.e" --merge "b=$G/nrb.s,$G/nrb.e" \
	--follow --interval 100 --idle 1 > /dev/null 2> "$G/nr.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 8 6 0.3 "$G/s2.jsonl" "$G/nra.s" "$G/e2n.jsonl" "$G/nra.e" \
	"$G/s.jsonl" "$G/nrb.s" "$G/en.jsonl" "$G/nrb.e"
wait $FP; rc=$?
"$ING" -q -o "$G/nrone.db" --merge "a=$G/nra.s,$G/nra.e" --merge "b=$G/nrb.s,$G/nrb.e"
eq "merge, a room outgrown: exit 0, said once, the final report = the one-shot's" "0 1 $(rj "$G/nrone.db")" \
	"$rc $(grep -c -- "--follow: an arm's tracks outgrew the room.*rebuilt" "$G/nr.err") $(rj "$G/nr.db")"

# what an incremental follow cannot know ahead is checked at the stop; when it
# is not what a one-shot ingest writes, the database is rebuilt from the files:
# a second record of a trace_id (the occurrences' order), a command whose
# record came after its --pair-horizon (here 50 records)
head -n 200 "$G/s.jsonl" > "$G/ds.jsonl"; sed -n 2p "$G/s.jsonl" >> "$G/ds.jsonl"; tail -n +201 "$G/s.jsonl" >> "$G/ds.jsonl"
for case in dup horizon; do
	: > "$G/hs.jsonl"; : > "$G/he.jsonl"
	src=$G/s.jsonl; opt=""
	[ $case = dup ] && src=$G/ds.jsonl
	[ $case = horizon ] && opt="--pair-horizon 50"
	"$ING" -o "$G/h.db" --sem "$G/hs.jsonl" --ebpf "$G/he.jsonl" --follow --force --interval 100 $opt \
		> /dev/null 2> "$G/h.err" &
	FP=$!
	/usr/bin/python3 tests/follow_writer.py 3 6 0.3 "$src" "$G/hs.jsonl" "$G/e.jsonl" "$G/he.jsonl"
	wait $FP; rc=$?
	"$ING" -q -o "$G/hone.db" --sem "$G/hs.jsonl" --ebpf "$G/he.jsonl" $opt 2>/dev/null
	want=$([ $case = dup ] && echo "a trace_id with a second semantic record" || echo "after its horizon")
	eq "rebuilt ($case): exit 0, said once, the final report = the one-shot's" "0 1 $(rj "$G/hone.db")" \
		"$rc $(grep -c -- "--follow: .*$want.*rebuilt" "$G/h.err") $(rj "$G/h.db")"
	rm -f "$G/h.db"
done

# ---- bounded memory: the records written leave the follower's memory ----
# A 200k-line capture (1.5k semantic records over ~0.9 s of device time)
# appended in 10 bursts while the follower commits every 100 ms, its records
# kept KVIO_FOLLOW_KEEP_MS=50 after their op end: the interim commits' own
# kvio_stats rows say how many it holds and how many left (a spill file); the
# records held never reach a third of the file's (grep), those that left
# reach half of them before the stop; the stop reads them back and the final
# database is the one-shot's. Then a second record of a trace_id whose first
# had left memory (only the stop can see it: the database is rebuilt).
M=$G/mem; mkdir -p "$M"
"$BUILD/kvio-gen" --sem "$M/s.jsonl" --ebpf "$M/e.jsonl" --lines 200000 --mode batched --seed 9 2>/dev/null
NREC=$(grep -c '"op":' "$M/s.jsonl")
: > "$M/fs"; : > "$M/fe"
KVIO_FOLLOW_KEEP_MS=50 "$ING" -q -o "$M/f.db" --sem "$M/fs" --ebpf "$M/fe" --follow --interval 100 2> "$M/f.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 0 10 0.3 "$M/s.jsonl" "$M/fs" "$M/e.jsonl" "$M/fe" &
WP=$!
: > "$M/held"
while kill -0 $FP 2>/dev/null; do
	echo "$(fstat "$M/f.db" follow_held_objects 2>/dev/null) $(fstat "$M/f.db" follow_left_objects 2>/dev/null)" >> "$M/held"
	sleep 0.05
done
wait $FP; rc=$?; wait $WP
eq "bounded memory: exit 0, never rebuilt, the records held < a third of the $NREC, those that left >= half" "0 0 yes" \
	"$rc $(grep -c rebuil "$M/f.err") $(awk -v n="$NREC" 'NF == 2 { if ($1 > h) h = $1; if ($2 > l) l = $2 }
		END { print (h > 0 && h < n / 3 && l >= n / 2) ? "yes" : "no: held " h " left " l }' "$M/held")"
"$ING" -q -o "$M/one.db" --sem "$M/fs" --ebpf "$M/fe"
eq "bounded memory: the final report = the one-shot's" "$(rj "$M/one.db")" "$(rj "$M/f.db")"
eq "bounded memory: the final database = the one-shot's (canon.sql)" "$(canon "$M/one.db" | md5sum)" "$(canon "$M/f.db" | md5sum)"
"$BUILD/kvio-export" "$M/one.db" -o "$M/one.pftrace" > /dev/null 2>&1
"$BUILD/kvio-export" "$M/f.db" -o "$M/f.pftrace" > /dev/null 2>&1
ok "bounded memory: the exported .pftrace = the one-shot's, byte for byte" cmp "$M/one.pftrace" "$M/f.pftrace"
eq "bounded memory: no spill file left beside the database" "" "$(ls -a "$M" | grep -e kvio-follow -e '^#')"
# the dup: record 2's line again near the end (its first left long before)
{ head -n -20 "$M/s.jsonl"; sed -n 2p "$M/s.jsonl"; tail -n 20 "$M/s.jsonl"; } > "$M/ds.jsonl"
: > "$M/fs"; : > "$M/fe"
KVIO_FOLLOW_KEEP_MS=50 "$ING" -o "$M/d.db" --sem "$M/fs" --ebpf "$M/fe" --follow --interval 100 > /dev/null 2> "$M/d.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 0 6 0.3 "$M/ds.jsonl" "$M/fs" "$M/e.jsonl" "$M/fe"
wait $FP; rc=$?
"$ING" -q -o "$M/done.db" --sem "$M/fs" --ebpf "$M/fe" 2>/dev/null
eq "bounded memory, a second record of a trace_id that left: exit 0, rebuilt at the stop, the one-shot's report" \
	"0 1 $(rj "$M/done.db")" "$rc $(grep -c -- "--follow: .*a trace_id with a second semantic record.*rebuilt" "$M/d.err") $(rj "$M/d.db")"
# the serving spans: appended once each, as soon as the base is set, then
# out of memory (before: every commit wrote them all again from memory). The
# 60k-line capture with its serving file in 10 bursts: the interim commits
# hold none of them after the first (their kvio_stats rows), those that left
# reach half the file's lines (grep), the serving slices an interim commit
# shows are never taken back (each poll's (id, ts, dur, track name) set holds
# the one before it); the final database is the one-shot's.
NSRV=$(grep -c '"ts_start"' "$G/v.jsonl")
: > "$M/vs"; : > "$M/ve"; : > "$M/vv"
"$ING" -q -o "$M/v.db" --sem "$M/vs" --ebpf "$M/ve" --serving "$M/vv" --follow --interval 100 2> "$M/v.err" &
FP=$!
/usr/bin/python3 tests/follow_writer.py 0 10 0.3 "$G/s.jsonl" "$M/vs" "$G/e.jsonl" "$M/ve" "$G/v.jsonl" "$M/vv" &
WP=$!
: > "$M/vheld"; k=0
srvq="select s.id, s.ts, s.dur, t.name from kvio_slice s join kvio_track t on t.id = s.track_id where t.name like 'requests.%'
	and (select int_value from metadata where name = 'kvio_follow_final') = 0 order by s.id"
while kill -0 $FP 2>/dev/null; do
	sqlite3 -readonly -cmd '.timeout 2000' "$M/v.db" "select
		(select value from kvio_stats where name = 'follow_held_serving'),
		(select value from kvio_stats where name = 'follow_left_serving')" >> "$M/vheld" 2>/dev/null
	sqlite3 -readonly -cmd '.timeout 2000' "$M/v.db" "$srvq" > "$M/vp.$k" 2>/dev/null && k=$((k + 1))
	sleep 0.1
done
wait $FP; rc=$?; wait $WP
taken_back=0 grew=0
for i in $(seq 1 $((k - 1))); do
	[ -s "$M/vp.$i" ] || continue
	sort "$M/vp.$((i - 1))" > "$M/vp.a"; sort "$M/vp.$i" > "$M/vp.b"
	[ -n "$(comm -23 "$M/vp.a" "$M/vp.b")" ] && taken_back=$((taken_back + 1))
	[ "$(wc -l < "$M/vp.$i")" -gt "$(wc -l < "$M/vp.$((i - 1))")" ] && grew=$((grew + 1))
done
eq "bounded memory, serving: exit 0, no commit held a serving record past the first, half of the $NSRV left, none taken back, >= 3 grew" \
	"0 yes 0 yes" "$rc $(awk -F'|' -v n="$NSRV" '$2 != "" { if ($2 > l) l = $2; if ($2 > 0 && $1 > 0) h = 1 }
		END { print (!h && l >= n / 2) ? "yes" : "no: left " l " held " h }' "$M/vheld") $taken_back $([ $grew -ge 3 ] && echo yes || echo "no: $grew")"
"$ING" -q -o "$M/vone.db" --sem "$M/vs" --ebpf "$M/ve" --serving "$M/vv"
eq "bounded memory, serving: the final database = the one-shot's (canon.sql), its report too" \
	"$(canon "$M/vone.db" | md5sum) $(rj "$M/vone.db" | md5sum)" "$(canon "$M/v.db" | md5sum) $(rj "$M/v.db" | md5sum)"

# a semantic file that gets no line (LMCACHE_KVIO_TRACE unset): while the device file grows no
# database appears, and the follower says why, once, naming the file (a new user's trial: it said
# nothing until the stop)
W=$G/wait; mkdir -p "$W"; : > "$W/s"; : > "$W/e"
(for k in 1 2 3 4; do head -c $((k * 300000)) "$G/en.jsonl" | tail -c 300000 >> "$W/e"; sleep 0.4; done) &
WP=$!
"$ING" -q -o "$W/w.db" --sem "$W/s" --ebpf "$W/e" --follow --interval 100 --idle 3 2> "$W/err"
wait $WP
eq "no semantic line: the follower says once that the commands wait for $W/s's first line" "1" \
	"$(grep -c -F "$W/s: no complete line yet: the device file's commands wait for its first one" "$W/err")"
