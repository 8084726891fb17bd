# A trace.db is input (issue 21): a damaged or crafted database never crashes kvio and
# never answers differently without a word. For each kind of damage, every reader
# (kvio-report --json and --html, kvio-export, the extension in plain sqlite3, kvio-check)
# exits 2 (sqlite3: fails the statement) with one line naming the table and the row, and
# writes nothing; or, where the damage does not touch what it reads, gives the same answer.
# The base is the A/B fixture: two chunks, ids 1-8 (arm A) and 18-25 (arm B), 8 commands
# each (fixtures/ab: 8 write/read lines per arm), 42 tracks numbered 1..43 (one folded).
# Crafted values behind valid checksums come from tests/dbforge.c (a forger's tool).
D=$T/dmg
ab_base "$D"
eq "dbforge builds" "" "$(cat "$T/dbforge.err")"
"$BUILD/kvio-report" "$D/base.db" --json > "$D/base.json"
eq "the base: two chunks of 8 commands at ids 1 and 18, tracks 1..43" "1|8 18|8 43" \
	"$(sqlite3 "$D/base.db" "select id || '|' || n from kvio_cmd_range order by id" | tr '\n' ' ')$(sqlite3 "$D/base.db" "select max(id) from kvio_track")"
eq "the base is clean (kvio-check exit 0)" "0" "$("$BUILD/kvio-check" "$D/base.db" > "$D/base.check"; echo $?)"

# damage NAME 'SQL or forge commands' 'expected line (after "DB: ")' [cmd|none] ['export's line']
# Every reader (each stopped after 60 s: a hang fails): exit 2, that one line on stderr, nothing on stdout, no file written (the
# export's line is another when it finds the damage elsewhere first: it checks every
# table before it reads a chunk, a report reads chunks before it checks the big tables). In
# sqlite3 the statement reading kvio_cmd fails with the line: through slice (the chunks
# read), or with "cmd" a bare scan of kvio_cmd (the checks at its first use: schema,
# version, directory; a crafted slice view is not kvio_cmd); "none": damage to a table
# only kvio's commands check (the extension does not read kvio_obj/kvio_slice sums).
damage() {
	n=$1 how=$2 want=$3 sq=${4:-slice} xwant=${5:-$3}
	cp "$D/base.db" "$D/$n.db"
	(cd "$D" && eval "$how") > "$D/$n.how" 2>&1
	timeout 60 "$BUILD/kvio-report" "$D/$n.db" --json > "$D/$n.json" 2> "$D/$n.err"
	r=$?
	timeout 60 "$BUILD/kvio-report" "$D/$n.db" --html "$D/$n.html" > /dev/null 2> "$D/$n.herr"
	h=$?
	timeout 60 "$BUILD/kvio-export" "$D/$n.db" -o "$D/$n.pftrace" > /dev/null 2> "$D/$n.xerr"
	x=$?
	case $sq in
	slice) timeout 60 sqlite3 -batch -cmd ".load $BUILD/kvio" "$D/$n.db" "select count(*), sum(dur) from slice" > "$D/$n.q" 2> "$D/$n.qerr" ;;
	cmd) timeout 60 sqlite3 -batch -cmd ".load $BUILD/kvio" "$D/$n.db" "select count(*) from kvio_cmd" > "$D/$n.q" 2> "$D/$n.qerr" ;;
	esac
	timeout 60 "$BUILD/kvio-check" "$D/$n.db" > "$D/$n.check" 2>&1
	c=$?
	line="$D/$n.db: $want"
	eq "damaged ($n): report, --html, export exit 2; kvio-check 2" "2 2 2 2" "$r $h $x $c"
	eq "damaged ($n): one line, the same from report, --html and export" "$line|$line|$D/$n.db: $xwant" \
		"$(cat "$D/$n.err" | sed "s/^kvio-report: //")|$(sed "s/^kvio-report: //" "$D/$n.herr")|$(sed "s/^kvio-export: //" "$D/$n.xerr")"
	eq "damaged ($n): nothing written (no JSON, no page, no trace)" "0 no no" \
		"$(wc -c < "$D/$n.json") $([ -e "$D/$n.html" ] && echo yes || echo no) $([ -e "$D/$n.pftrace" ] && echo yes || echo no)"
	[ "$sq" = none ] || eq "damaged ($n): sqlite3 + the extension: the statement fails with the line" "1 0" \
		"$(grep -c -F "${want#database damaged or not written by kvio: }" "$D/$n.qerr") $(wc -c < "$D/$n.q")"
	eq "damaged ($n): kvio-check names it" "yes" "$(grep -q DAMAGED "$D/$n.check" && echo yes)"
}
DM="database damaged or not written by kvio:"
# chunk 1's blob: 16 header bytes + ts, dur, slba (3 x 64) + 5 u32 arrays (5 x 32) + names (16) + flags (8) = 392 bytes
eq "chunk 1's blob: 392 bytes (chunk.h's layout for 8 commands)" "392" "$(sqlite3 "$D/base.db" "select length(data) from kvio_cmd_chunk where id = 1")"

