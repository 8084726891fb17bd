# t_05_harness.sh — the harness itself (issue 24): tests/lib.sh's unit(),
# tests/run.sh and scripts/bench.sh must not report success for work that did
# not happen. Each case below is made to fail on purpose and the harness must
# say so. (Sourced by run.sh; ~30 s, most of it three quick benches.)

## unit(): a binary that crashes, stops short or exits non-zero is a FAIL
cat > "$T/h_unit.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* H_MODE good: 3 checks, exit 0; crash: 2 checks then SIGSEGV; short: 2 checks, exit 0;
 * exit: 3 checks then exit 2 (none of them FAIL) */
int main(void)
{
	const char *m = getenv("H_MODE");
	printf("ok - h: one\n");
	printf("ok - h: two\n");
	if (!strcmp(m, "crash"))
		raise(SIGSEGV);
	if (!strcmp(m, "short"))
		return 0;
	printf("ok - h: three\n");
	return !strcmp(m, "exit") ? 2 : 0;
}
C
# hunit MODE: unit() on that binary with a plan of 3, from zero counts; prints its
# lines and "counts PASS FAIL"
hunit() {
	(
		PASS=0; FAIL=0
		H_MODE=$1; export H_MODE
		unit "h_unit_$1" 3 "$T/h_unit.c"
		echo "counts $PASS $FAIL"
	) > "$T/h_unit_$1.log" 2>&1
	cat "$T/h_unit_$1.log"
}
eq "unit(): 3 checks of a plan of 3, exit 0: 3 passed, 0 failed" "counts 3 0" "$(hunit good | grep '^counts')"
eq "unit(): a crash after 2 of 3 checks: the signal and the short run are 2 FAILs" "counts 2 2|1|1" \
	"$(hunit crash | grep '^counts')|$(grep -c '^FAIL - h_unit_crash: killed by signal 11' "$T/h_unit_crash.log")|$(grep -c '^FAIL - h_unit_crash: ran 2 checks, its plan says 3' "$T/h_unit_crash.log")"
eq "unit(): exit 0 after 2 of 3 checks: a FAIL (fewer checks than its plan)" "counts 2 1|1" \
	"$(hunit short | grep '^counts')|$(grep -c '^FAIL - h_unit_short: ran 2 checks, its plan says 3' "$T/h_unit_short.log")"
eq "unit(): exit 2 with every check ok: a FAIL naming it" "counts 3 1|1" \
	"$(hunit exit | grep '^counts')|$(grep -c '^FAIL - h_unit_exit: exit 2' "$T/h_unit_exit.log")"

## run.sh: a test file that stops before its end is a FAIL, and the files after it still run
mkdir -p "$T/h_run"
printf 'eq "a1" 1 1\nset -e\nfalse\neq "a2" 1 1\n' > "$T/h_run/t_a.sh"
printf 'eq "b1" 1 1\nexit 0\neq "b2" 1 1\n' > "$T/h_run/t_b.sh"
printf 'eq "c1" 1 1\nif then\neq "c2" 1 1\n' > "$T/h_run/t_c.sh"
printf 'eq "d1" 1 1\neq "d2" 1 1\n' > "$T/h_run/t_d.sh"
# run.sh runs from the tree's root: the files by a path relative to it
up=$(printf '%s' "$ROOT" | sed 's|[^/][^/]*|..|g; s|^/||')
sh tests/run.sh "$up$T/h_run/t_a.sh" "$up$T/h_run/t_b.sh" "$up$T/h_run/t_c.sh" "$up$T/h_run/t_d.sh" > "$T/h_run.out" 2>&1
eq "run.sh: set -e, exit 0 and a syntax error each stop a file: 3 FAILs, the last file runs, exit 1" \
	"3|ok - d2|5 passed, 3 failed|1" \
	"$(grep -c '^FAIL - .*t_[abc].sh: stopped before its end' "$T/h_run.out")|$(grep '^ok - d2' "$T/h_run.out")|$(tail -n 1 "$T/h_run.out")|$(sh tests/run.sh "$up$T/h_run/t_b.sh" >/dev/null 2>&1; echo $?)"

