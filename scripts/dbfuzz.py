#!/usr/bin/env python3
"""dbfuzz.py — mutation fuzzing of whole kvio databases (issue 21: a trace.db is untrusted input).

  python3 scripts/dbfuzz.py BUILD_DIR OUT_DIR [--runs N] [--seed S] [--timeout SEC] [--forger P]
                            [--dbforge PATH] [--expect-clean] [--keep-going]

BUILD_DIR holds kvio-ingest, kvio-report, kvio-export, kvio-check, kvio-gen and kvio.so (an
ASan/UBSan build as `make fuzz` makes it, or a plain one) and, for the forger mode, dbforge
(tests/dbforge.c; built into OUT_DIR/work when BUILD_DIR has none, or --dbforge). Seed databases
are ingested with BUILD_DIR's kvio-ingest: fixtures/tiny, the A/B merge of fixtures/ab,
fixtures/kv --join-by-key and a kvio-gen capture of ~30000 lines (three command chunks). For
each seed the undamaged database's outputs are the reference: kvio-report --json, kvio-report
--html, kvio-export, extension queries through the sqlite3 CLI (.load BUILD_DIR/kvio; an ASan
kvio.so is loaded with the sanitizer runtimes in LD_PRELOAD), and kvio-check (exit 0).

The format is kvio_schema_version 3 (db/chunk.h): a chunk is u32 magic "KVC3", u32 n, u64
XXH3-64 of the bytes after the 16-byte header seeded with the chunk id, then its arrays;
kvio_cmd_range(id, n, ts_min, end_max, tid_min, tid_max) is the directory the readers list the
chunks from; kvio_sum(name, rows, xxh3) sums every other table (db/valid.c).

Each run copies a seed and applies 1-3 mutations with Python's sqlite3 (the file stays a valid
SQLite database: PRAGMA quick_check). Python has no XXH3 here, so a mutated chunk keeps the
checksum bytes it had. Two modes:
  damage  (1 - --forger of the runs): the mutated file as it is: every change to a chunk or a
          summed table is damage the checksums must catch.
  forger  (--forger, default 0.5; one mutation, so that a changed output is its own): then every chunk whose bytes differ from the seed's is
          re-sealed (`dbforge DB reseal ID`: its checksum computed from its bytes as they are,
          whatever its header says) and kvio_sum is written again (`dbforge DB resum`), as a
          careful forger would: what is exercised is the checks behind the checksums (each
          command's values, the directory's values and types, the schema, the version,
          kvio-check's invariants across tables). A mutation of checksum bytes alone is undone.
A run whose content did not change is skipped. Every command runs under --timeout; each
execution is classified:
  SANITIZER    ASan/UBSan/LSan report on stderr
  CRASH        killed by a signal (or exit 128+SEGV/BUS/ABRT/FPE/ILL/TRAP)
  HANG         the timeout, or an output past 256 MiB (SIGXFSZ)
  OOM          out of memory (allocations above 2 GiB fail: ASan max_allocation_size_mb,
               else RLIMIT_AS 4 GiB)
  SILENT-WRONG exit 0 where kvio must have refused: (a) the run changed what the command
               checks before it believes it: the schema or the version (any mode); a summed
               table it checks (damage mode: report the directory, bookkeeping, objects,
               slices and args; export and kvio-check every table; the extension the
               directory and bookkeeping, unless the schema changed: a crafted view can keep a
               statement away from kvio_cmd); the chunk rows (kvio-check); or a chunk's bytes
               and the output differs (damage mode: a chunk that was read was not checked);
               or (b) the output differs and a mutation is INVALID: it broke a rule kvio's own
               databases keep (a wrong type, a dangling reference, a track that is not a slice
               track, an extent that is not the commands'...): kvio's value checks must catch
               it, in the forger mode too; or (c) kvio-check exits 0 on a run another command
               refused with the damage line, or with a mutation INVALID for kvio-check (see
               Mut: it also checks the chunk rows and the invariants the readers rely on).
  CHANGED      exit 0, output differs, but the mutations are PLAUSIBLE: consistent values kvio
               cannot tell from a real capture's (a renamed op, another existing track for a
               command, a ts inside the chunk's recorded extent, a track without a name, a
               directory row and its chunk moved to free ids by a forger); and, for the
               extension's queries only, changes confined to tables it never checks and reads
               with plain SQL (kvio_slice, kvio_obj, kvio_arg, kvio_counter, flow: the slice,
               args and counter views), or a crafted schema that keeps the statement away from
               kvio_cmd (a slice table of its own: docs/database.md "Trust": run kvio-check first)
  SAME         exit 0, output identical (the damage did not matter to that command)
  REFUSED      non-zero exit: the code and the message are recorded; exit 2 with one line
               saying "database damaged or not written by kvio" (or which kvio reads the
               version) is the wanted answer (REFUSED-OK in the summary); for the sqlite3 CLI,
               a statement failing with that line; for kvio-check, exit 2 with its DAMAGED lines
Each mutation says whether it is invalid, plausible or neutral for the readers' outputs, and
for kvio-check (e.g. the chunk row's own n: not read by the readers, compared by kvio-check).
A run is invalid when any of its mutations the forger did not undo is; a SAME of an invalid run
is fine (the damage did not reach the output) unless (a) holds.

OUT_DIR/summary.txt: counts per mutation class (and mode) x command x outcome (a run with several
mutations counts under each of its classes), the refusal messages, the SILENT-WRONG kinds and the
findings. OUT_DIR/findings/NNNN-OUTCOME-COMMAND/: trace.db (the mutated, maybe forged database),
cmd.sh (runs the commands with that outcome on it), stderr.txt, mutations.txt (the mode, the
mutations, what the forger did, the parts that changed), diff.txt; one per (outcome, first stack
frame in kvio's sources), or per (outcome, deciding mutations, forger or not) where there is no
stack. SANITIZER, CRASH, HANG, OOM and SILENT-WRONG are findings.

--expect-clean: exit 1 when there is a finding (and stop after the first run that has one,
unless --keep-going), else 0. Without it the exit status is 0 whatever was found (2: the
setup failed). Deterministic for a given --seed (the mutations, the modes and the seeds; not
the timings).
"""
import argparse, difflib, hashlib, os, re, resource, shlex, shutil, signal, sqlite3, struct, subprocess, sys, time
import random

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
I64_MAX, I64_MIN, U32_MAX = 2 ** 63 - 1, -2 ** 63, 2 ** 32 - 1
MAGIC, HDR, CHUNK_ROWS = 0x3343564b, 16, 8192  # "KVC3": u32 magic, u32 n, u64 XXH3-64 (db/chunk.h)
FIELDS = [('ts', 'q', 8), ('dur', 'q', 8), ('slba', 'q', 8), ('track', 'I', 4), ('data_len', 'I', 4),
          ('trace_id', 'I', 4), ('slba_track', 'I', 4), ('kv_id', 'I', 4), ('name', 'H', 2), ('flags', 'B', 1)]
CHF_SLBA, CHF_REAL, CHF_KV, CHF_HEADER, CHF_PAYLOAD = 1, 2, 4, 8, 16
FINDINGS = ('SANITIZER', 'CRASH', 'HANG', 'OOM', 'SILENT-WRONG')
OUTCOMES = ('SAME', 'CHANGED', 'REFUSED-OK', 'REFUSED') + FINDINGS
INVALID, PLAUSIBLE, NEUTRAL = 'invalid', 'plausible', 'neutral'


# ---- the chunk blob (db/chunk.h) -----------------------------------------------------------
# Python has no XXH3 here: a mutated chunk keeps the checksum of the bytes it had (so, as
# damage, it fails its check) until the forger mode re-seals it with `dbforge DB reseal ID`.

def al8(x):
    return (x + 7) & ~7


def layout(n):
    """[(field, typecode, size, offset)], total bytes of a chunk of n commands."""
    out, o = [], HDR
    for f, tc, sz in FIELDS:
        out.append((f, tc, sz, o))
        o += al8(sz * n)
    return out, o


def decode(b):
    """{'n': n, field: list} or None when b is not a chunk (as chunk_map decides)."""
    if not isinstance(b, bytes) or len(b) < HDR:
        return None
    magic, n = struct.unpack_from('<II', b)
    if magic != MAGIC or n > CHUNK_ROWS:
        return None
    lay, size = layout(n)
    if size != len(b):
        return None
    d = {'n': n, 'sum': b[8:HDR]}
    for f, tc, sz, o in lay:
        d[f] = list(struct.unpack_from('<%d%s' % (n, tc), b, o))
    return d


def encode(d, magic=MAGIC):
    """The blob of d, with the checksum bytes d had (stale once a value changed)."""
    n = d['n']
    lay, size = layout(n)
    b = bytearray(size)
    struct.pack_into('<II', b, 0, magic, n)
    b[8:HDR] = d.get('sum', bytes(8))
    for f, tc, sz, o in lay:
        struct.pack_into('<%d%s' % (n, tc), b, o, *d[f])
    return bytes(b)


def field_at(n, off):
    """The (field, index) that byte off of a chunk of n commands belongs to, or None (header/padding)."""
    for f, tc, sz, o in layout(n)[0]:
        if o <= off < o + sz * n:
            return f, (off - o) // sz
    return None


def extent(d):
    """kvio_cmd_range's (ts_min, end_max, tid_min, tid_max) of decoded chunk d."""
    tids = [t for t in d['trace_id'] if t]
    ends = [t + u for t, u in zip(d['ts'], d['dur'])]
    return (min(d['ts']) if d['n'] else None, max(ends) if d['n'] else None,
            min(tids) if tids else None, max(tids) if tids else None)


# ---- reading the database being mutated ----------------------------------------------------

def connect(path, steps=200000):
    """A connection whose statements stop after about steps x 1000 VM instructions (a mutation on a
    database where an earlier one made a table an endless view must not hang the fuzzer)."""
    c = sqlite3.connect(path, isolation_level=None)
    n = [0]

    def tick():
        n[0] += 1
        return n[0] > steps
    c.set_progress_handler(tick, 1000)
    return c


def q(c, sql, args=()):
    return c.execute(sql, args).fetchall()


def q1(c, sql, args=()):
    r = c.execute(sql, args).fetchone()
    return r[0] if r else None


def has_table(c, name):
    return q1(c, "SELECT type FROM sqlite_master WHERE name = ?", (name,)) == 'table'


def chunks(c):
    """[(id, n)] of the chunk rows (n: the chunk row's own; the readers take kvio_cmd_range's)."""
    return q(c, "SELECT id, n FROM kvio_cmd_chunk ORDER BY id") if has_table(c, 'kvio_cmd_chunk') else []


def dir_n(c, cid):
    """The directory's n of chunk cid (kvio_cmd_range: what the readers go by), or None."""
    if not has_table(c, 'kvio_cmd_range'):
        return None
    return q1(c, "SELECT n FROM kvio_cmd_range WHERE id = ?", (cid,))


def blob(c, cid):
    return q1(c, "SELECT data FROM kvio_cmd_chunk WHERE id = ?", (cid,))


def decoded_chunks(c):
    out = []
    for cid, n in chunks(c):
        d = decode(blob(c, cid))
        if d is not None:
            out.append((cid, d))
    return out


def ids(c, table, col='id'):
    if not has_table(c, table):
        return []
    return [r[0] for r in q(c, 'SELECT %s FROM %s WHERE %s IS NOT NULL ORDER BY 1' % (col, table, col))]


def columns(c, table):
    return [r[1] for r in q(c, 'PRAGMA table_info(%s)' % table)]


class Info:
    """What the judges need to know about the database as it is now."""

    def __init__(s, c):
        s.dec = decoded_chunks(c)
        s.names = set(ids(c, 'kvio_cmd_name'))
        s.kvs = set(ids(c, 'kvio_cmd_kv'))
        s.tracks = set(ids(c, 'kvio_track'))
        s.slice_tracks = set(r[0] for r in q(c, "SELECT id FROM kvio_track WHERE is_counter = 0")) \
            if has_table(c, 'kvio_track') else set()
        s.counter_tracks = s.tracks - s.slice_tracks
        s.cmd_tracks, s.slba_tracks, s.used_names, s.used_kv = set(), set(), set(), set()
        for _, d in s.dec:
            s.cmd_tracks.update(d['track'])
            s.slba_tracks.update(t for t in d['slba_track'] if t)
            s.used_names.update(d['name'])
            s.used_kv.update(k for k, f in zip(d['kv_id'], d['flags']) if f & CHF_KV)
        s.track_refs = set(s.cmd_tracks) | s.slba_tracks
        for t in ('kvio_slice', 'kvio_counter'):
            s.track_refs.update(ids(c, t, 'track_id'))
        s.track_refs.update(ids(c, 'kvio_track', 'parent_id'))
        s.slices = set(ids(c, 'kvio_slice'))
        s.cmd_ids = set()
        for cid, d in s.dec:
            s.cmd_ids.update(range(cid, cid + d['n']))