damage flipped "sqlite3 flipped.db \"update kvio_cmd_chunk set data = substr(data, 1, 199) || x'5a' || substr(data, 201) where id = 1\"" \
	"$DM kvio_cmd_chunk 1: checksum mismatch (damaged bytes)"
damage cut "sqlite3 cut.db \"update kvio_cmd_chunk set data = substr(data, 1, 384) where id = 1\"" \
	"$DM kvio_cmd_chunk 1: 384 bytes, 8 commands in its header, 8 in its row"
damage grown "sqlite3 grown.db \"update kvio_cmd_chunk set data = data || zeroblob(8) where id = 18\"" \
	"$DM kvio_cmd_chunk 18: 400 bytes, 8 commands in its header, 8 in its row"
damage swapped "sqlite3 swapped.db \"create temp table t as select id, data from kvio_cmd_chunk; update kvio_cmd_chunk set data = (select data from t where t.id = 19 - kvio_cmd_chunk.id)\"" \
	"$DM kvio_cmd_chunk 1: checksum mismatch (damaged bytes)"
damage rangen "sqlite3 rangen.db \"update kvio_cmd_range set n = 7 where id = 1\"" \
	"$DM kvio_cmd_range: its 2 rows do not match their checksum (kvio wrote 2 rows)"
# (the export: flow 4, from an object's first command 5 to its last, names command 8, past the
# directory's chunk 1 of 7 commands)
damage forged_n "sqlite3 forged_n.db \"update kvio_cmd_range set n = 7 where id = 1\" && '$T/dbforge' forged_n.db resum" \
	"$DM kvio_cmd_chunk 1: 392 bytes, 8 commands in its header, 7 in its row" slice \
	"$DM flow 4: slice_in 8 names no slice or command"
damage n0 "sqlite3 n0.db \"update kvio_cmd_range set n = 0 where id = 18\" && '$T/dbforge' n0.db resum" \
	"$DM kvio_cmd_range 18: n 0 is not a count of 1..8192 commands"
damage n2e31 "sqlite3 n2e31.db \"update kvio_cmd_range set n = 2147483648 where id = 18\" && '$T/dbforge' n2e31.db resum" \
	"$DM kvio_cmd_range 18: n 2147483648 is not a count of 1..8192 commands"
damage id_huge "sqlite3 id_huge.db \"update kvio_cmd_range set id = 9223372036854775807 where id = 18; update kvio_cmd_chunk set id = 9223372036854775807 where id = 18\" && '$T/dbforge' id_huge.db resum" \
	"$DM kvio_cmd_range 9223372036854775807: ids beyond 2^53"
damage overlap "sqlite3 overlap.db \"update kvio_cmd_range set id = 5 where id = 18; update kvio_cmd_chunk set id = 5 where id = 18\" && '$T/dbforge' overlap.db resum" \
	"$DM kvio_cmd_range 5: its ids overlap the chunk before (which ends at 8)"
damage lane "'$T/dbforge' lane.db chunk 1 track 0 4294967295" \
	"$DM kvio_cmd_chunk 1: command 1: track 4294967295 is not a slice track (tracks are 1..43)"
