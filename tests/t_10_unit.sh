# C unit tests of the JSON line layer (tests/unit_jsonl.c).
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -o "$T/unit_jsonl" tests/unit_jsonl.c ingest/jsonl.c lib/util.c 2>"$T/unit.err"; then
	"$T/unit_jsonl" > "$T/unit.out"
	cat "$T/unit.out"
	PASS=$((PASS + $(grep -c '^ok - ' "$T/unit.out")))
	FAIL=$((FAIL + $(grep -c '^FAIL - ' "$T/unit.out")))
else
	cat "$T/unit.err"; FAIL=$((FAIL + 1)); echo "FAIL - unit: compile"
fi
