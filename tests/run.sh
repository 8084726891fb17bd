#!/bin/sh
# tests/run.sh — every kvio test; closes with "N passed, N failed".
# Expected values are computed by hand from the fixtures (see the comments in
# each test file), never copied from kvio's output.
#
# Each test file runs in a subshell of its own (the files share no variables,
# only lib.sh and $T) and must reach its end: a file that stops early (a syntax
# error, set -e, exit, an unset variable under set -u, a signal) is one FAIL
# naming it, its checks so far still counted, and the files after it still run.
# (Files do not declare a check count: their loops and skips make one brittle;
# C unit binaries do: unit NAME PLAN, tests/lib.sh.)
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${KVIO_TEST_BUILD:-$ROOT/build} # make fuzz: the ASan build
T=$(mktemp -d /tmp/kvio-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ROOT BUILD T
PASS=0
FAIL=0
. tests/lib.sh
# tests/run.sh [tests/t_NN.sh ...]: only those
[ $# -gt 0 ] || set -- tests/t_*.sh
for f in "$@"; do
	echo "# $f"
	case $f in /*) src=$f ;; *) src=./$f ;; esac
	rm -f "$T/.counts"
	(
		PASS=0; FAIL=0; reached_end=0
		trap 'echo "$PASS $FAIL $reached_end" > "$T/.counts"' EXIT
		. "$src"
		reached_end=1
	)
	rc=$?
	p=0; fl=0; end=0
	[ -s "$T/.counts" ] && read -r p fl end < "$T/.counts"
	PASS=$((PASS + p)); FAIL=$((FAIL + fl))
	if [ "$rc" -ne 0 ] || [ "$end" != 1 ]; then
		FAIL=$((FAIL + 1))
		echo "FAIL - $f: stopped before its end (exit $rc) after $((p + fl)) checks: the checks after that point did not run"
	fi
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