## bench.sh, in a copy of the tree whose build/ has failing wrappers and whose PATH
## has only the tools the bench uses (no chromium; a node and an npm that fail)
BT=$T/hbench; BO=$T/hbench-out
mkdir -p "$BT/scripts" "$BT/build" "$BT/bin" "$BO"
cp scripts/bench.sh "$BT/scripts/bench.sh"
for p in "$BUILD"/*; do ln -s "$p" "$BT/build/"; done
rm -f "$BT/build/kvio-gen" "$BT/build/kvio-ingest" "$BT/build/kvio-report"
# kvio-gen: the bench's nominal sizes at 1/50 (BENCH_QUICK's sizes pass unchanged)
cat > "$BT/build/kvio-gen" <<EOF
#!/bin/sh
n=0
for a; do
	shift
	if [ \$n = 1 ]; then case \$a in 200000 | 1000000 | 4000000 | 16000000) a=\$((a / 50)) ;; esac; fi
	[ "\$a" = --lines ] && n=1 || n=0
	set -- "\$@" "\$a"
done
exec "$BUILD/kvio-gen" "\$@"
EOF
# kvio-ingest, kvio-report: exit 3 when an argument matches a pattern of FAKE_FAIL_INGEST / _REPORT
for t in ingest report; do
	v=FAKE_FAIL_$(echo $t | tr a-z A-Z)
	cat > "$BT/build/kvio-$t" <<EOF
#!/bin/sh
set -f
for a; do for p in \${$v:-}; do case \$a in \$p) echo "kvio-$t: the test's failure on purpose (\$a)" >&2; exit 3 ;; esac; done; done
exec "$BUILD/kvio-$t" "\$@"
EOF
done
for t in sh awk sed cat wc stat mkdir rm mv mktemp realpath head tail grep tr cut dirname sqlite3 timeout env; do
	ln -s "$(command -v $t)" "$BT/bin/$t"
done
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$BT/bin/python3"
printf '#!/bin/sh\necho "npm ERR! code ENOTFOUND (the test has no network)" >&2\nexit 1\n' > "$BT/bin/npm"
printf '#!/bin/sh\necho "node:internal/errors:496" >&2\necho "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '"'"'@duckdb/node-api'"'"' imported from load.mjs" >&2\nexit 1\n' > "$BT/bin/node"
chmod +x "$BT/build/kvio-gen" "$BT/build/kvio-ingest" "$BT/build/kvio-report" "$BT/bin/npm" "$BT/bin/node"
# an installed-looking DuckDB module that node cannot load
mkdir -p "$BO/duckdb/node_modules/@duckdb/node-api"
printf '{\n  "version": "0.0.0-test",\n}\n' > "$BO/duckdb/node_modules/@duckdb/node-api/package.json"
# hb N [VAR=VALUE...]: a quick bench (1/50 sizes, 1 run, the 16M capture too) into $T/hb.N.out, exit status in $T/hb.N.rc
hb() {
	n=$1; shift
	env PATH="$BT/bin" BENCH_QUICK=1 BENCH_16M=1 BENCH_OUT="$BO" "$@" /bin/sh "$BT/scripts/bench.sh" > "$T/hb.$n.out" 2>&1
	echo $? > "$T/hb.$n.rc"
}
# lines N PATTERN: how many lines of bench run N match PATTERN (grep -E)
lines() { grep -Ec -- "$2" "$T/hb.$1.out"; }

# 1. a healthy build, two peers that cannot run: DuckDB (node fails) and Chromium (absent);
# the reference pipeline named by two stand-ins (a converter and a report that write their outputs)
printf 'import sys\na = sys.argv\nopen(a[a.index("-o") + 1], "wb").write(b"x")\n' > "$T/refconv.py"
printf 'import sys\na = sys.argv\nopen(a[1], "rb").read()\nopen(a[a.index("--json") + 1], "w").write("{}")\n' > "$T/refrep.py"
hb 1 KVIO_REF="$T/refconv.py" KVIO_REF_REPORT="$T/refrep.py"
eq "bench, peers absent: no command FAILED" 0 "$(lines 1 'FAILED')"
eq "bench, node fails to load DuckDB: the three DuckDB lines say NOT MEASURED, with node's error" 3 \
	"$(lines 1 "^ingest vs DuckDB read_json.*NOT MEASURED \(node load.mjs .*Cannot find package '@duckdb/node-api'")"
eq "bench, Chromium absent: both page loads NOT MEASURED; both page sizes measured" "2 2" \
	"$(lines 1 '^html page load \+ draw in Chromium, (4M|16M) .*NOT MEASURED \(Chromium absent') $(lines 1 '^html page size, (4M|16M)-line capture .*[0-9] +\(target < 3\)  (ok|MISSED)$')"
eq "bench, peers absent: never 'all targets met'; the last line counts 5 NOT MEASURED" "0 1" \
	"$(lines 1 'all targets met') $(tail -n 1 "$T/hb.1.out" | grep -Ec '^bench: .*; 5 NOT MEASURED$')"
eq "bench: every target line ends in ok, MISSED, FAILED (why) or NOT MEASURED (why)" 0 \
	"$(grep '(target ' "$T/hb.1.out" | grep -Evc '  (ok|MISSED|FAILED \(.*\)|NOT MEASURED \(.*\))$')"
eq "bench: exit 1 exactly when a target is MISSED" "$([ "$(lines 1 '  MISSED$')" -gt 0 ] && echo 1 || echo 0)" "$(cat "$T/hb.1.rc")"
eq "bench: retired targets: bytes per command has no target, window / full export is gone" "1 0 0" \
	"$(lines 1 '^pftrace bytes per command slice +[0-9.]+  \(no target') $(lines 1 '^pftrace bytes.*target [<>]') $(lines 1 '^export 2 s window / full export')"
eq "bench: capture-to-answer is an absolute time, no unmeasured reference ratio" "1 0" \
	"$(lines 1 '^capture-to-answer, 100k commands \(s, absolute, this host\) +[0-9.]+  \(target <= 0.26\)') $(lines 1 'reference ~13 s / 50')"
eq "bench, KVIO_REF and KVIO_REF_REPORT: the reference pipeline timed on the 100k capture, its ratio measured" "1 1" \
	"$(lines 1 '^reference pipeline \(.*refconv\.py \+ .*refrep\.py\): 100k capture-to-answer [0-9.]+s$') $(lines 1 '^capture-to-answer vs the reference pipeline \(100k\) +[0-9.]+  \(target >= 50\)  (ok|MISSED)$')"
eq "bench: capture-to-answer's ingest and report printed apart, seconds and peak RSS" 1 \
	"$(lines 1 '^capture-to-answer: [0-9]+ commands, .*apart: ingest [0-9.]+s [0-9]+KB, report [0-9.]+s [0-9]+KB\)')"

# 2. kvio commands that fail (exit 3), over run 1's outputs (t16.db, t16M.html, t100k.db, k4k.db
# left from it), a Chromium that loads a page without drawing it (no page_ms), and no DuckDB
# module: npm (failing) is asked for it
rm -rf "$BO/duckdb"
printf '#!/bin/sh\necho "<html><body><pre id=kvio-summary>{}</pre></body></html>"\n' > "$BT/bin/chromium"
chmod +x "$BT/bin/chromium"
hb 2 FAKE_FAIL_INGEST="*/t16.db */k4k.db" FAKE_FAIL_REPORT="*/t100k.db */t16M.html"
eq "bench, commands failing: exit 1, the last line says FAILED" "1 1" \
	"$(cat "$T/hb.2.rc") $(tail -n 1 "$T/hb.2.out" | grep -c '^bench: FAILED')"
