# C unit tests: the JSON line layer (tests/unit_jsonl.c), the u64 hash map (tests/unit_map.c), the
# report's JSON reader (tests/unit_json.c: jn_parse, how kvio-report reads its children's reports back), the
# progress line (tests/unit_progress.c: its share, growth, redraw limit, end), lib/util.c's text
# helpers against snprintf (tests/unit_util.c: an object's MiB, names put together), and
# the report's float and string rendering (tests/jsonfmt.c against python3's repr and json.dumps).
# The number after a unit binary's name is its plan: the checks it makes (tests/lib.sh, unit()).
unit unit_jsonl 89 tests/unit_jsonl.c lib/util.c lib/jsonesc.c $JSONL
unit unit_map 3 tests/unit_map.c lib/u64map.c lib/util.c
unit unit_stats 48 tests/unit_stats.c report/stats.c -lm
unit unit_json 13 tests/unit_json.c report/json.c lib/jsonesc.c lib/util.c -lm
unit unit_progress 10 tests/unit_progress.c lib/progress.c lib/util.c
unit unit_util 5 tests/unit_util.c lib/util.c -lm
# report/stats.c against scipy (Debian's: /usr/bin/python3, whatever python3 is first
# on PATH): U test p-values, bootstrap intervals (tests/stats_check.py --quick)
if /usr/bin/python3 -c 'import scipy, numpy' 2>/dev/null; then
	/usr/bin/python3 tests/stats_check.py --quick > "$T/stats_check.out" 2>&1
	rc=$?
	grep -E '^(ok|FAIL) - ' "$T/stats_check.out"
	PASS=$((PASS + $(grep -c '^ok - ' "$T/stats_check.out"))); FAIL=$((FAIL + $(grep -c '^FAIL - ' "$T/stats_check.out")))
	[ "$rc" -eq 0 ] || { FAIL=$((FAIL + 1)); echo "FAIL - stats_check.py: exit $rc"; tail -5 "$T/stats_check.out"; }
else
	FAIL=$((FAIL + 1)); echo "FAIL - stats_check.py: /usr/bin/python3 has no scipy/numpy (scripts/install-deps installs python3-scipy)"
fi
# JSON floats are written as python3's repr writes them (the reference's JSON is
# Python's): 20,000 doubles of every magnitude and sign, exact through hex floats
# from_python MODE WHAT N: jsonfmt MODE on $T/WHAT.in must print $T/WHAT.py, N lines
from_python() {
	"$T/jsonfmt" "$1" < "$T/$2.in" > "$T/$2.kvio"
	eq "JSON $2: the comparison has its $3 values" "$3 $3" "$(wc -l < "$T/$2.py") $(wc -l < "$T/$2.kvio")"
	eq "JSON $2 are written as python3 writes them (first difference shown)" "" \
		"$(diff "$T/$2.py" "$T/$2.kvio" 2>&1 | head -3)"
}
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -o "$T/jsonfmt" tests/jsonfmt.c report/json.c lib/jsonesc.c \
	lib/util.c $JSONL -lm 2>"$T/jsonfmt.err"; then
	python3 -c "
import random, struct, sys
random.seed(5)
xs = [0.0, -0.0, 1.0, 100000.0, 1e16, 1e15, 123456789012345678.0, 0.0001, 0.00001, 1.5e-7, 0.1, 1/3, 2.0**53, 2.0**53 + 2,
      9552.177893571765, 0.24671385237613752, 5e-324, 1.7976931348623157e308]
while len(xs) < 20000:
    r = random.random()
    if r < 0.4:
        xs.append(random.uniform(-1, 1) * 10 ** random.randint(-12, 20))
    elif r < 0.7:
        xs.append(float(random.randint(-10**18, 10**18)) / 10 ** random.randint(0, 6))
    else:
        x = struct.unpack('<d', struct.pack('<Q', random.getrandbits(64)))[0]
        if x == x and abs(x) != float('inf'):
            xs.append(x)
open(sys.argv[1], 'w').write(''.join(x.hex() + '\n' for x in xs))
open(sys.argv[2], 'w').write(''.join(repr(x) + '\n' for x in xs))
" "$T/floats.in" "$T/floats.py"
	from_python d floats 20000
	# strings as json.dumps writes them (ensure_ascii: \uXXXX for non-ASCII, surrogate
	# pairs above U+FFFF, short escapes for \b \f \n \r \t): the verdict's em dash,
	# keys, hostnames, every control character, 2,000 random Unicode strings
	python3 -c "
import json, random, sys
random.seed(7)
ss = ['QD~1 (gap ~= service time \u2014 serialized)', 'caf\u00e9', '\U0001f600 emoji', 'q\"b\\\\s', ''.join(map(chr, range(32))) + '\x7f',
      'm@f@0@' + 'ab' * 30, '']
pool = [chr(c) for c in list(range(32, 127)) + [0, 9, 10, 13, 8, 12, 0x7f, 0x80, 0xe9, 0x2014, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff]]
ss += [''.join(random.choice(pool) for _ in range(random.randint(0, 40))) for _ in range(2000)]
open(sys.argv[1], 'w').write(''.join(s.encode('utf-8').hex() + '\n' for s in ss))
open(sys.argv[2], 'w').write(''.join(json.dumps(s) + '\n' for s in ss))
" "$T/strings.in" "$T/strings.py"
	from_python s strings 2007
else
	FAIL=$((FAIL + 1)); echo "FAIL - jsonfmt: compile"; cat "$T/jsonfmt.err"
fi
