#!/usr/bin/env python3
"""iolab run vs fio on the same jobs, alternating (fio, iolab, fio, iolab, ...).

Prints per job the medians over PAIRS of the ratios iolab/fio: IOPS, bandwidth (fio's net
listener counts a short recv and the rest of it as two I/Os, so there IOPS alone misleads),
mean lat (issue to completion), mean clat, p99 clat,
CPU time per I/O, and IOPS per core. Not run by cargo test.

usage: bench/vs-fio.py [--pairs N] [--runtime S] [--dir DIR] [--only NAME]
"""
import argparse, fcntl, json, os, statistics, subprocess

from benchlib import LOCK, ROOT, build, install, machine, save, sh

NET = ["--ioengine=net", "--port=48123", "--bs=4k", "--size=64g"]
# Which job and direction a run is measured on (default: the first job's reads). A net pair
# is measured on its listener: whichever side's runtime ends first closes the connection,
# and the other may end with ECONNRESET (fio's and iolab's alike).
MEASURE = {}

JOBS = [
    ("null d1", ["--ioengine=null", "--iodepth=1", "--rw=randread", "--bs=4k", "--size=1g"]),
    ("null d128", ["--ioengine=null", "--iodepth=128", "--rw=randread", "--bs=4k", "--size=1g"]),
    ("psync d1", ["--ioengine=psync", "--iodepth=1", "--rw=randread", "--bs=4k", "--direct=1", "--size=512m", "FILE"]),
    ("libaio d32", ["--ioengine=libaio", "--iodepth=32", "--rw=randread", "--bs=4k", "--direct=1", "--size=512m", "FILE"]),
    ("io_uring d32", ["--ioengine=io_uring", "--iodepth=32", "--rw=randread", "--bs=4k", "--direct=1", "--size=512m", "FILE"]),
    # Metadata engines: one I/O is one create (open O_CREAT + close) or one stat of a file.
    ("filecreate", ["--ioengine=filecreate", "--rw=read", "--bs=4k", "--filesize=4k", "--nrfiles=2000", "DIR"]),
    ("filestat", ["--ioengine=filestat", "--rw=read", "--bs=4k", "--filesize=4k", "--nrfiles=2000", "DIR"]),
    # iolab's io_uring variants beside them, against fio's synchronous engine (fio has none).
    ("filecreate uring", ["--ioengine=filecreate", "--rw=read", "--bs=4k", "--filesize=4k", "--nrfiles=2000", "DIR"],
     ["--meta_io_uring=1"]),
    ("filestat uring", ["--ioengine=filestat", "--rw=read", "--bs=4k", "--filesize=4k", "--nrfiles=2000", "DIR"],
     ["--meta_io_uring=1"]),
    # net: a listener and a sender in one run on loopback (fio needs the sender's startdelay,
    # or it may connect before the listener listens). Measured on the listener's reads; with
    # pingpong each read waits for the sender's next request and answers it: a round trip.
    # Buffered I/O through the page cache. "cold" drops the caches before every run, so each
    # starts from the device (fio's fadvise_hint default: no read-ahead for random reads).
    ("buffered randread cold", ["--ioengine=psync", "--rw=randread", "--bs=4k", "--size=512m", "FILE"], [],
     {"cold"}),
    ("buffered read", ["--ioengine=psync", "--rw=read", "--bs=128k", "--size=512m", "FILE"], [], {"cold"}),
    ("randrw 70/30", ["--ioengine=libaio", "--iodepth=16", "--rw=randrw", "--rwmixread=70", "--bs=4k",
                      "--direct=1", "--size=512m", "FILE"]),
    ("net tcp", NET + ["--name=rx", "--listen", "--rw=read", "--name=tx", "--hostname=127.0.0.1",
                       "--rw=write", "--startdelay=1"]),
    ("net pingpong", NET + ["--pingpong=1", "--nodelay=1", "--name=rx", "--listen", "--rw=read",
                            "--name=tx", "--hostname=127.0.0.1", "--rw=write", "--startdelay=1"]),
]


def drop_caches():
    """Writes back and drops the page cache (a cost to every process, undone by reading)."""
    subprocess.run("sync; echo 3 > /proc/sys/vm/drop_caches", shell=True, check=True)


