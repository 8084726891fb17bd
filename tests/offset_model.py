"""offset_model.py — a second method for kvio-ingest --join-by-offset, for the tests.

  python3 offset_model.py gen SEM EBPF [--passes P] [--slots S] [--seed X] [--pass-gap-us G] [--late]
  python3 offset_model.py expect SEM EBPF [--lba-bytes N]

gen writes a capture whose slots are reused over P passes (a store, then a
load of each slot per pass, their windows overlapping), with commands inside,
across, past and between slots, some without a window, some cookies wrong and
the device lines slightly out of time order. --pass-gap-us G puts passes G us
apart (default 20000: the windows of one slot never span two passes; 500: the
windows of ~20 passes of a slot are open at once); --late also moves 3% of the
device lines 50-800 lines later (out of time order beyond the reorder pool of
small blocks: late_lines). expect applies the rules of
docs/formats.md ("--join-by-offset") by brute force, scanning every op of the
candidate slot for every command (the reference converter's way, quadratic in
the passes) and prints one line per command, "ts trace_id" (0 when not
attributed) in (ts, file) order, then the class counts and the parity.
"""
import bisect, json, random, sys


def gen(sem, ebpf, passes, slots, seed, pass_gap_us=20000, late=False):
    rnd = random.Random(seed)
    meta = {"event_type": "kvio_meta", "kvio_schema": 2, "block_align": 4096, "header_bytes": 4096}
    slot_bytes = 64 * 4096  # slots 256 KiB apart, objects up to 192 KiB + header
    recs, cmds, tid = [], [], 0
    t = 10.0
    for p in range(passes):
        for s in range(slots):
            base = s * slot_bytes
            nbytes = rnd.choice([4096, 8192, 65536, 131072, 196608, 100000, slot_bytes - 4096])
            for op in ("store", "load"):
                tid += 1
                ts0 = t
                t += 0.0002
                recs.append({"trace_id": tid, "op": op, "key": "k%d" % s, "part": "kv", "bytes": nbytes,
                             "slot_offset": base, "ts_start": round(ts0, 6), "ts": round(t, 6)})
                pay = (nbytes + 4095) // 4096 * 4096
                ext = 4096 + pay
                for k in range(3):
                    ts = int(round(ts0, 6) * 1e9) + 10000 * k + rnd.randrange(5000)
                    kind = rnd.random()
                    if kind < 0.7:   # inside
                        off = base + 4096 * rnd.randrange(ext // 4096)
                        ln = 4096
                    elif kind < 0.9:  # past the object's end: across (a full slot) or into the gap
                        off = base + ext - 4096
                        ln = 8192
                    else:             # in the gap after the object
                        off = base + ext + 4096 * rnd.randrange(max(1, (slot_bytes - ext) // 4096))
                        ln = 4096
                    cookie = tid if rnd.random() < 0.95 else tid + 1
                    name = ("write" if op == "store" else "read") if rnd.random() < 0.9 else "read"
                    cmds.append({"event_type": "nvme_cmd", "user_data": (cookie << 32) | len(cmds) % 1000,
                                 "op_name": name, "slba": off // 4096, "nlb": ln // 4096, "bytes": ln,
                                 "data_len": ln, "ts": ts})
            t += 0.0003
        t += pass_gap_us / 1e6  # by default more than 10 ms apart: windows of one slot never span two passes
    cmds.append({"event_type": "nvme_cmd", "user_data": 0, "op_name": "write", "slba": 1, "nlb": 1, "bytes": 4096,
                 "data_len": 4096, "ts": int((t + 1) * 1e9)})  # after every window
    with open(sem, "w") as f:
        f.write(json.dumps(meta) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    # nearly in time order: swap a few neighbours (the reorder pool puts them back)
    cmds.sort(key=lambda c: c["ts"])
    for i in range(0, len(cmds) - 1, 37):
        cmds[i], cmds[i + 1] = cmds[i + 1], cmds[i]
    if late:  # some lines much later in the file than their time
        pos = [i + 0.5 + rnd.randrange(50, 800) if rnd.random() < 0.03 else i for i in range(len(cmds))]
        cmds = [c for _, c in sorted(zip(pos, cmds), key=lambda x: x[0])]
    with open(ebpf, "w") as f:
        for c in cmds:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")


def expect(sem, ebpf, lba_flag):
    meta, recs = {}, []
    for line in open(sem):
        r = json.loads(line)
        if r.get("event_type") == "kvio_meta":
            meta = meta or r
        elif "op" in r and "trace_id" in r:
            recs.append(r)
    hdr, ba = int(meta.get("header_bytes", 0) or 0), int(meta.get("block_align", 4096) or 4096)
    by_base = {}
    for i, r in enumerate(recs):
        if r.get("slot_offset") is None:
            continue
        lo = int(r["slot_offset"])
        hi = lo + hdr + (int(r.get("bytes", 0)) + ba - 1) // ba * ba
        t1 = int(float(r["ts"]) * 1e9) + 5000000
        t0 = int(float(r.get("ts_start", r["ts"])) * 1e9) - 5000000
        by_base.setdefault(lo, []).append((t0, t1, hi, i + 1, r))
    bases = sorted(by_base)
    ends = {b: max(o[2] for o in by_base[b]) for b in bases}
    cls = dict(unique=0, cross_object=0, gap_spill=0, unmatched=0)
    cookie_cmds = agree = total = 0
    out = []
    cmds = [json.loads(l) for l in open(ebpf)]
    for n, c in enumerate(cmds):
        if c.get("event_type") != "nvme_cmd":
            continue
        cookie = int(c.get("user_data", 0)) >> 32
        cookie_cmds += cookie != 0
        tid = 0
        if "slba" not in c:
            cls["unmatched"] += 1
        else:
            nlb, nb = int(c.get("nlb", 0)), int(c.get("bytes", 0))
            lba = nb // nlb if nb and nlb else lba_flag
            ln = nb if nb else nlb * lba if nlb else int(c.get("data_len", 0))
            off = int(c["slba"]) * lba
            j = bisect.bisect_right(bases, off) - 1
            if j < 0 or off >= ends[bases[j]]:
                cls["unmatched"] += 1
            elif off + ln > ends[bases[j]]:
                cls["cross_object" if j + 1 < len(bases) and bases[j + 1] < off + ln else "gap_spill"] += 1
            else:
                want = {"write": "store", "read": "load"}.get(c.get("op_name"))
                hold = [o for o in by_base[bases[j]] if o[0] <= c["ts"] <= o[1]]
                pick = next((o for o in hold if o[4]["op"] == want), hold[0] if hold else None)
                if pick is None:
                    cls["unmatched"] += 1
                else:
                    cls["unique"] += 1
                    tid = pick[3]
                    if cookie:
                        total += 1
                        agree += pick[4]["trace_id"] == cookie
        out.append((c["ts"], n, tid))
    for ts, tid in sorted((ts, tid) for ts, _, tid in out):
        print(ts, tid)
    print("classes", cls["unique"], cls["cross_object"], cls["gap_spill"], cls["unmatched"])
    print("parity", cookie_cmds, agree, total)


if __name__ == "__main__":
    a = sys.argv
    opt = lambda k, d: int(a[a.index(k) + 1]) if k in a else d
    if a[1] == "gen":
        gen(a[2], a[3], opt("--passes", 1000), opt("--slots", 4), opt("--seed", 1), opt("--pass-gap-us", 20000),
            "--late" in a)
    else:
        expect(a[2], a[3], opt("--lba-bytes", 4096))
