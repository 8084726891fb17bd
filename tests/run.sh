#!/bin/sh
# tests/run.sh — every kvio test; closes with "N passed, N failed".
# Expected values are computed by hand from the fixtures (see the comments in
# each test file), never copied from kvio's output.
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
	. "./$f"
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
