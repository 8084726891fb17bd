# Outputs appear whole or not at all (lib/outfile.h), for every writer:
# kvio-export (plain and .gz), kvio2perfetto, kvio-report --json FILE and
# --html FILE, kvio-ingest -o.
#  - an output that is one of the inputs (same name, ./name, a symlink, a hard
#    link) is refused: exit 2, one line naming both, the input byte-identical;
#  - a full disk (small tmpfs mounts) is exit 2 and one line
#    "prog: writing PATH: No space left on device" naming the user's path; no
#    temp file is left, a previous output stays as it was;
#  - SIGINT / SIGTERM mid-write exit 130 / 143, remove the temp files, keep the
#    previous output;
#  - a temp file left by a dead process (SIGKILL) is removed by the next run
#    into the same output; a live process's, or an input's, is not.
# Also run by `make fuzz` on the ASan/UBSan build (KVIO_TEST_BUILD=build/asan).
# Expected messages are the contract's words (docs/formats.md, "Outputs: whole
# or not at all"), not copied from a run.
O=$T/out
mkdir -p "$O" "$T/k2p"
"$BUILD/kvio-ingest" -q -o "$O/t.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
cp fixtures/tiny/sem.jsonl "$O/s.jsonl"
cp fixtures/tiny/ebpf.jsonl "$O/e.jsonl"
"$BUILD/kvio-export" "$O/t.db" -o "$O/t.pftrace" >/dev/null
ln -s t.db "$O/t.link"
ln "$O/t.db" "$O/t.hard"
ln -s e.jsonl "$O/e.link"
ln "$O/e.jsonl" "$O/e.hard"
sums() { (cd "$O" && md5sum t.db e.jsonl s.jsonl t.pftrace); }
before=$(sums)
leftovers() { find "$@" -name '*.tmp-*' 2>/dev/null | wc -l; }

# same file: run from $O so that "./t.db" is a spelling of the input
same() { # NAME EXPECTED-STDERR COMMAND...
	name=$1 want=$2; shift 2
	(cd "$O" && "$@" >/dev/null 2>"$T/same.err"); rc=$?
	eq "same file, $name: exit 2, one line naming both" "2|$want" "$rc|$(cat "$T/same.err")"
}
for spell in t.db ./t.db t.link t.hard; do
	same "kvio-export t.db -o $spell" "kvio-export: $spell: the output is the same file as the input t.db (nothing written)" \
		"$BUILD/kvio-export" t.db -o "$spell"
	same "kvio-report t.db --json=$spell" "kvio-report: $spell: the output is the same file as the input t.db (nothing written)" \
		"$BUILD/kvio-report" t.db --json="$spell"
done
# a word ending in .db after --json is a database, never the JSON's file (kvio-report --help):
# t.db twice is a list of two reports on stdout, and t.db is untouched
sum0=$(cksum < "$O/t.db")
(cd "$O" && "$BUILD/kvio-report" t.db --json t.db > "$T/two.json" 2>/dev/null)
eq "kvio-report t.db --json t.db: exit 0, a list of two reports, t.db unchanged" "0 2 same" \
	"$? $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$T/two.json") $([ "$(cksum < "$O/t.db")" = "$sum0" ] && echo same)"
for spell in e.jsonl ./e.jsonl e.link e.hard; do
	same "kvio-ingest -o $spell --ebpf e.jsonl" \
		"kvio-ingest: $spell: the output is the same file as the input e.jsonl (nothing written)" \
		"$BUILD/kvio-ingest" -o "$spell" --sem s.jsonl --ebpf e.jsonl
	same "kvio2perfetto -o $spell --ebpf e.jsonl" \
		"kvio2perfetto: $spell: the output is the same file as the input e.jsonl (nothing written)" \
		"$BUILD/kvio2perfetto" -o "$spell" --sem s.jsonl --ebpf e.jsonl
done
same "kvio-ingest --merge: the output is the second arm's file" \
	"kvio-ingest: ./s.jsonl: the output is the same file as the input s.jsonl (nothing written)" \
	"$BUILD/kvio-ingest" -o ./s.jsonl --merge a=-,e.jsonl --merge b=s.jsonl,e.jsonl
same "kvio-ingest -o X --pftrace X" \
	"kvio-ingest: t.pftrace: the output is the same file as the input ./t.pftrace (nothing written)" \
	"$BUILD/kvio-ingest" -o t.pftrace --pftrace ./t.pftrace
same "kvio-report t.db --html ./t.db" "kvio-report: ./t.db: the output is the same file as the input t.db (nothing written)" \
	"$BUILD/kvio-report" t.db --html ./t.db
