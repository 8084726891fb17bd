#!/usr/bin/env python3
"""fuzz.py — mutation fuzzing of kvio's inputs under ASan/UBSan (`make fuzz`).

  python3 scripts/fuzz.py ASAN_BUILD_DIR WORK_DIR [--runs N] [--seed S]

Three targets, N runs each:
  jsonl    kvio-ingest on mutated semantic/device/serving JSONL (fixtures and a
           generated capture): junk tokens, byte flips, duplicated, dropped and
           shuffled lines, cuts, huge numbers; plain or gzip (sometimes cut);
           block sizes from 200 bytes to 4 MiB; single arm or --merge.
  pftrace  kvio-ingest --pftrace on mutated .pftrace files (kvio's own and a
           reference-style one): byte flips, inserts, deletions, 0xff varints,
           swapped runs, cuts, gzip.
  parser   jl-diff on 200 mutated lines of those captures (the same line
           mutations, and every other run mutations that keep the quotes
           balanced, so the region walk and the key layouts' templates run):
           the fast path (simdjson, templates) and the full parser (jsmn)
           must agree on every line's verdict, tokens and values.
When an ingest succeeds, kvio-report and kvio-export run on its database too.
A run fails when a command dies by a signal, exits outside its documented
statuses, or a sanitizer reports; its inputs are kept in WORK_DIR/crash-*.
Exit status: 0 nothing found, 1 findings.
"""
import gzip, os, random, shutil, subprocess, sys

JUNK = [b'{', b'}', b'"', b'\\', b'\\u0000', b'\\ud800', b'-', b'1e999', b'99999999999999999999999',
        b'-9223372036854775809', b'18446744073709551616', b'null', b'true', b'[', b']', b',', b':', b'\x00',
        b'\xff', b'\n', b'\r', b' ', b'nan', b'"user_data":', b'"ts":', b'"event_type":"nvme_cmp"',
        b'"event_type":"nvme_cmd"', b'"trace_id":', b'"op":"load"', b'{"event_type":"nvme_cmd","ts":1,"user_data":1}',
        b'0', b'-1', b'1.5', b'"key":"a@b@c@d@e"', b'@', b'0x']
ENV = dict(os.environ, ASAN_OPTIONS='detect_leaks=1', UBSAN_OPTIONS='print_stacktrace=1:halt_on_error=1')


def mutate_lines(lines):
    lines = list(lines)
    for _ in range(random.randint(1, 12)):
        if not lines:
            lines = [b'']
        i = random.randrange(len(lines))
        line, r = lines[i], random.random()
        if r < 0.3 and line:
            j = random.randrange(len(line))
            lines[i] = line[:j] + random.choice(JUNK) + line[j + random.randint(0, 3):]
        elif r < 0.45 and line:
            j = random.randrange(len(line))
            lines[i] = line[:j] + bytes([random.randrange(256)]) + line[j + 1:]
        elif r < 0.55:
            lines.insert(i, lines[random.randrange(len(lines))])
        elif r < 0.65:
            del lines[i]
        elif r < 0.75:
            random.shuffle(lines)
        elif r < 0.85 and line:
            lines[i] = line[:random.randrange(len(line))]
        else:
            lines[i] = line.replace(b'1', b'9' * random.randint(1, 25), 1)
    return b''.join(lines)


# bytes that change a line's JSON but never its quotes' balance
LAYOUT = b'0123456789-+.eE,:{}[] \tntruefalsx'


def mutate_layout(lines):
    """A few bytes of some lines changed, dropped, inserted or repeated, the
    quotes left balanced: the region of lines stays one simdjson's stage 1
    takes, so the region walk learns key layouts and their templates parse
    the lines after (a stray quote or control byte sends a whole region's
    lines one at a time, where no template runs)."""
    out = []
    for line in lines:
        body = bytearray(line.rstrip(b'\n'))
        for _ in range(random.randint(1, 3) if random.random() < 0.15 else 0):
            if not body:
                break
            i, r = random.randrange(len(body)), random.random()
            if body[i:i + 1] == b'"':
                continue
            if r < 0.4:
                body[i] = random.choice(LAYOUT)
            elif r < 0.6:
                del body[i]
            elif r < 0.8:
                body.insert(i, random.choice(LAYOUT))
            else:
                seg = body[i:i + random.randint(1, 20)]
                if seg.count(b'"') % 2 == 0:
                    body[i:i] = seg
        out.append(bytes(body) + b'\n')
    if out and random.random() < 0.3:  # a cut last line
        out[-1] = out[-1][:random.randint(0, len(out[-1]))]
    return b''.join(out)


def mutate_bytes(d):
    d = bytearray(d)
    for _ in range(random.randint(1, 20)):
        if not d:
            break
        r, i = random.random(), random.randrange(len(d))
        if r < 0.5:
            d[i] = random.randrange(256)
        elif r < 0.6:
            d[i:i] = bytes(random.randrange(256) for _ in range(random.randint(1, 8)))
        elif r < 0.7:
            del d[i:i + random.randint(1, 16)]
        elif r < 0.8:
            d[i] = 0xff
        elif r < 0.9:
            j = random.randrange(len(d))
            d[i:i + 8], d[j:j + 8] = d[j:j + 8], d[i:i + 8]
        else:
            d = d[:i]
    return bytes(d)