eq "bench, the 16M ingest fails: its FAILED line has the command, exit 3 and its stderr's last line" 1 \
	"$(lines 2 "^step ingest16 +FAILED \(command: .*kvio-ingest -q -o [^ ]*/t16.db .*, exit 3; kvio-ingest: the test's failure on purpose \([^ ]*/t16.db\)\)$")"
eq "bench, the 16M ingest fails: the 16M report lines are FAILED, not measured on the old t16.db" 2 \
	"$(lines 2 '^report (time 16M / 4M|peak RSS 16M \(MB\)) +-  \(target .*FAILED')"
eq "bench, --html fails (an older page in place): the page size is FAILED, not the old page's" 1 \
	"$(lines 2 '^html page size, 16M-line capture \(MB\) +-  \(target < 3\)  FAILED')"
eq "bench, Chromium loads the page and no page_ms appears: FAILED, not a vanished line" "1 1" \
	"$(lines 2 '^step page4M +FAILED \(.*no page_ms') $(lines 2 '^html page load \+ draw in Chromium, 4M \(s\) +-  \(target < 2\)  FAILED')"
eq "bench, capture-to-answer's report fails: FAILED, not 0 <= 0.26" 1 \
	"$(lines 2 '^capture-to-answer, 100k commands.* -  \(target <= 0.26\)  FAILED')"
eq "bench, the 4M --join-by-key ingest fails: its RSS ratio is FAILED" 1 \
	"$(lines 2 '^ingest --join-by-key peak RSS 4M / 1M +-  \(target <= 1.5\)  FAILED')"

eq "bench: npm failing to install DuckDB is NOT MEASURED, with npm's error" "1 3" \
	"$(lines 2 '^duckdb read_json: NOT MEASURED \(could not install @duckdb/node-api from npm: npm ERR! code ENOTFOUND') $(lines 2 '^ingest vs DuckDB.*NOT MEASURED \(could not install')"

# 3. BENCH_FAIL=all: every command replaced by a failing one
hb 3 BENCH_FAIL=all
eq "bench, BENCH_FAIL=all: exit 1, no number computed (no ok, no MISSED), all 30 targets FAILED" "1 0 30 30" \
	"$(cat "$T/hb.3.rc") $(lines 3 '  (ok|MISSED)$') $(lines 3 '\(target ') $(lines 3 '\(target .*  FAILED \(')"

# 4. the closing line (scripts/bench.sh's functions, sourced with BENCH_LIB=1)
# hsum STRICT SETUP: the summary after SETUP's target lines: "last line|exit status"
hsum() {
	if ! grep -q BENCH_LIB "$BT/scripts/bench.sh"; then echo "bench.sh has no BENCH_LIB"; return; fi
	(
		BENCH_LIB=1 BENCH_STRICT=$1; O=$T
		. "$BT/scripts/bench.sh"
		X=1; Y=2; Z=0
		eval "$2"
		summary
	) > "$T/hsum.out" 2>&1
	rc=$?
	echo "$(tail -n 1 "$T/hsum.out")|$rc"
}
eq "bench: every target met and measured: 'all targets met', exit 0" "bench: all targets met (2)|0" \
	"$(hsum 0 "ratio a '\$X/\$Y' '<=' 1; ratio b '\$Y' '>=' 2")"
eq "bench: a peer NOT MEASURED: 'all measured targets met', exit 0 (1 with BENCH_STRICT=1)" \
	"bench: all measured targets met (1); 1 NOT MEASURED|0 bench: all measured targets met (1); 1 NOT MEASURED|1" \
	"$(hsum 0 "miss D N 'peer absent'; ratio a '\$X/\$Y' '<=' 1; ratio b '\$D/\$X' '>=' 1") $(hsum 1 "miss D N 'peer absent'; ratio a '\$X/\$Y' '<=' 1; ratio b '\$D/\$X' '>=' 1")"
eq "bench: a value that reads 0 or has none is FAILED, exit 1" "bench: FAILED: 0 commands failed, 2 lines FAILED|1" \
	"$(hsum 0 "ratio a '\$X/\$Z' '<=' 1; miss W F 'step w failed above'; ratio b '\$W' '<=' 1")"