damage counter_lane "'$T/dbforge' counter_lane.db chunk 18 track 3 4" \
	"$DM kvio_cmd_chunk 18: command 21: track 4 is not a slice track (tracks are 1..43)"
damage folded_lane "'$T/dbforge' folded_lane.db chunk 1 track 7 15" \
	"$DM kvio_cmd_chunk 1: command 8: track 15 is not a slice track (tracks are 1..43)"
damage name "'$T/dbforge' name.db chunk 1 name 0 7" \
	"$DM kvio_cmd_chunk 1: command 1: name 7 has no kvio_cmd_name row"
damage name_row "sqlite3 name_row.db \"delete from kvio_cmd_name where id = 1\"" \
	"$DM kvio_cmd_name: its 1 rows do not match their checksum (kvio wrote 2 rows)"
damage name_text "sqlite3 name_text.db \"update kvio_cmd_name set name = x'00ff' where id = 1\" && '$T/dbforge' name_text.db resum" \
	"$DM kvio_cmd_name 1: the name is not text"
damage ts "'$T/dbforge' ts.db chunk 18 dur 2 5 && '$T/dbforge' ts.db chunk 18 ts 2 -1" \
	"$DM kvio_cmd_chunk 18: command 20: ts -1, dur 5 are not a span"
damage flags "'$T/dbforge' flags.db chunk 1 flags 0 24" \
	"$DM kvio_cmd_chunk 1: command 1: flags 0x18 are not kvio's"
damage kv "'$T/dbforge' kv.db chunk 1 flags 0 6 && '$T/dbforge' kv.db chunk 1 kv_id 0 3" \
	"$DM kvio_cmd_chunk 1: command 1: kv_id 3 has no kvio_cmd_kv row (1..0)"
damage extent "sqlite3 extent.db \"update kvio_cmd_range set ts_min = ts_min + 1 where id = 1\" && '$T/dbforge' extent.db resum" \
	"$DM kvio_cmd_chunk 1: kvio_cmd_range does not hold its commands' extent"
damage range_null "sqlite3 range_null.db \"update kvio_cmd_range set tid_max = NULL where id = 1\" && '$T/dbforge' range_null.db resum" \
	"$DM kvio_cmd_range 1: not an extent (ts $(sqlite3 "$D/base.db" "select ts_min || '..' || end_max from kvio_cmd_range where id = 1"), trace_id 1..0)"
damage view "sqlite3 view.db \"drop view slice; create view slice as select 1 as id, 2 as dur\"" \
	"$DM the view slice is not kvio's (a changed or crafted schema)" cmd
damage endless_view "sqlite3 endless_view.db \"drop table kvio_obj; create view kvio_obj as with recursive r(id) as (select 1 union all select id + 1 from r) select id from r\"" \
	"$DM the view kvio_obj is not kvio's (a changed or crafted schema)" cmd
damage table "sqlite3 table.db \"drop table kvio_warning; create table kvio_warning(x)\"" \
	"$DM the table kvio_warning is not kvio's (a changed or crafted schema)" cmd
damage trigger "sqlite3 trigger.db \"create trigger t after insert on kvio_obj begin select 1; end\"" \
	"$DM a trigger (t) kvio does not write" cmd
damage index "sqlite3 index.db \"create index ix on kvio_obj(bytes)\"" \
	"$DM an index (ix) on kvio_obj that kvio does not write" cmd
damage stats "sqlite3 stats.db \"update kvio_stats set value = 'x' where rowid = 2\"" \
	"$DM kvio_stats: its $(sqlite3 "$D/base.db" "select count(*) from kvio_stats") rows do not match their checksum (kvio wrote $(sqlite3 "$D/base.db" "select count(*) from kvio_stats") rows)" cmd
damage obj_type "sqlite3 obj_type.db \"update kvio_obj set bytes = 'x' where id = (select min(id) from kvio_obj)\"" \
	"$DM kvio_obj: its $(sqlite3 "$D/base.db" "select count(*) from kvio_obj") rows do not match their checksum (kvio wrote $(sqlite3 "$D/base.db" "select count(*) from kvio_obj") rows)" none
