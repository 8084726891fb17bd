# What the database fuzzers found (make fuzz: scripts/dbfuzz.py, tests/fuzz_chunk.c,
# tests/fuzz_db.c), each case as a mutation (SQL, tests/dbforge.c) of the A/B fixture's
# database and what kvio must answer. The base: two chunks, ids 1-8 (arm A) and 18-25
# (arm B), 8 commands each (fixtures/ab), as in tests/t_36_damaged.sh.
D=$T/found
rm -rf "$D"; mkdir -p "$D"
F=fixtures/ab
"$BUILD/kvio-ingest" -q -o "$D/base.db" --merge A=$F/a.sem.jsonl,$F/a.ebpf.jsonl,$F/a.serving.jsonl \
	--merge B=$F/b.sem.jsonl,$F/b.ebpf.jsonl 2>/dev/null
${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DSQLITE_CORE -O1 -o "$T/dbforge" tests/dbforge.c db/chunk.c \
	db/valid.c db/values.c db/memo.c db/ddl.c -lsqlite3 -lxxhash -lpthread 2>"$T/dbforge.err"
eq "dbforge builds" "" "$(cat "$T/dbforge.err")"
DM="database damaged or not written by kvio:"
xq() { sqlite3 -batch -cmd ".load $BUILD/kvio" "$@"; }

# dbfuzz (damage, seed gen): a chunk's bytes damaged, and a kvio_cmd scan whose filter the
# scan applies itself (real_dur, role, name, upid, trace_id, a window) but that reads no
# column (count(*)): the filter could not read the chunk, and its rows were handed out
# unfiltered, every one counted, exit 0. The scan must fail with the damage line.
cp "$D/base.db" "$D/flip.db"
sqlite3 "$D/flip.db" "update kvio_cmd_chunk set data = cast(substr(data, 1, 199) || x'5a' || substr(data, 201) as blob) where id = 18"
eq "a damaged chunk: kvio-check names it" "1" \
	"$("$BUILD/kvio-check" "$D/flip.db" | grep -c 'kvio_cmd_chunk 18: checksum mismatch')"
for w in "real_dur = 1" "role = 'payload'" "name = 'write'" "upid = 2" "trace_id > 0" "win_lo IS 0 AND win_hi IS 999999999999"; do
	xq "$D/flip.db" "select count(*) from kvio_cmd where $w" > "$D/flip.q" 2> "$D/flip.qerr"
	eq "a damaged chunk, count(*) where $w: the statement fails with the damage line, no count" "1 0" \
		"$(grep -c -F "kvio_cmd_chunk 18: checksum mismatch (damaged bytes)" "$D/flip.qerr") $(wc -c < "$D/flip.q")"
done
eq "the undamaged base: the same filtered count answers" "0" \
	"$(xq "$D/base.db" "select count(*) from kvio_cmd where real_dur = 1" > /dev/null 2>&1; echo $?)"
# without a filter the count is the directory's (checked), no chunk read: the right answer
eq "a damaged chunk, count(*) without a filter: the directory's 16" "16" "$(xq "$D/flip.db" "select count(*) from kvio_cmd" 2>&1)"

# dbfuzz (forger, name[rename-dup]): a command name renamed to another row's, the sums made
# to match: kvio writes each name once (ingest/dbw.c interns them); two ids that read the
# same split one name's commands in two (the export interned it twice). db/dir.c refuses it.
cp "$D/base.db" "$D/dupname.db"
sqlite3 "$D/dupname.db" "update kvio_cmd_name set name = (select name from kvio_cmd_name where id = 0) where id = 1"
"$T/dbforge" "$D/dupname.db" resum
line="$D/dupname.db: $DM kvio_cmd_name 1: the name '$(sqlite3 "$D/base.db" "select name from kvio_cmd_name where id = 0")' is another row's too"
"$BUILD/kvio-report" "$D/dupname.db" --json > "$D/dupname.json" 2> "$D/dupname.err"; r=$?
"$BUILD/kvio-export" "$D/dupname.db" -o "$D/dupname.pftrace" > /dev/null 2> "$D/dupname.xerr"; x=$?
"$BUILD/kvio-check" "$D/dupname.db" > "$D/dupname.check" 2>&1; c=$?
eq "a name twice behind valid sums: report, export, kvio-check exit 2" "2 2 2" "$r $x $c"
eq "a name twice: the one line, from report and export" "$line|$line" \
	"$(sed 's/^kvio-report: //' "$D/dupname.err")|$(sed 's/^kvio-export: //' "$D/dupname.xerr")"
eq "a name twice: nothing written; kvio-check names the row" "0 no 1" \
	"$(wc -c < "$D/dupname.json") $([ -e "$D/dupname.pftrace" ] && echo yes || echo no) $(grep -c "directory .*DAMAGED: kvio_cmd_name 1: the name" "$D/dupname.check")"
