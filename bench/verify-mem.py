#!/usr/bin/env python3
"""Memory per verified block, iolab against fio: the peak RSS of a null-engine write job with
verify=crc32c minus that of the same job without verify, over the number of blocks.

fio runs with --thread so that the job's memory is in the one process measured. Each figure
is one run's peak (os.wait4's ru_maxrss); runs go fio, iolab, alternating, ROUNDS times, and
the median is kept. Saved under bench/results/.

Usage: bench/verify-mem.py [--iolab PATH] [--size 2g] [--rounds 3]
"""
import argparse, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

BS = 4096


# The jobs' verify state files go here, not into the working directory.
SCRATCH = tempfile.mkdtemp(prefix="verify-mem-")


def peak_kib(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=SCRATCH)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed ({status})")
    return ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iolab", default=benchlib.IOLAB)
    ap.add_argument("--size", default="2g")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    benchlib.install(("fio", "fio"))
    if a.iolab == benchlib.IOLAB:
        benchlib.build()
    n = int(a.size[:-1]) * {"m": 2**20, "g": 2**30}[a.size[-1]] // BS
    tools = {"fio": ["fio", "--thread"], "iolab": [a.iolab, "run"]}
    out = [benchlib.machine("/tmp", benchlib.sh("fio --version"),
           "load average %.2f %.2f %.2f" % os.getloadavg()),
           f"# bench/verify-mem.py --size={a.size} --rounds={a.rounds}: ioengine=null, bs=4k, "
           f"{n} blocks; bytes of peak RSS per block with verify=crc32c over without"]
    for rw in ["write", "randwrite"]:
        per = {t: [] for t in tools}
        for _ in range(a.rounds):
            for t, cmd in tools.items():
                job = cmd + ["--name=m", "--ioengine=null", f"--size={a.size}", f"--bs={BS}",
                             f"--rw={rw}"]
                plain = peak_kib(job)
                verify = peak_kib(job + ["--verify=crc32c"])
                per[t].append((verify - plain) * 1024 / n)
        out.append(f"rw={rw:9} " + "  ".join(
            f"{t} {statistics.median(v):6.1f} B/block" for t, v in per.items()))
    print("\n".join(out))
    print("saved", benchlib.save("verify-mem", out))


if __name__ == "__main__":
    main()
