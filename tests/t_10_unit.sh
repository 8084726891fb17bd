# C unit tests: the JSON line layer (tests/unit_jsonl.c), the u64 hash map (tests/unit_map.c), and
# the report's float rendering (tests/fmt_double.c against python3's repr).
unit unit_jsonl tests/unit_jsonl.c ingest/jsonl.c lib/util.c
unit unit_map tests/unit_map.c lib/u64map.c lib/util.c
# JSON floats are written as python3's repr writes them (the reference's JSON is
# Python's): 20,000 doubles of every magnitude and sign, exact through hex floats
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -o "$T/fmt_double" tests/fmt_double.c report/json.c \
	ingest/jsonl.c lib/util.c -lm 2>"$T/fmt_double.err"; then
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
" "$T/doubles.hex" "$T/doubles.repr"
	"$T/fmt_double" < "$T/doubles.hex" > "$T/doubles.kvio"
	eq "JSON floats: the comparison has its 20,000 doubles" "20000 20000" \
		"$(wc -l < "$T/doubles.repr") $(wc -l < "$T/doubles.kvio")"
	eq "JSON floats are python3's repr (20,000 doubles; first difference shown)" "" \
		"$(diff "$T/doubles.repr" "$T/doubles.kvio" 2>&1 | head -3)"
else
	FAIL=$((FAIL + 1)); echo "FAIL - fmt_double: compile"; cat "$T/fmt_double.err"
fi
