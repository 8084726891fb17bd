# Exit codes, arguments and messages a driver can act on (issue 10 part B).
# The contract (README "Exit status", every --help): 0 ok; 1 the result is
# unusable or suspect; 2 usage or I/O error; 3 a --fail-on gate fired.

# ---- kvio-gen: a real --help, bad values are usage errors ----
"$BUILD/kvio-gen" --help > "$T/gen.help" 2>&1
eq "kvio-gen --help: exit 0, lists every option" "0 8" \
	"$? $(grep -cE '^  --(sem|ebpf|serving|lines|mode|ranks|seed|faults) ' "$T/gen.help")"
for bad in "--lines abc" "--lines 10x" "--lines -5" "--mode fast" "--ranks 9" "--bogus" "--lines"; do
	# shellcheck disable=SC2086
	"$BUILD/kvio-gen" --sem "$T/gen.s" --ebpf "$T/gen.e" $bad > /dev/null 2> "$T/gen.err"
	eq "kvio-gen $bad: exit 2, one line" "2 1" "$? $(wc -l < "$T/gen.err")"
done

# ---- inputs that are not JSONL are named by their first bytes (exit 2, one
# line naming the file, nothing written): never "N malformed lines", exit 0 ----
"$BUILD/kvio-ingest" -q -o "$T/c.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
"$BUILD/kvio-export" "$T/c.db" -o "$T/c.pftrace" > /dev/null
printf 'ab\000\001\002cd\nmore\n' > "$T/c.bin"
head -c 8192 /dev/zero > "$T/c.zero"
for c in "ELF:$BUILD/kvio:an ELF executable" "db:$T/c.db:a SQLite database" \
	"pftrace:$T/c.pftrace:a Perfetto trace (.pftrace): read it with kvio-ingest --pftrace" \
	"binary:$T/c.bin:binary (NUL bytes in its first line)" "zeros:$T/c.zero:starts with NUL bytes"; do
	what=${c%%:*}; rest=${c#*:}; f=${rest%%:*}; says=${rest#*:}
	for opt in --ebpf --sem; do
		rm -f "$T/n.db"
		"$BUILD/kvio-ingest" -q -o "$T/n.db" $opt "$f" > "$T/n.out" 2> "$T/n.err"
		eq "$what as $opt: exit 2, one line naming the file and what it is, no database" \
			"2 1 1 no" "$? $(wc -l < "$T/n.err") $(grep -cF "kvio-ingest: $f: $says" "$T/n.err") $([ -e "$T/n.db" ] && echo yes || echo no)"
	done
done

# ---- ingest: data warnings on stderr (kept by -q), what is wrong said plainly ----
# a device file without any nvme_cmp line (kvio-gen --no-completions: the
# tracer without its completion probe): a warning, completion_probe 0 in
# kvio_stats; the tiny fixture has completions (its ebpf.jsonl: nvme_cmp lines)
"$BUILD/kvio-gen" --sem "$T/nc.s" --ebpf "$T/nc.e" --lines 3000 --no-completions 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/nc.db" --sem "$T/nc.s" --ebpf "$T/nc.e" > "$T/nc.out" 2> "$T/nc.err"
eq "no nvme_cmp line: exit 0, nothing on stdout with -q, the warning on stderr" "0 0 1" \
	"$? $(wc -c < "$T/nc.out") $(grep -c "^kvio-ingest: \[capture\] WARNING: $T/nc.e has no nvme_cmp lines (no completion probe): latency and queue depth are unavailable" "$T/nc.err")"
eq "no nvme_cmp line: kvio_stats completion_probe 0, the tiny capture's 1" "0 1" \
	"$(q "$T/nc.db" "select value from kvio_stats where name = 'completion_probe'") $(q "$T/c.db" "select value from kvio_stats where name = 'completion_probe'")"
"$BUILD/kvio-ingest" -o "$T/nc2.db" --sem "$T/nc.s" --ebpf "$T/nc.e" > "$T/nc2.out" 2> "$T/nc2.err"
eq "no nvme_cmp line, summary: counted on stdout, said on stderr" "1 1" \
	"$(grep -c '^  1 warning(s), on standard error' "$T/nc2.out") $(grep -c 'no nvme_cmp lines' "$T/nc2.err")"
# stores with an empty device file: "no nvme_cmd lines", not "0 header commands
# classified ... check --lba-bytes" (tiny's sem.jsonl has stores); without a
# device file: that there is none
: > "$T/empty.e"
"$BUILD/kvio-ingest" -q -o "$T/ne.db" --sem fixtures/tiny/sem.jsonl --ebpf "$T/empty.e" 2> "$T/ne.err"
eq "stores, empty device file: says no nvme_cmd lines, not check --lba-bytes" "1 0" \
	"$(grep -c "$T/empty.e has no nvme_cmd lines" "$T/ne.err") $(grep -c 'check --lba-bytes' "$T/ne.err")"
"$BUILD/kvio-ingest" -q -o "$T/ne.db" --sem fixtures/tiny/sem.jsonl 2> "$T/ne.err"
eq "stores, no device file: says so, not check --lba-bytes" "1 0" \
	"$(grep -c 'WARNING: no device file (--ebpf)' "$T/ne.err") $(grep -c 'check --lba-bytes' "$T/ne.err")"
# the exit codes are in --help
# helpcodes CMD: which of the exit-code phrases CMD --help carries
helpcodes() {
	h=$("$BUILD/$1" --help | tr '\n' ' ' | tr -s ' ')
	for p in 'exit status: 0 ok' '; 1 ' '; 2 usage or I/O error' '130/143'; do
		case $h in *"$p"*) printf '+' ;; *) printf '%s?' "$p" ;; esac
	done
}
for c in kvio-ingest kvio2perfetto; do
	eq "$c --help: the exit codes 0 1 2 130/143" "++++" "$(helpcodes $c)"