def run(binary, args, runtime, measure=(0, None)):
    # A job list of its own (--name=... inside args) takes the options before it as global.
    name = [] if any(x.startswith("--name=") for x in args) else ["--name=v"]
    cmd = [binary] + name + [f"--runtime={runtime}", "--time_based", "--output-format=json"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        # fio's net listener prints "fio: waiting for connection" before the JSON.
        j = json.loads(p.stdout[p.stdout.find("{"):])["jobs"][measure[0]]
    except (ValueError, KeyError, IndexError):
        j = {"error": -1}
    # A net sender may end with an error when its listener stops first; the job measured
    # must have none.
    if j["error"] != 0 or (p.returncode != 0 and len(j) == 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    # One direction where the job says which; else reads and writes together (randrw): IOPS
    # and bandwidth add up, mean clat is weighted by I/Os, p99 is the larger direction's.
    dirs = [j[measure[1]]] if measure[1] else [j[d] for d in ("read", "write") if j[d]["total_ios"] > 0]
    ios = sum(d["total_ios"] for d in dirs)
    iops = sum(d["iops"] for d in dirs)
    big = max(dirs, key=lambda d: d["total_ios"])
    cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] * 1e6
    return {
        "iops": iops,
        "bw": sum(d["bw"] for d in dirs),
        "clat": sum(d["clat_ns"]["mean"] * d["total_ios"] for d in dirs) / max(ios, 1),
        "lat": sum(d["lat_ns"]["mean"] * d["total_ios"] for d in dirs) / max(ios, 1),
        "p99": big["clat_ns"]["percentile"]["99.000000"],
        "cpu_per_io": cpu_ns / max(ios, 1),
        "iops_per_core": iops / max((j["usr_cpu"] + j["sys_cpu"]) / 100.0, 1e-9),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "vs-fio"))
    ap.add_argument("--only", help="comma-separated job names")
    a = ap.parse_args()
    install(("fio", "fio"))
    build()
    os.makedirs(a.dir, exist_ok=True)
    fio_link = os.path.join(a.dir, "fio")  # iolab under fio's name: exercises the symlink mode
    if os.path.lexists(fio_link):
        os.remove(fio_link)
    os.symlink(os.path.join(ROOT, "target", "release", "iolab"), fio_link)
    data = os.path.join(a.dir, "vs-fio.dat")
    # No other benchmark of this machine runs while these figures are measured.
    lock = open(LOCK, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    head = [machine(a.dir, sh("fio --version")),
            f"# bench/vs-fio.py --pairs {a.pairs} --runtime {a.runtime}; ratios are iolab/fio, median of the pairs"]
    print("\n".join(head))
    cols = ["iops", "bw", "lat", "clat", "p99", "cpu_per_io", "iops_per_core"]
    print(f"{'job':<24}" + "".join(f"{c:>15}" for c in cols) + f"{'fio IOPS':>12}{'iolab IOPS':>12}")
    lines = []
    meta_dir = os.path.join(a.dir, "meta")
    os.makedirs(meta_dir, exist_ok=True)
    for name, args, *extra in JOBS:
        if a.only and name not in a.only.split(","):
            continue
        args = [f"--filename={data}" if x == "FILE" else f"--directory={meta_dir}" if x == "DIR" else x
                for x in args]
        only_iolab = extra[0] if extra else []
        cold = "cold" in (extra[1] if len(extra) > 1 else set())
        ratios = {c: [] for c in cols}
        raw = {"fio": [], "iolab": []}
        for _ in range(a.pairs):
            m = MEASURE.get(name, (0, None))
            if cold:
                drop_caches()
            f = run("fio", args, a.runtime, m)
            if cold:
                drop_caches()
            i = run(fio_link, args + only_iolab, a.runtime, m)
            raw["fio"].append(f["iops"])
            raw["iolab"].append(i["iops"])
            for c in cols:
                ratios[c].append(i[c] / f[c] if f[c] else float("nan"))
        line = f"{name:<24}" + "".join(f"{statistics.median(ratios[c]):>15.3f}" for c in cols)
        line += f"{statistics.median(raw['fio']):>12.0f}{statistics.median(raw['iolab']):>12.0f}"
        print(line, flush=True)
        lines.append(line)
    cols_line = f"{'job':<24}" + "".join(f"{c:>15}" for c in cols) + f"{'fio IOPS':>12}{'iolab IOPS':>12}"
    out = save("vs-fio", head + [cols_line] + lines)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
