#!/usr/bin/env python3
"""iolab cp against GNU cp and dd on a 2 GiB file, and against the device limit (fio).

Cases: warm and cold page cache (caches dropped before every cold run) x buffered and direct,
and a tree of 5000 files of 1 B to 64 KiB (168 MB) against cp -r + sync -f.
Peers, made as durable as iolab cp (which fsyncs before it renames): `cp SRC DST && sync DST`,
and `dd bs=1M iflag=direct oflag=direct conv=fsync`. In the buffered cases the page-cache-only
pair (iolab cp --no-fsync against plain cp) is measured too. The device limit is fio reading
the source and writing another file at the same time (1 MiB, O_DIRECT, depth 16): a copy must do
both, so the lower of the two bandwidths is the most a copy can reach.

Every round runs each tool once, in turn (A B C A B C ...); the table has medians over the
rounds, the speed ratio iolab/best peer (>1: iolab faster) and iolab's share of the device
limit. Not run by cargo test. Needs root for drop_caches.

usage: bench/cp.py [--rounds N] [--size-gib G] [--dir DIR] [--only CASE]
"""
import argparse, fcntl, json, os, shutil, statistics, subprocess, time

from benchlib import IOLAB, LOCK, ROOT, build, install, machine, save, sh


def prepare(src, warm):
    sh("sync")
    if warm:
        sh(f"cat {src} > /dev/null" if os.path.isfile(src) else f"tar cf - {src} > /dev/null")
    else:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")


def timed(cmd, dst):
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    elif os.path.exists(dst):
        os.remove(dst)
    sh("sync")
    t = time.monotonic()
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    el = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr}")
    return el


def device_limit(src, other, size):
    """MB/s a copy can reach: fio reading src while writing other, the lower bandwidth."""
    cmd = (f"fio --output-format=json --name=r --filename={src} --rw=read --bs=1M --size={size} "
           f"--direct=1 --ioengine=libaio --iodepth=16 --name=w --filename={other} --rw=write "
           f"--bs=1M --size={size} --direct=1 --ioengine=libaio --iodepth=16")
    j = json.loads(sh(cmd))
    r = j["jobs"][0]["read"]["bw_bytes"]
    w = j["jobs"][1]["write"]["bw_bytes"]
    os.remove(other)
    return min(r, w) / 1e6, r / 1e6, w / 1e6