done
# the capture tools (built when the BPF toolchain is there): their own 0/1/2 (README "Exit status")
for c in nvme_uring_cmd_monitor kvio-load; do
	if [ -x "$BUILD/$c" ]; then
		h=$("$BUILD/$c" --help | tr '\n' ' ' | tr -s ' ')
		case $h in *"exit status: 0 "*"; 1 "*"; 2 usage error"*) r=ok ;; *) r=missing ;; esac
		eq "$c --help: the exit codes 0 1 2" "ok" "$r"
	else
		echo "skip - $c not built"
	fi
done

# ---- '-' is standard input for --sem/--ebpf/--serving; a database cannot go to stdout ----
"$BUILD/kvio-ingest" -q -o "$T/si.db" --sem - --ebpf fixtures/tiny/ebpf.jsonl < fixtures/tiny/sem.jsonl
eq "--sem -: exit 0, the same slices as from the file" "0 $(q "$T/c.db" "select count(*) from slice")" \
	"$? $(q "$T/si.db" "select count(*) from slice")"
cat fixtures/tiny/ebpf.jsonl | "$BUILD/kvio-ingest" -q -o "$T/si2.db" --sem fixtures/tiny/sem.jsonl --ebpf -
eq "--ebpf - from a pipe: the same slices" "$(q "$T/c.db" "select count(*) from slice")" \
	"$(q "$T/si2.db" "select count(*) from slice")"
"$BUILD/kvio-ingest" -q -o "$T/si3.db" --sem - --ebpf - < fixtures/tiny/sem.jsonl 2> "$T/si.err"
eq "--sem - --ebpf -: exit 2, one line" "2 1" "$? $(wc -l < "$T/si.err")"
(cd "$T" && "$BUILD/kvio-ingest" -q -o - --sem "$ROOT/fixtures/tiny/sem.jsonl" > "$T/so.out" 2> "$T/so.err")
eq "-o - (a database to stdout): exit 2, one line, nothing on stdout" "2 1 0" \
	"$? $(grep -c 'cannot be written to standard output' "$T/so.err") $(wc -c < "$T/so.out")"

# ---- the database says what reads it, without kvio's extension ----
eq "metadata without the extension: which extension, how to load it, the error without it" "1 1" \
	"$(sqlite3 -batch "$T/c.db" "select str_value like '%.load /usr/local/lib/kvio/kvio%', str_value like '%no such module: kvio_cmds%' from metadata where name = 'read_with'" | tr '|' ' ')"
