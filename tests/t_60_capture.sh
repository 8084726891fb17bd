# capture/: the monitor's JSONL writer and degrade logic (unit, no kernel), the
# command-line errors of both tools, and the real-kernel sample recorded by the
# VM test (fixtures/vm: kvio-load runs of 4 objects, serialized with 512 KiB
# objects = 4 x (1 header + 4 payload) stores + 4 x 4 loads = 36 commands;
# batched with 4 MiB objects = 4 x (1 + 32) + 4 x 32 = 260 commands).
# (16: the checks unit_capture makes; tests/lib.sh, unit())
unit unit_capture 16 tests/unit_capture.c capture/monitor_out.c capture/probes.c lib/util.c $JSONL
ok "monitor --help exits 0" "$BUILD/nvme_uring_cmd_monitor" --help
"$BUILD/nvme_uring_cmd_monitor" --lba-size x 2>/dev/null; eq "monitor: bad --lba-size exits 2" 2 $?
"$BUILD/nvme_uring_cmd_monitor" --dur -1 2>/dev/null; eq "monitor: bad --dur exits 2" 2 $?
"$BUILD/nvme_uring_cmd_monitor" extra 2>/dev/null; eq "monitor: stray argument exits 2" 2 $?
ok "kvio-load --help exits 0" "$BUILD/kvio-load" --help
"$BUILD/kvio-load" --sem x 2>/dev/null; eq "kvio-load: no --dev exits 2" 2 $?
"$BUILD/kvio-load" --dev /dev/null --sem x --mode fast 2>/dev/null; eq "kvio-load: bad --mode exits 2" 2 $?
"$BUILD/kvio-load" --dev /dev/null --sem "$T/x.jsonl" 2>"$T/load.err"; eq "kvio-load: not an NVMe device exits 1" 1 $?
eq "kvio-load: says why" 1 "$(grep -c 'NVME_IOCTL_ID' "$T/load.err")"

DB=$T/vmfix.db
"$BUILD/kvio-ingest" -q -o "$DB" --merge serialized=fixtures/vm/serialized.sem.jsonl,fixtures/vm/serialized.ebpf.jsonl \
	--merge batched=fixtures/vm/batched.sem.jsonl,fixtures/vm/batched.ebpf.jsonl
eq "real-kernel sample: ingest exit 0" 0 $?
"$BUILD/kvio-report" "$DB" --json > "$T/vmfix.json"
eq "real-kernel sample: commands per arm (36, 260), all tagged, all paired" "36 36 1.0 260 260 1.0" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%d %d %s' % (d[k]['commands']['n'], d[k]['commands']['tagged'], d[k]['commands']['real_cover']) for k in ('serialized', 'batched')))" "$T/vmfix.json")"
eq "real-kernel sample: no drops, no malformed lines" "0 0 0 0" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%d %d' % (d[k]['capture']['drops'], d[k]['capture']['malformed_lines']) for k in ('serialized', 'batched')))" "$T/vmfix.json")"
eq "real-kernel sample: 8 objects per arm (4 stores, 4 loads)" "4 4 4 4" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%d %d' % (d[k]['objects']['store']['n'], d[k]['objects']['load']['n']) for k in ('serialized', 'batched')))" "$T/vmfix.json")"
eq "real-kernel sample: header commands = one per store" "4" "$(q "$DB" "select count(*) from kvio_cmd where role = 'header' and track_id in (select id from process_track where upid = (select upid from process where name = 'NVMe ng serialized'))")"
eq "real-kernel sample: verdicts (serialized arm QD~1, batched arm pipelined)" "serialized pipelined" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=[d[k]['qd1']['load']['verdict'] for k in ('serialized', 'batched')]; print(('serialized' if 'serialized' in v[0] else v[0]) + ' ' + v[1])" "$T/vmfix.json")"
# kvio-gen (the bench's and the tests' captures) writes the tracer's own line format: the same
# keys in the same order as the real-kernel sample's nvme_cmd and nvme_cmp lines
"$BUILD/kvio-gen" --sem "$T/gf.sem.jsonl" --ebpf "$T/gf.ebpf.jsonl" --lines 200 2>/dev/null
keys() { python3 -c "
import json, sys
seen = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    seen.setdefault(d.get('event_type'), ','.join(d))
print(seen.get('nvme_cmd'), seen.get('nvme_cmp'))" "$1"; }
eq "kvio-gen: nvme_cmd and nvme_cmp keys as the tracer writes them (fixtures/vm)" \
	"$(keys fixtures/vm/batched.ebpf.jsonl)" "$(keys "$T/gf.ebpf.jsonl")"
