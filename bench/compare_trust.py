#!/usr/bin/env python3
"""What `iolab compare` costs and how far its answer can be trusted (issue 31): the default run
(`iolab compare`, no options) made --runs times in a row, each timed from start to exit, with
every engine's IOPS and p99 as the median and interval of its trials, side by side, so that one
can see whether the intervals of separate runs overlap; and, with --qos, `iolab compare --qos`
on the directory or block device given, its knee sentence and curve table.

Reports (HTML) are kept next to the result under bench/results/ (prefix compare-trust-).
Not run by cargo test: it takes minutes and measures the machine.

usage: bench/compare_trust.py [--runs 3] [--dir DIR] [--qos] [--qos-filename /dev/loopN]
                              [--engines libaio,io_uring]
"""
import argparse, json, os, subprocess, tempfile, time

from benchlib import IOLAB, LOCK, ROOT, build, machine, save


def run(cmd, cwd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    return p, time.monotonic() - t0


def interval(row, head):
    i = (row.get("intervals") or {}).get(head)
    if i:
        return i["median"], i["low"], i["high"]
    v = row.get("iops") if head == "IOPS" else None
    return v, v, v


def p99(row):
    """The row's p99 completion latency (ns), median and range over its trials."""
    key = f"{99.0:.6f}"
    vals = [t["clat_percentile_ns"].get(key) for t in row.get("trials") or [row]]
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    return vals[len(vals) // 2], vals[0], vals[-1]


def fmt(t, unit=""):
    if t is None or t[0] is None:
        return "-"
    m, lo, hi = t
    scale = 1e3 if unit == "k" else 1e3 if unit == "us" else 1
    return f"{m / scale:.1f} [{lo / scale:.1f}, {hi / scale:.1f}]"


def default_runs(args, stamp, lines):
    rows = {}
    times = []
    for i in range(args.runs):
        html = os.path.join(ROOT, "bench", "results", f"compare-trust-{stamp}-default-{i + 1}.html")
        p, secs = run([IOLAB, "compare", "--output-format=json", f"--report={html}"], args.dir)
        if p.returncode != 0:
            raise SystemExit(f"iolab compare failed:\n{p.stderr}")
        times.append(secs)
        for r in json.loads(p.stdout)["iolab compare"]["rows"]:
            rows.setdefault(r["label"], []).append(r)
    lines.append(f"# default run: iolab compare (no options), {args.runs} runs in a row; "
                 "each figure the median of 3 trials [interval: min, max of the trials]")
    lines.append("# wall time of each run (s): " + ", ".join(f"{t:.1f}" for t in times))
    head = f"{'engine':32} " + " ".join(f"{'run ' + str(i + 1) + ' kIOPS':>24}" for i in range(args.runs))
    lines.append(head)
    for label, rs in rows.items():
        lines.append(f"{label:32} " + " ".join(f"{fmt(interval(r, 'IOPS'), 'k'):>24}" for r in rs))
    lines.append(f"{'engine':32} " + " ".join(f"{'run ' + str(i + 1) + ' p99 us':>24}" for i in range(args.runs)))
    for label, rs in rows.items():
        lines.append(f"{label:32} " + " ".join(f"{fmt(p99(r), 'us'):>24}" for r in rs))
    # Where the runs' IOPS intervals of one engine do not all overlap.
    for label, rs in rows.items():
        iv = [interval(r, "IOPS") for r in rs]
        if any(x[0] is None for x in iv):
            continue
        lo = max(x[1] for x in iv)
        hi = min(x[2] for x in iv)
        lines.append(f"# {label}: the {len(iv)} runs' IOPS intervals "
                     + ("overlap" if lo <= hi else "do NOT all overlap"))


def qos_run(args, stamp, lines):
    html = os.path.join(ROOT, "bench", "results", f"compare-trust-{stamp}-qos.html")
    cmd = [IOLAB, "compare", "--qos", f"--engines={args.engines}", f"--report={html}"]
    if args.qos_filename:
        cmd.append(f"--filename={args.qos_filename}")
    p, secs = run(cmd, args.dir)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    lines.append(f"# {' '.join(cmd[1:])}  ({secs:.0f} s)")
    lines.extend(p.stdout.rstrip().splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where compare runs (default: a scratch dir under bench/)")
    ap.add_argument("--qos", action="store_true", help="run --qos instead of the default runs")
    ap.add_argument("--qos-filename", default=None, help="a block device for --qos (e.g. a loop device)")
    ap.add_argument("--engines", default="libaio,io_uring")
    args = ap.parse_args()
    build()
    scratch = None
    if args.dir is None:
        scratch = tempfile.mkdtemp(prefix="compare-trust-", dir=os.path.join(ROOT, "target"))
        args.dir = scratch
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    where = args.qos_filename or args.dir
    lines = [machine(args.dir) + (f"; device {args.qos_filename}" if args.qos_filename else "")]
    import fcntl
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if args.qos:
            qos_run(args, stamp, lines)
        else:
            default_runs(args, stamp, lines)
    if scratch:
        os.rmdir(scratch)
    out = save("compare-trust", lines)
    print("\n".join(lines))
    print(f"saved {out} (measured on {where})")


if __name__ == "__main__":
    main()