damage slice_dur "sqlite3 slice_dur.db \"update kvio_slice set dur = dur + 1 where id = (select min(id) from kvio_obj)\"" \
	"$DM kvio_slice: its $(sqlite3 "$D/base.db" "select count(*) from kvio_slice") rows do not match their checksum (kvio wrote $(sqlite3 "$D/base.db" "select count(*) from kvio_slice") rows)" none
damage track_id "sqlite3 track_id.db \"update kvio_track set id = 16777215 where id = 43\" && '$T/dbforge' track_id.db resum" \
	"$DM kvio_track 16777215: id outside the table's numbering"
# metadata is read first (the version): a view of endless rows in its place hung every reader
damage endless_metadata "sqlite3 endless_metadata.db \"drop table metadata; create view metadata(name, key_type, int_value, str_value) as with recursive r(x) as (select 1 union all select x + 1 from r) select x, x, x, x from r\"" \
	"$DM the view metadata is not kvio's (a changed or crafted schema)" cmd
# a rank is a key's field of at most 18 digits (write.c): 2^63 - 1 behind valid sums is no rank kvio writes
damage rank_huge "sqlite3 rank_huge.db \"update kvio_obj set rank = 9223372036854775807 where id = (select min(id) from kvio_obj)\" && '$T/dbforge' rank_huge.db resum" \
	"$DM kvio_obj $(sqlite3 "$D/base.db" "select min(id) from kvio_obj"): rank 9223372036854775807 is above 999999999999999999, the most kvio writes" none
damage occurrence_huge "sqlite3 occurrence_huge.db \"update kvio_obj set occurrence = 2147483648 where id = (select max(id) from kvio_obj)\" && '$T/dbforge' occurrence_huge.db resum" \
	"$DM kvio_obj $(sqlite3 "$D/base.db" "select max(id) from kvio_obj"): occurrence 2147483648 is above 2147483647, the most kvio writes" none
# an ingest writes an object's flows once, in order (per arm: flow id arm << 40 | object, the
# object to its first command, then that to its last): a copy of flow 2 (object 13's second) as
# flow 9, object 27's first flow renumbered into arm A (its second then starts arm B's flows at a
# command), an object's first flow from a command, behind valid sums
damage flow_dup "sqlite3 flow_dup.db \"insert into flow select 9, type, slice_out, slice_in, trace_id, arg_set_id from flow where id = 2\" && '$T/dbforge' flow_dup.db resum" \
	"$DM flow 9: trace_id 0 repeats or goes back (kvio writes an object's flows once, in order)" none
damage flow_arm "sqlite3 flow_arm.db \"update flow set trace_id = 2 where id = 5\" && '$T/dbforge' flow_arm.db resum" \
	"$DM flow 6: slice_out 18 is not an object span (an object's first flow starts at it)" none
damage flow_start "sqlite3 flow_start.db \"update flow set slice_out = 2 where id = 3\" && '$T/dbforge' flow_start.db resum" \
	"$DM flow 3: slice_out 2 is not an object span (an object's first flow starts at it)" none
# a chunk's directory row deleted behind re-made sums: its commands vanished from every reader
damage range_deleted "sqlite3 range_deleted.db \"delete from kvio_cmd_range where id = 18\" && '$T/dbforge' range_deleted.db resum" \
	"$DM kvio_cmd_chunk: 2 rows, kvio_cmd_range lists 1 (a chunk without its directory row)"
# a label is at most 128 bytes (kvio-ingest refuses a longer one): a 1 MiB process name behind
# re-made sums made the --html page grow past 256 MiB (ASan dbfuzz seed 21)
damage long_label "sqlite3 long_label.db \"update process set name = 'NVMe ng ' || printf('%.*c', 1048576, 'k') where upid = 2\" && '$T/dbforge' long_label.db resum" \
	"$DM process 2: name is 1048584 bytes, longer than kvio writes (a label and the device: at most 128 bytes each)" cmd
damage version_type "sqlite3 version_type.db \"update metadata set int_value = 'x' where name = 'kvio_schema_version'\"" \
	"$DM metadata: kvio_schema_version is not an integer" cmd