same "kvio-report --json x.out --html ./x.out: two outputs, one file" \
	"kvio-report: ./x.out: the same file as the output x.out (nothing written)" \
	"$BUILD/kvio-report" t.db --json x.out --html ./x.out
eq "same file: two outputs, one file: nothing written" 0 "$(ls "$O" | grep -c x.out)"
eq "same file: every input byte-identical afterwards" "$before" "$(sums)"
eq "same file: no temp file written" 0 "$(leftovers "$O")"

# ---- a full disk -----------------------------------------------------------
# A capture whose database (~10 MB) and .pftrace (~11 MB) fill an 8 MiB tmpfs.
G=$T/full-g
"$BUILD/kvio-gen" --sem "$G.s" --ebpf "$G.e" --lines 300000 --seed 7 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$G.db" --sem "$G.s" --ebpf "$G.e"
# a write-back error the output's writeback thread saw (EIO, a delayed
# allocation's ENOSPC) fails the commit: the kernel reports it once per open
# file, and the commit's reopen of a database SQLite wrote would not see it
# again (before: exit 0, the database renamed into place)
for c in ingest export; do
	echo previous > "$T/wb.$c"
	if [ $c = ingest ]; then
		KVIO_TEST_WRITEBACK_EIO=1 "$BUILD/kvio-ingest" -o "$T/wb.$c" --sem "$G.s" --ebpf "$G.e" >/dev/null 2>"$T/wb.err"
	else
		KVIO_TEST_WRITEBACK_EIO=1 "$BUILD/kvio-export" "$G.db" -o "$T/wb.$c" >/dev/null 2>"$T/wb.err"
	fi
	eq "a write-back error, kvio-$c: exit 2 and one line, the previous output intact, no temp file" \
		"2|kvio-$c: writing $T/wb.$c: Input/output error|previous|0" \
		"$?|$(cat "$T/wb.err")|$(cat "$T/wb.$c")|$(leftovers "$T" -maxdepth 1)"
done
M=$T/full
mkdir -p "$M"
# full_case NAME OUTPUT EXPECTED-STDERR COMMAND...: the previous OUTPUT holds
# "previous"; after the run it still does, nothing else is on the disk
full_case() {
	name=$1 out=$2 want=$3; shift 3
	echo previous > "$out"
	"$@" >/dev/null 2>"$T/full.err"; rc=$?
	eq "full disk, $name: exit 2 and one line" "2|$want" "$rc|$(cat "$T/full.err")"
	eq "full disk, $name: previous output intact, no temp file left" "previous|0" \
		"$(cat "$out")|$(leftovers "$M" "$T/k2p")"
	rm -f "$out"
}
if mount -t tmpfs -o size=64k tmpfs "$M" 2>/dev/null; then
	umount "$M"
	for size in 64k 1m 8m; do
		mount -t tmpfs -o size=$size tmpfs "$M"
		full_case "$size, kvio-export" "$M/x.pftrace" "kvio-export: writing $M/x.pftrace: No space left on device" \
			"$BUILD/kvio-export" "$G.db" -o "$M/x.pftrace"
		full_case "$size, kvio-ingest" "$M/x.db" "kvio-ingest: writing $M/x.db: No space left on device" \
			"$BUILD/kvio-ingest" -o "$M/x.db" --sem "$G.s" --ebpf "$G.e"
		full_case "$size, kvio2perfetto" "$M/x.pftrace" "kvio2perfetto: writing $M/x.pftrace: No space left on device" \
			env TMPDIR="$T/k2p" "$BUILD/kvio2perfetto" -o "$M/x.pftrace" --sem "$G.s" --ebpf "$G.e"
		if [ $size != 8m ]; then # the .gz is ~2.5 MB
			full_case "$size, kvio-export .gz" "$M/x.pftrace.gz" \
				"kvio-export: writing $M/x.pftrace.gz: No space left on device" \
				"$BUILD/kvio-export" "$G.db" -o "$M/x.pftrace.gz"
		fi
		umount "$M"
	done
	# the JSON is small: the disk is filled up first. Without a previous FILE
	# nothing may be left (a 0-byte FILE was); with one, it stays as it was.
	mount -t tmpfs -o size=64k tmpfs "$M"
	echo previous > "$M/x.json"
	head -c 1000000 /dev/zero > "$M/fill" 2>/dev/null
	"$BUILD/kvio-report" "$G.db" --json "$M/new.json" >/dev/null 2>"$T/full.err"
	eq "full disk, kvio-report --json NEW: exit 2, one line, no NEW, no temp" \
		"2|kvio-report: writing $M/new.json: No space left on device|absent|0" \
		"$?|$(cat "$T/full.err")|$([ -e "$M/new.json" ] && echo present || echo absent)|$(leftovers "$M")"
	full_case "kvio-report --json FILE" "$M/x.json" "kvio-report: writing $M/x.json: No space left on device" \
		"$BUILD/kvio-report" "$G.db" --json "$M/x.json"
	umount "$M"
	# the --html page (~400 KB with Chart.js inside) on 64 KiB
	mount -t tmpfs -o size=64k tmpfs "$M"
	full_case "kvio-report --html FILE" "$M/x.html" "kvio-report: writing $M/x.html: No space left on device" \
		"$BUILD/kvio-report" "$G.db" --html "$M/x.html"
	umount "$M"
	# kvio2perfetto's database goes to TMPDIR: a full TMPDIR is its error
	mount -t tmpfs -o size=1m tmpfs "$M"
	TMPDIR="$M" "$BUILD/kvio2perfetto" -o "$O/k.pftrace" --sem "$G.s" --ebpf "$G.e" >/dev/null 2>"$T/full.err"
	rc=$?
	eq "full TMPDIR, kvio2perfetto: exit 2, the temporary database named" \
		"2|kvio2perfetto: writing $M/kvio2perfetto.db.tmp-PID: No space left on device|0|0" \
		"$rc|$(sed 's/tmp-[0-9]*/tmp-PID/' "$T/full.err")|$(ls "$M" | wc -l)|$(ls "$O" | grep -c k.pftrace)"
	umount "$M"
