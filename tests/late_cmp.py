#!/usr/bin/python3
"""late_cmp.py SRC DST EVERY DELAY_NS — a capture whose completions come late:
the completion of every EVERY-th command is moved DELAY_NS later (its ts and
lat_ns grown by DELAY_NS) and written where that time falls in the file (the
other lines keep their order): a device that holds a few commands for
DELAY_NS, as a hung run looks from the tracer."""
import json
import sys


def main():
    src, dst, every, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lines = open(src, 'rb').read().splitlines(keepends=True)
    slow, n = set(), 0
    for ln in lines:
        if b'"nvme_cmd"' in ln:
            n += 1
            if n % every == 0:
                slow.add(json.loads(ln)['user_data'])
    keep, moved = [], []
    for ln in lines:
        if b'"nvme_cmp"' in ln:
            r = json.loads(ln)
            if r['user_data'] in slow:
                slow.discard(r['user_data'])
                r['ts'] += delay
                r['lat_ns'] += delay
                moved.append((r['ts'], (json.dumps(r, separators=(',', ':')) + '\n').encode()))
                continue
        keep.append(ln)
    moved.sort()
    out, m = [], 0
    for ln in keep:
        if b'"ts":' in ln and m < len(moved):
            ts = json.loads(ln).get('ts')
            while m < len(moved) and ts is not None and moved[m][0] <= ts:
                out.append(moved[m][1])
                m += 1
        out.append(ln)
    drops = [i for i, ln in enumerate(out) if b'"drops"' in ln]
    tail = [mv for _, mv in moved[m:]]
    if drops:  # the tracer's drops line stays last
        out[drops[0]:drops[0]] = tail
    else:
        out.extend(tail)
    open(dst, 'wb').write(b''.join(out))


main()