eq "metadata without the extension: extension names kvio.so" 1 \
	"$(sqlite3 -batch "$T/c.db" "select str_value like '%lib/kvio/kvio.so%' from metadata where name = 'extension'")"
# docs/database.md lists every debug.* key kvio writes, with its value_type:
# the keys of databases that between them hold every kind of slice (kvio-gen
# with serving spans, TP ranks and faults; tiny; KV-keyed commands, a negative
# slot_offset, JSON-typed error/instance, a duplicate trace_id)
"$BUILD/kvio-gen" --sem "$T/k.s" --ebpf "$T/k.e" --serving "$T/k.v" --lines 6000 --ranks 2 --faults 7 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/k1.db" --sem "$T/k.s" --ebpf "$T/k.e" --serving "$T/k.v"
printf '%s\n' '{"event_type":"nvme_cmd","user_data":4294967296,"op_name":"store","key_hex":"abcd","key_len":2,"value_len":100,"slba":1,"data_len":4096,"ts":5000000}' \
	'{"event_type":"nvme_cmp","user_data":4294967296,"ts":5009000}' > "$T/k2.e"
printf '%s\n' '{"trace_id":1,"op":"store","ts":0.004,"ts_start":0.001,"bytes":4096,"slot_offset":-4096,"error":3,"instance":7,"pid":-2}' \
	'{"trace_id":1,"op":"store","ts":0.006,"bytes":4096,"error":"EIO","instance":"i1","key":"a@b"}' > "$T/k2.s"
"$BUILD/kvio-ingest" -q -o "$T/k2.db" --sem "$T/k2.s" --ebpf "$T/k2.e" 2>/dev/null
for d in "$T/k1.db" "$T/c.db" "$T/k2.db"; do q "$d" "select distinct key, value_type from args"; done | sort -u > "$T/keys"
python3 - "$T/keys" docs/database.md > "$T/keys.missing" <<'PY'
import re, sys
parts = open(sys.argv[2]).read().split('## `debug.*` arg keys')
if len(parts) < 2:
    sys.exit(print('no "debug.* arg keys" section'))
rows = [l for l in parts[1].splitlines() if l.startswith('|')]
doc = {}  # key -> set of documented types
for r in rows:
    c = [x.strip() for x in r.strip('|').split('|')]
    if len(c) < 3:
        continue
    keys = re.findall(r'`(debug\.[a-z_]+)`', c[1])
    types = [t.strip() for t in c[2].split(',')]
    for i, k in enumerate(keys):
        t = types[i] if len(types) == len(keys) else types[0]
        doc.setdefault(k, set()).update({'int', 'uint', 'real', 'string', 'bool'} if t == 'JSON' else {t, 'int'} if t == 'uint' else {t})
n = 0
for l in open(sys.argv[1]):
    k, t = l.strip().split('|')
    n += 1
    if t not in doc.get(k, ()):
        print('%s %s' % (k, t))
print('checked', n, file=sys.stderr)
PY
eq "docs/database.md: every debug.* key of the databases, with its type" "" "$(cat "$T/keys.missing" | tr '\n' ' ')"
eq "the key check saw the keys (at least 45 key/type pairs)" 1 "$([ "$(wc -l < "$T/keys")" -ge 45 ] && echo 1)"

