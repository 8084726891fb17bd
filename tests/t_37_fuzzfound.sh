# What the database fuzzers found (make fuzz: scripts/dbfuzz.py, tests/fuzz_chunk.c,
# tests/fuzz_db.c), each case as a mutation (SQL, tests/dbforge.c) of the A/B fixture's
# database and what kvio must answer. The base: two chunks, ids 1-8 (arm A) and 18-25
# (arm B), 8 commands each (fixtures/ab), as in tests/t_36_damaged.sh.
D=$T/found
ab_base "$D"
F=fixtures/ab
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

# dbfuzz (ASan, damage, seed 24): a chunk and its directory row moved to id -2^63: kvio-check's
# value checks took the row as a chunk and computed id - first past int64 (UBSan: signed
# overflow), then said slice 9 was one of its commands; the row is not a chunk (dir.c says so
# in its own line), the flows that named its commands dangle
cp "$D/base.db" "$D/i64.db"
sqlite3 "$D/i64.db" "update kvio_cmd_range set id = -9223372036854775808 where id = 1; update kvio_cmd_chunk set id = -9223372036854775808 where id = 1"
"$T/dbforge" "$D/i64.db" resum
"$BUILD/kvio-check" "$D/i64.db" > "$D/i64.check" 2>&1
eq "a chunk moved to id -2^63: kvio-check exit 2, the directory and the flow named, no slice called a command" "2 1 1 0" \
	"$? $(grep -c 'directory .*DAMAGED: kvio_cmd_range -9223372036854775808' "$D/i64.check") $(grep -c 'flow .*DAMAGED: flow 1: slice_in 1 names no slice or command' "$D/i64.check") $(grep -c "id is a command's too" "$D/i64.check")"

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

# ---- dbfuzz (forger mode): values kvio never writes behind re-sealed sums -------------
# forged NAME 'SQL' 'expected line (after "DB: ")' [small] [chunk id to re-seal]
# SQL on a copy of the base, then kvio_sum written again (dbforge resum), as a careful
# forger does. Before db/values.c these changed report and export output with exit 0 (checked
# by running this file against main's build before the change: kvio-report --json, --html and
# kvio-export exited 0 on every case below; kvio-check 0 on obj_*, slice_*, file_lines_real,
# track_upid_null and name_65, 2 on the others); now
# every reader (kvio-report --json and --html, kvio-export) exits 2 with the one line
# naming table, row and column, writes nothing, and kvio-check names it. "small": a table
# every open checks (the directory and bookkeeping), so the extension in sqlite3 fails the
# statement reading kvio_cmd with the line too. The base's rows (fixtures/ab as ingested,
# read off the fixture): slices 9 (A's capture_info), 13-15 (A's objects on track 21,
# objects.000: store at ts 0, load at 250 ms, a failed load), 27-30 (B's objects);
# kvio_obj rows 13, 14, 15, 27-30; kvio_stats row 11 is A's cq_overflow (the 11th name
# write_stats writes); flows 1-4 (A: object 13 -> command 1 -> 4, object 14 -> 5 -> 8)
# and 5-8 (B's, ending at commands 18, 21, 22, 25).
forged() {
	n=$1 sql=$2 want=$3
	cp "$D/base.db" "$D/$n.db"
	sqlite3 "$D/$n.db" "$sql" && { [ -z "${5:-}" ] || "$T/dbforge" "$D/$n.db" reseal "$5"; } && "$T/dbforge" "$D/$n.db" resum
	"$BUILD/kvio-report" "$D/$n.db" --json > "$D/$n.json" 2> "$D/$n.err"; r=$?
	"$BUILD/kvio-report" "$D/$n.db" --html "$D/$n.html" > /dev/null 2> "$D/$n.herr"; h=$?
	"$BUILD/kvio-export" "$D/$n.db" -o "$D/$n.pftrace" > /dev/null 2> "$D/$n.xerr"; x=$?
	"$BUILD/kvio-check" "$D/$n.db" > "$D/$n.check" 2>&1; c=$?
	line="$D/$n.db: $DM $want"
	eq "forged ($n): report, --html, export, kvio-check exit 2" "2 2 2 2" "$r $h $x $c"
	eq "forged ($n): the one line from report, --html and export" "$line|$line|$line" \
		"$(sed 's/^kvio-report: //' "$D/$n.err")|$(sed 's/^kvio-report: //' "$D/$n.herr")|$(sed 's/^kvio-export: //' "$D/$n.xerr")"
	# (kvio-check names it on one line at least: the directory's line and the table's may both)
	eq "forged ($n): nothing written; kvio-check names it" "0 no no 1" \
		"$(wc -c < "$D/$n.json") $([ -e "$D/$n.html" ] && echo yes || echo no) $([ -e "$D/$n.pftrace" ] && echo yes || echo no) $(grep -q -F "DAMAGED: $want" "$D/$n.check" && echo 1 || echo 0)"
	[ "${4:-}" = small ] && eq "forged ($n): sqlite3 + the extension fails the statement with the line" "1" \
		"$(xq "$D/$n.db" "select count(*) from kvio_cmd" 2>&1 | grep -c -F "$want")"
	return 0
}
# 1. types and domains (the forger findings: each changed the report or the export, exit 0)
forged obj_op_null "update kvio_obj set op = NULL where id = 13" "kvio_obj 13: op is NULL where kvio writes text"
forged obj_occ_text "update kvio_obj set occurrence = 'x' where id = 14" \
	"kvio_obj 14: occurrence is text where kvio writes an integer or NULL"
