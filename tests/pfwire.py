"""pfwire.py — an independent reader/writer of the Perfetto wire format for the
tests (the protobuf wire rules and Perfetto's field numbers; none of kvio's code).

  python3 pfwire.py check FILE        structural checks of a TrackEvent trace
  python3 pfwire.py refstyle OUT [NAME]  write a small trace the way the reference
                                      kvio2perfetto.py does (names not interned);
                                      NAME: the second write command's name
"""
import gzip, struct, sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return v, i

def fields(b):
    """(field, wire type, value) of one message; len-delimited values as bytes."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = struct.unpack_from('<Q', b, i)[0]; i += 8
        elif wt == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif wt == 5:
            v = struct.unpack_from('<I', b, i)[0]; i += 4
        else:
            raise ValueError('wire type %d' % wt)
        yield f, wt, v

def packets(path):
    data = open(path, 'rb').read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    for f, wt, v in fields(data):
        assert f == 1 and wt == 2, 'top level must be Trace.packet'
        yield v

def check(path):
    """Perfetto import rules a bad file breaks silently."""
    errors = []
    events = []          # (ts, order, type, track, flows, tflows)
    n = 0
    defaults = {}        # sequence id -> (default track, default extra counter tracks)
    for order, p in enumerate(packets(path)):
        pk = {}
        te = None
        for f, wt, v in fields(p):
            if f == 11: te = v
            else: pk[f] = v
        seq = pk.get(10)
        if pk.get(13, 0) & 1:                       # SEQ_INCREMENTAL_STATE_CLEARED
            defaults.pop(seq, None)
        if 59 in pk:                                # TracePacketDefaults
            dtrack, dx = None, []
            for f, wt, v in fields(pk[59]):
                if f == 11:                         # TrackEventDefaults
                    for g, _, w in fields(v):
                        if g == 11: dtrack = w
                        elif g == 31: dx.append(w)
            defaults[seq] = (dtrack, dx)
        if te is None:
            continue
        n += 1
        if 10 not in pk: errors.append('TrackEvent without trusted_packet_sequence_id (packet %d)' % order)
        if 8 not in pk: errors.append('TrackEvent without timestamp (packet %d)' % order)
        typ = track = None; fl = []; tfl = []; xv = xu = 0
        for f, wt, v in fields(te):
            if f == 9: typ = v
            elif f == 11: track = v
            elif f == 47: fl.append(v)
            elif f == 48: tfl.append(v)
            elif f == 12: xv += 1
            elif f == 31: xu += 1
        dtrack, dx = defaults.get(seq, (None, []))
        if track is None: track = dtrack
        if track is None: errors.append('TrackEvent without a track (packet %d)' % order)
        if xv > (xu if xu else len(dx)): errors.append('extra counter value without a track (packet %d)' % order)
        events.append((pk.get(8, 0), order, typ, track, fl, tfl))
    events.sort(key=lambda e: (e[0], e[1]))
    open_on = {}          # track -> begin ts
    last_end = {}         # track -> last end ts
    started, ended = {}, {}
    for ts, order, typ, track, fl, tfl in events:
        if typ == 1:
            if track in open_on: errors.append('overlap on track %s at %d' % (track, ts))
            if track in last_end and last_end[track] >= ts: errors.append('touching/overlapping slices on track %s at %d' % (track, ts))
            open_on[track] = ts
        elif typ == 2:
            if track not in open_on: errors.append('END without BEGIN on track %s at %d' % (track, ts))
            else: del open_on[track]
            last_end[track] = ts
        for x in fl:
            started[x] = started.get(x, 0) + (0 if x in started else 1)
        for x in tfl:
            ended[x] = ended.get(x, 0) + 1
            if x not in started: errors.append('flow %d terminates before it starts' % x)
    for t in open_on: errors.append('BEGIN without END on track %s' % t)
    for x, c in ended.items():
        if c != 1: errors.append('flow %d terminates %d times' % (x, c))
    for x in started:
        if x not in ended: errors.append('flow %d never terminates' % x)
    return n, errors

def enc_varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        c = v & 0x7f; v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v: return bytes(out)

def fv(f, v): return enc_varint(f << 3) + enc_varint(v)
def fb(f, b): return enc_varint(f << 3 | 2) + enc_varint(len(b)) + b
def fs(f, s): return fb(f, s.encode())
def fd(f, x): return enc_varint(f << 3 | 1) + struct.pack('<d', x)
def ff64(f, x): return enc_varint(f << 3 | 1) + struct.pack('<Q', x)

def refstyle(out, name2='write'):
    """Shaped like the reference converter's output: md5-like 63-bit uuids,
    inline names and annotation names, events sorted by time, one sequence."""
    U = {'lm': 0x1111111111111111, 'nv': 0x2222222222222222, 'meta': 0x3333,
         'og': 0x4444, 'o0': 0x5555, 'root': 0x6666, 'w': 0x7777, 'r': 0x8888}
    pk = []
    def td(uuid, name=None, parent=None, pid=None, pname=None, unit=None, order=None):
        d = fv(1, uuid)
        if name is not None: d += fs(2, name)
        if pid is not None: d += fb(3, fv(1, pid) + fs(6, pname))
        if parent is not None: d += fv(5, parent)
        if unit is not None: d += fb(8, fs(6, unit))
        if order is not None: d += fv(12, order)
        pk.append(fb(60, d))
    def ev(ts, typ, track, name=None, args=(), flows=(), tflows=()):
        te = b''.join(fb(4, fs(10, k) + v) for k, v in args) + fv(9, typ) + fv(11, track)
        if name is not None: te += fs(23, name)
        te += b''.join(ff64(47, x) for x in flows) + b''.join(ff64(48, x) for x in tflows)
        pk.append(fv(8, ts) + fv(10, 1) + fb(11, te))
    td(U['lm'], pid=1000, pname='LMCache ref')
    td(U['nv'], pid=1001, pname='NVMe ng ref')
    td(U['meta'], 'capture info', U['lm'], order=0)
    td(U['og'], 'objects', U['lm'], order=10)
    td(U['o0'], 'objects.000', U['og'], order=0)
    td(U['root'], 'IO activity', U['nv'])
    td(U['w'], 'writes', U['root'], order=10)
    FID = 0x0123456789abcdef
    u = lambda x: fv(3, x)
    ev(0, 3, U['meta'], 'capture_info', [('label', fs(6, 'ref')), ('lba_bytes', u(4096)), ('kvio_schema', u(2))])
    ev(0, 1, U['o0'], 'store kv 0.2MiB', [('trace_id', u(7)), ('op', fs(6, 'store')), ('bytes', u(262144)),
        ('n_cmds', u(2)), ('op_latency_ms', fd(5, 1.0)), ('key', fs(6, 'm@f0@0@abc'))], flows=[FID])
    ev(100000, 1, U['w'], 'write', [('slba', u(10)), ('data_len', u(4096)), ('trace_id', u(7)),
        ('role', fs(6, 'header')), ('real_dur', fv(2, 1))], flows=[FID])
    ev(150000, 2, U['w'])
    ev(200000, 1, U['w'], name2, [('slba', u(11)), ('data_len', u(131072)), ('trace_id', u(7)),
        ('role', fs(6, 'payload')), ('real_dur', fv(2, 0))], tflows=[FID])
    ev(208000, 2, U['w'])
    ev(1000000, 2, U['o0'])
    with open(out, 'wb') as f:
        for p in pk: f.write(fb(1, p))

if __name__ == '__main__':
    if sys.argv[1] == 'check':
        n, errs = check(sys.argv[2])
        for e in errs[:20]: print(e)
        print('%d track events, %d problems' % (n, len(errs)))
        sys.exit(1 if errs or not n else 0)
    elif sys.argv[1] == 'refstyle':
        refstyle(sys.argv[2], *sys.argv[3:4])