# ---- kvio-report: arguments in any order; --json's FILE by the rule of --help ----
F=fixtures/ab
"$BUILD/kvio-ingest" -q -o "$T/ab.db" --merge "a=$F/a.sem.jsonl,$F/a.ebpf.jsonl,$F/a.serving.jsonl" --merge "b=$F/b.sem.jsonl,$F/b.ebpf.jsonl"
jkeys() { python3 -c "import json,sys; print(' '.join(sorted(json.load(open(sys.argv[1])))))" "$1" 2>&1; }
cd "$T" || exit 1
"$BUILD/kvio-report" --json ab.db --label b > rj1.out 2> rj1.err
eq "--json DB --label b (the word after --json is the database): exit 0, JSON of b only" "0 b" "$? $(jkeys rj1.out)"
"$BUILD/kvio-report" --label b --json ab.db > rj2.out 2>&1
eq "--label b --json DB: the same" "b" "$(jkeys rj2.out)"
"$BUILD/kvio-report" --json out1.json ab.db --label a > rj3.out 2>&1
eq "--json X.json DB: X.json written, the text on stdout" "a 1" "$(jkeys out1.json) $(grep -c '^=== kvio report: ab.db' rj3.out)"
"$BUILD/kvio-report" ab.db --json out2.txt > rj4.out 2>&1
eq "DB --json FILE (after the database, any name): FILE written" "a b" "$(jkeys out2.txt)"
"$BUILD/kvio-report" ab.db --json=out3 > /dev/null 2>&1
eq "--json=FILE: FILE" "a b" "$(jkeys out3)"
"$BUILD/kvio-report" ab.db --json - > rj5.out 2>&1
eq "--json -: the JSON on stdout, no file named '-'" "a b no" "$(jkeys rj5.out) $([ -e ./- ] && echo yes || echo no)"
cd "$ROOT" || exit 1

# --rows: a bare name is kvio's own file, a path is read from that file
"$BUILD/kvio-report" "$T/ab.db" --rows qd1.sql > "$T/rows1.out"
"$BUILD/kvio-report" "$T/ab.db" --rows sql/qd1.sql > "$T/rows2.out" 2>&1
eq "--rows sql/qd1.sql = --rows qd1.sql" "0 $(cat "$T/rows1.out")" "$? $(cat "$T/rows2.out")"
# tiny: 6 nvme_cmd lines = 6 commands in prelude.sql's kvio_command
echo "SELECT count(*) FROM kvio_command;" > "$T/mine.sql"
eq "--rows ./FILE: a query of one's own, after prelude.sql" 6 "$("$BUILD/kvio-report" "$T/c.db" --rows "$T/mine.sql" 2>&1)"
"$BUILD/kvio-report" "$T/c.db" --rows "$T/none.sql" 2> "$T/rows.err"
eq "--rows a missing path: exit 2, one line with the reason" "2 1" "$? $(grep -c 'none.sql: cannot read: No such file' "$T/rows.err")"

# --base: the A/B base. The ab fixture (tests/t_40_report.sh): b's load is
# 62.5 ms faster than a's, stores equal; with base b the deltas change sign
"$BUILD/kvio-report" "$T/ab.db" --base b --json "$T/base.json" > "$T/base.txt"
eq "--base b: a's ab is against b (load +62.5 ms), b has none" \
	"b 62500000 0 False" \
	"$(python3 -c "import json; d=json.load(open('$T/base.json')); a=d['a']['ab']; print(a['vs'], a['load']['delta_p50'], a['store']['delta_p50'], 'ab' in d['b'])")"
eq "--base b: the text names the base" 1 "$(grep -c '^===== A/B paired object diff: base b (--base) =====' "$T/base.txt")"
"$BUILD/kvio-report" "$T/ab.db" > "$T/nobase.txt"
eq "default base: the first label in sorted order, named in the text" 1 \
	"$(grep -c '^===== A/B paired object diff: base a (the first label in sorted order; --base L to change) =====' "$T/nobase.txt")"
"$BUILD/kvio-report" "$T/ab.db" --base zz > /dev/null 2> "$T/base.err"
eq "--base unknown: exit 2, one line naming the labels" "2 1" "$? $(grep -c "no label 'zz' (labels: a, b)" "$T/base.err")"

# ---- kvio-report: exit 1 on a database with nothing to report (not 2, a typo's code) ----
"$BUILD/kvio-ingest" -q -o "$T/e0.db" --sem "$T/empty.e" --ebpf "$T/empty.e" 2>/dev/null
"$BUILD/kvio-report" "$T/e0.db" > "$T/rep0.out" 2> "$T/rep0.err"
eq "report on an ingest of empty inputs: exit 1, one line" "1 1" "$? $(wc -l < "$T/rep0.err")"
for c in kvio-report; do
	eq "$c --help: the exit codes 0 1 2 130/143" "++++" "$(helpcodes $c)"
done

