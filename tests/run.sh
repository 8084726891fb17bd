#!/bin/sh
# tests/run.sh — every kvio test; closes with "N passed, N failed".
# Expected values are computed by hand from the fixtures (see the comments in
# each test file), never copied from kvio's output.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$ROOT/build
T=$(mktemp -d /tmp/kvio-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ROOT BUILD T
PASS=0
FAIL=0
. tests/lib.sh
for f in tests/t_*.sh; do
	echo "# $f"
	. "./$f"
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
