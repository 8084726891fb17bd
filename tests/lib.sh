# tests/lib.sh — tiny assertion helpers shared by the test files (sourced).
# Each check prints "ok - name" or "FAIL - name" with expected/actual, and
# counts into PASS/FAIL; run.sh prints the closing "N passed, N failed".

PASS=${PASS:-0}
FAIL=${FAIL:-0}

# eq NAME EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then
		PASS=$((PASS + 1)); echo "ok - $1"
	else
		FAIL=$((FAIL + 1)); echo "FAIL - $1"; echo "    expected: $2"; echo "    actual:   $3"
	fi
}

# ok NAME COMMAND...: passes when the command exits 0
ok() {
	name=$1; shift
	if "$@" >/dev/null 2>&1; then PASS=$((PASS + 1)); echo "ok - $name"
	else FAIL=$((FAIL + 1)); echo "FAIL - $name (command failed: $*)"; fi
}

# q DB SQL: run SQL through the plain sqlite3 CLI with kvio's extension loaded
q() {
	sqlite3 -batch -noheader -separator '|' -cmd ".load $BUILD/kvio" "$1" "$2" 2>&1
}

# the JSON line layer's sources for a unit test: jsonl.c and its fast path (the
# C++ file make built, with the libraries it needs; after the other sources)
JSONL="ingest/jsonl.c ingest/jlshape.c $BUILD/ingest/sjline.o -lsimdjson -lstdc++"

# unit NAME PLAN SOURCES...: compile a C unit test with the project's warnings, run
# it, and count its "ok - " / "FAIL - " lines. PLAN is the number of checks the
# binary makes (one ok/FAIL line each; count them when adding one): a run with
# fewer (or more) lines than PLAN is a FAIL, and so is a non-zero exit or a
# signal (a crash mid-way loses the checks after it, and its unflushed lines: the
# binary's stdout is line-buffered through stdbuf when there is one).
unit() {
	name=$1; plan=$2; shift 2
	case $plan in
	'' | *[!0-9]*) FAIL=$((FAIL + 1)); echo "FAIL - $name: no plan ('$plan': unit NAME PLAN SOURCES...)"; return ;;
	esac
	if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -o "$T/$name" "$@" 2>"$T/$name.err"; then
		lb=""; command -v stdbuf >/dev/null 2>&1 && lb="stdbuf -oL"
		$lb "$T/$name" > "$T/$name.out"
		rc=$?
		cat "$T/$name.out"
		n_ok=$(grep -c '^ok - ' "$T/$name.out"); n_fail=$(grep -c '^FAIL - ' "$T/$name.out")
		PASS=$((PASS + n_ok)); FAIL=$((FAIL + n_fail))
		if [ "$rc" -gt 128 ] && [ "$rc" -lt 192 ]; then
			FAIL=$((FAIL + 1)); echo "FAIL - $name: killed by signal $((rc - 128)) (exit $rc) after $((n_ok + n_fail)) of its $plan checks"
		elif [ "$rc" -ne 0 ]; then
			FAIL=$((FAIL + 1)); echo "FAIL - $name: exit $rc (after $((n_ok + n_fail)) of its $plan checks, $n_fail FAIL)"
		fi
		if [ $((n_ok + n_fail)) -ne "$plan" ]; then
			FAIL=$((FAIL + 1)); echo "FAIL - $name: ran $((n_ok + n_fail)) checks, its plan says $plan"
		fi
	else
		cat "$T/$name.err"; FAIL=$((FAIL + 1)); echo "FAIL - $name: compile"
	fi
}

# ab_base DIR: DIR (emptied) holds base.db, the A/B fixture ingested (two chunks, ids
# 1-8 and 18-25, 8 commands each), and $T/dbforge is built (once a run: a forger's
# tool, tests/dbforge.c); the check "dbforge builds" is the caller's (its build errors
# in $T/dbforge.err). t_36_damaged.sh and t_37_fuzzfound.sh start from it.
ab_base() {
	rm -rf "$1"; mkdir -p "$1"
	"$BUILD/kvio-ingest" -q -o "$1/base.db" --merge A=fixtures/ab/a.sem.jsonl,fixtures/ab/a.ebpf.jsonl,fixtures/ab/a.serving.jsonl \
		--merge B=fixtures/ab/b.sem.jsonl,fixtures/ab/b.ebpf.jsonl 2>/dev/null
	[ -x "$T/dbforge" ] && return 0
	${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DSQLITE_CORE -O1 -o "$T/dbforge" tests/dbforge.c db/chunk.c \
		db/valid.c db/values.c db/memo.c db/ddl.c -lsqlite3 -lxxhash -lpthread 2>"$T/dbforge.err"
}