# ---- the text report's shares ----
# header share without a kvio_meta line: the header commands' own bytes over
# tagged bytes. tiny without its kvio_meta: one header write of 4096 bytes
# (slba 10 = slot_offset 40960 / 4096); tagged bytes 4096 + 3 x 131072 + 4096
# (trace_ids 1, 2 and 0xffffffff) = 401408: 4096 / 401408 = 1.02% -> "1.0%"
# (the reference's 131072-byte assumption gives 32.7%)
grep -v kvio_meta fixtures/tiny/sem.jsonl > "$T/nm.s"
"$BUILD/kvio-ingest" -q -o "$T/nm.db" --sem "$T/nm.s" --ebpf fixtures/tiny/ebpf.jsonl
"$BUILD/kvio-report" "$T/nm.db" > "$T/nm.txt"
eq "no kvio_meta: header share of the header commands' own bytes" 1 "$(grep -c 'header cmds 1 (1.0% of bytes)' "$T/nm.txt")"
# coverage: tiny has 4 completions for its 6 commands: 66.7%; N untagged writes
# all completed but the first: 270/271 = 0.99631 -> 99.6%, 1999/2000 = 0.9995 ->
# 99.9% (never rounded up to 100)
eq "coverage 4/6: 66.7%" 1 "$(grep -c 'real-duration coverage 66.7%$' "$T/nm.txt")"
for n in 271 2000; do
	awk -v n=$n 'BEGIN { for (k = 1; k <= n; k++) {
		printf "{\"event_type\":\"nvme_cmd\",\"user_data\":%d,\"op_name\":\"write\",\"slba\":%d,\"data_len\":4096,\"ts\":%d}\n", k, k, k * 10000
		if (k > 1) printf "{\"event_type\":\"nvme_cmp\",\"user_data\":%d,\"ts\":%d}\n", k, k * 10000 + 5000 } }' > "$T/cov$n.e"
	"$BUILD/kvio-ingest" -q -o "$T/cov$n.db" --ebpf "$T/cov$n.e"
	"$BUILD/kvio-report" "$T/cov$n.db" > "$T/cov$n.txt"
done
eq "coverage 270/271 = 99.6%, 1999/2000 = 99.9% (not 100%)" "1 1" \
	"$(grep -c 'coverage 99.6%$' "$T/cov271.txt") $(grep -c 'coverage 99.9%$' "$T/cov2000.txt")"

# ---- the capture section: no completion probe (text, JSON); ingest's warnings on stderr ----
"$BUILD/kvio-report" "$T/nc.db" --json "$T/nc.json" > "$T/nc.txt" 2> "$T/ncr.err"
eq "no completion probe: JSON capture.completion_probe 0 (tiny: 1)" "0 1" \
	"$(python3 -c "import json; print(json.load(open('$T/nc.json'))['capture']['capture']['completion_probe'])") $("$BUILD/kvio-report" "$T/c.db" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['capture']['capture']['completion_probe'])")"
eq "no completion probe: the text's capture section says so" 1 \
	"$(grep -c '^  WARNING: the device file has no nvme_cmp line (no completion probe): latency and queue depth are unavailable' "$T/nc.txt")"
"$BUILD/kvio-report" "$T/nc.db" --json > "$T/nc2.json" 2> "$T/ncr2.err"
eq "--json > FILE: ingest's warnings still on stderr" 1 "$(grep -c "^kvio-report: \[capture\] WARNING: $T/nc.e has no nvme_cmp lines" "$T/ncr2.err")"

# ---- '-o -': a .pftrace can go to standard output (a database cannot: above) ----
"$BUILD/kvio-export" "$T/c.db" -o "$T/o.pftrace" > /dev/null
(cd "$T" && "$BUILD/kvio-export" "$T/c.db" -o - > "$T/o.stdout" 2> "$T/o.err")
eq "kvio-export -o -: exit 0, the same bytes as -o FILE, the summary on stderr" "0 same 1" \
	"$? $(cmp -s "$T/o.pftrace" "$T/o.stdout" && echo same || echo differ) $(grep -c '^kvio-export: wrote standard output' "$T/o.err")"