def relax(c, table):
    """Drop the NOT NULL constraints of table (a crafted database may have any schema)."""
    sql = q1(c, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
    if not sql or ' NOT NULL' not in sql:
        return
    schema_sql(c, "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
               (sql.replace(' NOT NULL', ''), table))


def schema_sql(c, sql, args=()):
    ver = q1(c, 'PRAGMA schema_version')
    c.execute('PRAGMA writable_schema = ON')
    c.execute(sql, args)
    c.execute('PRAGMA schema_version = %d' % (ver + 1))
    c.execute('PRAGMA writable_schema = OFF')


class Mut:
    """A mutation: its verdict for the readers' outputs; check=INVALID: it breaks what kvio-check
    checks beyond the readers' checks (the chunk rows against the directory, the invariants across
    tables: slice ids apart from command ids, slice and counter tracks, track processes and
    parents, objects and arg sets on slices, flow ends, stats' types), so kvio-check must find it
    even behind valid sums (None: no such claim; what the readers check, kvio-check checks too:
    a reader's refusal with kvio-check's exit 0 is a finding); undone: the forger mode's
    re-sealing undoes it (a checksum's bytes)."""

    def __init__(s, cls, kind, desc, verdict, check=None, undone=False):
        s.cls, s.kind, s.desc, s.verdict = cls, kind, desc, verdict
        s.check = check
        s.undone = undone

    def __str__(s):
        return '%s [%s] %s%s: %s' % (s.cls, s.kind, s.verdict, ' (kvio-check: invalid)' if s.check else '', s.desc)


# ---- judging a changed chunk ---------------------------------------------------------------

def judge_chunk(c, cid, old, new):
    """Verdict of replacing chunk cid's blob old by new (both bytes), given the database now."""
    if not isinstance(new, bytes):
        return INVALID
    dn, do = decode(new), decode(old) if isinstance(old, bytes) else None
    n = dir_n(c, cid)
    if dn is None or do is None or dn['n'] != n or do['n'] != dn['n']:
        return INVALID
    info = Info(c)
    verdict = NEUTRAL
    for f, tc, sz in FIELDS:
        for i, (a, b) in enumerate(zip(do[f], dn[f])):
            if a == b:
                continue
            flags = dn['flags'][i]
            if f == 'track':  # any slice track: kvio cannot tell a command lane from another slice track
                v = PLAUSIBLE if b in info.slice_tracks else INVALID
            elif f == 'name':
                v = PLAUSIBLE if b in info.names else INVALID
            elif f == 'kv_id':
                v = NEUTRAL if not flags & CHF_KV else PLAUSIBLE if b in info.kvs else INVALID
            elif f == 'slba':
                # any: kvio stores the u64 LBA as an i64 (one past 2^63 reads negative)
                v = NEUTRAL if not flags & CHF_SLBA else PLAUSIBLE
            elif f == 'slba_track':  # any counter track, or none
                v = PLAUSIBLE if b == 0 or b in info.counter_tracks else INVALID
            elif f == 'data_len':
                v = PLAUSIBLE
            elif f in ('ts', 'dur'):
                ts, dur = dn['ts'][i], dn['dur'][i]
                v = INVALID if ts < 0 or dur < 0 or ts + dur > I64_MAX else PLAUSIBLE
            elif f == 'trace_id':
                v = PLAUSIBLE
            else:  # flags
                v = PLAUSIBLE
                if b & ~31 or (b & CHF_HEADER and b & CHF_PAYLOAD):
                    v = INVALID
                elif b & CHF_KV and dn['kv_id'][i] not in info.kvs:
                    v = INVALID
            if v == INVALID:
                return INVALID
            if v == PLAUSIBLE:
                verdict = PLAUSIBLE
    rng = q(c, "SELECT ts_min, end_max, tid_min, tid_max FROM kvio_cmd_range WHERE id = ?", (cid,)) \
        if has_table(c, 'kvio_cmd_range') else []
    if rng and tuple(rng[0]) != extent(dn):
        return INVALID  # the recorded extent no longer matches: a reader can check it
    return verdict


def pick_chunk(c, R):
    ch = chunks(c)
    if not ch:
        return None
    cid, n = R.choice(ch)
    b = blob(c, cid)
    d = decode(b)
    return (cid, b, d) if d is not None and d['n'] else None


def set_blob(c, cid, b):
    c.execute("UPDATE kvio_cmd_chunk SET data = ? WHERE id = ?", (b, cid))


# ---- the mutations: each returns a Mut, or None when it does not apply ----------------------

def m_blob_flip(c, R):
    p = pick_chunk(c, R)
    if not p:
        return None
    cid, b, d = p
    nb = bytearray(b)
    where = []
    for _ in range(R.randint(1, 8)):
        i = R.randrange(HDR, len(nb)) if R.random() < 0.9 else R.randrange(len(nb))
        nb[i] = R.randrange(256)
        fi = field_at(d['n'], i)
        where.append('%d(%s)' % (i, '%s[%d]' % fi if fi else 'sum' if 8 <= i < HDR else 'hdr/pad'))
    nb = bytes(nb)
    if nb == b:
        return None
    v = judge_chunk(c, cid, b, nb)
    set_blob(c, cid, nb)
    return Mut('blob-flip', 'random', 'chunk %d bytes %s' % (cid, ' '.join(where)), v)


def m_blob_hdr(c, R):
    p = pick_chunk(c, R)
    if not p:
        return None
    cid, b, d = p
    nb = bytearray(b)
    r, undone = R.random(), False
    if r < 0.3:
        kind = 'magic'
        i = R.randrange(4)
        nb[i] ^= 1 << R.randrange(8)
    elif r < 0.45:
        kind, undone = 'sum', True
        nb[R.randrange(8, HDR)] ^= 1 << R.randrange(8)
    else:
        others = [n for _, n in chunks(c) if n != d['n']]
        v = R.choice([d['n'] + 1, d['n'] - 1, 0, 2 ** 31, U32_MAX, 8192, 8193] + others)
        kind = 'n=%s' % ('other' if v in others else v if v < 9000 else hex(v))
        struct.pack_into('<I', nb, 4, v & U32_MAX)
    nb = bytes(nb)
    if nb == b:
        return None
    set_blob(c, cid, nb)
    return Mut('blob-hdr', kind, 'chunk %d header' % cid, INVALID, undone=undone)


def set_elems(c, R, cls, field, values, many=0.15):
    """Set field of one (or, sometimes, every) command of a chunk to a value from values(d, i)."""
    p = pick_chunk(c, R)
    if not p:
        return None
    cid, b, d = p
    idx = range(d['n']) if R.random() < many else [R.randrange(d['n'])]
    kind, val = R.choice(values(c, d))
    for i in idx:
        d[field][i] = val(d, i) if callable(val) else val
    nb = encode(d)
    if nb == b:
        return None
    v = judge_chunk(c, cid, b, nb)
    set_blob(c, cid, nb)
    return Mut(cls, kind + ('/all' if len(idx) > 1 else ''),
               'chunk %d %s[%s] = %s' % (cid, field, 'all' if len(idx) > 1 else idx[0], kind), v)


def m_blob_track(c, R):
    def values(c, d):
        info = Info(c)
        other = sorted(info.tracks - info.cmd_tracks) or [0]
        cmd = sorted(info.cmd_tracks)
        return [('0xffffffff', U32_MAX), ('0', 0), ('2^24', 2 ** 24), ('64', 64),
                ('max+1', max(info.tracks | {0}) + 1), ('random', R.randrange(2 ** 32)),
                ('non-command-track', R.choice(other)), ('other-command-track', R.choice(cmd))]
    return set_elems(c, R, 'blob-track', 'track', values)


def m_blob_name(c, R):
    def values(c, d):
        info = Info(c)
        return [('65535', 65535), ('nnames', max(info.names | {0}) + 1), ('random', R.randrange(65536)),
                ('other-name', R.choice(sorted(info.names) or [0]))]
    return set_elems(c, R, 'blob-name', 'name', values)


def m_blob_tid(c, R):
    def values(c, d):
        return [('0', 0), ('0xffffffff', U32_MAX), ('random', R.randrange(1, 2 ** 32)),
                ('+1', lambda d, i: (d['trace_id'][i] + 1) & U32_MAX)]
    return set_elems(c, R, 'blob-tid', 'trace_id', values)


def m_blob_tsdur(c, R):
    f = R.choice(['ts', 'dur'])

    def values(c, d):
        return [('-1', -1), ('i64max', I64_MAX), ('i64min', I64_MIN), ('0', 0), ('2^62', 2 ** 62),
                ('+1', lambda d, i: min(d[f][i] + 1, I64_MAX)), ('-1rel', lambda d, i: d[f][i] - 1),
                ('+2^40', lambda d, i: d[f][i] + 2 ** 40)]
    m = set_elems(c, R, 'blob-tsdur', f, values)
    if m:
        m.kind = f + ':' + m.kind
    return m


def m_blob_field(c, R):
    f = R.choice(['slba', 'data_len', 'slba_track', 'kv_id', 'flags'])

    def values(c, d):
        info = Info(c)
        if f == 'slba':
            return [('-1', -1), ('i64max', I64_MAX), ('+1', lambda d, i: min(d['slba'][i] + 1, I64_MAX))]
        if f == 'data_len':
            return [('0', 0), ('0xffffffff', U32_MAX), ('+4096', lambda d, i: (d['data_len'][i] + 4096) & U32_MAX)]
        if f == 'slba_track':
            return [('0', 0), ('0xffffffff', U32_MAX), ('cmd-track', R.choice(sorted(info.cmd_tracks) or [1])),
                    ('other-slba-track', R.choice(sorted(info.slba_tracks) or [0]))]
        if f == 'kv_id':
            return [('0xffffffff', U32_MAX), ('max+1', max(info.kvs | {0}) + 1), ('other', R.choice(sorted(info.kvs) or [0]))]
        return [('0xff', 255), ('header+payload', lambda d, i: d['flags'][i] | CHF_HEADER | CHF_PAYLOAD),
                ('+kv', lambda d, i: d['flags'][i] | CHF_KV), ('-slba', lambda d, i: d['flags'][i] & ~CHF_SLBA),
                ('^real', lambda d, i: d['flags'][i] ^ CHF_REAL), ('+32', lambda d, i: d['flags'][i] | 32)]
    m = set_elems(c, R, 'blob-field', f, values)
    if m:
        m.kind = f + ':' + m.kind
    return m


def m_blob_cut(c, R):
    p = pick_chunk(c, R)
    if not p:
        return None
    cid, b, d = p
    k = R.choice([0, 1, 4, 7, 8, len(b) - 1, len(b) - 8, R.randrange(len(b))])
    set_blob(c, cid, b[:k])
    return Mut('blob-cut', 'len=%s' % (k if k < 16 else 'len-%d' % (len(b) - k) if len(b) - k < 16 else 'random'),
               'chunk %d cut to %d of %d bytes' % (cid, k, len(b)), INVALID)


def m_blob_grow(c, R):
    p = pick_chunk(c, R)
    if not p:
        return None
    cid, b, d = p
    r = R.random()
    if r < 0.35:
        k = R.choice([1, 7, 8, 4096, R.randrange(1, 65536)])
        nb, kind = b + bytes(k), 'zeros'
    elif r < 0.6:
        k = R.choice([1, 8, 4096, R.randrange(1, 65536)])
        nb, kind = b + bytes(R.randrange(256) for _ in range(k)), 'garbage'
    else:  # a well-formed chunk with more rows: its ids run into the next chunk's (or the slices')
        k = R.choice([1, 2, 100, 8192 - d['n'] if d['n'] < 8192 else 1])
        for f, _, _ in FIELDS:
            d[f] += [d[f][-1]] * k
        d['n'] += k
        nb, kind = encode(d), 'rows+%s' % (k if k in (1, 2, 100) else 'to8192')
        if R.random() < 0.7:  # the chunk row's n and the directory's: a forger's consistent chunk
            c.execute("UPDATE kvio_cmd_chunk SET n = ? WHERE id = ?", (d['n'], cid))
            c.execute("UPDATE kvio_cmd_range SET n = ? WHERE id = ?", (d['n'], cid))
            kind += '+n'
            set_blob(c, cid, nb)
            # copies of the last command at fresh ids: plausible unless the ids run into another
            # chunk's (the directory's check) or a slice's, or a flow names them
            v = PLAUSIBLE if free_ids(c, cid, cid + d['n'] - k, cid + d['n']) else INVALID
            hit = has_table(c, 'kvio_slice') and cid + d['n'] <= I64_MAX and \
                q1(c, "SELECT count(*) FROM kvio_slice WHERE id >= ? AND id < ?", (cid + d['n'] - k, cid + d['n']))
            return Mut('blob-grow', kind, 'chunk %d grown from %d to %d bytes' % (cid, len(b), len(nb)), v,
                       check=INVALID if hit else None)
    set_blob(c, cid, nb)
    return Mut('blob-grow', kind, 'chunk %d grown from %d to %d bytes' % (cid, len(b), len(nb)), INVALID)


def m_blob_swap(c, R):
    ch = chunks(c)
    if len(ch) < 2:
        return None
    (a, na), (b2, nb) = R.sample(ch, 2)
    ba, bb = blob(c, a), blob(c, b2)
    if ba == bb:
        return None
    set_blob(c, a, bb)
    set_blob(c, b2, ba)
    kind = 'data'
    if R.random() < 0.4 and na != nb:
        for t in ('kvio_cmd_chunk', 'kvio_cmd_range'):
            c.execute("UPDATE %s SET n = ? WHERE id = ?" % t, (nb, a))
            c.execute("UPDATE %s SET n = ? WHERE id = ?" % t, (na, b2))
        kind = 'data+n'
    return Mut('blob-swap', kind, 'chunks %d and %d swapped (%s)' % (a, b2, kind), INVALID)


def m_blob_type(c, R):
    ch = chunks(c)
    if not ch:
        return None
    cid, n = R.choice(ch)
    kind = R.choice(['text', 'int', 'null', 'empty', 'zeroblob16M', 'dup-other'])
    if kind == 'null':
        relax(c, 'kvio_cmd_chunk')
    val = {'text': 'KVCK' * 10, 'int': 7, 'null': None, 'empty': b'', 'zeroblob16M': bytes(16 << 20)}.get(kind)
    if kind == 'dup-other':
        others = [x for x, _ in ch if x != cid]
        if not others:
            return None
        o = R.choice(others)
        c.execute("UPDATE kvio_cmd_chunk SET data = (SELECT data FROM kvio_cmd_chunk WHERE id = ?),"
                  " n = (SELECT n FROM kvio_cmd_chunk WHERE id = ?) WHERE id = ?", (o, o, cid))
        c.execute("UPDATE kvio_cmd_range SET n = (SELECT n FROM kvio_cmd_range WHERE id = ?) WHERE id = ?", (o, cid))
    else:
        set_blob(c, cid, val)
    return Mut('blob-type', kind, 'chunk %d data = %s' % (cid, kind), INVALID)


def free_ids(c, cid, lo, hi):
    """Whether command ids lo..hi-1 (of chunk cid, as it is now in the directory) are free: inside no
    other chunk (the directory's rows), no kvio_slice id, and no flow names them."""
    if lo < 1 or hi > 2 ** 53:
        return False
    if has_table(c, 'kvio_cmd_range') and q1(c, "SELECT count(*) FROM kvio_cmd_range WHERE id <> ? AND id < ? AND"
                                                " id + n > ?", (cid, hi, lo)):
        return False
    if has_table(c, 'kvio_slice') and q1(c, "SELECT count(*) FROM kvio_slice WHERE id >= ? AND id < ?", (lo, hi)):
        return False
    if has_table(c, 'flow') and q1(c, "SELECT count(*) FROM flow WHERE slice_out >= ?1 AND slice_out < ?2 OR"
                                      " slice_in >= ?1 AND slice_in < ?2", (lo, hi)):
        return False
    return True


def m_chunk_n(c, R):
    ch = chunks(c)
    if not ch:
        return None
    cid, n = R.choice(ch)
    kind, v = R.choice([('0', 0), ('-1', -1), ('2^31', 2 ** 31), ('2^32+n', 2 ** 32 + n), ('n+1', n + 1),
                        ('n-1', n - 1), ('i64max', I64_MAX), ('text', 'x'), ('text-n', '%d ' % n),
                        ('real', n + 0.5), ('null', None)])
    if v == n:
        return None
    # the chunk row's own n: the readers go by the directory's (not read: neutral), kvio-check
    # compares the two; the directory's: every reader reads it
    t = R.choice(['kvio_cmd_chunk', 'kvio_cmd_range'])
    if not has_table(c, t):
        return None
    if v is None:
        relax(c, t)
    c.execute("UPDATE %s SET n = ? WHERE id = ?" % t, (v, cid))
    if t == 'kvio_cmd_chunk':
        return Mut('chunk-n', 'row:' + kind, 'chunk row %d n %d -> %r' % (cid, n, v), NEUTRAL, check=INVALID)
    return Mut('chunk-n', 'dir:' + kind, 'kvio_cmd_range %d n %d -> %r' % (cid, n, v), INVALID)


def m_chunk_id(c, R):
    ch = chunks(c)
    if not ch:
        return None
    k = R.randrange(len(ch))
    cid, n = ch[k]
    prev = ch[k - 1] if k else None
    nxt = ch[k + 1] if k + 1 < len(ch) else None
    last = ch[-1]
    cand = [('i64max', I64_MAX), ('id+n overflows', I64_MAX - n // 2), ('-1', -1), ('0', 0),
            ('gap', last[0] + last[1] + 1000), ('+1', cid + 1), ('-1rel', cid - 1), ('i64min', I64_MIN),
            ('2^53', 2 ** 53)]
    cand = [(k_, v_) for k_, v_ in cand if I64_MIN <= v_ <= I64_MAX]  # (an earlier mutation's id near a bound)
    if prev:
        cand.append(('overlap-prev', prev[0] + 1))
    if nxt:
        cand.append(('overlap-next', nxt[0] - 1))
    kind, nid = R.choice(cand)
    if q1(c, "SELECT count(*) FROM kvio_cmd_chunk WHERE id = ?", (nid,)):
        return None
    c.execute("UPDATE kvio_cmd_chunk SET id = ? WHERE id = ?", (nid, cid))
    v = INVALID  # the directory names a chunk row that is not there
    if R.random() < 0.5 and has_table(c, 'kvio_cmd_range') and \
            not q1(c, "SELECT count(*) FROM kvio_cmd_range WHERE id = ?", (nid,)):
        c.execute("UPDATE kvio_cmd_range SET id = ? WHERE id = ?", (nid, cid))
        kind += '+range'
        # the commands renumbered: its checksum's seed is its id (only a forger re-seals it);
        # plausible when the old ids were named by no flow and the new ones are free
        dn = dir_n(c, nid) or 0
        was_free = not (has_table(c, 'flow') and q1(c, "SELECT count(*) FROM flow WHERE slice_out >= ?1 AND"
                                                       " slice_out < ?2 OR slice_in >= ?1 AND slice_in < ?2",
                                                       (cid, cid + dn)))
        end = min(nid + dn, I64_MAX) if isinstance(dn, int) else nid  # an end past int64 binds as none
        if isinstance(dn, int) and dn > 0 and was_free and free_ids(c, nid, nid, end):
            v = PLAUSIBLE
        elif isinstance(dn, int) and 0 < dn and has_table(c, 'kvio_slice') and q1(
                c, "SELECT count(*) FROM kvio_slice WHERE id >= ? AND id < ?", (nid, end)):
            return Mut('chunk-id', kind, 'chunk %d moved to %d (onto slice ids)' % (cid, nid), v, check=INVALID)
    return Mut('chunk-id', kind, 'chunk %d moved to %d' % (cid, nid), v, check=INVALID)  # chunk rows or flow ends


def m_range(c, R):
    if not has_table(c, 'kvio_cmd_range'):
        return None
    rows = q(c, "SELECT id, n, ts_min, end_max, tid_min, tid_max FROM kvio_cmd_range ORDER BY id")
    if not rows:
        return None
    rid, n, ts_min, end_max, tid_min, tid_max = R.choice(rows)
    kind = R.choice(['delete', 'drop-table', 'stray-row', 'null-tid', 'ts_min+1', 'ts_min-1', 'end_max-1',
                     'end_max+1', 'tid_min+1', 'tid_max-1', 'i64max', 'text', 'null-ts', 'n=0', 'n=real'])
    if kind == 'delete':
        # the readers list the chunks from the directory: a chunk without its row is not read; a
        # smaller capture to them unless a flow names its commands; kvio-check compares the rows
        named = has_table(c, 'flow') and isinstance(n, int) and q1(
            c, "SELECT count(*) FROM flow WHERE slice_out >= ?1 AND slice_out < ?2 OR slice_in >= ?1 AND"
               " slice_in < ?2", (rid, rid + n))
        c.execute("DELETE FROM kvio_cmd_range WHERE id = ?", (rid,))
        return Mut('range', kind, 'kvio_cmd_range row %d deleted' % rid, INVALID if named else PLAUSIBLE,
                   check=INVALID)
    if kind == 'drop-table':
        c.execute("DROP TABLE kvio_cmd_range")
        return Mut('range', kind, 'kvio_cmd_range dropped', INVALID)
    if kind == 'stray-row':
        sid = max(r[0] for r in rows) + 100000
        c.execute("INSERT INTO kvio_cmd_range VALUES (?, 1, 0, 1, NULL, NULL)", (sid,))
        return Mut('range', kind, 'kvio_cmd_range row %d without a chunk' % sid, INVALID)
    col, val = {'null-tid': ('tid_min', None), 'ts_min+1': ('ts_min', ts_min + 1), 'ts_min-1': ('ts_min', ts_min - 1),
                'end_max-1': ('end_max', end_max - 1), 'end_max+1': ('end_max', end_max + 1),
                'tid_min+1': ('tid_min', (tid_min or 0) + 1), 'tid_max-1': ('tid_max', (tid_max or 0) - 1),
                'i64max': (R.choice(['ts_min', 'end_max', 'tid_min', 'tid_max']), I64_MAX),
                'text': (R.choice(['ts_min', 'end_max', 'tid_max', 'n']), 'x'), 'null-ts': ('end_max', None),
                'n=0': ('n', 0), 'n=real': ('n', (n or 0) + 0.5)}[kind]
    if val is None:
        relax(c, 'kvio_cmd_range')
    c.execute("UPDATE kvio_cmd_range SET %s = ? WHERE id = ?" % col, (val, rid))
    d = decode(blob(c, rid)) if q1(c, "SELECT count(*) FROM kvio_cmd_chunk WHERE id = ?", (rid,)) else None
    row = tuple(q(c, "SELECT ts_min, end_max, tid_min, tid_max FROM kvio_cmd_range WHERE id = ?", (rid,))[0])
    if col != 'n' and d is not None and row == extent(d):
        return None  # e.g. tid_min NULL on a chunk without tagged commands: no change in meaning
    return Mut('range', kind, 'kvio_cmd_range %d %s = %r' % (rid, col, val), INVALID)


def m_sum(c, R):
    """kvio_sum itself (the forger mode writes it again: undone there, but for a dropped table)."""
    if not has_table(c, 'kvio_sum'):
        return None
    rows = q(c, "SELECT name, rows, xxh3 FROM kvio_sum ORDER BY name")
    if not rows:
        return None
    name, nrows, x = R.choice(rows)
    kind = R.choice(['xxh3+1', 'rows+1', 'rows-1', 'delete', 'xxh3=text', 'xxh3=real', 'add-row', 'drop'])
    if kind == 'drop':
        c.execute("DROP TABLE kvio_sum")
        return Mut('sum', kind, 'kvio_sum dropped', INVALID)
    if kind == 'add-row':
        c.execute("INSERT INTO kvio_sum VALUES ('fuzz_table', 1, 1)")
        return Mut('sum', kind, 'kvio_sum row for no table', NEUTRAL, undone=True)
    if kind == 'delete':
        c.execute("DELETE FROM kvio_sum WHERE name = ?", (name,))
    else:
        col, val = {'xxh3+1': ('xxh3', (x + 1) if x < I64_MAX else 0), 'rows+1': ('rows', nrows + 1),
                    'rows-1': ('rows', nrows - 1), 'xxh3=text': ('xxh3', str(x)), 'xxh3=real': ('xxh3', x + 0.5)}[kind]
        c.execute("UPDATE kvio_sum SET %s = ? WHERE name = ?" % col, (val, name))
    return Mut('sum', '%s:%s' % (name, kind), 'kvio_sum %s %s' % (name, kind), INVALID, undone=True)


def m_name(c, R):
    if not has_table(c, 'kvio_cmd_name'):
        return None
    info = Info(c)
    rows = q(c, "SELECT id, name FROM kvio_cmd_name ORDER BY id")
    kind = R.choice(['delete', 'rename-fresh', 'rename-dup', 'null', 'int', 'blob', 'empty', 'long',
                     'id=2^40', 'id=-1', 'id=70000', 'add-id-2^40', 'add-id-2^62', 'add-id--5'])
    if kind.startswith('add-id'):
        nid = {'add-id-2^40': 2 ** 40, 'add-id-2^62': 2 ** 62, 'add-id--5': -5}[kind]
        c.execute("INSERT INTO kvio_cmd_name VALUES (?, 'stray')", (nid,))
        return Mut('name', kind, 'kvio_cmd_name row %d added (no command names it; ids are 0..65535)' % nid, INVALID)
    if not rows:
        return None
    nid, name = R.choice(rows)
    used = nid in info.used_names
    if kind == 'delete':
        c.execute("DELETE FROM kvio_cmd_name WHERE id = ?", (nid,))
        return Mut('name', kind, 'kvio_cmd_name %d (%s) deleted' % (nid, name), INVALID if used else NEUTRAL)
    if kind.startswith('id='):
        nv = {'id=2^40': 2 ** 40, 'id=-1': -1, 'id=70000': 70000}[kind]
        c.execute("UPDATE kvio_cmd_name SET id = ? WHERE id = ?", (nv, nid))
        return Mut('name', kind, 'kvio_cmd_name %d moved to %d' % (nid, nv), INVALID if used else NEUTRAL)
    others = [r[1] for r in rows if r[0] != nid]
    if kind == 'rename-dup' and not others:
        return None
    val = {'rename-fresh': 'fuzzop%d' % R.randrange(1000), 'rename-dup': others[0] if others else None, 'null': None,
           'int': 5, 'blob': b'write', 'empty': '', 'long': 'w' * (1 << 20)}[kind]
    if val is None:
        relax(c, 'kvio_cmd_name')
    c.execute("UPDATE kvio_cmd_name SET name = ? WHERE id = ?", (val, nid))
    # a name longer than 64 bytes (db/chunk.h CHUNK_NAME_MAX) is not kvio's: dir.c refuses it, used or not;
    # an integer is stored as its text (the column's TEXT affinity: 5 -> '5'), a name an op may have
    v = PLAUSIBLE if kind in ('rename-fresh', 'empty', 'int') else INVALID
    return Mut('name', kind, 'kvio_cmd_name %d (%s) = %s' % (nid, name, kind), v if used or kind == 'long' else NEUTRAL)


def m_kv(c, R):
    if not has_table(c, 'kvio_cmd_kv'):
        return None
    rows = ids(c, 'kvio_cmd_kv')
    if not rows:
        return None
    info = Info(c)
    kid = R.choice(rows)
    used = kid in info.used_kv
    kind = R.choice(['delete', 'key_len=-1', 'key_len=text', 'key_len=i64max', 'key_len=real', 'value_len=text',
                     'value_len=-1', 'key_hex=blob', 'key_hex=int', 'key_hex=long', 'key_hex=null'])
    if kind == 'delete':  # kvio numbers the rows 1..rows: only the last one's can go unnoticed
        c.execute("DELETE FROM kvio_cmd_kv WHERE id = ?", (kid,))
        return Mut('kv', kind, 'kvio_cmd_kv %d deleted' % kid, INVALID if used or kid != max(rows) else NEUTRAL)
    col, k = kind.split('=')
    val = {'-1': -1, 'text': 'x', 'i64max': I64_MAX, 'real': 1.5, 'blob': b'\x01\x02', 'int': 12,
           'long': 'ab' * (1 << 19), 'null': None}[k]
    c.execute("UPDATE kvio_cmd_kv SET %s = ? WHERE id = ?" % col, (val, kid))
    # what kvio writes: key_hex text or NULL (a line with lengths only), lengths any int64 or NULL
    # (ingest/records.c takes them as the line has them, -1 too): only another type is not kvio's
    # (key_hex=int: its TEXT affinity stores 12 as the text '12', the key_hex a line "12" writes:
    # seed 23 run 160's false SILENT-WRONG)
    v = PLAUSIBLE if kind in ('key_hex=long', 'key_len=i64max', 'key_hex=null', 'key_len=-1', 'value_len=-1',
                              'key_hex=int') else INVALID
    return Mut('kv', kind, 'kvio_cmd_kv %d %s' % (kid, kind), v if used else NEUTRAL)


def m_track(c, R):
    if not has_table(c, 'kvio_track'):
        return None
    info = Info(c)
    rows = ids(c, 'kvio_track')
    kind = R.choice(['delete', 'id=max+1000', 'id=2^31', 'id=-1', 'id=2^40', 'upid=99', 'upid=null', 'is_counter^1',
                     'name=null', 'name=int', 'name=blob', 'parent=self', 'parent=missing', 'add-id-2^31',
                     'add-id-2^62'])
    if kind.startswith('add-id'):
        tid = 2 ** 31 if kind == 'add-id-2^31' else 2 ** 62
        c.execute("INSERT INTO kvio_track(id, name, upid, is_counter) VALUES (?, 'stray', 1, 0)", (tid,))
        return Mut('track', kind, 'kvio_track %d added (ids beyond the rows + 256)' % tid, INVALID)
    if not rows:
        return None
    tid = R.choice(rows) if R.random() < 0.5 or not info.cmd_tracks else R.choice(sorted(info.cmd_tracks & set(rows)) or rows)
    used = tid in info.track_refs or q1(c, "SELECT count(*) FROM kvio_track WHERE parent_id = ?", (tid,))
    if kind == 'delete':
        c.execute("DELETE FROM kvio_track WHERE id = ?", (tid,))
        return Mut('track', kind, 'kvio_track %d deleted' % tid, INVALID if used else NEUTRAL,
                   check=INVALID if used else None)
    if kind.startswith('id='):
        nv = {'id=max+1000': max(rows) + 1000, 'id=2^31': 2 ** 31, 'id=-1': -1, 'id=2^40': 2 ** 40}[kind]
        if nv in rows:
            return None
        c.execute("UPDATE kvio_track SET id = ? WHERE id = ?", (nv, tid))
        far = nv < 1 or nv > len(rows) + 256  # dir.c: ids 1..rows + 256
        return Mut('track', kind, 'kvio_track %d moved to %d' % (tid, nv), INVALID if used or far else NEUTRAL)
    old = q(c, "SELECT upid, is_counter, name, parent_id FROM kvio_track WHERE id = ?", (tid,))[0]
    if kind == 'is_counter^1':
        c.execute("UPDATE kvio_track SET is_counter = 1 - is_counter WHERE id = ?", (tid,))
    else:
        col, k = kind.split('=')
        col = {'parent': 'parent_id'}.get(col, col)
        val = {'99': 99, 'null': None, 'int': 7, 'blob': b'writes', 'self': tid, 'missing': max(rows) + 77}[k]
        cur = old[{'upid': 0, 'name': 2, 'parent_id': 3}[col]]
        if cur == val:
            return None
        c.execute("UPDATE kvio_track SET %s = ? WHERE id = ?" % col, (val, tid))
        if kind == 'name=null':  # kvio writes tracks without a name (NULL) itself
            return Mut('track', kind, 'kvio_track %d %s' % (tid, kind), PLAUSIBLE)
        if kind == 'name=int' and q1(c, "SELECT typeof(name) FROM kvio_track WHERE id = ?", (tid,)) == 'text':
            # name is a TEXT column: its affinity stores 7 as the text '7', a track renamed, which
            # kvio cannot tell from a name of its own (seed 3 run 17: the export's track name changed)
            return Mut('track', kind, 'kvio_track %d %s (stored as text)' % (tid, kind), PLAUSIBLE)
    return Mut('track', kind, 'kvio_track %d %s' % (tid, kind), INVALID,  # track processes, parents; slice tracks
               check=INVALID if kind in ('upid=99', 'parent=self', 'parent=missing') or kind == 'is_counter^1' and used
               else None)


OBJ_INT = {'trace_id', 'bytes', 'slot_offset', 'rank', 'tp_rank', 'tp_world', 'n_cmds', 'occurrence'}
OBJ_INT_NULL = {'rank', 'tp_rank', 'tp_world', 'occurrence'}  # NULL where the capture has none (kvio writes it)
OBJ_TEXT = {'op', 'part', 'fmt', 'chunk', 'tp_chunk', 'key'}  # part NULL: a record without one (named 'kv')
OBJ_ANY = {'error', 'instance', 'producer_pid'}


def wrong_value(R, now, kind_hint=None):
    """A value of another type than now (or an absurd one of the same type): (kind, value)."""
    if isinstance(now, int) and not isinstance(now, bool):
        return R.choice([('text', 'x%d' % now), ('blob', b'\x00\x01'), ('real', now + 0.5), ('i64max', I64_MAX),
                         ('i64min', I64_MIN), ('-1', -1), ('null', None)])
    if isinstance(now, float):
        return R.choice([('text', 'x'), ('blob', b'\x00'), ('int', 7), ('nan-ish', 1e308), ('null', None)])
    if isinstance(now, str):
        return R.choice([('int', 12345), ('blob', now.encode() or b'\x00'), ('empty-blob', b''), ('real', 2.5),
                         ('null', None), ('long', 'k' * (1 << 20))])
    if now is None:
        return R.choice([('int', I64_MAX), ('text', 'x'), ('blob', b'\x01')])
    return ('text', 'x')


def m_obj(c, R):
    if not has_table(c, 'kvio_obj'):
        return None
    rows = ids(c, 'kvio_obj')
    if not rows:
        return None
    oid = R.choice(rows)
    col = R.choice(columns(c, 'kvio_obj'))
    now = q1(c, 'SELECT %s FROM kvio_obj WHERE id = ?' % col, (oid,))
    if col == 'id':
        nid = max(rows) + 1000
        if nid > I64_MAX:  # (an earlier mutation moved a row near the top)
            return None
        c.execute("UPDATE kvio_obj SET id = ? WHERE id = ?", (nid, oid))
        return Mut('obj', 'id-moved', 'kvio_obj %d moved to %d (no slice)' % (oid, nid), INVALID, check=INVALID)
    kind, val = wrong_value(R, now)
    if val == now and type(val) == type(now):
        return None
    if col in OBJ_ANY:
        v = PLAUSIBLE
    elif col in OBJ_INT:
        v = PLAUSIBLE if isinstance(val, int) and isinstance(now, int) or val is None and col in OBJ_INT_NULL \
            else INVALID
    elif col in OBJ_TEXT:
        v = PLAUSIBLE if kind == 'long' or (val is None and col in ('part', 'fmt', 'chunk', 'tp_chunk')) else INVALID
    else:  # op_latency_ms
        v = PLAUSIBLE if isinstance(val, float) else INVALID
    c.execute('UPDATE kvio_obj SET %s = ? WHERE id = ?' % col, (val, oid))
    return Mut('obj', '%s=%s' % (col, kind), 'kvio_obj %d %s: %r -> %s' % (oid, col, now, kind), v)


def m_slice(c, R):
    if not has_table(c, 'kvio_slice'):
        return None
    info = Info(c)
    rows = sorted(info.slices)
    if not rows:
        return None
    sid = R.choice(rows)
    col = R.choice(['ts', 'dur', 'track_id', 'name', 'depth', 'parent_id', 'arg_set_id', 'category', 'id'])
    now = q1(c, 'SELECT %s FROM kvio_slice WHERE id = ?' % col, (sid,))
    if col == 'id':
        nid = max(info.slices | info.cmd_ids) + 1000
        if nid > I64_MAX:  # (seed 26: an earlier mutation moved a chunk near 2^63)
            return None
        named = sum(q1(c, sql, (sid,)) or 0 for sql in (
            "SELECT count(*) FROM kvio_obj WHERE id = ?", "SELECT count(*) FROM kvio_arg WHERE arg_set_id = ?",
            "SELECT count(*) FROM flow WHERE ?1 IN (slice_out, slice_in)") if has_table(c, sql.split()[3]))
        c.execute("UPDATE kvio_slice SET id = ? WHERE id = ?", (nid, sid))
        return Mut('slice', 'id-moved', 'kvio_slice %d moved to %d' % (sid, nid), INVALID,
                   check=INVALID if named else None)
    if col in ('track_id', 'parent_id', 'arg_set_id') and R.random() < 0.4:
        kind, val = 'missing', max(info.tracks | info.slices | info.cmd_ids | {0}) + 999
    elif col == 'ts' and R.random() < 0.3:
        kind, val = '+1', now + 1
    else:
        kind, val = wrong_value(R, now)
    if val == now and type(val) == type(now):
        return None
    if val is None:
        relax(c, 'kvio_slice')
    v = PLAUSIBLE if kind == '+1' or (kind == 'long' and col in ('name', 'category')) else INVALID
    if col in ('category', 'name') and val is None:
        v = PLAUSIBLE if col == 'category' else INVALID
    if col in ('category', 'name') and kind in ('int', 'real'):
        # TEXT columns: their affinity stores 12345 as the text '12345', a renamed slice
        # (seed 19 run 226: an object slice's name; the export's name changed)
        v = PLAUSIBLE
    if col == 'parent_id' and now is None and kind in ('null',):
        return None
    info_t = Info(c)
    chk = INVALID if col == 'track_id' and val not in info_t.slice_tracks else None  # slice tracks
    c.execute('UPDATE kvio_slice SET %s = ? WHERE id = ?' % col, (val, sid))
    return Mut('slice', '%s=%s' % (col, kind), 'kvio_slice %d %s: %r -> %s' % (sid, col, now, kind), v, check=chk)


def m_meta(c, R):
    if not has_table(c, 'metadata'):
        return None
    names = [r[0] for r in q(c, "SELECT name FROM metadata ORDER BY name")]
    if 'kvio_schema_version' in names and R.random() < 0.6:
        kind, val = R.choice([('1', 1), ('99', 99), ('text', 'x'), ('real', 2.5), ('null', None), ('blob', b'2'),
                              ('2^32+2', 2 ** 32 + 2), ('delete', 'delete'), ('text-2', '2x'), ('-2', -2)])
        if kind == 'delete':
            c.execute("DELETE FROM metadata WHERE name = 'kvio_schema_version'")
        else:
            c.execute("UPDATE metadata SET int_value = ? WHERE name = 'kvio_schema_version'", (val,))
        return Mut('meta', 'version=' + kind, 'metadata kvio_schema_version %s' % kind, INVALID)
    name = R.choice(names) if names else None
    if not name:
        return None
    kind = R.choice(['delete', 'int=0', 'int=-1', 'int=99', 'int=2^31', 'int=text', 'str=other', 'str=null',
                     'str=int', 'key_type'])
    if kind == 'delete':
        c.execute("DELETE FROM metadata WHERE name = ?", (name,))
    elif kind == 'key_type':
        c.execute("UPDATE metadata SET key_type = 'blob' WHERE name = ?", (name,))
    else:
        col, k = kind.split('=')
        val = {'0': 0, '-1': -1, '99': 99, '2^31': 2 ** 31, 'text': 'x', 'other': 'bogus', 'null': None, 'int': 3}[k]
        c.execute("UPDATE metadata SET %s_value = ? WHERE name = ?" % col, (val, name))
    return Mut('meta', '%s:%s' % (name, kind), 'metadata %s %s' % (name, kind), INVALID)


def m_stats(c, R):
    if not has_table(c, 'kvio_stats'):
        return None
    rows = q(c, "SELECT label, name, value FROM kvio_stats ORDER BY label, name")
    if not rows:
        return None
    label, name, now = R.choice(rows)
    kind, val = R.choice([('-1', -1), ('i64max', I64_MAX), ('i64min', I64_MIN), ('text', 'x'), ('real', 1.5),
                          ('blob', b'\x01'), ('null', None), ('delete', 0), ('unknown-name', 0), ('unknown-label', 0)])
    if kind == 'delete':
        c.execute("DELETE FROM kvio_stats WHERE label = ? AND name = ?", (label, name))
        v = PLAUSIBLE if name == 'drops' else INVALID
    elif kind == 'unknown-name':
        c.execute("INSERT INTO kvio_stats VALUES (?, 'fuzz_stat', 5)", (label,))
        v, name = INVALID, 'fuzz_stat'
    elif kind == 'unknown-label':
        c.execute("UPDATE kvio_stats SET label = 'fuzzlabel' WHERE label = ? AND name = ?", (label, name))
        v = INVALID
    else:
        if val == now:
            return None
        c.execute("UPDATE kvio_stats SET value = ? WHERE label = ? AND name = ?", (val, label, name))
        v = PLAUSIBLE if kind == 'i64max' else INVALID  # a count kvio cannot tell from a real one
        if kind in ('-1', 'i64min') and name == 'base_ns':
            v = PLAUSIBLE
    bad = kind in ('text', 'real', 'blob', 'null') or kind in ('-1', 'i64min') and name != 'base_ns'
    return Mut('stats', kind, 'kvio_stats %s.%s: %r -> %s' % (label, name, now, kind), v,
               check=INVALID if bad else None)  # kvio-check: stats are integers, >= 0 but base_ns


def m_flow(c, R):
    if not has_table(c, 'flow'):
        return None
    rows = ids(c, 'flow')
    info = Info(c)
    missing = max(info.slices | info.cmd_ids | {0}) + 4242
    kind = R.choice(['out=missing', 'in=missing', 'out=-1', 'in=i64max', 'out=text', 'in=null', 'trace_id=text',
                     'add-missing', 'dup'])
    if kind == 'add-missing' or not rows:
        c.execute("INSERT INTO flow(slice_out, slice_in, trace_id) VALUES (?, ?, 1)", (missing, missing + 1))
        return Mut('flow', 'add-missing', 'flow %d -> %d added (no such slices)' % (missing, missing + 1), INVALID, check=INVALID)
    fid = R.choice(rows)
    if kind == 'dup':
        c.execute("INSERT INTO flow(type, slice_out, slice_in, trace_id, arg_set_id)"
                  " SELECT type, slice_out, slice_in, trace_id, arg_set_id FROM flow WHERE id = ?", (fid,))
        return Mut('flow', 'dup', 'flow %d duplicated' % fid, INVALID)
    col, k = kind.split('=')
    col = {'out': 'slice_out', 'in': 'slice_in'}.get(col, col)
    val = {'missing': missing, '-1': -1, 'i64max': I64_MAX, 'text': 'x', 'null': None}[k]
    if val is None:
        relax(c, 'flow')
    c.execute("UPDATE flow SET %s = ? WHERE id = ?" % col, (val, fid))
    return Mut('flow', kind, 'flow %d %s' % (fid, kind), INVALID,
               check=INVALID if col in ('slice_out', 'slice_in') else None)  # flow ends


VIEW_TABLES = ['flow', 'kvio_stats', 'kvio_track', 'kvio_cmd_name', 'kvio_slice', 'kvio_obj', 'metadata',
               'kvio_cmd_range', 'kvio_cmd_chunk', 'kvio_file', 'kvio_counter', 'kvio_arg', 'kvio_cmd_kv', 'process',
               'thread', 'kvio_warning']


def m_schema_view(c, R):
    t = R.choice([x for x in VIEW_TABLES if has_table(c, x)] or [None])
    if not t:
        return None
    cols = columns(c, t)
    kind = R.choices(['same', 'different', 'infinite'], [3, 3, 2])[0]
    c.execute('CREATE TABLE fuzz_%s AS SELECT * FROM %s' % (t, t))
    c.execute('DROP TABLE %s' % t)
    if kind == 'same':  # the same rows, but not kvio's statement: the schema check's
        c.execute('CREATE VIEW %s AS SELECT * FROM fuzz_%s' % (t, t))
        v = INVALID
    elif kind == 'different':
        # every other row, the first column's values offset
        c.execute('CREATE VIEW %s(%s) AS SELECT %s FROM fuzz_%s WHERE rowid %% 2 = 0' %
                  (t, ', '.join(cols), ', '.join(cols[1:] and ['%s + 1' % cols[0]] + cols[1:] or cols), t))
        v = INVALID
    else:
        c.execute('CREATE VIEW %s(%s) AS WITH RECURSIVE fz(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM fz)'
                  ' SELECT %s FROM fz' % (t, ', '.join(cols), ', '.join('x' for _ in cols)))
        v = INVALID
    return Mut('schema-view', '%s:%s' % (t, kind), 'table %s replaced by a view (%s rows)' % (t, kind), v)


def m_schema_trigger(c, R):
    t = R.choice([x for x in VIEW_TABLES if has_table(c, x)] or [None])
    if not t:
        return None
    c.execute('CREATE TRIGGER fuzz_trg AFTER INSERT ON %s BEGIN SELECT RAISE(ABORT, \'fuzz\'); END' % t)
    return Mut('schema-trigger', t, 'a trigger on %s (kvio refuses any)' % t, INVALID)


def m_schema_columns(c, R):
    t = R.choice([x for x in VIEW_TABLES if has_table(c, x)] or [None])
    if not t:
        return None
    c.execute('DROP TABLE %s' % t)
    c.execute('CREATE TABLE %s(a INTEGER PRIMARY KEY, b, c)' % t)
    c.execute('INSERT INTO %s VALUES (1, 2, 3), (4, \'x\', NULL)' % t)
    return Mut('schema-columns', t, 'table %s with other columns (a, b, c)' % t, INVALID)


def m_schema_slice(c, R):
    kind = R.choice(['slice-table', 'slice-view-other', 'args-view-other', 'counter-drop', 'track-view-other'])
    if kind == 'slice-table':
        c.execute('DROP VIEW slice')
        c.execute('CREATE TABLE slice AS SELECT id, \'__intrinsic_slice\' AS type, ts, dur, track_id, category, name,'
                  ' depth, NULL AS stack_id, NULL AS parent_stack_id, parent_id, arg_set_id, NULL AS thread_ts,'
                  ' NULL AS thread_dur FROM kvio_slice')
    elif kind == 'slice-view-other':
        c.execute('DROP VIEW slice')
        c.execute('CREATE VIEW slice AS SELECT id, \'__intrinsic_slice\' AS type, ts, dur * 2 AS dur, track_id,'
                  ' category, name, depth, NULL AS stack_id, NULL AS parent_stack_id, parent_id, arg_set_id,'
                  ' NULL AS thread_ts, NULL AS thread_dur FROM kvio_slice')
    elif kind == 'args-view-other':
        c.execute('DROP VIEW args')
        c.execute('CREATE VIEW args AS SELECT 1 AS arg_set_id, \'debug.x\' AS flat_key, \'debug.x\' AS key,'
                  ' 1 AS int_value, NULL AS string_value, NULL AS real_value, \'int\' AS value_type,'
                  ' \'1\' AS display_value')
    elif kind == 'counter-drop':
        c.execute('DROP VIEW counter')
    else:
        c.execute('DROP VIEW track')
        c.execute('CREATE VIEW track AS SELECT id + 1 AS id, name, type, parent_id, NULL AS source_arg_set_id,'
                  ' NULL AS machine_id, classification, NULL AS dimension_arg_set_id FROM kvio_track')
    return Mut('schema-slice', kind, kind, INVALID)


def m_schema_vtab(c, R):
    kind = R.choice(['plain-table', 'removed', 'module-args'])
    if kind == 'module-args':
        schema_sql(c, "UPDATE sqlite_master SET sql = 'CREATE VIRTUAL TABLE kvio_cmd USING kvio_cmds(fuzz, 1)'"
                      " WHERE name = 'kvio_cmd'")
        return Mut('schema-vtab', kind, 'kvio_cmd USING kvio_cmds(fuzz, 1) (not kvio\'s statement)', INVALID)
    schema_sql(c, "DELETE FROM sqlite_master WHERE name = 'kvio_cmd'")
    if kind == 'plain-table':
        c.close()  # the schema is read again by the next connection
        return Mut('schema-vtab', kind, 'kvio_cmd a plain table', INVALID)
    return Mut('schema-vtab', kind, 'kvio_cmd removed', INVALID)


GENERIC = ['process', 'thread', 'kvio_file', 'kvio_warning', 'kvio_counter', 'kvio_arg']


def m_cell(c, R):
    t = R.choice([x for x in GENERIC if has_table(c, x) and q1(c, 'SELECT count(*) FROM %s' % x)] or [None])
    if not t:
        return None
    cols = columns(c, t)
    rid = R.choice([r[0] for r in q(c, 'SELECT rowid FROM %s' % t)]) if t != 'kvio_arg' else None
    col = R.choice(cols)
    if t == 'kvio_arg':
        key = q(c, 'SELECT arg_set_id, key FROM kvio_arg ORDER BY arg_set_id, key')
        a, k = R.choice(key)
        where, args = 'arg_set_id = ? AND key = ?', (a, k)
    else:
        where, args = 'rowid = ?', (rid,)
    now = q1(c, 'SELECT %s FROM %s WHERE %s' % (col, t, where), args)
    if col in ('id', 'arg_set_id', 'key') and now is not None:
        kind, val = ('text', 'x') if col != 'id' else ('i64max', I64_MAX)
    else:
        kind, val = wrong_value(R, now)
    if val == now and type(val) == type(now):
        return None
    if val is None:
        relax(c, t)
    if col == 'id' and q1(c, 'SELECT count(*) FROM %s WHERE id = ?' % t, (val,)):
        return None
    c.execute('UPDATE %s SET %s = ? WHERE %s' % (t, col, where), (val,) + args)
    v = INVALID
    if kind == 'long' and (t, col) in (('kvio_warning', 'message'), ('kvio_file', 'path'), ('kvio_arg', 'string_value'),
                                       ('process', 'name'), ('thread', 'name')):
        v = PLAUSIBLE  # free text kvio copies from the capture
    return Mut('cell', '%s.%s=%s' % (t, col, kind), '%s %r %s: %r -> %s' % (t, args, col, now, kind), v)


def m_row_delete(c, R):
    t = R.choice([x for x in GENERIC if has_table(c, x) and q1(c, 'SELECT count(*) FROM %s' % x)] or [None])
    if not t:
        return None
    rid = R.choice([r[0] for r in q(c, 'SELECT rowid FROM %s' % t)]) if t != 'kvio_arg' else None
    if t == 'kvio_arg':
        a, k = R.choice(q(c, 'SELECT arg_set_id, key FROM kvio_arg ORDER BY arg_set_id, key'))
        c.execute('DELETE FROM kvio_arg WHERE arg_set_id = ? AND key = ?', (a, k))
        return Mut('row-delete', t, 'kvio_arg %d %s deleted' % (a, k), PLAUSIBLE)
    v = PLAUSIBLE
    if t == 'process':
        upid = q1(c, 'SELECT upid FROM process WHERE rowid = ?', (rid,))
        v = INVALID if q1(c, 'SELECT count(*) FROM kvio_track WHERE upid = ?', (upid,)) or upid == 0 else NEUTRAL
    elif t == 'thread':
        v = INVALID if q1(c, 'SELECT utid FROM thread WHERE rowid = ?', (rid,)) == 0 else PLAUSIBLE
    c.execute('DELETE FROM %s WHERE rowid = ?' % t, (rid,))
    return Mut('row-delete', t, '%s row %d deleted' % (t, rid), v)


MUTATORS = [  # (function, weight)
    (m_blob_flip, 3), (m_blob_hdr, 2), (m_blob_track, 2), (m_blob_name, 2), (m_blob_tid, 1), (m_blob_tsdur, 2),
    (m_blob_field, 2), (m_blob_cut, 1), (m_blob_grow, 1), (m_blob_swap, 1), (m_blob_type, 1), (m_chunk_n, 2),
    (m_chunk_id, 2), (m_range, 2), (m_sum, 1), (m_name, 2), (m_kv, 1), (m_track, 2), (m_obj, 2), (m_slice, 2), (m_meta, 2),
    (m_stats, 2), (m_flow, 1), (m_schema_view, 2), (m_schema_trigger, 1), (m_schema_columns, 1),
    (m_schema_slice, 1), (m_schema_vtab, 1), (m_cell, 2), (m_row_delete, 1)]


def digest(path):
    """The database's content: schema and every table's rows, with their types."""
    c = connect(path)
    h = hashlib.sha256()
    try:
        for typ, name, sql in q(c, "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"):
            h.update(repr((typ, name, sql)).encode())
            if typ == 'table' and not (sql or '').upper().startswith('CREATE VIRTUAL'):
                for row in c.execute('SELECT * FROM "%s"' % name.replace('"', '""')):
                    h.update(repr(row).encode())
    finally:
        c.close()
    return h.hexdigest()


SUM_SMALL = {'metadata', 'process', 'thread', 'kvio_track', 'kvio_cmd_range', 'kvio_cmd_name', 'kvio_file',
             'kvio_stats', 'kvio_warning'}
SUM_REPORT = {'kvio_slice', 'kvio_obj', 'kvio_arg'}
SUM_OTHER = {'kvio_cmd_kv', 'kvio_counter', 'flow'}
SUM_ALL = SUM_SMALL | SUM_REPORT | SUM_OTHER


def parts(path):
    """The parts of the database whose change a command is answerable for, each a digest:
    every table of kvio_sum (with kvio_sum's row for it), 'chunk-data' (the chunks' blobs),
    'chunk-n' (the chunk rows' own n), 'schema' (sqlite_master but the fuzzer's own fuzz_*
    tables), 'version' (kvio_schema_version). A part unreadable (an endless view) is 'error'."""
    c = connect(path)
    out = {}

    def h(key, sql, args=()):
        try:
            out[key] = hashlib.sha256(repr(q(c, sql, args)).encode()).hexdigest()
        except sqlite3.Error:
            out[key] = 'error'
    try:
        h('schema', "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE NOT (type = 'table' AND"
                    " name LIKE 'fuzz\\_%' ESCAPE '\\') ORDER BY type, name")
        h('version', "SELECT typeof(int_value), int_value FROM metadata WHERE name = 'kvio_schema_version'")
        for t in sorted(SUM_ALL):
            h(t, 'SELECT * FROM "%s"' % t)
            h('sum:' + t, "SELECT typeof(rows), rows, typeof(xxh3), xxh3 FROM kvio_sum WHERE name = ?", (t,))
            out[t] = out[t] + out.pop('sum:' + t)
        h('chunk-data', "SELECT id, data FROM kvio_cmd_chunk ORDER BY id")
        h('chunk-n', "SELECT id, n FROM kvio_cmd_chunk ORDER BY id")
    finally:
        c.close()
    return out


def answerable(cname, changed, forged):
    """(parts whose change cname must refuse whatever it prints, parts whose change it must refuse
    when its output differs): what the command checks before it believes it. Sums and chunk
    checksums only count in a run the forger did not re-seal; the schema and the version count in
    every run (no checksum covers them: kvio compares them)."""
    always = {'schema', 'version'}
    if cname == 'check':
        must = always | (set() if forged else SUM_ALL | {'chunk-data', 'chunk-n'})
        return changed & must, set()
    if cname.startswith('sql-'):
        # the extension checks at kvio_cmd's first use; a crafted schema may keep a statement
        # away from kvio_cmd (a slice table of its own): then nothing is answerable
        if 'schema' in changed:
            return set(), set()
        return changed & ({'version'} | (set() if forged else SUM_SMALL)), \
            changed & (set() if forged else {'chunk-data'})
    tables = SUM_SMALL | SUM_REPORT if cname.startswith('report') else SUM_ALL
    return changed & (always | (set() if forged else tables)), changed & (set() if forged else {'chunk-data'})


PLAIN_SQL = SUM_REPORT | {'kvio_counter', 'flow'}


def plain_sql_only(touched):
    """Whether the run changed only tables the extension never checks, which the slice, args and
    counter views read with plain SQL (docs/database.md, "Trust": run kvio-check first)."""
    t = touched - {'chunk-n'}
    return bool(t) and t <= PLAIN_SQL


def forge(path, seed_blobs, dbforge, env):
    """The forger: re-seal every chunk whose bytes differ from the seed's (dbforge reseal: the
    checksum of its bytes as they are, whatever its header says), then write kvio_sum again
    (dbforge resum, one transaction). Returns what it did, for mutations.txt."""
    c = connect(path)
    try:
        rows = q(c, "SELECT id, data FROM kvio_cmd_chunk WHERE typeof(data) = 'blob' AND length(data) >= ?"
                    " AND typeof(id) = 'integer' ORDER BY id", (HDR,)) if has_table(c, 'kvio_cmd_chunk') else []
    except sqlite3.Error:
        rows = []
    finally:
        c.close()
    ids = [str(i) for i, b in rows if seed_blobs.get(i) != b]
    did = []
    for argv in ([dbforge, path, 'reseal'] + ids if ids else None, [dbforge, path, 'resum']):
        if not argv:
            continue
        try:
            p = subprocess.run(argv, capture_output=True, env=env.env, timeout=env.timeout)
            did.append('%s: exit %d%s' % (' '.join(argv[2:]), p.returncode,
                                          ' (%s)' % p.stderr.decode('utf-8', 'replace').strip()[:200]
                                          if p.returncode else ''))
        except subprocess.TimeoutExpired:
            did.append('%s: timeout' % ' '.join(argv[2:]))
    return did


def mutate(path, R, k):
    """Apply k mutations to the database at path. Returns [Mut] (possibly fewer)."""
    muts = []
    fns, ws = [f for f, _ in MUTATORS], [w for _, w in MUTATORS]
    for _ in range(k):
        for _attempt in range(20):
            fn = R.choices(fns, ws)[0]
            c = connect(path)
            try:
                m = fn(c, R)
            except sqlite3.Error as e:
                m = None
                if os.environ.get('DBFUZZ_DEBUG'):
                    print('dbfuzz: %s: %s' % (fn.__name__, e), file=sys.stderr)
            finally:
                try:
                    c.close()
                except sqlite3.Error:
                    pass
            if m:
                if m.cls == 'schema-vtab' and m.kind == 'plain-table':
                    c = sqlite3.connect(path, isolation_level=None)
                    c.execute('CREATE TABLE kvio_cmd(id INTEGER PRIMARY KEY, ts INT, dur INT, track_id INT, name TEXT)')
                    c.execute("INSERT INTO kvio_cmd VALUES (1, 5, 5, 1, 'write')")
                    c.close()
                muts.append(m)
                break
    return muts


# ---- running the commands ------------------------------------------------------------------

class Env:
    def __init__(s, build, timeout):
        s.build, s.timeout = build, timeout
        s.asan = b'__asan_init' in open(os.path.join(build, 'kvio'), 'rb').read()
        so = os.path.join(build, 'kvio.so')
        s.so_asan = b'libasan' in open(so, 'rb').read()
        aopt = os.environ.get('ASAN_OPTIONS', 'detect_leaks=0')
        for o in ('max_allocation_size_mb=2048', 'allocator_may_return_null=0', 'hard_rss_limit_mb=4096'):
            if o.split('=')[0] not in aopt:
                aopt += ':' + o
        s.env = dict(os.environ, ASAN_OPTIONS=aopt,
                     UBSAN_OPTIONS=os.environ.get('UBSAN_OPTIONS', 'print_stacktrace=1:halt_on_error=1'))
        s.sql_env = dict(s.env)
        if s.so_asan:  # the sqlite3 CLI loads an ASan extension only with the runtime preloaded
            libs = []
            ldd = subprocess.run(['ldd', so], capture_output=True, text=True).stdout
            for name in ('libasan', 'libubsan'):
                m = re.search(r'%s\S* => (\S+)' % name, ldd)
                if m:
                    libs.append(m.group(1))
            s.sql_env['LD_PRELOAD'] = ' '.join(libs)

    def limits(s, sanitized):
        def f():
            resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if not sanitized:
                resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        return f

    def run(s, argv, sql, stdout_path, stderr_path):
        sanitized = s.so_asan if sql else s.asan
        with open(stdout_path, 'wb') as so, open(stderr_path, 'wb') as se:
            p = subprocess.Popen(argv, stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=s.sql_env if sql else s.env,
                                 start_new_session=True, preexec_fn=s.limits(sanitized))
            try:
                rc, hung = p.wait(timeout=s.timeout), False
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)  # the group this run started
                rc, hung = p.wait(), True
        return rc, hung


def commands(build, db, work, seedinfo):
    """{name: (argv, sql?, [output files compared besides stdout])}."""
    html, pf = os.path.join(work, 'out.html'), os.path.join(work, 'out.pftrace')
    load = '.load ' + os.path.join(build, 'kvio')
    w = seedinfo

    def sql(text):
        return (['sqlite3', '-bail', '-readonly', '-cmd', load, db, text], True, [])
    return {
        'report-json': ([os.path.join(build, 'kvio-report'), db, '--json'], False, []),
        'report-html': ([os.path.join(build, 'kvio-report'), db, '--html', html], False, [html]),
        'export': ([os.path.join(build, 'kvio-export'), db, '-o', pf], False, [pf]),
        'sql-slice': sql('SELECT count(*), sum(dur), min(ts), max(ts), count(DISTINCT track_id), count(name)'
                         ' FROM slice; SELECT count(*), total(value) FROM counter;'),
        'sql-args': sql('SELECT * FROM args LIMIT 50; SELECT count(*), total(int_value), count(string_value),'
                        ' total(real_value), group_concat(DISTINCT value_type) FROM args;'),
        'sql-cmd': sql('SELECT count(*), total(ts), total(dur), total(track_id), count(name), group_concat(DISTINCT name),'
                       ' total(slba), total(data_len), total(trace_id), count(role), total(real_dur), count(key_hex),'
                       ' total(key_len), total(value_len), total(slba_track), total(upid), total(name_id),'
                       ' total(tagged), total(ts_end) FROM kvio_cmd;'
                       ' SELECT * FROM kvio_cmd ORDER BY upid, ts, id LIMIT 20;'),
        'sql-win': sql('SELECT count(*), total(dur) FROM kvio_cmd WHERE win_lo IS %d AND win_hi IS %d;'
                       ' SELECT count(*) FROM kvio_cmd WHERE win_tlo IS %d AND win_thi IS %d;'
                       ' SELECT * FROM kvio_cmd WHERE id = %d; SELECT count(*), total(ts) FROM kvio_cmd'
                       ' WHERE id BETWEEN %d AND %d; SELECT count(*) FROM kvio_cmd WHERE trace_id > %d;'
                       ' SELECT count(*) FROM kvio_cmd WHERE name = \'write\' AND upid = 2 AND real_dur = 1;'
                       % (w['lo'], w['hi'], w['tlo'], w['thi'], w['mid'], w['mid'] - 10, w['mid'] + 10, w['tlo'])),
        'sql-batch': sql('SELECT kvio_count_distinct(trace_id), kvio_count_distinct(name), kvio_count_distinct(track_id)'
                         ' FROM kvio_cmd WHERE batch = 1;'
                         ' SELECT * FROM kvio_pct((SELECT kvio_pct_gather(track_id, role, dur) FROM kvio_cmd WHERE batch = 1));'
                         ' SELECT * FROM kvio_depth((SELECT kvio_depth_gather(upid, ts, dur) FROM kvio_cmd WHERE batch = 2));'),
        # last: whether it misses what another command refused is part of its judgement
        'check': ([os.path.join(build, 'kvio-check'), db], False, []),
    }


def read_outputs(stdout_path, files):
    out = [open(stdout_path, 'rb').read()]
    for f in files:
        out.append(open(f, 'rb').read() if os.path.exists(f) else None)
    return out


SAN_RE = re.compile(r'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:')
OOM_RE = re.compile(r'out of memory|out-of-memory|allocation-size-too-big|rss-limit-exceeded|std::bad_alloc|'
                    r'cannot allocate memory|requested allocation size', re.I)
FRAME_RE = re.compile(r'#\d+ 0x[0-9a-f]+ in (\S+) (\S+?):(\d+)')
UB_RE = re.compile(r'^(\S+?):(\d+):\d+: runtime error: (.*)$', re.M)
CRASH_SIGS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE, signal.SIGILL, signal.SIGTRAP}


