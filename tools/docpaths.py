#!/usr/bin/env python3
"""Every path a document names exists: the check behind "documents that are true" (issue 30).

    tools/docpaths.py [--list]

Reads the project's prose (README.md, ARCHITECTURE.md, DESIGN.md, docs/, bench/README*, the
Cargo.toml comments) and every doc comment (`//!`, `///`) in crates/, bench/ and fuzz/, takes
each token that looks like a path in the repository (it has a '/' and ends in a known file
suffix, or starts with one of the repository's top folders), and looks for it:
  - from the repository's root;
  - under crates/ (documents say `runner/src/place.rs` for crates/runner/src/place.rs);
  - beside the file that names it, and in its crate's src/ (doc comments name siblings);
  - as a crate name (`crates/engine`).
A path that none of these finds is printed with the file and line that names it, and the
exit status is 1. `--list` prints every path checked. Paths under target/, /tmp, /dev, /proc,
/sys, ../shared the kernel's and fio's source paths (linux/, fs/, engines/, ...) and URLs are not the repository's and are not checked; a token with a '*', '<'
or '{' is a pattern, not a path.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIXES = (".rs", ".md", ".py", ".sh", ".toml", ".fio", ".txt", ".json", ".html", ".c", ".h")
TOPS = ("crates/", "bench/", "tools/", "tests/", "docs/", "fuzz/", "examples/", ".ci/")
CRATES = sorted(os.path.join(ROOT, "crates", c) for c in os.listdir(os.path.join(ROOT, "crates")))
TOKEN = re.compile(r"[A-Za-z0-9_.\-/]+")
SKIP_PREFIX = ("target/", "/", "../", "http", "t/", "tools/fio",
               # the kernel's and fio's sources, cited by their own paths
               "linux/", "fs/", "include/", "io_uring/", "engines/", "lib/", "os/")


def prose_files():
    out = []
    for name in ("README.md", "ARCHITECTURE.md", "DESIGN.md"):
        if os.path.exists(os.path.join(ROOT, name)):
            out.append(name)
    for d in ("docs", "bench", "tests", "examples"):
        top = os.path.join(ROOT, d)
        if not os.path.isdir(top):
            continue
        for n in sorted(os.listdir(top)):
            if n.endswith(".md"):
                out.append(os.path.join(d, n))
    for d, _, names in os.walk(ROOT):
        rel = os.path.relpath(d, ROOT)
        if rel.startswith(("target", ".git")) or "/target" in rel:
            continue
        if "Cargo.toml" in names:
            out.append(os.path.normpath(os.path.join(rel, "Cargo.toml")))
    return out


def code_files():
    out = []
    for top in ("crates", "bench", "fuzz", "tools"):
        for d, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [x for x in dirs if x not in ("target", "results")]
            for n in names:
                if n.endswith((".rs", ".py", ".sh")):
                    out.append(os.path.relpath(os.path.join(d, n), ROOT))
    return sorted(out)


def comment_text(path, line):
    s = line.strip()
    if path.endswith(".rs"):
        for lead in ("//!", "///"):
            if s.startswith(lead):
                return s[len(lead):]
        return None
    if path.endswith(".toml"):
        return s[1:] if s.startswith("#") else None
    if path.endswith((".py", ".sh")):
        return s[1:] if s.startswith("#") else None
    return line


def candidates(tok):
    tok = tok.rstrip(".,:;)'`")
    if not tok or "/" not in tok or tok.endswith(("-", "_")):
        return None
    if tok.startswith(SKIP_PREFIX) or "//" in tok or tok.startswith(("./", "~")):
        return None
    looks = tok.endswith(SUFFIXES) or tok.startswith(TOPS)
    if not looks:
        return None
    return tok


def exists(tok, named_in):
    here = os.path.dirname(os.path.join(ROOT, named_in))
    parts = named_in.split(os.sep)
    tries = [os.path.join(ROOT, tok), os.path.join(ROOT, "crates", tok), os.path.join(here, tok)]
    if parts[0] == "crates" and len(parts) > 1:
        crate = os.path.join(ROOT, "crates", parts[1])
        tries += [os.path.join(crate, tok), os.path.join(crate, "src", tok)]
    # ARCHITECTURE.md's rows name a crate's files from its src/ (`job/iolog.rs` in the runner's row)
    for crate in CRATES:
        tries += [os.path.join(crate, "src", tok), os.path.join(crate, tok)]
    tok_dir = tok.rstrip("/")
    return any(os.path.exists(t) or os.path.exists(t.rstrip("/")) for t in tries) or \
        os.path.isdir(os.path.join(ROOT, tok_dir))


def main():
    listing = "--list" in sys.argv
    bad = []
    checked = 0
    files = [(p, False) for p in prose_files()] + [(p, True) for p in code_files()]
    for path, is_code in files:
        try:
            with open(os.path.join(ROOT, path), errors="replace") as f:
                lines = f.readlines()
        except OSError:
            continue
        fence = False
        for i, line in enumerate(lines, 1):
            text = comment_text(path, line) if (is_code or path.endswith(".toml")) else line
            if text is None:
                continue
            if not is_code and text.lstrip().startswith("```"):
                fence = not fence
            for tok in TOKEN.findall(text):
                if any(c in tok for c in "*<{"):
                    continue
                tok = candidates(tok)
                if tok is None:
                    continue
                checked += 1
                ok = exists(tok, path)
                if listing:
                    print(f"{'ok ' if ok else 'MISSING'} {path}:{i}: {tok}")
                if not ok:
                    bad.append((path, i, tok))
    for path, i, tok in bad:
        print(f"{path}:{i}: names {tok}, which does not exist")
    print(f"docpaths: {checked} paths named in documents and doc comments, {len(bad)} missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
