#!/usr/bin/env python3
"""What a cold-cache buffered random read costs the device and the kernel, fio against iolab:
load-independent counts for the vs-fio row "buffered randread cold", whose timed ratio swings
with the machine's load and with which blocks the host happens to cache.

    bench/cold-io.py [--ios N] [--dir D]

For each program: drop the page cache, read N random 4 KiB blocks of a 512 MiB file with
psync (fixed count, not time_based), and take
  - the device bytes read on its behalf: the children's rusage ru_inblock (512-byte units),
    which other processes' I/O does not touch, minus the same program's start-up reads
    (a run of one block), per I/O;
  - its system calls per I/O (strace -f -c), and the calls around the data file
    (open flags, fadvise) as strace shows them.
Equal device bytes and calls per I/O mean the two make the kernel do the same work.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import tempfile

from benchlib import IOLAB, ROOT, build, install, machine, save, sh

ARGS = ["--rw=randread", "--bs=4k", "--ioengine=psync", "--size=512m"]


def drop():
    subprocess.run("sync; echo 3 > /proc/sys/vm/drop_caches", shell=True, check=True)


def device_kib(cmd, ios, data):
    drop()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock
    p = subprocess.run(cmd + ["--name=c", f"--filename={data}", f"--number_ios={ios}",
                              "--output-format=json"] + ARGS, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock
    j = json.loads(p.stdout[p.stdout.find("{"):])["jobs"][0]["read"]
    return (r1 - r0) / 2, j["total_ios"]


def calls(cmd, ios, data, d):
    drop()
    out = os.path.join(d, "calls.txt")
    subprocess.run(["strace", "-f", "-c", "-o", out] + cmd + ["--name=c", f"--filename={data}",
                   f"--number_ios={ios}", "--output=/dev/null"] + ARGS, capture_output=True)
    counts = {}
    for line in open(out):
        f = line.split()
        if len(f) >= 5 and f[3].isdigit():
            counts[f[-1]] = int(f[3])
    trace = os.path.join(d, "trace.txt")
    subprocess.run(["strace", "-f", "-e", "trace=openat,fadvise64", "-o", trace] + cmd +
                   ["--name=c", f"--filename={data}", "--number_ios=4", "--output=/dev/null"] + ARGS,
                   capture_output=True)
    name = os.path.basename(data)
    around, fd = [], None
    for line in open(trace):
        if name in line and "openat" in line:
            fd = line.rsplit("= ", 1)[-1].strip()
            around.append(re.sub(r"^\d+\s+", "", line.strip()).replace(data, name))
        elif fd and f"fadvise64({fd}," in line:
            around.append(re.sub(r"^\d+\s+", "", line.strip()))
    return counts, around


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ios", type=int, default=8192)
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "cold-io"))
    a = ap.parse_args()
    install(("fio", "fio"), ("strace", "strace"))
    build()
    os.makedirs(a.dir, exist_ok=True)
    data = os.path.join(a.dir, "cold.dat")
    if not os.path.exists(data) or os.path.getsize(data) < 512 << 20:
        subprocess.run(["fio", "--name=lay", f"--filename={data}", "--size=512m", "--rw=write",
                        "--bs=1m", "--output=/dev/null"], check=True)
    lines = [machine(a.dir, sh("fio --version")), f"# bench/cold-io.py --ios {a.ios}"]
    with tempfile.TemporaryDirectory() as d:
        for label, cmd in [("fio", ["fio"]), ("iolab", [IOLAB, "run"])]:
            base, _ = device_kib(cmd, 1, data)
            kib, ios = device_kib(cmd, a.ios, data)
            c, around = calls(cmd, a.ios, data, d)
            reads = c.get("pread64", 0)
            lines.append(f"{label:<6} device KiB per I/O {(kib - base) / ios:.2f} (start-up {base:.0f} KiB); "
                         f"pread64 {reads} for {ios} I/Os; all calls {sum(c.values())}")
            lines += [f"         {t}" for t in around]
    print("\n".join(lines))
    print(f"saved {save('cold-io', lines)}")


if __name__ == "__main__":
    main()