def kvio_file(path):
    p = path.replace(REPO + '/', '')
    return re.match(r'(\./)?(ingest|report|lib|scripts|capture)/', p) and p


def site_of(err):
    """(first frame in kvio's sources, what), or (None, what). The allocation and string helpers of
    lib/util.c are skipped: their caller is the site."""
    frames = [(kvio_file(m.group(2)), m.group(3), m.group(1)) for m in FRAME_RE.finditer(err)]
    frames = [f for f in frames if f[0]]
    caller = next(('%s:%s (%s)' % f for f in frames if f[0] != 'lib/util.c'), None)
    m = UB_RE.search(err)
    if m and kvio_file(m.group(1)):
        what = 'runtime error: ' + re.sub(r'-?\d+', 'N', m.group(3))[:90]
        where = '%s:%s' % (kvio_file(m.group(1)), m.group(2))
        return (caller + ' via ' + where if kvio_file(m.group(1)) == 'lib/util.c' and caller else where), what
    m = re.search(r'SUMMARY: (\w+Sanitizer: [\w-]+)', err) or re.search(r'ERROR: (\w+Sanitizer: [\w-]+)', err)
    return caller or next(('%s:%s (%s)' % f for f in frames), None), m.group(1) if m else None


REFUSAL_RE = re.compile(r'database damaged or not written by kvio|kvio database version|not a kvio database')


