#!/usr/bin/env python3
"""Counts fio's options (fio --cmdhelp=all, the fio on PATH) against iolab's definitions.

    tools/fio-options.py [path/to/iolab]     (default: target/debug/iolab)

Prints each of fio's option names iolab does not implement, then the count: implemented (an
`imp!` row: the option acts, or refuses a value the machine cannot serve, naming why), missing
(a `not!` row: refused by name as "not implemented by iolab"), unknown (no row at all).
fio's aliases count with their option; iolab's `--cmdhelp=NAME` resolves both.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fio_names():
    out = subprocess.run(["fio", "--cmdhelp=all"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        name = line.split(":", 1)[0].strip()
        if name and " " not in name:
            names.append(name)
    return names


def main():
    iolab = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "iolab")
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    names = fio_names()
    rows = {"implemented": [], "missing": [], "unknown": []}
    for n in names:
        p = subprocess.run([iolab, "run", f"--cmdhelp={n}"], capture_output=True, text=True)
        text = p.stdout + p.stderr
        if p.returncode != 0:
            rows["unknown"].append(n)
        elif "not implemented by iolab" in text:
            rows["missing"].append(n)
        else:
            rows["implemented"].append(n)
    for kind in ("missing", "unknown"):
        for n in rows[kind]:
            print(f"{kind:<8} {n}")
    print(f"{version} --cmdhelp=all: {len(names)} options; implemented {len(rows['implemented'])}, "
          f"missing {len(rows['missing'])}, unknown {len(rows['unknown'])}")


if __name__ == "__main__":
    main()