forged slice_dur_real "update kvio_slice set dur = 125000000.5 where id = 13" \
	"kvio_slice 13: dur is a real where kvio writes an integer"
forged slice_dur_min "update kvio_slice set dur = -9223372036854775808 where id = 14" \
	"kvio_slice 14: ts 250000000, dur -9223372036854775808 are not a span"
forged stats_null "update kvio_stats set value = NULL where rowid = 11" \
	"kvio_stats 11 'cq_overflow': value is NULL where kvio writes an integer" small
forged stats_min "update kvio_stats set value = -9223372036854775808 where rowid = 11" \
	"kvio_stats 11 'cq_overflow': value -9223372036854775808 is below 0, the least kvio writes" small
forged file_lines_real "update kvio_file set lines = 4.5 where rowid = 1" \
	"kvio_file 1: lines is a real where kvio writes an integer" small
forged track_upid_null "update kvio_track set upid = NULL where id = 21" \
	"kvio_track 21: upid is NULL where kvio writes an integer" small
forged arg_set_text "update kvio_arg set arg_set_id = 'x' where arg_set_id = 9 and key = 'debug.label'" \
	"kvio_arg 'debug.label': arg_set_id is text where kvio writes an integer"
# 2. references across tables that only kvio-check followed: each one the readers follow
# (kvio_obj by id, kvio_cmd.upid through the track, a track's parent in the export, the
# flows in objects.sql and the export) is checked while the rows are read for their sums
# (commands on slice ids: dir.c checks it with the directory, so the extension refuses it too;
# dbfuzz seed 1 run 118 found the same through a chunk grown to 10 commands, ids 9 and 10 being
# slices, that the slice view in sqlite3 showed twice with exit 0)
forged cmd_on_slices "update kvio_cmd_range set id = 10 where id = 18; update kvio_cmd_chunk set id = 10 where id = 18" \
	"kvio_slice 10: id is a command's too (kvio_cmd_range 10: commands 10..17)" small 10
forged obj_moved "update kvio_obj set id = 99 where id = 15" "kvio_slice 15: an object span without its kvio_obj row"
forged track_upid_gone "update kvio_track set upid = 99 where id = 21" "kvio_track 21: upid 99 names no process" small
forged track_parent_gone "update kvio_track set parent_id = 99 where id = 21" \
	"kvio_track 21: parent_id 99 names no track before it" small
forged track_parent_self "update kvio_track set parent_id = 21 where id = 21" \
	"kvio_track 21: parent_id 21 names no track before it" small
forged flow_end_gone "update flow set slice_in = 4242 where id = 1" "flow 1: slice_in 4242 names no slice or command"
# (the directory's load counts the chunk rows since baa2fc1: found there, before the flows, and by
# the extension's own queries too, which read no flows)
forged range_row_gone "delete from kvio_cmd_range where id = 18" \
	"kvio_cmd_chunk: 2 rows, kvio_cmd_range lists 1 (a chunk without its directory row)"

# ---- dbfuzz (forger, name[long]): a 1 MiB command name made kvio-report --html take
# minutes (every row that reads the name copies it). kvio-ingest refuses an op_name longer
# than 64 bytes (chunk.h's CHUNK_NAME_MAX: the names are read, write, store, ...): the line
# is malformed, counted, said; 64 bytes are fine. dir.c refuses a longer name in a database.
w64=$(printf '%064d' 0 | tr 0 w)
printf '%s\n' \
 '{"event_type":"nvme_cmd","user_data":4294967296,"op_name":"'"${w64}w"'","slba":1,"data_len":4096,"ts":1000}' \
 '{"event_type":"nvme_cmd","user_data":4294967297,"op_name":"'"$w64"'","slba":2,"data_len":4096,"ts":2000}' \
 > "$D/longop.jsonl"
"$BUILD/kvio-ingest" -q -o "$D/longop.db" --ebpf "$D/longop.jsonl" 2> "$D/longop.err"
eq "a 65-byte op_name: ingest exit 0, the line malformed (said, counted), the 64-byte one a command" \
	"0 1 1|1|64" "$? $(grep -c -F "longop.jsonl:1: nvme_cmd op_name longer than 64 bytes" "$D/longop.err") $(sqlite3 "$D/longop.db" "select malformed from kvio_file")|$(sqlite3 "$D/longop.db" "select count(*), max(length(name)) from kvio_cmd_name")"
