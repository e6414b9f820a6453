#!/usr/bin/env python3
"""Code-size figures for the architecture notes, reproducible from the tree.

  tools/codesize.py lines crates/cli     non-test lines of a crate's src/ (total, and code only)
  tools/codesize.py fns [N] [PATH...]    functions longer than N lines (default 80) under PATH
                                         (default crates/), longest first
  tools/codesize.py files [N] [PATH...]  non-test files (of crates' src/) with more than N
                                         non-test lines (default 600) under PATH (default
                                         crates/), longest first

"Non-test" drops `#[cfg(test)]` items (the `mod tests { ... }` blocks) by brace matching.
"Code only" also drops blank lines and comment lines. A function's length runs from its `fn`
line to its closing brace, found by brace matching outside strings, chars and comments.
"""
import os
import re
import sys


def strip(text):
    """Text with strings, chars and comments blanked (newlines kept), for brace matching."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(s, open_at):
    depth = 0
    for k in range(open_at, len(s)):
        if s[k] == "{":
            depth += 1
        elif s[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(s) - 1


def non_test(text):
    """Lines of `text` outside `#[cfg(test)]` items."""
    s = strip(text)
    keep = [True] * (text.count("\n") + 1)
    for m in re.finditer(r"#\[cfg\(test\)\]", s):
        brace = s.find("{", m.end())
        semi = s.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            end = semi
        else:
            end = block_end(s, brace)
        a, b = s.count("\n", 0, m.start()), s.count("\n", 0, end)
        for k in range(a, b + 1):
            keep[k] = False
    return [l for l, k in zip(text.split("\n"), keep) if k]


def rust_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d != "target")
            for f in sorted(files):
                if f.endswith(".rs"):
                    yield os.path.join(root, f)


def lines(crate):
    total = code = 0
    for f in rust_files([os.path.join(crate, "src")]):
        with open(f, encoding="utf-8") as fh:
            kept = non_test(fh.read())
        if kept and kept[-1] == "":
            kept = kept[:-1]
        c = sum(1 for l in kept if l.strip() and not l.strip().startswith("//"))
        print(f"{len(kept):6} {c:6}  {f}")
        total += len(kept)
        code += c
    print(f"{total:6} {code:6}  total (lines, code lines) in {crate}/src, tests excluded")


def fns(limit, paths):
    found = []
    for f in rust_files(paths):
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        s = strip(text)
        for m in re.finditer(r"\bfn\s+(\w+)", s):
            brace, semi = s.find("{", m.end()), s.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue  # a declaration without a body
            end = block_end(s, brace)
            start_line = s.count("\n", 0, m.start()) + 1
            n = s.count("\n", m.start(), end) + 1
            if n > limit:
                found.append((n, f, start_line, m.group(1)))
    for n, f, line, name in sorted(found, reverse=True):
        print(f"{n:5}  {f}:{line}  {name}")
    print(f"{len(found)} functions over {limit} lines")


def test_modules(paths):
    """Files that are `#[cfg(test)] mod NAME;` of another file: tests, whatever their name."""
    out = set()
    for f in rust_files(paths):
        with open(f, encoding="utf-8") as fh:
            s = strip(fh.read())
        base = os.path.basename(f)
        here = os.path.dirname(f)
        if base not in ("mod.rs", "lib.rs", "main.rs"):
            here = os.path.join(here, base[:-3])
        for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", s):
            out.add(os.path.join(here, m.group(1) + ".rs"))
            out.add(os.path.join(here, m.group(1), "mod.rs"))
    return out


def files(limit, paths):
    tests = test_modules(paths)
    found = []
    for f in rust_files(paths):
        parts = f.split(os.sep)
        if "src" not in parts or f in tests:
            continue  # tests/, benches/, examples/, and test modules
        with open(f, encoding="utf-8") as fh:
            kept = non_test(fh.read())
        if kept and kept[-1] == "":
            kept = kept[:-1]
        if len(kept) > limit:
            found.append((len(kept), f))
    for n, f in sorted(found, reverse=True):
        print(f"{n:6}  {f}")
    print(f"{len(found)} non-test files over {limit} lines")


def main(argv):
    if len(argv) >= 2 and argv[0] == "lines":
        for c in argv[1:]:
            lines(c)
    elif argv and argv[0] in ("fns", "files"):
        rest = argv[1:]
        limit = 80 if argv[0] == "fns" else 600
        if rest and rest[0].isdigit():
            limit, rest = int(rest[0]), rest[1:]
        (fns if argv[0] == "fns" else files)(limit, rest or ["crates"])
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
