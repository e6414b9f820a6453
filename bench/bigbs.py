#!/usr/bin/env python3
"""Huge block size ranges (issue 13): a job of 8 MiB with bsrange=0-4G (and 4k-1g with
refill_buffers) against fio 3.33 in the same run, fio and iolab alternating, PAIRS pairs.
Prints each case's median wall time and peak resident memory (the child's ru_maxrss) of both,
and their ratio. Before the fix iolab zeroed and filled every buffer whole: 57 s and 4.2 GB
for the write case. Not run by cargo test.

usage: bench/bigbs.py [--pairs N] [--binary PATH] [--dir DIR]
"""
import argparse, os, statistics, subprocess, tempfile, time

from benchlib import IOLAB, build, machine, save

CASES = [
    ("read bsrange=0-4G", ["--rw=read", "--bsrange=0-4G"]),
    ("write bsrange=0-4G", ["--rw=write", "--bsrange=0-4G"]),
    ("write bsrange=4k-1g refill", ["--rw=write", "--bsrange=4k-1g", "--refill_buffers"]),
]


def once(cmd):
    """Wall seconds and peak resident MiB of one run of cmd."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return time.monotonic() - t0, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--binary", default=IOLAB)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    if a.binary == IOLAB:
        build()
    d = a.dir or tempfile.mkdtemp(prefix="iolab-bigbs-")
    f = os.path.join(d, "f")
    fio_v = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [machine(d, fio_v, f"iolab {a.binary}"),
             f"# {a.pairs} pairs, fio then iolab; size=8m; medians"]
    for name, opts in CASES:
        common = ["--name=t", f"--filename={f}", "--size=8m", *opts]
        runs = {"fio": [], "iolab": []}
        for _ in range(a.pairs):
            runs["fio"].append(once(["fio", *common]))
            runs["iolab"].append(once([a.binary, "run", *common]))
        med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
               for k, v in runs.items()}
        (ft, fm), (it, im) = med["fio"], med["iolab"]
        lines.append(f"{name}: fio {ft:.3f} s {fm:.0f} MiB; iolab {it:.3f} s {im:.0f} MiB; "
                     f"iolab/fio time {it / ft:.2f}, memory {im / fm:.2f}")
    print("\n".join(lines))
    print(save("bigbs", lines))


if __name__ == "__main__":
    main()
