#!/usr/bin/python3
"""follow_writer.py — append captures to growing files in bursts, for
tests/t_22_follow.sh: each burst writes the next piece of every source file
to its destination (cut at a random byte, so a line is often left half
written until the next burst), then sleeps.

    follow_writer.py SEED BURSTS SLEEP_S SRC1 DST1 [SRC2 DST2 ...]

A destination '-' is standard output (a pipe). The cuts are drawn from SEED,
so a run is repeatable (SEED 0: even pieces, make bench's 1 s steps); the
destinations end up byte-equal to the sources."""
import os
import random
import sys
import time


def main():
    seed, bursts, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    pairs = list(zip(sys.argv[4::2], sys.argv[5::2]))
    rnd = random.Random(seed)
    srcs = [open(s, 'rb').read() for s, _ in pairs]
    outs = [sys.stdout.buffer if d == '-' else open(d, 'ab') for _, d in pairs]
    cuts = []
    for data in srcs:  # bursts - 1 random cut points, sorted, then the end
        if seed == 0:
            c = [len(data) * (b + 1) // bursts for b in range(bursts - 1)]
        else:
            c = sorted(rnd.randrange(len(data)) for _ in range(bursts - 1)) if data else []
        cuts.append(c + [len(data)])
    at = [0] * len(srcs)
    for b in range(bursts):
        for i, data in enumerate(srcs):
            outs[i].write(data[at[i]:cuts[i][b]])
            outs[i].flush()
            at[i] = cuts[i][b]
        time.sleep(pause)
    for o in outs:
        if o is not sys.stdout.buffer:
            o.close()
    sys.stdout.flush()
    os.close(1)


main()
