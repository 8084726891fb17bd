#!/usr/bin/env python3
"""layout.py ROOT RULE [BUILD]: the layout rules of docs/architecture.md, checked.

Prints one line per violation (nothing when the rule holds) and exits 1 when
there is one. RULE is one of:
  includes   every #include "..." of a source folder points where its arrows allow
  symbols    the same arrows on the built objects' symbols (BUILD: the build dir),
             and no files of one folder calling each other in a circle
  sizes      .c files under 1,000 lines, functions under 80, header inlines small
  map        docs/architecture.md names every source file
"""
import os
import re
import subprocess
import sys

# folder -> the folders its code may reach (itself included)
ALLOWED = {
    'lib': {'lib'},
    'db': {'db', 'lib'},
    'ingest': {'ingest', 'db', 'lib'},
    'report': {'report', 'db', 'lib'},
    'export': {'export', 'db', 'lib'},
    'cmd': {'cmd', 'ingest', 'report', 'export', 'db', 'lib'},
    'capture': {'capture'},
}
SRC_EXT = ('.c', '.h', '.cc')
MAX_FILE = 1000
MAX_FUNC = 80
MAX_INLINE = 25
# header inlines allowed to be longer, and why (docs/architecture.md says it too)
BIG_INLINES = {'col_key': 'the one definition of a column, inlined into the scan and batch loops'}


def sources(root):
    for folder in ALLOWED:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(SRC_EXT):
                yield folder, os.path.join(d, f)


def rule_includes(root):
    bad = []
    for folder, path in sources(root):
        with open(path, encoding='utf-8') as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
                rel = os.path.relpath(target, root)
                tfolder = rel.split(os.sep)[0]
                if not os.path.exists(target) or tfolder not in ALLOWED:
                    continue  # a generated header (build/), or a system one in quotes
                if tfolder not in ALLOWED[folder]:
                    bad.append('%s:%d: %s/ includes %s (%s/ may reach %s)' % (
                        os.path.relpath(path, root), n, folder, m.group(1), folder,
                        ', '.join(sorted(ALLOWED[folder]))))
    return bad


def nm_symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defs, uses = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBR':
            defs.add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            uses.add(p[1])
    return defs, uses


def cycles(graph):
    """Strongly connected components of more than one node."""
    index, low, stack, on, res = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return res


def rule_symbols(root, build):
    objs = []
    for folder in ALLOWED:
        d = os.path.join(build, folder)
        if os.path.isdir(d):
            objs += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith('.o')]
    if not objs:
        return ['%s: no object files (build first)' % build]
    sym = {o: nm_symbols(o) for o in objs}
    owner = {}
    for o, (defs, _) in sym.items():
        for s in defs:
            owner[s] = o
    graph = {o: sorted({owner[s] for s in sym[o][1] if s in owner and owner[s] != o}) for o in objs}
    folder = lambda o: os.path.relpath(o, build).split(os.sep)[0]
    rel = lambda o: os.path.relpath(o, build)
    bad = []
    for o in objs:
        for t in graph[o]:
            if folder(t) not in ALLOWED[folder(o)]:
                names = sorted(s for s in sym[o][1] if owner.get(s) == t)
                bad.append('%s calls %s (%s): %s/ may reach %s' % (
                    rel(o), rel(t), ', '.join(names[:4]), folder(o), ', '.join(sorted(ALLOWED[folder(o)]))))
    for comp in cycles(graph):
        bad.append('files calling each other in a circle: ' + ' '.join(rel(o) for o in comp))
    return bad


def functions(path):
    """(name, first line, length) of each function: '{' at column 0 to '}' at column 0."""
    with open(path, encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    start, prev = None, ''
    for n, line in enumerate(lines, 1):
        if line.startswith('{'):
            start, head = n, prev
        elif line.startswith('}') and start is not None:
            m = re.search(r'(\w+)\s*\(', re.sub(r'__attribute__\s*\(\(.*?\)\)', '', head))
            yield (m.group(1) if m else head.strip(), start, n - start + 1, head)
            start = None
        if not line.startswith('{') and line.strip():
            prev = line if not line.startswith('\t') else prev + ' ' + line.strip()


def rule_sizes(root):
    bad = []
    for _, path in sources(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding='utf-8') as fh:
            n = sum(1 for _ in fh)
        if not path.endswith('.h') and n > MAX_FILE:
            bad.append('%s: %d lines (at most %d)' % (rel, n, MAX_FILE))
        for name, line, length, head in functions(path):
            if path.endswith('.h'):
                if 'inline' not in head:
                    bad.append('%s:%d: %s: a function body in a header (only small static inlines)' % (rel, line, name))
                elif length > MAX_INLINE and name not in BIG_INLINES:
                    bad.append('%s:%d: inline %s is %d lines (at most %d in a header)' % (rel, line, name, length,
                                                                                      MAX_INLINE))
            elif length > MAX_FUNC:
                bad.append('%s:%d: %s is %d lines (at most %d)' % (rel, line, name, length, MAX_FUNC))
    return bad


def rule_map(root):
    with open(os.path.join(root, 'docs', 'architecture.md'), encoding='utf-8') as fh:
        doc = fh.read()
    return ['%s: not named in docs/architecture.md' % os.path.relpath(p, root)
            for _, p in sources(root) if '`%s`' % os.path.basename(p) not in doc
            and '`%s`,' % os.path.basename(p) not in doc]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, rule = sys.argv[1], sys.argv[2]
    if rule == 'symbols':
        bad = rule_symbols(root, sys.argv[3] if len(sys.argv) > 3 else os.path.join(root, 'build'))
    else:
        bad = {'includes': rule_includes, 'sizes': rule_sizes, 'map': rule_map}[rule](root)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
