#!/usr/bin/env python3
"""Counts fio's options (the fio on PATH) against iolab's definitions.

    tools/fio-options.py [path/to/iolab]     (default: target/debug/iolab)

fio's options are those of `fio --cmdhelp=all` and, for each engine `fio --enghelp` lists,
`fio --enghelp=ENGINE` (engine options do not appear in --cmdhelp=all), and the few fio 3.33
has but leaves out of --cmdhelp=all (bs_is_seq_rand, softrandommap, iomem_align,
verify_async_cpus): each
row of iolab's table fio's `--cmdhelp=NAME` describes under a name not seen yet. Each name is:
implemented (an `imp!` row: the option acts, or refuses a value the machine cannot serve,
naming why); refused with its engine (a `not!` row of an engine iolab refuses: the reason is
the engine's, printed once per engine); missing (any other `not!` row: refused by name as "not
implemented by iolab"); unknown (no row at all). Prints each name that is not implemented,
then the counts. fio's aliases count with their option; iolab's `--cmdhelp=NAME` resolves both.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def names_of(args):
    out = subprocess.run(["fio"] + args, capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        if ":" not in line:
            continue
        name = line.split(":", 1)[0].strip()
        if name and " " not in name:
            names.append(name)
    return names


def fio_names():
    """fio's option names, each with the engines whose --enghelp lists it (none: general)."""
    names = {n: [] for n in names_of(["--cmdhelp=all"])}
    listing = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True).stdout
    for engine in [l.strip() for l in listing.splitlines()[1:] if l.strip()]:
        for n in names_of([f"--enghelp={engine}"]):
            names.setdefault(n, []).append(engine)
    return names


def hidden_names(iolab, known):
    """fio's options that --cmdhelp=all leaves out: iolab's rows fio describes by name."""
    rows = subprocess.run([iolab, "run", "--cmdhelp=all"], capture_output=True, text=True).stdout
    found = []
    for line in rows.splitlines():
        name = line.split(":", 1)[0].strip()
        if not name or " " in name or name in known:
            continue
        p = subprocess.run(["fio", f"--cmdhelp={name}"], capture_output=True, text=True)
        out = p.stdout
        first = out.strip().split(":", 1)[0].strip() if out.strip() else ""
        # An unknown name: "No such command" on standard error, its closest match on standard
        # output.
        unknown = "No such command" in p.stdout + p.stderr
        if first and not unknown and first not in known and first not in found:
            found.append(first)
    return found


def engine_refusal(iolab, engine):
    """Why iolab refuses `engine`, or None when iolab has it."""
    p = subprocess.run([iolab, "run", "--parse-only", "--name=x", f"--ioengine={engine}"],
                       capture_output=True, text=True)
    text = p.stdout + p.stderr
    if "refused by iolab:" in text:
        return text.split("refused by iolab:", 1)[1].split("(iolab has:")[0].strip()
    return None


def main():
    iolab = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "iolab")
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    names = fio_names()
    hidden = hidden_names(iolab, names)
    for n in hidden:
        names[n] = []
    refusals = {}
    rows = {"implemented": [], "refused": [], "missing": [], "unknown": []}
    for n, engines in names.items():
        p = subprocess.run([iolab, "run", f"--cmdhelp={n}"], capture_output=True, text=True)
        text = p.stdout + p.stderr
        if p.returncode != 0:
            rows["unknown"].append(n)
        elif "not implemented by iolab" not in text:
            rows["implemented"].append(n)
        else:
            for e in engines:
                if e not in refusals:
                    refusals[e] = engine_refusal(iolab, e)
            refused = [e for e in engines if refusals[e]]
            if engines and len(refused) == len(engines):
                rows["refused"].append(f"{n} ({', '.join(refused)})")
            else:
                rows["missing"].append(n)
    for kind in ("refused", "missing", "unknown"):
        for n in rows[kind]:
            print(f"{kind:<8} {n}")
    for e, why in sorted(refusals.items()):
        if why:
            print(f"engine   {e}: {why}")
    print(f"fio's options left out of --cmdhelp=all: {' '.join(hidden)}")
    print(f"{version} --cmdhelp=all, --enghelp and those: {len(names)} options; implemented "
          f"{len(rows['implemented'])}, refused with their engine {len(rows['refused'])}, "
          f"missing {len(rows['missing'])}, unknown {len(rows['unknown'])}")


if __name__ == "__main__":
    main()