if [ -w /dev/full ]; then
	(cd "$T" && "$BUILD/kvio-export" "$T/c.db" -o - > /dev/full 2> "$T/o.err")
	eq "kvio-export -o - into a full device: exit 2, the reason" "2 1" \
		"$? $(grep -c '^kvio-export: writing standard output: No space left on device' "$T/o.err")"
fi
"$BUILD/kvio2perfetto" -q --sem "$ROOT/fixtures/tiny/sem.jsonl" --ebpf "$ROOT/fixtures/tiny/ebpf.jsonl" -o "$T/p.pftrace"
(cd "$T" && "$BUILD/kvio2perfetto" --sem "$ROOT/fixtures/tiny/sem.jsonl" --ebpf "$ROOT/fixtures/tiny/ebpf.jsonl" -o - > "$T/p.stdout" 2>/dev/null)
eq "kvio2perfetto -o -: the same bytes as -o FILE (no summary mixed in)" same \
	"$(cmp -s "$T/p.pftrace" "$T/p.stdout" && echo same || echo differ)"
eq "kvio-export --help: the exit codes 0 2 130/143" "++" "$(h=$("$BUILD/kvio-export" --help | tr '\n' ' ' | tr -s ' '); for p in 'exit status: 0 ok' '130/143'; do case $h in *"$p"*) printf + ;; *) printf '%s?' "$p" ;; esac; done)"
eq "kvio --help: the exit codes 0 1 2 3 130/143" "+++++" "$(h=$("$BUILD/kvio" --help | tr '\n' ' ' | tr -s ' '); for p in '0 ok' '; 1 ' '; 2 usage or I/O error' '; 3 ' '130/143'; do case $h in *"$p"*) printf + ;; *) printf '%s?' "$p" ;; esac; done)"