# The version says which kvio reads the file (exit 2, not "damaged")
for v in 2 99; do
	cp "$D/base.db" "$D/v$v.db"
	sqlite3 "$D/v$v.db" "update metadata set int_value = $v where name = 'kvio_schema_version'"
	"$BUILD/kvio-report" "$D/v$v.db" --json > /dev/null 2> "$D/v$v.err"
	eq "version $v: exit 2, one line saying which kvio reads it" "2 1 1" \
		"$? $(wc -l < "$D/v$v.err") $(grep -c "kvio database version $v, written by $([ $v = 2 ] && echo "an older" || echo "a newer") kvio" "$D/v$v.err")"
done

# Damage kvio's readers do not read: the right report. kvio_cmd_chunk's own n (the
# readers list chunks from kvio_cmd_range), a table of the user's own, counters for
# kvio-report (it does not read them; kvio-export checks them)
cp "$D/base.db" "$D/ok1.db"; sqlite3 "$D/ok1.db" "update kvio_cmd_chunk set n = 7 where id = 1"
cp "$D/base.db" "$D/ok2.db"; sqlite3 "$D/ok2.db" "create table my_notes(t text); insert into my_notes values('looked at it'); create view my_view as select 1"
cp "$D/base.db" "$D/ok3.db"; sqlite3 "$D/ok3.db" "update kvio_counter set value = value + 1"
for k in 1 2 3; do
	"$BUILD/kvio-report" "$D/ok$k.db" --json > "$D/ok$k.json"
	eq "not read damage $k: kvio-report exit 0, the undamaged JSON" "0 same" \
		"$? $(cmp -s "$D/base.json" "$D/ok$k.json" && echo same || echo differs)"
done
"$BUILD/kvio-export" "$D/ok2.db" -o "$D/ok2.pftrace" > /dev/null; eq "a table of the user's own: kvio-export exit 0" 0 $?
# flows: kvio-report reads them (objects' presubmit_own_p50: each object's flow to its first command)
cp "$D/base.db" "$D/flow.db"; sqlite3 "$D/flow.db" "delete from flow"
"$BUILD/kvio-report" "$D/flow.db" --json > /dev/null 2> "$D/flow.err"
eq "flows deleted: kvio-report exit 2, the damage line naming flow" "2 1" "$? $(grep -c 'database damaged or not written by kvio: flow' "$D/flow.err")"
"$BUILD/kvio-check" "$D/ok1.db" > "$D/ok1.check"
eq "kvio_cmd_chunk's own n: kvio-check names the rows that differ from the directory" "2 1" \
	"$? $(grep -c 'chunk rows .*DAMAGED: 2 rows break it' "$D/ok1.check")"
"$BUILD/kvio-export" "$D/ok3.db" -o "$D/ok3.pftrace" > /dev/null 2> "$D/ok3.err"
eq "counters damaged: kvio-export (which reads them) exit 2, the table named" "2 1" \
	"$? $(grep -c 'kvio_counter: its' "$D/ok3.err")"

# a counter's value is a count or a rate (0..2^64): 1e308 behind re-made sums changed the
# exported counter unrefused (ASan dbfuzz seed 21); kvio-export reads counters, kvio-report not
cp "$D/base.db" "$D/ctr.db"
sqlite3 "$D/ctr.db" "update kvio_counter set value = 1e308 where id = (select min(id) from kvio_counter)"
"$T/dbforge" "$D/ctr.db" resum
"$BUILD/kvio-export" "$D/ctr.db" -o "$D/ctr.pftrace" > /dev/null 2> "$D/ctr.err"
eq "a counter of 1e308: kvio-export exit 2, the row and the value named, no trace" "2 1 no" \
	"$? $(grep -c "kvio_counter $(sqlite3 "$D/base.db" "select min(id) from kvio_counter"): value 1e+308 is not a count or rate kvio writes" "$D/ctr.err") $([ -e "$D/ctr.pftrace" ] && echo yes || echo no)"
"$BUILD/kvio-check" "$D/ctr.db" > "$D/ctr.check"
eq "a counter of 1e308: kvio-check exit 2, DAMAGED" "2 1" "$? $(grep -c 'DAMAGED: kvio_counter' "$D/ctr.check")"

