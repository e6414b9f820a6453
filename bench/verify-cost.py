#!/usr/bin/env python3
"""What verify=crc32c costs a write job's measured throughput, in fio and in iolab.

The same sequential write job (psync, 4 KiB blocks, SIZE, buffered, on a file in --dir) runs
without verify and with verify=crc32c (the headers computed as each block is written; the read
back is timed apart and not counted here). Per round the four runs go fio, iolab, fio+verify,
iolab+verify; over ROUNDS rounds the median write bandwidth of each is taken and each tool's
cost is its verify bandwidth over its plain one. Saved under bench/results/.

Usage: bench/verify-cost.py [--iolab PATH] [--dir DIR] [--size 256m] [--rounds 3]
"""
import argparse, fcntl, json, os, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def write_bw(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr}")
    out = p.stdout
    return json.loads(out[out.find("{"):])["jobs"][0]["write"]["bw_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iolab", default=benchlib.IOLAB)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--size", default="256m")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    benchlib.install(("fio", "fio"))
    if a.iolab == benchlib.IOLAB:
        benchlib.build()
    d = os.path.join(a.dir, "verify-cost")
    os.makedirs(d, exist_ok=True)
    job = ["--name=w", "--filename=vc.data", f"--size={a.size}", "--bs=4k", "--rw=write",
           "--ioengine=psync", "--output-format=json"]
    tools = {"fio": ["fio"], "iolab": [a.iolab, "run"]}
    runs = {(t, v): [] for t in tools for v in ("plain", "crc32c")}
    with open(benchlib.LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(a.rounds):
            for v in ("plain", "crc32c"):
                for t, cmd in tools.items():
                    extra = [] if v == "plain" else ["--verify=crc32c"]
                    runs[(t, v)].append(write_bw(cmd + job + extra, d))
    os.remove(os.path.join(d, "vc.data"))
    med = {k: statistics.median(v) for k, v in runs.items()}
    out = [benchlib.machine(d, benchlib.sh("fio --version"),
           "load average %.2f %.2f %.2f" % os.getloadavg()),
           f"# bench/verify-cost.py --size={a.size} --rounds={a.rounds}: sequential psync "
           "4 KiB writes, buffered; write bandwidth, median of the rounds"]
    for t in tools:
        p, c = med[(t, "plain")], med[(t, "crc32c")]
        out.append(f"{t:6} plain {p / 2**20:8.1f} MiB/s  verify=crc32c {c / 2**20:8.1f} MiB/s  "
                   f"kept {c / p:5.2f}")
    keep = {t: med[(t, "crc32c")] / med[(t, "plain")] for t in tools}
    out.append(f"iolab keeps {keep['iolab']:.2f} of its write bandwidth with verify=crc32c, "
               f"fio {keep['fio']:.2f}")
    print("\n".join(out))
    print("saved", benchlib.save("verify-cost", out))


if __name__ == "__main__":
    main()