else
	echo "skip - full disk: cannot mount a tmpfs here"
fi
# A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG)
# met while the command chunks stream, not at COMMIT: before the fix the
# chunk being filled grew past its rows after SQLite's error (a heap
# overflow: SIGSEGV or abort, the temp file left). 4000 and 8000 blocks of 512
# bytes (dash's unit) fall inside the ~10 MB database's stream.
for lim in 4000 8000; do
	( trap '' XFSZ; ulimit -f $lim; exec "$BUILD/kvio-ingest" -q -o "$O/fz.db" --sem "$G.s" --ebpf "$G.e" ) \
		2>"$T/fz.err"
	rc=$?
	eq "file-size limit $lim blocks, kvio-ingest: exit 2, one line naming the output, no db, no temp file" \
		"2|1|kvio-ingest: writing $O/fz.db: |absent|0" \
		"$rc|$(wc -l < "$T/fz.err")|$(sed 's/^\(kvio-ingest: writing [^:]*: \).*/\1/' "$T/fz.err")|$([ -e "$O/fz.db" ] && echo present || echo absent)|$(leftovers "$O")"
	rm -f "$O"/fz.db* # (what a failing run left: the checks below count temp files)
done

# ---- signals ---------------------------------------------------------------
# Each writer is caught mid-run: kvio-export and kvio-report stop themselves
# (KVIO_TEST_STOP_AT) once their temp file exists, the ingesting commands read
# a FIFO that stays open. tests/sigrun.py sends the signal when the temp appears.
sigcase() { # NAME EXPECTED OUTPUT SIGNAL GLOB COMMAND...
	name=$1 want=$2 out=$3; shift 3
	echo previous > "$out"
	rc=$(python3 tests/sigrun.py "$@" 2>"$T/sig.err")
	eq "signal, $name: exit status, nothing said" "$want|" "$rc|$(cat "$T/sig.err")"
	eq "signal, $name: previous output intact, no temp file left" "previous|0" \
		"$(cat "$out")|$(leftovers "$O" "$T/k2p")"
}
S=$O/sig
sigcase "SIGINT kvio-export" 130 "$S.pftrace" INT "$S.pftrace.tmp-*" \
	env KVIO_TEST_STOP_AT=65536 "$BUILD/kvio-export" "$G.db" -o "$S.pftrace"
sigcase "SIGTERM kvio-export .gz" 143 "$S.pftrace.gz" TERM "$S.pftrace.gz.tmp-*" \
	env KVIO_TEST_STOP_AT=65536 "$BUILD/kvio-export" "$G.db" -o "$S.pftrace.gz"
sigcase "SIGINT kvio-report --json FILE" 130 "$S.json" INT "$S.json.tmp-*" \
	env KVIO_TEST_STOP_AT=0 "$BUILD/kvio-report" "$G.db" --json "$S.json"