def refused_ok(rc, err, sql=False):
    """Exit 2 with one line on stderr: the damage line, or a version sentence; the sqlite3 CLI:
    a statement failed with that line ("Error: stepping, ...", its own exit code)."""
    lines = [l for l in err.splitlines() if l.strip()]
    if sql:
        return rc > 0 and len(lines) == 1 and bool(REFUSAL_RE.search(lines[0]))
    return rc == 2 and len(lines) == 1 and bool(REFUSAL_RE.search(lines[0]))


def classify(rc, hung, err, same, verdict, must=False, must_if_changed=False, sql=False):
    """One execution's outcome. must: exit 0 is wrong whatever the output (the command checks what
    changed: a sum, the schema, the version); must_if_changed: exit 0 with another output is wrong
    (a chunk whose checksum the command checks when it reads it); else the verdict decides."""
    if hung or rc == -signal.SIGXFSZ or rc == 128 + signal.SIGXFSZ:
        return 'HANG'
    if OOM_RE.search(err):
        return 'OOM'
    if SAN_RE.search(err):
        return 'SANITIZER'
    if rc < 0 or (rc > 128 and rc - 128 in CRASH_SIGS):
        return 'CRASH'
    if rc == 0:
        if must or (must_if_changed and not same):
            return 'SILENT-WRONG'
        if same:
            return 'SAME'
        return 'CHANGED' if verdict == PLAUSIBLE else 'SILENT-WRONG'
    return 'REFUSED-OK' if refused_ok(rc, err, sql) else 'REFUSED'