# a counter point lies inside the capture, or a rate bucket (10 ms) past its last end: one at
# 2^63 - 1 behind re-made sums changed the export unrefused (ASan dbfuzz seed 25)
cp "$D/base.db" "$D/ctrts.db"
sqlite3 "$D/ctrts.db" "update kvio_counter set ts = 9223372036854775807 where id = (select min(id) from kvio_counter)"
"$T/dbforge" "$D/ctrts.db" resum
"$BUILD/kvio-export" "$D/ctrts.db" -o "$D/ctrts.pftrace" > /dev/null 2> "$D/ctrts.err"
eq "a counter at ts 2^63 - 1: kvio-export exit 2, the row named, no trace" "2 1 no" \
	"$? $(grep -c "kvio_counter $(sqlite3 "$D/base.db" "select min(id) from kvio_counter"): ts 9223372036854775807 is past the capture's end" "$D/ctrts.err") $([ -e "$D/ctrts.pftrace" ] && echo yes || echo no)"

# A forger's NULL label and an empty blob as an op: no crash, whatever the answer
cp "$D/base.db" "$D/nul.db"
sqlite3 "$D/nul.db" "update process set name = NULL where upid = 1; update kvio_obj set op = x'' where id = (select min(id) from kvio_obj)"
"$T/dbforge" "$D/nul.db" resum
"$BUILD/kvio-report" "$D/nul.db" --json > /dev/null 2>&1; r=$?
"$BUILD/kvio-export" "$D/nul.db" -o "$D/nul.pftrace" > /dev/null 2>&1; x=$?
eq "NULL label, empty-blob op behind valid sums: no crash (exit < 128)" "yes yes" \
	"$([ $r -lt 128 ] && echo yes) $([ $x -lt 128 ] && echo yes)"

# Operators over any SQL values: a span beyond int64 is an error, not overflow
for q in "kvio_depth((select kvio_depth_gather(1, t, 1) from (select -9223372036854775807 t union all select 9223372036854775800)))|kvio_depth_gather: a group's times span more than int64" \
	 "kvio_pct((select kvio_gaps_gather(1, 1, t, 1, 2) from (select -9223372036854775807 t union all select 9223372036854775800)))|kvio_gaps_gather: t - previous t overflows int64" \
	 "kvio_pct((select kvio_gaps_gather(1, 1, t, 1, m) from (select 1 t, 4 m union all select 2, 17)))|kvio_gaps_gather: min_n differs between rows" \
	 "kvio_pct((select kvio_runs_gather(1, t, 5) from (select -9223372036854775807 t union all select 9223372036854775800)))|kvio_runs_gather: t - previous t overflows int64" \
	 "kvio_depth((select kvio_depth_gather(1, 9223372036854775800, 100)))|kvio_depth_gather: ts + dur overflows int64" \
	 "kvio_depth_buckets((select kvio_depth_buckets_gather(1, 9223372036854775800, 100, 0, 1000)))|kvio_depth_buckets_gather: ts + dur - t0 overflows int64"; do
	eq "operators: ${q#*|}" "1" \
		"$(sqlite3 -batch -cmd ".load $BUILD/kvio" :memory: "select count(*) from ${q%%|*}" 2>&1 | grep -c -F "${q#*|}")"
done

# The sums read a table's rows with the aggregate kvio_sum_rows (db/valid.c), handed its state as a
# bound pointer: called from SQL it is an error, never a read of memory the caller names
eq "kvio_sum_rows from SQL: an error" "1" \
	"$(sqlite3 -batch -cmd ".load $BUILD/kvio" "$D/base.db" "select kvio_sum_rows(1, id, rowid) from kvio_slice" 2>&1 |
		grep -c -F "kvio_sum_rows: kvio's checks call it")"
eq "kvio_sum_rows without arguments: an error" "1" \
	"$(sqlite3 -batch -cmd ".load $BUILD/kvio" :memory: "select kvio_sum_rows()" 2>&1 | grep -c -F "kvio_sum_rows: kvio's checks call it")"