forged name_65 "update kvio_cmd_name set name = printf('%.*c', 65, 'w') where id = 0" \
	"kvio_cmd_name 0: the name is 65 bytes, longer than the 64 kvio writes" small
cp "$D/base.db" "$D/name_1m.db"
sqlite3 "$D/name_1m.db" "update kvio_cmd_name set name = printf('%.*c', 1048576, 'w') where id = 0"
"$T/dbforge" "$D/name_1m.db" resum
timeout 60 "$BUILD/kvio-report" "$D/name_1m.db" --html "$D/name_1m.html" > /dev/null 2> "$D/name_1m.err"
eq "a 1 MiB command name: kvio-report --html refuses it at once (exit 2, not the timeout)" "2 1" \
	"$? $(grep -c -F "kvio_cmd_name 0: the name is 1048576 bytes, longer than the 64 kvio writes" "$D/name_1m.err")"
# the .pftrace import keeps a command-track slice with a longer name as a plain slice
python3 tests/pfwire.py refstyle "$D/longop.pftrace" "${w64}w"
"$BUILD/kvio-ingest" -q -o "$D/longop_imp.db" --pftrace "$D/longop.pftrace" 2> "$D/longop_imp.err"
eq "a .pftrace command slice named 65 bytes: import exit 0, said; one command, the other a plain slice, counted" \
	"0 1|1|1|1" "$? $(grep -c "1 command slices with a name longer than 64 bytes (kept as plain slices)" "$D/longop_imp.err")|$(xq "$D/longop_imp.db" "select count(*) from kvio_cmd")|$(sqlite3 "$D/longop_imp.db" "select count(*) from kvio_slice where length(name) = 65")|$(sqlite3 "$D/longop_imp.db" "select value from kvio_stats where name = 'pftrace_long_cmd_names'")"
"$BUILD/kvio-check" "$D/longop_imp.db" > /dev/null; c=$?
"$BUILD/kvio-export" "$D/longop_imp.db" -o "$D/longop_imp.pftrace" > /dev/null 2>&1
eq "the import is kvio's: kvio-check and kvio-export exit 0" "0 0" "$c $?"

# ---- dbfuzz seed 2 run 114 (damage mode): kvio_cmd_kv 2's value_len set to 'x' and the sums
# left as they were: sqlite3 + the extension printed 'x' as command 2's value_len (exit 0), as
# the extension read the KV rows unchecked (kvio_cmd_kv is a table only kvio-export summed).
# Now the first KV column read checks kvio_cmd_kv (its sum and values, once per process): the
# statement fails with the line; a forger's value of another type (sums re-made) too. Columns
# without KV reads are not held up (count(*) still answers). fixtures/kv: 5 nvme_cmd lines, 4 KV
# rows (ebpf.jsonl's lines with key_hex and lengths, in order: the second's value_len 8192).
"$BUILD/kvio-ingest" -q -o "$D/kvbase.db" --sem $F/../kv/sem.jsonl --ebpf $F/../kv/ebpf.jsonl --join-by-key 2>/dev/null
eq "the KV base: 4 KV rows, row 2's value_len 8192, read through kvio_cmd" "4|8192|8192" \
	"$(sqlite3 "$D/kvbase.db" "select count(*) from kvio_cmd_kv")|$(sqlite3 "$D/kvbase.db" "select value_len from kvio_cmd_kv where id = 2")|$(xq "$D/kvbase.db" "select value_len from kvio_cmd where id = 2")"
cp "$D/kvbase.db" "$D/kvtext.db"
sqlite3 "$D/kvtext.db" "update kvio_cmd_kv set value_len = 'x' where id = 2"
eq "kvio_cmd_kv damaged: the extension's statement reading value_len fails with the line; count(*) answers" \
	"1|5" "$(xq "$D/kvtext.db" "select total(value_len) from kvio_cmd" 2>&1 | grep -c -F "$DM kvio_cmd_kv: its 4 rows do not match their checksum (kvio wrote 4 rows)")|$(xq "$D/kvtext.db" "select count(*) from kvio_cmd" 2>&1)"
"$T/dbforge" "$D/kvtext.db" resum
eq "kvio_cmd_kv forged (sums re-made): the statement fails with the value's line" "1" \
	"$(xq "$D/kvtext.db" "select key_hex, value_len from kvio_cmd" 2>&1 | grep -c -F "$DM kvio_cmd_kv 2: value_len is text where kvio writes an integer or NULL")"
"$BUILD/kvio-export" "$D/kvtext.db" -o "$D/kvtext.pftrace" > /dev/null 2> "$D/kvtext.xerr"
eq "kvio_cmd_kv forged: kvio-export exit 2, the line, no trace" "2 1 no" \
	"$? $(grep -c -F "kvio_cmd_kv 2: value_len is text" "$D/kvtext.xerr") $([ -e "$D/kvtext.pftrace" ] && echo yes || echo no)"