# an option given twice is a usage error, not a silent last-one-wins (a second --json FILE was
# the only one written; a second -o, --time-range or --jobs replaced the first)
for c in "kvio-report $T/c.db --json $T/twice1.json --json $T/twice2.json" "kvio-report $T/c.db --jobs 1 --jobs 2" \
	"kvio-report $T/c.db --time-range 0,1 --time-range 0,2" "kvio-export $T/c.db -o $T/twice1.pftrace -o $T/twice2.pftrace" \
	"kvio-ingest -o $T/twice1.db -o $T/twice2.db --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl" \
	"kvio-ingest -o $T/twice1.db --sem fixtures/tiny/sem.jsonl --sem fixtures/ab/a.sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl" \
	"kvio-ingest -o $T/twice1.db --lba-bytes 4096 --lba-bytes 512 --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl" \
	"kvio2perfetto -o $T/twice1.pftrace --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl --ebpf fixtures/tiny/ebpf.jsonl"; do
	"$BUILD/${c%% *}" ${c#* } > /dev/null 2>"$T/twice.err"
	eq "${c%% *}: an option given twice: exit 2, one line naming it, nothing written" "2 1 0" \
		"$? $(grep -c 'given twice' "$T/twice.err") $(ls "$T"/twice1.* "$T"/twice2.* 2>/dev/null | wc -l)"
done

# a label or the device is at most 128 bytes (it names processes, repeated in every report and
# page): 129 is a usage error saying so, 128 is taken (the tiny fixture's report then exits 0)
L128=$(printf '%0128d' 0); L129=$(printf '%0129d' 0)
for c in "kvio-ingest -o $T/lab1.db --label $L129 --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl|--label" \
	"kvio-ingest -o $T/lab1.db --device $L129 --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl|--device" \
	"kvio-ingest -o $T/lab1.db --merge $L129=fixtures/ab/a.sem.jsonl,fixtures/ab/a.ebpf.jsonl --merge B=fixtures/ab/b.sem.jsonl,fixtures/ab/b.ebpf.jsonl|--merge: label" \
	"kvio2perfetto -o $T/lab1.pftrace --label $L129 --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl|--label"; do
	cmd=${c%|*}
	"$BUILD/${cmd%% *}" ${cmd#* } > /dev/null 2>"$T/lab.err"
	eq "${cmd%% *} ${c#*|} of 129 bytes: exit 2, one line saying the 128-byte limit, nothing written" "2 1 1 0" \
		"$? $(wc -l < "$T/lab.err") $(grep -c "^${cmd%% *}: ${c#*|} '0*\.\.\.' is 129 bytes: at most 128" "$T/lab.err") $(ls "$T"/lab1.* 2>/dev/null | wc -l)"
done
"$BUILD/kvio-ingest" -q -o "$T/lab2.db" --label "$L128" --device "$L128" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
eq "a 128-byte label and device: ingest and report exit 0" "0 0" "$? $("$BUILD/kvio-report" "$T/lab2.db" --json > /dev/null; echo $?)"

# malloc's heaps on huge pages (cmd/hugemem.c): where the kernel gives them on request, every
# command runs with glibc's huge-page tunables, seen in the running process's environment
# (a kvio-ingest blocked opening a FIFO as --ebpf), not with KVIO_HUGEMEM=0 or a
# GLIBC_TUNABLES of the user's own; the faults it takes on a 200k-line ingest are read from
# the kernel's count (getrusage), the output is the same bytes either way
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
case $thp in *"[always]"* | *"[madvise]"*) thp=on ;; *) thp=off ;; esac
hm_env() { # ENV-ASSIGNMENTS...: the GLIBC_TUNABLES a kvio-ingest runs with ("-" none)
	rm -f "$T/hm.fifo" "$T/hm.db"; mkfifo "$T/hm.fifo"
	env "$@" "$BUILD/kvio-ingest" -q -o "$T/hm.db" --sem fixtures/tiny/sem.jsonl --ebpf "$T/hm.fifo" 2>/dev/null &
	hp=$!; got=-
	for _ in $(seq 50); do
		[ "$(readlink /proc/$hp/exe 2>/dev/null)" = "$(readlink -f "$BUILD/kvio")" ] && break; sleep 0.1
	done
	sleep 0.2
	got=$(tr '\0' '\n' < /proc/$hp/environ 2>/dev/null | sed -n 's/^GLIBC_TUNABLES=//p')
	cat fixtures/tiny/ebpf.jsonl > "$T/hm.fifo"; wait $hp
	echo "${got:--}"
}
if [ $thp = on ]; then
	# (glibc rewrites the variable once parsed: the first tunable is what /proc shows)
	eq "huge pages: a command runs with glibc's huge-page malloc tunables" glibc.malloc.hugetlb=1 \
		"$(hm_env X=1 | cut -d: -f1)"
else
	ok "huge pages: THP is 'never' here, nothing to ask for (skipped)"
fi
eq "huge pages: KVIO_HUGEMEM=0 leaves malloc as it is" - "$(hm_env KVIO_HUGEMEM=0)"
eq "huge pages: the user's own GLIBC_TUNABLES wins" glibc.malloc.check=0 "$(hm_env GLIBC_TUNABLES=glibc.malloc.check=0)"
"$BUILD/kvio-gen" --sem "$T/hm.s" --ebpf "$T/hm.e" --lines 200000 --mode batched --seed 7 2>/dev/null
hm_faults() { # ENV: minor faults of a kvio-ingest of the 200k capture, and its database's dump's sum
	rm -f "$T/hm2.db"
	python3 -c 'import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], dict(os.environ, **dict([sys.argv[2].split("=")])))
_, st, ru = os.wait4(pid, 0)
print(ru.ru_minflt if st == 0 else 0)' /usr/bin/env "$1" "$BUILD/kvio-ingest" -q -o "$T/hm2.db" \
		--sem "$T/hm.s" --ebpf "$T/hm.e" 2>/dev/null
	sqlite3 "$T/hm2.db" .dump | md5sum | cut -c1-32
}
set -- $(hm_faults KVIO_HUGEMEM=0) $(hm_faults X=1)
eq "huge pages: the 200k ingest's database is the same either way (sqlite3 .dump)" "$2" "$4"
if [ $thp = on ]; then
	eq "huge pages: the 200k ingest takes under half the page faults ($3 with, $1 without)" yes \
		"$([ "${3:-0}" -gt 0 ] && [ $(( ${3:-0} * 2 )) -lt "${1:-0}" ] && echo yes || echo no)"
fi
