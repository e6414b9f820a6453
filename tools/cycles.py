#!/usr/bin/env python3
"""Import cycles between the source files of each crate (issue 30: "no two files that import
each other, directly or around a loop").

    tools/cycles.py [--allowed FILE] [--crate NAME]

A file imports another when it names an item of that file's module by path: `use crate::a::b`,
`crate::a::b::f(...)`, `super::x`, `self::x`, or a child module by its bare name (`x::f()`,
`use x::Y`, the 2018 edition's relative paths). A `mod x;` declaration alone is not an import,
and neither is a crate root's `pub use x::Y` (the root as the crate's facade); any other
re-export is one. The files of each crate form a graph; every
strongly connected part of more than one file is a cycle, printed as its files.

With --allowed FILE (one cycle a line: its files, space-separated, sorted; '#' comments), exit
status 1 when a cycle is found that is not listed, or a listed one has grown: the list is a
ratchet that only shrinks. Without it, exit 1 on any cycle.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
CHILD = re.compile(r"(?<![:\w])([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
ROOT_REEXPORT = re.compile(r"(?m)^pub use [a-z_][a-z0-9_]*::[^;]*;")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}", re.S)
# One pass, left to right, so that a `//` inside a string or a `"` inside a comment or a char
# literal is read as what it is inside of.
LEXEME = re.compile(r"""'(?:\\.|[^'\\\n])'|"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/""", re.S)
CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", re.S)


def modules(src):
    """Maps each module path (a tuple) of a crate's src/ to its file."""
    mods = {}
    for d, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(d, n), src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            mods[tuple(rel)] = os.path.join(d, n)
    return mods


def strip_tests(text):
    """Drops `#[cfg(test)] mod x { ... }` blocks: tests may import what they test."""
    out = []
    i = 0
    for m in CFG_TEST.finditer(text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth = 1
        j = m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def resolve(mods, here, root, rest):
    """The file module that a path `root::rest` names, from module `here`."""
    if root == "crate":
        base = ()
    elif root == "self":
        base = here
    else:  # super
        base = here[:-1]
    parts = [p for p in rest.split("::") if p]
    path = base + tuple(parts)
    while path not in mods and len(path) > len(base):
        path = path[:-1]
    return path if path in mods else None


def blank(m):
    """A string as `""`, a char literal as `' '`, a comment as nothing."""
    t = m.group(0)
    return '""' if t[0] == '"' else "' '" if t[0] == "'" else ""


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for mod, path in mods.items():
        with open(path, errors="replace") as f:
            text = f.read()
        text = strip_tests(LEXEME.sub(blank, text))
        if mod == ():
            text = ROOT_REEXPORT.sub("", text)
        refs = [(m.group(1), m.group(2)) for m in PATH.finditer(text)]
        for m in CHILD.finditer(text):
            if mod + (m.group(1),) in mods:
                refs.append(("self", "::" + m.group(1) + m.group(2)))
        for g in USE_GROUP.finditer(text):
            for item in re.split(r"[,\s]+", g.group(3)):
                item = item.strip().split(" as ")[0]
                if item and item not in ("self", "*") and not item.startswith("{"):
                    refs.append((g.group(1), g.group(2) + "::" + item.split("::")[0]))
        for root, rest in refs:
            target = resolve(mods, mod, root, rest)
            if target is not None and target != mod:
                edges[mod].add(target)
    return mods, edges


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allowed")
    ap.add_argument("--crate")
    args = ap.parse_args()
    found = []
    crates = sorted(os.listdir(os.path.join(ROOT, "crates"))) + [os.path.join("engine", "sys")]
    for crate in crates:
        if args.crate and crate != args.crate:
            continue
        src = os.path.join(ROOT, "crates", crate, "src")
        if not os.path.isdir(src):
            continue
        mods, edges = graph(src)
        for comp in sccs(edges):
            files = sorted(os.path.relpath(mods[m], ROOT) for m in comp)
            found.append(files)
    allowed = []
    if args.allowed:
        with open(args.allowed) as f:
            allowed = [set(x.split("#")[0].split()) for x in f if x.split("#")[0].strip()]
    bad = 0
    for files in found:
        ok = any(set(files) <= a for a in allowed)
        bad += not ok
        print(f"{'allowed' if ok else 'CYCLE'} ({len(files)} files): {' '.join(files)}")
    print(f"cycles: {len(found)} import cycles between files, {bad} not allowed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
