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
JSONL="ingest/jsonl.c $BUILD/ingest/sjline.o -lsimdjson -lstdc++"

# unit NAME SOURCES...: compile a C unit test with the project's warnings, run
# it, and count its "ok - " / "FAIL - " lines
unit() {
	name=$1; shift
	if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -o "$T/$name" "$@" 2>"$T/$name.err"; then
		"$T/$name" > "$T/$name.out"
		cat "$T/$name.out"
		PASS=$((PASS + $(grep -c '^ok - ' "$T/$name.out")))
		FAIL=$((FAIL + $(grep -c '^FAIL - ' "$T/$name.out")))
	else
		cat "$T/$name.err"; FAIL=$((FAIL + 1)); echo "FAIL - $name: compile"
	fi
}