sigcase "SIGTERM kvio-report --html FILE" 143 "$S.html" TERM "$S.html.tmp-*" \
	env KVIO_TEST_STOP_AT=0 "$BUILD/kvio-report" "$G.db" --html "$S.html"
mkfifo "$T/sig.fifo"
for sig in INT TERM; do
	want=$([ $sig = INT ] && echo 130 || echo 143)
	{ cat "$G.e"; exec sleep 600; } > "$T/sig.fifo" & feeder=$!
	sigcase "SIG$sig kvio-ingest" $want "$S.db" $sig "$S.db.tmp-*" \
		"$BUILD/kvio-ingest" -q -o "$S.db" --sem "$G.s" --ebpf "$T/sig.fifo"
	kill $feeder; wait $feeder 2>/dev/null
	{ cat "$G.e"; exec sleep 600; } > "$T/sig.fifo" & feeder=$!
	sigcase "SIG$sig kvio2perfetto (its database in TMPDIR)" $want "$S.pftrace" $sig "$T/k2p/kvio2perfetto.db.tmp-*" \
		env TMPDIR="$T/k2p" "$BUILD/kvio2perfetto" -q -o "$S.pftrace" --sem "$G.s" --ebpf "$T/sig.fifo"
	kill $feeder; wait $feeder 2>/dev/null
done
eq "signal: kvio2perfetto's TMPDIR is empty again" 0 "$(ls "$T/k2p" | wc -l)"

# ---- stale temp files --------------------------------------------------------
# SIGKILL cannot be caught: its temp stays, and the next run removes it.
python3 tests/sigrun.py KILL "$O/st.pftrace.tmp-*" env KVIO_TEST_STOP_AT=0 \
	"$BUILD/kvio-export" "$O/t.db" -o "$O/st.pftrace" > /dev/null
killed=$(ls "$O" | grep -c '^st.pftrace.tmp-')
sh -c 'exit 0' & dead=$!; wait $dead # a PID that no longer runs
: > "$O/st.db.tmp-$dead"; : > "$O/st.db.tmp-$dead-journal"
: > "$O/st.pftrace.tmp-$$"         # this shell: alive
cp "$O/t.db" "$O/in.pftrace.tmp-$dead" # an input that looks like a stale temp
"$BUILD/kvio-export" "$O/t.db" -o "$O/st.pftrace" >/dev/null
"$BUILD/kvio-ingest" -q -o "$O/st.db" --sem "$O/s.jsonl" --ebpf "$O/e.jsonl"
"$BUILD/kvio-export" "$O/in.pftrace.tmp-$dead" -o "$O/in.pftrace" >/dev/null
eq "stale temps: a SIGKILLed export's and a dead PID's removed, a live PID's and an input kept" \
	"1|in.pftrace.tmp-$dead st.pftrace.tmp-$$" \
	"$killed|$(cd "$O" && ls -d st.*.tmp-* in.*.tmp-* 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
rm -f "$O/st.pftrace.tmp-$$" "$O/in.pftrace.tmp-$dead"

# ---- messages name the user's path and the system's reason --------------------
"$BUILD/kvio-ingest" -o "$T/nodir/x.db" --sem "$O/s.jsonl" 2>"$T/msg.err"
eq "no such directory for -o: exit 2, the user's path and errno" \
	"2|kvio-ingest: creating $T/nodir/x.db: No such file or directory" "$?|$(cat "$T/msg.err")"
"$BUILD/kvio-report" "$T" 2>"$T/msg.err" >/dev/null
eq "kvio-report DIR: is a directory" "2|kvio-report: $T: cannot open database: Is a directory" \
	"$?|$(cat "$T/msg.err")"
"$BUILD/kvio-report" "$T/no.db" 2>"$T/msg.err" >/dev/null
eq "kvio-report of a missing file: no such file" \
	"2|kvio-report: $T/no.db: cannot open database: No such file or directory" "$?|$(cat "$T/msg.err")"
"$BUILD/kvio-report" "$O/t.db" --json "$T/missing/x.json" 2>"$T/msg.err" >/dev/null
eq "--json into a missing directory: the path and errno" \
	"2|kvio-report: creating $T/missing/x.json: No such file or directory" "$?|$(cat "$T/msg.err")"
"$BUILD/kvio-export" "$O/t.db" -o "$O" 2>"$T/msg.err"
eq "kvio-export -o DIR: is a directory" "2|kvio-export: creating $O: Is a directory" "$?|$(cat "$T/msg.err")"
eq "messages: nothing left behind" 0 "$(leftovers "$T")"