def classify_check(rc, hung, err, out, same, must):
    """kvio-check's outcome: exit 2 with its DAMAGED lines (or the one line of a database it cannot
    read as kvio's) is the answer to damage; exit 0 where it must have found some is SILENT-WRONG."""
    o = classify(rc, hung, err, True, NEUTRAL)
    if o not in ('SAME', 'REFUSED', 'REFUSED-OK'):
        return o
    if rc == 0:
        return 'SILENT-WRONG' if must else 'SAME' if same else 'CHANGED'
    if rc == 2 and b'DAMAGED' in out:
        return 'REFUSED-OK'
    return o


def norm_msg(err, out=b''):
    """The refusal's first line (kvio-check: its first DAMAGED line, from stdout)."""
    lines = [l for l in err.splitlines() if l.strip()]
    dmg = [l.strip() for l in out.decode('utf-8', 'replace').splitlines() if 'DAMAGED' in l]
    if dmg:
        lines = dmg
    first = lines[0] if lines else '(no message)'
    first = re.sub(r'/\S*/', '', first)
    first = re.sub(r'-?\b\d+\b', 'N', first)
    return first[:160] + (' (+%d lines)' % (len(lines) - 1) if len(lines) > 1 else '')


def diff_text(ref, got):
    lines = []
    for i, (a, b) in enumerate(zip(ref, got)):
        if a == b:
            continue
        label = 'stdout' if i == 0 else 'file %d' % i
        if a is None or b is None:
            lines.append('%s: %s' % (label, 'missing' if b is None else 'unexpected'))
            continue
        try:
            ta, tb = a.decode(), b.decode()
            d = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), 'reference', 'mutated', n=1, lineterm=''))
            lines.append('%s:' % label)
            lines += [x[:300] for x in d[:80]]
        except UnicodeDecodeError:
            k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
            lines.append('%s: binary, %d vs %d bytes, first difference at byte %d' % (label, len(a), len(b), k))
    return '\n'.join(lines) + '\n'