def write_limit(other, size):
    """MB/s of fio writing a new file alone (1 MiB, O_DIRECT, depth 16): the most a copy whose
    source is already in memory can reach."""
    cmd = (f"fio --output-format=json --name=w --filename={other} --rw=write --bs=1M --size={size} "
           f"--direct=1 --ioengine=libaio --iodepth=16")
    j = json.loads(sh(cmd))
    os.remove(other)
    return j["jobs"][0]["write"]["bw_bytes"] / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-gib", type=int, default=2)
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "bench-cp"))
    ap.add_argument("--only")
    a = ap.parse_args()
    install(("fio", "fio"))
    build()
    # The whole run holds the bench lock: its figures are alternating pairs, not a wrk run.
    lock = open(LOCK, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.makedirs(a.dir, exist_ok=True)
    size = a.size_gib << 30
    src, dst = os.path.join(a.dir, "src.dat"), os.path.join(a.dir, "dst.dat")
    if not os.path.exists(src) or os.path.getsize(src) != size:
        sh(f"fio --name=mk --filename={src} --rw=write --bs=1M --size={size} --direct=1 "
           f"--ioengine=libaio --iodepth=8 --refill_buffers=1 --output=/dev/null")
    head = [machine(a.dir, sh("cp --version | head -1"), sh("dd --version | head -1"), sh("fio --version")),
            f"# bench/cp.py --rounds {a.rounds} --size-gib {a.size_gib}: {a.size_gib} GiB file; "
            f"medians of {a.rounds} rounds, tools alternating within each round"]
    print("\n".join(head), flush=True)
    limits, wlimits = [], []
    for _ in range(a.rounds):
        limits.append(device_limit(src, dst, size))
        wlimits.append(write_limit(dst, size))
    lim = {"rw": statistics.median(l[0] for l in limits), "w": statistics.median(wlimits)}
    line = (f"device limit, source from the device (fio read+write at once): read "
            f"{statistics.median(l[1] for l in limits):.0f} MB/s, write {statistics.median(l[2] for l in limits):.0f} "
            f"MB/s -> {lim['rw']:.0f} MB/s\n"
            f"device limit, source in memory (fio write alone): {lim['w']:.0f} MB/s")
    print(line, flush=True)
    lines = [line]
    dd = f"dd if={src} of={dst} bs=1M iflag=direct oflag=direct conv=fsync"
    cases = [
        ("warm buffered", True, "w", [("iolab cp", f"{IOLAB} cp {src} {dst}"),
                                 ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("cold buffered", False, "rw", [("iolab cp", f"{IOLAB} cp {src} {dst}"),
                                  ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("warm direct", True, "rw", [("iolab cp --direct", f"{IOLAB} cp --direct {src} {dst}"),
                               ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("cold direct", False, "rw", [("iolab cp --direct", f"{IOLAB} cp --direct {src} {dst}"),
                                ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("warm, no fsync", True, "w", [("iolab cp --no-fsync", f"{IOLAB} cp --no-fsync {src} {dst}"),
                                  ("cp", f"cp {src} {dst}")]),
        ("cold, no fsync", False, "rw", [("iolab cp --no-fsync", f"{IOLAB} cp --no-fsync {src} {dst}"),
                                   ("cp", f"cp {src} {dst}")]),
    ]
    tree, tdst = os.path.join(a.dir, "tree"), os.path.join(a.dir, "tree-copy")
    if not os.path.isdir(tree):
        import random
        r = random.Random(1)
        for d in range(50):
            os.makedirs(os.path.join(tree, f"d{d}"), exist_ok=True)
            for f in range(100):
                with open(os.path.join(tree, f"d{d}", f"f{f}"), "wb") as fh:
                    fh.write(os.urandom(r.randint(1, 65536)))
    tree_bytes = int(sh(f"du -sb {tree} | cut -f1"))
    cases += [
        ("tree warm", True, "w", [("iolab cp -r", f"{IOLAB} cp -r {tree} {tdst}"),
                                  ("cp -r + sync", f"cp -r {tree} {tdst} && sync -f {tdst}")]),
    ]
    hdr = f"{'case':<16}{'tool':<22}{'median s':>10}{'MB/s':>10}   runs (s)"
    print(hdr, flush=True)
    lines.append(hdr)
    for name, warm, lk, tools in cases:
        if a.only and a.only != name:
            continue
        times = {t: [] for t, _ in tools}
        what, where, nbytes = (tree, tdst, tree_bytes) if name.startswith("tree") else (src, dst, size)
        for _ in range(a.rounds):
            for t, cmd in tools:
                prepare(what, warm)
                times[t].append(timed(cmd, where))
        med = {t: statistics.median(v) for t, v in times.items()}
        for t, _ in tools:
            mbs = nbytes / med[t] / 1e6
            row = (f"{name:<16}{t:<22}{med[t]:>10.2f}{mbs:>10.0f}   "
                   f"{' '.join(f'{x:.2f}' for x in times[t])}")
            print(row, flush=True)
            lines.append(row)
        me = tools[0][0]
        best = min((t for t, _ in tools[1:]), key=lambda t: med[t])
        mine = nbytes / med[me] / 1e6
        summary = (f"{name:<16}=> {me} / best peer ({best}): {med[best] / med[me]:.2f}x speed; "
                   f"{mine:.0f} MB/s = {mine / lim[lk]:.0%} of the device limit ({lim[lk]:.0f} MB/s)")
        print(summary, flush=True)
        lines.append(summary)
    for p in (dst, tdst):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    out = save("cp", head + lines)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
