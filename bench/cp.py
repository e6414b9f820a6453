#!/usr/bin/env python3
"""iolab cp against GNU cp and dd on a 2 GiB file, and against the device limit (fio).

Cases: warm and cold page cache (caches dropped before every cold run) x buffered and direct.
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
import argparse, json, os, platform, shutil, statistics, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOLAB = os.path.join(ROOT, "target", "release", "iolab")


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def prepare(src, warm):
    sh("sync")
    if warm:
        sh(f"cat {src} > /dev/null")
    else:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")


def timed(cmd, dst):
    if os.path.exists(dst):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-gib", type=int, default=2)
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "bench-cp"))
    ap.add_argument("--only")
    a = ap.parse_args()
    if shutil.which("fio") is None:
        subprocess.run("apt-get update -qq && apt-get install -y -qq fio >/dev/null", shell=True, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "iolab"], cwd=ROOT, check=True)
    os.makedirs(a.dir, exist_ok=True)
    size = a.size_gib << 30
    src, dst = os.path.join(a.dir, "src.dat"), os.path.join(a.dir, "dst.dat")
    if not os.path.exists(src) or os.path.getsize(src) != size:
        sh(f"fio --name=mk --filename={src} --rw=write --bs=1M --size={size} --direct=1 "
           f"--ioengine=libaio --iodepth=8 --refill_buffers=1 --output=/dev/null")
    fs = sh(f"df -T {a.dir} | awk 'NR==2{{print $2\" on \"$1}}'")
    head = [f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; kernel {platform.release()}; "
            f"{os.cpu_count()} CPUs; files on {fs}; {sh('cp --version | head -1')}; "
            f"{sh('dd --version | head -1')}; {sh('fio --version')}",
            f"# bench/cp.py --rounds {a.rounds} --size-gib {a.size_gib}: {a.size_gib} GiB file; "
            f"medians of {a.rounds} rounds, tools alternating within each round"]
    print("\n".join(head), flush=True)
    limits = []
    for _ in range(a.rounds):
        limits.append(device_limit(src, dst, size))
    lim = statistics.median(l[0] for l in limits)
    line = (f"device limit (fio read+write at once): read {statistics.median(l[1] for l in limits):.0f} MB/s, "
            f"write {statistics.median(l[2] for l in limits):.0f} MB/s -> copy limit {lim:.0f} MB/s")
    print(line, flush=True)
    lines = [line]
    dd = f"dd if={src} of={dst} bs=1M iflag=direct oflag=direct conv=fsync"
    cases = [
        ("warm buffered", True, [("iolab cp", f"{IOLAB} cp {src} {dst}"),
                                 ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("cold buffered", False, [("iolab cp", f"{IOLAB} cp {src} {dst}"),
                                  ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("warm direct", True, [("iolab cp --direct", f"{IOLAB} cp --direct {src} {dst}"),
                               ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("cold direct", False, [("iolab cp --direct", f"{IOLAB} cp --direct {src} {dst}"),
                                ("cp + sync", f"cp {src} {dst} && sync {dst}"), ("dd direct", dd)]),
        ("warm, no fsync", True, [("iolab cp --no-fsync", f"{IOLAB} cp --no-fsync {src} {dst}"),
                                  ("cp", f"cp {src} {dst}")]),
        ("cold, no fsync", False, [("iolab cp --no-fsync", f"{IOLAB} cp --no-fsync {src} {dst}"),
                                   ("cp", f"cp {src} {dst}")]),
    ]
    hdr = f"{'case':<16}{'tool':<22}{'median s':>10}{'MB/s':>8}{'runs (s)':>24}"
    print(hdr, flush=True)
    lines.append(hdr)
    for name, warm, tools in cases:
        if a.only and a.only != name:
            continue
        times = {t: [] for t, _ in tools}
        for _ in range(a.rounds):
            for t, cmd in tools:
                prepare(src, warm)
                times[t].append(timed(cmd, dst))
        med = {t: statistics.median(v) for t, v in times.items()}
        for t, _ in tools:
            mbs = size / med[t] / 1e6
            row = (f"{name:<16}{t:<22}{med[t]:>10.2f}{mbs:>8.0f}"
                   f"{' '.join(f'{x:.2f}' for x in times[t]):>24}")
            print(row, flush=True)
            lines.append(row)
        me = tools[0][0]
        best = min((t for t, _ in tools[1:]), key=lambda t: med[t])
        mine = size / med[me] / 1e6
        summary = (f"{name:<16}=> {me} / best peer ({best}): {med[best] / med[me]:.2f}x speed; "
                   f"{mine:.0f} MB/s = {mine / lim:.0%} of the copy limit")
        print(summary, flush=True)
        lines.append(summary)
    if os.path.exists(dst):
        os.remove(dst)
    out = os.path.join(ROOT, "bench", "results", time.strftime("cp-%Y%m%dT%H%M%SZ.txt", time.gmtime()))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        fh.write("\n".join(head + lines) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