# ---- seeds ---------------------------------------------------------------------------------

def build_seeds(build, work, seed, env):
    fx = os.path.join(REPO, 'fixtures')
    g = {k: os.path.join(work, 'gen.' + k + '.jsonl') for k in ('sem', 'ebpf', 'serving')}
    gen = [os.path.join(build, 'kvio-gen'), '--sem', g['sem'], '--ebpf', g['ebpf'], '--serving', g['serving'],
           '--lines', '30000', '--ranks', '2', '--faults', '5', '--seed', str(seed)]
    p = subprocess.run(gen, capture_output=True, env=env.env)
    if p.returncode:
        sys.exit('dbfuzz: %s failed: %s' % (' '.join(gen), p.stderr.decode('utf-8', 'replace')))
    ab = os.path.join(fx, 'ab')
    specs = {
        'tiny': ['--sem', fx + '/tiny/sem.jsonl', '--ebpf', fx + '/tiny/ebpf.jsonl'],
        'ab': ['--merge', 'A=%s/a.sem.jsonl,%s/a.ebpf.jsonl,%s/a.serving.jsonl' % (ab, ab, ab),
               '--merge', 'B=%s/b.sem.jsonl,%s/b.ebpf.jsonl' % (ab, ab)],
        'kv': ['--sem', fx + '/kv/sem.jsonl', '--ebpf', fx + '/kv/ebpf.jsonl', '--join-by-key'],
        'gen': ['--sem', g['sem'], '--ebpf', g['ebpf'], '--serving', g['serving']],
    }
    seeds = {}
    for name, args in specs.items():
        db = os.path.join(work, 'seed.%s.db' % name)
        if os.path.exists(db):
            os.remove(db)
        p = subprocess.run([os.path.join(build, 'kvio-ingest'), '-q', '-o', db] + args, capture_output=True, env=env.env)
        if p.returncode or SAN_RE.search(p.stderr.decode('utf-8', 'replace')):
            sys.exit('dbfuzz: kvio-ingest %s failed (%d): %s' % (' '.join(args), p.returncode,
                                                                 p.stderr.decode('utf-8', 'replace')[:2000]))
        seeds[name] = db
    return seeds