def bad(p):
    err = p.stderr.decode('utf-8', 'replace')
    return p.returncode not in (0, 1, 2, 3) or 'Sanitizer' in err or 'runtime error' in err, err


def run_all(b, work, ingest_args):
    db = os.path.join(work, 'f.db')
    if os.path.exists(db):
        os.remove(db)
    env = dict(ENV, KVIO_BLOCK_BYTES=random.choice(['200', '4096', '65536', '4194304']))
    p = subprocess.run([os.path.join(b, 'kvio-ingest'), '-q', '-o', db] + ingest_args, capture_output=True, env=env)
    found, err = bad(p)
    if found or p.returncode:
        return found, 'kvio-ingest ' + ' '.join(ingest_args) + '\n' + err
    for cmd in (['kvio-report', db, '--json'], ['kvio-export', db, '-o', os.path.join(work, 'f.pftrace')]):
        q = subprocess.run([os.path.join(b, cmd[0])] + cmd[1:], capture_output=True, env=env)
        found, err = bad(q)
        if found:
            return True, ' '.join(cmd) + '\n' + err
    return False, ''


def keep(work, name, files, why):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    for f in files:
        shutil.copy(f, d)
    with open(os.path.join(d, 'why'), 'w') as f:
        f.write(why)
    print('FOUND %s: %s' % (d, why[:300].replace('\n', ' | ')), flush=True)


def main():
    b, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[sys.argv.index('--runs') + 1]) if '--runs' in sys.argv else 300
    seed = int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv else 1
    random.seed(seed)
    os.makedirs(work, exist_ok=True)
    g = {k: os.path.join(work, 'g.' + k) for k in 'sev'}
    subprocess.run([os.path.join(b, 'kvio-gen'), '--sem', g['s'], '--ebpf', g['e'], '--serving', g['v'], '--lines', '3000',
                    '--ranks', '2', '--faults', '5', '--seed', str(seed)], check=True, capture_output=True)
    gen = {k: open(p, 'rb').read().splitlines(True) for k, p in g.items()}
    tiny = {k: open('fixtures/tiny/%s.jsonl' % n, 'rb').read().splitlines(True) for k, n in (('s', 'sem'), ('e', 'ebpf'))}
    found = 0
    inp = {k: os.path.join(work, 'in.' + k) for k in 'sev'}
    for k in range(runs):
        base = gen if random.random() < 0.6 else tiny
        for key in base:
            data = mutate_lines(base[key]) if random.random() < 0.8 else b''.join(base[key])
            if random.random() < 0.1:
                data = data[:random.randrange(len(data) + 1)]
            if random.random() < 0.2:
                data = gzip.compress(data)
                if random.random() < 0.3:
                    data = data[:random.randrange(len(data) + 1)]
            open(inp[key], 'wb').write(data)
        args = ['--sem', inp['s'], '--ebpf', inp['e']]
        if 'v' in base and random.random() < 0.5:
            args += ['--serving', inp['v']]
        if random.random() < 0.3:
            args = ['--merge', 'x=%s,%s' % (inp['s'], inp['e']), '--merge', 'y=%s,%s' % (inp['s'], inp['e'])]
        hit, why = run_all(b, work, args)
        if hit:
            found += 1
            keep(work, 'crash-jsonl-%d-%d' % (seed, k), [inp[x] for x in base], why)
    db = os.path.join(work, 'src.db')
    subprocess.run([os.path.join(b, 'kvio-ingest'), '-q', '-o', db, '--merge', 'A=%s,%s,%s' % (g['s'], g['e'], g['v']),
                    '--merge', 'B=%s,%s' % (g['s'], g['e'])], check=True)
    subprocess.run([os.path.join(b, 'kvio-export'), db, '-o', os.path.join(work, 'src.pftrace')], check=True,
                   capture_output=True)
    subprocess.run(['python3', 'tests/pfwire.py', 'refstyle', os.path.join(work, 'ref.pftrace')], check=True)
    traces = [open(os.path.join(work, n), 'rb').read() for n in ('src.pftrace', 'ref.pftrace')]
    pf = os.path.join(work, 'in.pftrace')
    for k in range(runs):
        data = mutate_bytes(random.choice(traces))
        if random.random() < 0.2:
            data = gzip.compress(data)
            if random.random() < 0.3:
                data = data[:random.randint(10, 200)]
        open(pf, 'wb').write(data)
        hit, why = run_all(b, work, ['--pftrace', pf])
        if hit:
            found += 1
            keep(work, 'crash-pftrace-%d-%d' % (seed, k), [pf], why)
    lines = [l for base in (gen, tiny) for v in base.values() for l in v]
    pl = os.path.join(work, 'in.lines')
    for k in range(runs):
        sample = random.sample(lines, min(len(lines), 200))
        data = mutate_layout(sample) if k % 2 else mutate_lines(sample)
        open(pl, 'wb').write(data)
        p = subprocess.run([os.path.join(b, 'jl-diff'), pl], capture_output=True, env=ENV)
        hit, err = bad(p)
        if hit or p.returncode:
            found += 1
            keep(work, 'crash-parser-%d-%d' % (seed, k), [pl], p.stdout.decode('utf-8', 'replace') + err)
    print('fuzz: %d jsonl + %d pftrace + %d parser runs (seed %d), %d findings' % (runs, runs, runs, seed, found))
    sys.exit(1 if found else 0)


if __name__ == '__main__':
    main()
