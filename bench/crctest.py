#!/usr/bin/env python3
"""`iolab run --crctest` against `fio --crctest`: each checksum's throughput, as a ratio.

For every checksum both know, fio and iolab run `--crctest=NAME` in turn, A B A B, PAIRS
times; the figure is the median over the pairs of iolab's MiB/s over fio's in the same pair.
Saved under bench/results/ with the machine's line. The machine may be shared: say so next
to any figure quoted from it.

Usage: bench/crctest.py [--iolab PATH] [--pairs 3]
"""
import argparse, os, re, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

LINE = re.compile(r"^([\w-]+):\s+([\d.]+) MiB/sec", re.M)


def speeds(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return {m.group(1): float(m.group(2)) for m in LINE.finditer(out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iolab", default=benchlib.IOLAB)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    benchlib.install(("fio", "fio"))
    if a.iolab == benchlib.IOLAB:
        benchlib.build()
    names = sorted(set(speeds(["fio", "--crctest"])) & set(speeds([a.iolab, "run", "--crctest"])))
    rows = []
    with open(benchlib.LOCK, "w") as lock:
        import fcntl
        fcntl.flock(lock, fcntl.LOCK_EX)
        for n in names:
            pairs = []
            for _ in range(a.pairs):
                f = speeds(["fio", f"--crctest={n}"]).get(n)
                i = speeds([a.iolab, "run", f"--crctest={n}"]).get(n)
                if f and i:
                    pairs.append((f, i))
            if pairs:
                ratio = statistics.median(i / f for f, i in pairs)
                rows.append(f"{n:10} fio {statistics.median(f for f, _ in pairs):9.1f} MiB/s  "
                            f"iolab {statistics.median(i for _, i in pairs):9.1f} MiB/s  "
                            f"iolab/fio {ratio:5.2f}x")
    out = [benchlib.machine(".", benchlib.sh("fio --version"),
           "load average %.2f %.2f %.2f" % os.getloadavg()),
           f"# bench/crctest.py --pairs={a.pairs}: median of iolab/fio per pair (A B A B)"] + rows
    print("\n".join(out))
    print("saved", benchlib.save("crctest", out))


if __name__ == "__main__":
    main()
