#!/usr/bin/env python3
"""The cost of iolab's MPI mode: a 4-rank `mpirun -np 4 iolab run` against 4 separate
`iolab run` processes started together, on the same job, alternating; per-rank IOPS, and the
start skew of the ranks (from each rank's `job_start`, ms) and of the separate processes.

Needs Open MPI and the binary built with --features mpi (done here). Not run by cargo test.

usage: bench/mpi.py [--rounds N] [--runtime S] [--dir DIR] [--engine E]
"""
import argparse, json, os, statistics, subprocess, tempfile

from benchlib import LOCK, ROOT, install, machine, save, sh

IOLAB = os.path.join(ROOT, "target", "release", "iolab")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def job(args, n):
    return ["--name=m", f"--ioengine={args.engine}", "--rw=randread", "--bs=4k", "--size=64m",
            f"--runtime={args.runtime}", "--time_based", "--output-format=json"]


def mpi_round(args, n):
    cmd = ["mpirun", "--oversubscribe", "-np", str(n), IOLAB, "run"] + job(args, n)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=args.dir, env=ENV)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    ranks = [c for c in json.loads(p.stdout)["client_stats"] if c["jobname"] != "All clients"]
    starts = [c["job_start"] for c in ranks]
    return [c["read"]["iops"] for c in ranks], max(starts) - min(starts)


def separate_round(args, n):
    procs = []
    for i in range(n):
        cmd = [IOLAB, "run"] + job(args, n) + [f"--filename_format=sep.{i}.$jobnum"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, cwd=args.dir))
    out = []
    for p in procs:
        so, se = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"iolab run failed:\n{se}")
        out.append(json.loads(so)["jobs"][0]["read"]["iops"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--engine", default="psync")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    install(("mpirun", "openmpi-bin"), ("mpicc", "libopenmpi-dev"), ("clang", "clang"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "iolab", "--features", "mpi"],
                   cwd=ROOT, check=True)
    args.dir = args.dir or tempfile.mkdtemp(prefix="iolab-mpi-", dir=os.path.join(ROOT, "target"))
    lines = [machine(args.dir, sh("mpirun --version | head -1")),
             f"# {args.ranks} ranks vs {args.ranks} separate processes, {args.engine} 4k randread "
             f"on 64 MiB files (page cache), {args.runtime}s, {args.rounds} alternating rounds"]
    ratios, skews = [], []
    import fcntl
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for r in range(args.rounds):
            sep = separate_round(args, args.ranks)
            mpi, skew = mpi_round(args, args.ranks)
            ratio = statistics.mean(mpi) / statistics.mean(sep)
            ratios.append(ratio)
            skews.append(skew)
            lines.append(f"round {r}: per-rank IOPS mpi {statistics.mean(mpi):.0f} "
                         f"separate {statistics.mean(sep):.0f} ratio {ratio:.3f}; start skew {skew} ms")
    lines.append(f"median per-rank IOPS ratio mpi/separate {statistics.median(ratios):.3f}; "
                 f"start skew max {max(skews)} ms, median {statistics.median(skews)} ms")
    print("\n".join(lines))
    print("saved", save("mpi", lines))
    subprocess.run(f"rm -rf {args.dir}", shell=True)


if __name__ == "__main__":
    main()