def seed_info(db):
    c = sqlite3.connect(db)
    dec = decoded_chunks(c)
    ts = sorted(t for _, d in dec for t in d['ts'])
    tids = sorted(t for _, d in dec for t in d['trace_id'] if t)
    allids = sorted(cid + i for cid, d in dec for i in range(d['n']))
    bad = [cid for cid, d in dec if tuple(q(c, 'SELECT ts_min, end_max, tid_min, tid_max FROM kvio_cmd_range'
                                             ' WHERE id = ?', (cid,))[0]) != extent(d)]
    c.close()
    if bad:
        print('dbfuzz: warning: %s: kvio_cmd_range rows %s are not the chunks\' extents as this script computes them'
              % (db, bad), file=sys.stderr)
    span = (ts[-1] - ts[0]) if ts else 0
    return {'lo': ts[0] + span // 3 if ts else 0, 'hi': ts[0] + 2 * span // 3 if ts else 0,
            'tlo': tids[len(tids) // 3] if tids else 0, 'thi': tids[2 * len(tids) // 3] if tids else 0,
            'mid': allids[len(allids) // 2] if allids else 1, 'chunks': len(dec), 'cmds': len(allids)}


# ---- the fuzzing loop ----------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description='mutation fuzzing of whole kvio databases (issue 21)')
    ap.add_argument('build')
    ap.add_argument('out')
    ap.add_argument('--runs', type=int, default=200)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--timeout', type=float, default=10.0)
    ap.add_argument('--expect-clean', action='store_true')
    ap.add_argument('--keep-going', action='store_true')
    ap.add_argument('--forger', type=float, default=0.5, help='share of runs in forger mode (default 0.5)')
    ap.add_argument('--dbforge', help='tests/dbforge.c built (default BUILD_DIR/dbforge, else built here)')
    a = ap.parse_args()
    build, out = os.path.abspath(a.build), os.path.abspath(a.out)
    for f in ('kvio', 'kvio-ingest', 'kvio-report', 'kvio-export', 'kvio-check', 'kvio-gen', 'kvio.so'):
        if not os.path.exists(os.path.join(build, f)):
            sys.exit('dbfuzz: %s: no %s (make %s)' % (build, f, os.path.join(a.build, f)))
    if not shutil.which('sqlite3'):
        sys.exit('dbfuzz: no sqlite3 command (apt-get install sqlite3)')
    env = Env(build, a.timeout)
    work, fdir = os.path.join(out, 'work'), os.path.join(out, 'findings')
    shutil.rmtree(fdir, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    os.makedirs(fdir)
    R = random.Random(a.seed)
    dbforge = os.path.abspath(a.dbforge) if a.dbforge else os.path.join(build, 'dbforge')
    if not os.path.exists(dbforge):
        dbforge = os.path.join(work, 'dbforge')
        cc = [os.environ.get('CC', 'cc'), '-std=c11', '-D_GNU_SOURCE', '-DSQLITE_CORE', '-O1', '-o', dbforge] + \
            [os.path.join(REPO, f) for f in ('tests/dbforge.c', 'db/chunk.c', 'db/valid.c', 'db/values.c', 'db/memo.c', 'db/ddl.c')] + \
            ['-lsqlite3', '-lxxhash', '-lpthread']
        p = subprocess.run(cc, capture_output=True)
        if p.returncode:
            sys.exit('dbfuzz: building dbforge failed: %s' % p.stderr.decode('utf-8', 'replace')[:2000])
    seeds = build_seeds(build, work, a.seed, env)
    db = os.path.join(work, 'trace.db')
    so_path, se_path = os.path.join(work, 'stdout'), os.path.join(work, 'stderr')
    infos, refs, digests, nondet, sparts, sblobs = {}, {}, {}, set(), {}, {}
    for name, sdb in seeds.items():
        infos[name] = seed_info(sdb)
        digests[name] = digest(sdb)
        sparts[name] = parts(sdb)
        sc = sqlite3.connect(sdb)
        sblobs[name] = dict(q(sc, "SELECT id, data FROM kvio_cmd_chunk"))
        sc.close()
        shutil.copy(sdb, db)
        refs[name] = {}
        for cname, (argv, is_sql, files) in commands(build, db, work, infos[name]).items():
            got = []
            for _ in range(2):
                for f in files:
                    if os.path.exists(f):
                        os.remove(f)
                rc, hung = env.run(argv, is_sql, so_path, se_path)
                err = open(se_path, 'rb').read().decode('utf-8', 'replace')
                if rc or hung or SAN_RE.search(err):
                    sys.exit('dbfuzz: the undamaged %s seed: %s exits %d%s: %s' % (name, ' '.join(argv), rc,
                             ' (timeout)' if hung else '', err[:2000]))
                got.append(read_outputs(so_path, files))
            if got[0] != got[1]:
                nondet.add((name, cname))
                print('dbfuzz: warning: %s on the %s seed differs between two runs: not compared' % (cname, name))
            refs[name][cname] = got[0]
    print('dbfuzz: seeds %s; %s; %s' % (
        ', '.join('%s (%d cmds, %d chunks)' % (n, infos[n]['cmds'], infos[n]['chunks']) for n in seeds),
        'ASan/UBSan build' if env.asan else 'plain build (no sanitizer)',
        'extension queries with the ASan kvio.so (LD_PRELOAD=%s)' % env.sql_env.get('LD_PRELOAD', '')
        if env.so_asan else 'extension queries with a plain kvio.so'), flush=True)

    counts = {}       # (class, command, outcome) -> n
    refusals = {}     # (command, rc, message) -> [n, example kind]
    silent = {}       # (kind, command) -> n
    changed = {}      # (kind, command) -> n
    findings = {}     # key -> [n, dir, line]
    nfound = {o: 0 for o in FINDINGS}
    skipped, execs, done, runs_by = 0, 0, 0, {}
    t0 = time.time()
    seed_names, seed_w = list(seeds), [{'gen': 4, 'ab': 2}.get(n, 1) for n in seeds]
    stop = False
    for run in range(a.runs):
        name = R.choices(seed_names, seed_w)[0]
        shutil.copy(seeds[name], db)
        k = R.choices([1, 2, 3], [7, 2, 1])[0]
        forged = R.random() < a.forger
        muts = mutate(db, R, 1 if forged else k)  # forger: one mutation, so the judgement is its own
        forger_did = forge(db, sblobs[name], dbforge, env) if forged and muts else []
        try:
            qc = connect(db)
            ok = muts and qc.execute('PRAGMA quick_check').fetchone()[0] == 'ok'
            qc.close()
            ok = ok and digest(db) != digests[name]
        except sqlite3.Error:
            ok = False
        if not ok:
            skipped += 1
            continue
        done += 1
        live = [m for m in muts if not (forged and m.undone)]  # what the forger did not undo

        def worst(vs):
            return INVALID if INVALID in vs else PLAUSIBLE if PLAUSIBLE in vs else NEUTRAL
        verdict = worst({m.verdict for m in live})
        check_verdict = INVALID if any(m.check == INVALID for m in live) else NEUTRAL
        mode = 'forger' if forged else 'damage'
        runs_by[(name, mode, verdict)] = runs_by.get((name, mode, verdict), 0) + 1
        pa = parts(db)
        touched = {k for k in pa if pa[k] != sparts[name].get(k)}
        classes = sorted({m.cls for m in muts}) + ['(%s mode)' % mode]
        kinds = ('forger: ' if forged else '') + ' + '.join('%s[%s]' % (m.cls, m.kind) for m in muts)
        run_found, refused_by = False, []
        for cname, (argv, is_sql, files) in commands(build, db, work, infos[name]).items():
            for f in files:
                if os.path.exists(f):
                    os.remove(f)
            rc, hung = env.run(argv, is_sql, so_path, se_path)
            execs += 1
            err = open(se_path, 'rb').read().decode('utf-8', 'replace')
            got = read_outputs(so_path, files) if rc == 0 and not hung else None
            same = got == refs[name][cname] or (name, cname) in nondet
            must, must_changed = answerable(cname, touched, forged)
            why = ''
            if cname == 'check':
                o = classify_check(rc, hung, err, open(so_path, 'rb').read(), same,
                                   bool(must) or check_verdict == INVALID or bool(refused_by))
                why = ('changed: %s' % ','.join(sorted(must)) if must else 'refused by %s' % ','.join(refused_by)
                       if refused_by else 'an invariant kvio-check checks')
            else:
                # the extension's queries: tables it never checks, or a crafted schema that keeps the
                # statement away from kvio_cmd, change what plain SQL reads (documented): not findings
                v = PLAUSIBLE if cname.startswith('sql-') and verdict == INVALID and (
                    plain_sql_only(touched) or 'schema' in touched) else verdict
                o = classify(rc, hung, err, same, v, bool(must), bool(must_changed), is_sql)
                if o == 'REFUSED-OK':
                    refused_by.append(cname)
                why = ('changed: %s' % ','.join(sorted(must)) if must else 'changed: %s' % ','.join(sorted(must_changed))
                       if must_changed and not same else 'verdict invalid')
            for cl in classes:
                counts[(cl, cname, o)] = counts.get((cl, cname, o), 0) + 1
            counts[('', cname, o)] = counts.get(('', cname, o), 0) + 1  # each execution once
            if o in ('REFUSED', 'REFUSED-OK'):
                r = refusals.setdefault((cname, rc, norm_msg(err, open(so_path, 'rb').read() if cname == 'check'
                                                             else b'')), [0, kinds])
                r[0] += 1
            if o in ('SILENT-WRONG', 'CHANGED'):
                tab = silent if o == 'SILENT-WRONG' else changed
                tab.setdefault(kinds, {})[cname] = tab.get(kinds, {}).get(cname, 0) + 1
            if o not in FINDINGS:
                continue
            nfound[o] += 1
            run_found = True
            site, what = site_of(err) if o in ('SANITIZER', 'OOM', 'CRASH') else (None, None)
            # one finding per (outcome, the mutations that decided it): kvio-check's miss and the
            # readers' of one forged value are one finding (the 'also' list names the commands)
            deciding = ('forger: ' if forged else '') + ' + '.join(sorted(
                '%s[%s]' % (m.cls, m.kind) for m in live if ((m.check == INVALID or check_verdict != INVALID)
                                                             if cname == 'check' else m.verdict == verdict))) + (
                ' (%s)' % why.split(':')[0] if o == 'SILENT-WRONG' and 'changed' in why else '')
            key = (o, site) if site else (o, deciding)
            if key not in findings:
                d = os.path.join(fdir, '%04d-%s-%s' % (len(findings) + 1, o, cname))
                os.makedirs(d)
                shutil.copy(db, os.path.join(d, 'trace.db'))
                shutil.copy(se_path, os.path.join(d, 'stderr.txt'))
                with open(os.path.join(d, 'mutations.txt'), 'w') as f:
                    f.write('seed %s, run %d (--seed %d), %s mode, verdict %s, for kvio-check %s\n'
                            % (name, run, a.seed, mode, verdict, check_verdict)
                            + ''.join('%s%s\n' % (m, ' (undone by the forger)' if forged and m.undone else '')
                                      for m in muts)
                            + ''.join('forger: dbforge trace.db %s\n' % x for x in forger_did)
                            + 'changed: %s\n' % ', '.join(sorted(touched)))
                with open(os.path.join(d, 'cmd.sh'), 'w') as f:
                    f.write('#!/bin/sh\n# the commands of this run with this outcome (the first one\'s stderr:'
                            ' stderr.txt)\ncd "$(dirname "$0")"\n')
                line = '%s %s %s%s%s' % (o, cname, kinds, ' at ' + site if site else '',
                                         ' (%s)' % (what if what else why if o == 'SILENT-WRONG' else ''))
                line = line.replace(' ()', '')
                findings[key] = [0, d, line, run, []]
                print('FOUND %s -> %s' % (line, os.path.relpath(d, out)), flush=True)
            fk = findings[key]
            fk[0] += 1
            if fk[3] == run:  # the run that made the finding: each of its commands with this outcome
                d = fk[1]
                fk[4].append(cname)
                fargv = [x.replace(db, 'trace.db').replace(work + '/out.', 'out.') for x in argv]
                envs = 'LD_PRELOAD=%s ' % shlex.quote(env.sql_env['LD_PRELOAD']) if is_sql and env.so_asan else ''
                with open(os.path.join(d, 'cmd.sh'), 'a') as f:
                    f.write('# %s: exit %d%s\n%sASAN_OPTIONS=%s UBSAN_OPTIONS=%s %s\n'
                            % (cname, rc, ' (timeout)' if hung else '', envs, shlex.quote(env.env['ASAN_OPTIONS']),
                               shlex.quote(env.env['UBSAN_OPTIONS']), ' '.join(shlex.quote(x) for x in fargv)))
                if o == 'SILENT-WRONG':
                    with open(os.path.join(d, 'diff.txt'), 'a') as f:
                        f.write('==== %s\n' % cname + diff_text(refs[name][cname], got))
        if run_found and a.expect_clean and not a.keep_going:
            stop = True
            break
    dt = time.time() - t0
    total = sum(nfound.values())
    nforged = sum(v for k, v in runs_by.items() if k[1] == 'forger')
    tail = ('dbfuzz: %d runs (%d in forger mode; %d skipped: content unchanged or not checkable) on seed %d,'
            ' %d executions in %.0f s (%.1f exec/s): %s; %d distinct findings'
            % (done, nforged, skipped, a.seed, execs, dt, execs / dt if dt else 0,
                                      ', '.join('%d %s' % (nfound[o], o) for o in FINDINGS), len(findings)))
    write_summary(os.path.join(out, 'summary.txt'), a, build, seeds, infos, counts, refusals, silent, changed,
                  findings, tail, out, stop, runs_by)
    print(tail)
    sys.exit(1 if a.expect_clean and total else 0)


def write_summary(path, a, build, seeds, infos, counts, refusals, silent, changed, findings, tail, out, stop, runs_by):
    cmds = ['report-json', 'report-html', 'export', 'sql-slice', 'sql-args', 'sql-cmd', 'sql-win', 'sql-batch', 'check']
    L = ['dbfuzz summary: %s, --seed %d, --runs %d, --timeout %g%s' % (build, a.seed, a.runs, a.timeout,
                                                                      ' (stopped at the first finding)' if stop else ''),
         tail, '', 'seeds: ' + ', '.join('%s %d cmds/%d chunks' % (n, infos[n]['cmds'], infos[n]['chunks']) for n in seeds),
         'runs by seed, mode and verdict: ' + ', '.join('%s %s %s %d' % (k + (v,)) for k, v in sorted(runs_by.items())),
         '', 'outcomes per mutation class, all commands (executions; a run with several mutations counts under each'
             ' of its classes)', '%-28s ' % 'class' + ' '.join('%12s' % o for o in OUTCOMES)]
    for cl in sorted({k[0] for k in counts} - {''}):
        L.append('%-28s ' % cl + ' '.join('%12s' % (sum(v for k, v in counts.items() if k[0] == cl and k[2] == o)
                                                    or '.') for o in OUTCOMES))
    total = '%-28s ' % 'TOTAL (each execution once)' + ' '.join(
        '%12d' % sum(counts.get(('', cm, o), 0) for cm in cmds) for o in OUTCOMES)
    L.append(total)
    L += ['', 'outcomes per mutation class x command',
         '%-15s %-12s ' % ('class', 'command') + ' '.join('%12s' % o for o in OUTCOMES)]
    for cl in sorted({k[0] for k in counts} - {''}) + ['']:
        for cm in cmds:
            row = [counts.get((cl, cm, o), 0) for o in OUTCOMES]
            if any(row):
                L.append('%-15s %-12s ' % (cl or 'ALL', cm) + ' '.join('%12s' % (x or '.') for x in row))
    L.append(total)
    L += ['', 'refusals (command, exit, first line of stderr with numbers as N): count, an example mutation']
    for (cm, rc, msg), (n, ex) in sorted(refusals.items(), key=lambda x: (-x[1][0], x[0])):
        L.append('  %5d  %-11s exit %-3d %s    [e.g. %s]' % (n, cm, rc, msg, ex[:120]))
    for title, tab in (('SILENT-WRONG: the mutations of the run, the commands (executions) that exited 0 with'
                        ' another output', silent),
                       ('CHANGED (plausible mutations whose output differs; not findings)', changed)):
        L += ['', title]
        for k in sorted(tab, key=lambda k: (k.count(' + '), k)):
            L.append('  %s: %s' % (k, ', '.join('%s %d' % (cm, n) for cm, n in sorted(tab[k].items()))))
    L += ['', 'findings (distinct, with how many executions hit each; a finding without a stack is one per'
              ' (outcome, deciding mutations))']
    for key, (n, d, line, run, cms) in sorted(findings.items(), key=lambda x: x[1][1]):
        L.append('  %5d  %s  %s' % (n, os.path.relpath(d, out), line) + ('  [also: %s]' % ', '.join(cms[1:])
                                                                       if len(cms) > 1 else ''))
    with open(path, 'w') as f:
        f.write('\n'.join(L) + '\n')


if __name__ == '__main__':
    main()
