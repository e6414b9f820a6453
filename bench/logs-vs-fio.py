#!/usr/bin/env python3
"""fio's log files and I/O logs from fio 3.33 and from iolab, job by job (issue 16): each job
of the list below runs through fio and through `iolab run` with the same options in a temp
directory of its own, and the files they leave are compared structurally:

- names: the same log files (`.log`, `.log.fz`, iologs), no more, no fewer;
- columns: the set of column counts of each file's lines (compressed files through
  `fio --inflate-log`, so fio reads iolab's);
- samples: lines per direction within a tolerance (max(4, 25 %); runs are rate-limited or
  sized, so both do the same work);
- values: every value and time non-negative, times within the runtime, block sizes those
  of the job, windowed rates within 2x of fio's median;
- I/O logs: the version line, the count of each action, and the I/O count of a replay.

Prints a table and saves it under bench/results/logs-vs-fio-*.txt. Not run by cargo test.

Known differences (KNOWN) are listed with their reason and not counted as differing.

usage: bench/logs-vs-fio.py [--binary PATH] [--only SUBSTRING] [--keep]
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile
from collections import Counter

from benchlib import IOLAB, build, machine, save, sh

SIZE = ["--size=4m", "--bs=4k", "--filename=data"]
PSYNC = ["--ioengine=psync", *SIZE]
# A timed job at a fixed rate: both tools do the same number of I/Os.
TIMED = ["--ioengine=null", "--size=64m", "--bs=4k", "--time_based", "--runtime=2",
         "--rate_iops=1500,1000"]
KINDS = {"bw": "--write_bw_log=x", "iops": "--write_iops_log=x", "lat": "--write_lat_log=x"}


def jobs():
    """(name, options) of every job compared."""
    out = []
    for k, opt in KINDS.items():
        out.append((f"{k} per-I/O", [*PSYNC, "--rw=randrw", opt]))
        out.append((f"{k} per-I/O libaio qd4", [*SIZE, "--ioengine=libaio", "--iodepth=4",
                                                "--direct=1", "--rw=randrw", opt]))
        out.append((f"{k} per-I/O timed", [*TIMED, "--rw=randrw", opt]))
        for ms in (100, 250):
            out.append((f"{k} avg {ms}", [*TIMED, "--rw=randrw", opt, f"--log_avg_msec={ms}"]))
        out.append((f"{k} avg max", [*TIMED, "--rw=randrw", opt, "--log_avg_msec=100",
                                     "--log_max_value=1"]))
        out.append((f"{k} offset", [*PSYNC, "--rw=randrw", opt, "--log_offset=1"]))
        out.append((f"{k} avg offset", [*TIMED, "--rw=write", opt, "--log_avg_msec=200",
                                        "--log_offset=1"]))
        out.append((f"{k} prio", [*PSYNC, "--rw=randrw", opt, "--log_prio=1"]))
        out.append((f"{k} prio class", [*PSYNC, "--rw=randread", opt, "--log_prio=1",
                                        "--prioclass=2", "--prio=3"]))
        out.append((f"{k} avg prio", [*TIMED, "--rw=randrw", opt, "--log_avg_msec=200",
                                      "--log_prio=1"]))
        out.append((f"{k} compression", [*PSYNC, "--rw=randrw", opt,
                                          "--log_compression=64k"]))
        out.append((f"{k} store compressed", [*PSYNC, "--rw=randrw", opt,
                                               "--log_compression=64k",
                                               "--log_store_compressed=1"]))
        out.append((f"{k} avg compression", [*TIMED, "--rw=randrw", opt, "--log_avg_msec=200",
                                              "--log_compression=64k"]))
        out.append((f"{k} prio cmdprio", [*SIZE, "--ioengine=libaio", "--iodepth=2",
                                          "--rw=randread", opt, "--log_prio=1",
                                          "--cmdprio_percentage=40", "--cmdprio_class=2",
                                          "--cmdprio=1"]))
        out.append((f"{k} avg store compressed", [*TIMED, "--rw=randrw", opt,
                                                   "--log_avg_msec=200", "--log_compression=64k",
                                                   "--log_store_compressed=1"]))
        out.append((f"{k} numjobs 2", [*PSYNC, "--rw=randread", opt, "--numjobs=2"]))
        out.append((f"{k} shared", [*PSYNC, "--rw=randread", opt, "--numjobs=2",
                                    "--per_job_logs=0"]))
        out.append((f"{k} shared store compressed",
                    [*PSYNC, "--rw=randread", opt, "--numjobs=2", "--per_job_logs=0",
                     "--log_compression=64k", "--log_store_compressed=1"]))
        out.append((f"{k} unix epoch", [*PSYNC, "--rw=read", opt, "--log_unix_epoch=1"]))
        out.append((f"{k} ramp", [*TIMED, "--rw=read", opt, "--ramp_time=1",
                                  "--log_avg_msec=200"]))
        out.append((f"{k} thinktime", [*TIMED, "--rw=read", opt, "--log_avg_msec=100",
                                       "--thinktime=300ms", "--thinktime_blocks=200"]))
    out.append(("lat alternate epoch", [*PSYNC, "--rw=read", "--write_lat_log=x",
                                        "--log_alternate_epoch=1",
                                        "--log_alternate_epoch_clock_id=1"]))
    out.append(("hist unix epoch", [*TIMED, "--rw=randrw", "--write_hist_log=x",
                                    "--log_hist_msec=200", "--log_unix_epoch=1"]))
    out.append(("bw avg shared", [*TIMED, "--rw=read", "--write_bw_log=x", "--numjobs=2",
                                  "--per_job_logs=0", "--log_avg_msec=250"]))
    out.append(("lat avg ramp offset", [*TIMED, "--rw=randrw", "--write_lat_log=x",
                                        "--ramp_time=1", "--log_avg_msec=250",
                                        "--log_offset=1"]))
    out.append(("bwavgtime", [*TIMED, "--rw=read", "--write_bw_log=x", "--log_avg_msec=500",
                              "--bwavgtime=200"]))
    out.append(("iopsavgtime", [*TIMED, "--rw=read", "--write_iops_log=x",
                                "--log_avg_msec=500", "--iopsavgtime=200"]))
    for c in (0, 2, 4):
        out.append((f"hist coarseness {c}", [*TIMED, "--rw=randrw", "--write_hist_log=x",
                                             "--log_hist_msec=200",
                                             f"--log_hist_coarseness={c}"]))
    out.append(("hist+lat avg", [*TIMED, "--rw=randrw", "--write_hist_log=x",
                                 "--write_lat_log=x", "--log_hist_msec=250",
                                 "--log_avg_msec=250"]))
    out.append(("all logs", [*TIMED, "--rw=randrw", "--write_bw_log=x", "--write_iops_log=x",
                             "--write_lat_log=x", "--write_hist_log=x", "--log_avg_msec=200",
                             "--log_hist_msec=200"]))
    out.append(("bandwidth-log", ["--bandwidth-log", *TIMED, "--rw=randrw"]))
    out.append(("bandwidth-log 2 jobs", ["--bandwidth-log", *TIMED, "--rw=read",
                                         "--numjobs=2"]))
    for rw in ("write", "randwrite", "randrw", "read"):
        out.append((f"write_iolog {rw}", [*PSYNC, f"--rw={rw}", "--write_iolog=io.log"]))
    out.append(("write_iolog loops 2", [*PSYNC, "--rw=randrw", "--loops=2",
                                        "--write_iolog=io.log"]))
    out.append(("write_iolog libaio qd4", [*SIZE, "--ioengine=libaio", "--iodepth=4",
                                           "--rw=randrw", "--write_iolog=io.log"]))
    out.append(("write_iolog numjobs 2", [*PSYNC, "--rw=randread", "--numjobs=2",
                                          "--write_iolog=io.log"]))
    out.append(("randrw rate_iops", [*TIMED, "--rw=randrw", "--write_iops_log=x",
                                     "--log_avg_msec=500"]))
    out.append(("randrw rate_iops 1:1", ["--ioengine=null", "--size=64m", "--bs=4k",
                                         "--time_based", "--runtime=2", "--rw=randrw",
                                         "--rate_iops=200", "--write_iops_log=x",
                                         "--log_avg_msec=500"]))
    return out


# Where iolab differs from fio 3.33 on purpose: job name -> why.
KNOWN = {
    "read_iolog v2 replay_skip": "fio 3.33 applies replay_skip to blktrace input only and "
                                 "replays a text iolog whole; iolab skips there too",
}

# Replays: a log written by fio (version 3) or by hand (version 2) read by both.
REPLAYS = [
    ("read_iolog v3 (fio's)", "v3", []),
    ("read_iolog v3 no_stall", "v3", ["--replay_no_stall=1"]),
    ("read_iolog v2", "v2", []),
    ("read_iolog v2 replay_skip", "v2", ["--replay_skip=write"]),
    ("read_iolog v3 chunked", "v3", ["--read_iolog_chunked=1"]),
    ("read_iolog v3 (iolab's)", "iolab", []),
    ("read_iolog v3 time_scale", "v3", ["--replay_time_scale=50"]),
    ("read_iolog v3 redirect", "v3", ["--replay_redirect=data"]),
    ("read_iolog v3 libaio", "v3", ["--ioengine=libaio", "--iodepth=8"]),
]


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr.strip().splitlines()[-1:] if p.returncode else []


def lines_of(path):
    """A log file's lines split on commas; a .fz is read through fio's --inflate-log."""
    if path.endswith(".fz"):
        text = subprocess.run(["fio", f"--inflate-log={path}"], capture_output=True,
                              text=True).stdout
    else:
        with open(path, errors="replace") as fh:
            text = fh.read()
    return [[c.strip() for c in l.split(",")] for l in text.splitlines() if l.strip()]


def files_of(d):
    return sorted(f for f in os.listdir(d)
                  if f not in ("data", "out.json") and not f.startswith("data.")
                  and not f.startswith("."))


def num(c):
    return int(c, 16) if c.startswith("0x") else int(c)


def log_shape(path, opts):
    """(columns set, per-direction counts, problems, median value, priorities seen, first
    time) of a fio log file."""
    rows, bad = lines_of(path), []
    cols = sorted({len(r) for r in rows})
    dirs = Counter(r[1] if "hist" in path else r[2] for r in rows if len(r) > 2)
    if per_unit(opts) and ("_bw" in path or "_iops" in path):
        # Each I/O closes a window once it is at most 1 ms short of its end (fio's slack),
        # so a burst in that ms writes a line per I/O: count the windows that have lines.
        avg = next(int(o.split("=")[1]) for o in opts if o.startswith("--log_avg_msec="))
        dirs = Counter(d for d, _ in {(r[2], (int(r[0]) + 1) // avg) for r in rows})
    runtime = next((int(o.split("=")[1]) for o in opts if o.startswith("--runtime=")), 0)
    ramp = next((int(o.split("=")[1]) for o in opts if o.startswith("--ramp_time=")), 0)
    epoch = "--log_unix_epoch=1" in opts or "--log_alternate_epoch=1" in opts
    vals = []
    for r in rows:
        try:
            v = [num(c) for c in r]
        except ValueError:
            bad.append(f"not a number: {r[:4]}")
            break
        if min(v) < 0:
            bad.append(f"negative: {r[:5]}")
            break
        t = v[0]
        if not epoch and runtime and t > (runtime + ramp + 1) * 1000:
            bad.append(f"time {t} past the run")
            break
        if "hist" not in path and len(v) > 3:
            if v[2] > 2:
                bad.append(f"direction {v[2]}")
                break
            if v[3] not in (0, 4096):
                bad.append(f"block size {v[3]}")
                break
            vals.append(v[1])
    med = statistics.median(vals) if vals else 0
    # The priority column is the last (there is no log_issue_time in fio 3.33).
    prios = {r[-1] for r in rows if "hist" not in path and len(r) >= 5}
    first = num(rows[0][0]) if rows else 0
    return cols, dirs, bad, med, prios, first


def iolog_shape(path):
    with open(path, errors="replace") as fh:
        rows = [l.split() for l in fh.read().splitlines()]
    head = rows[0][0] if rows else ""
    acts = Counter(r[-3] if len(r) >= 4 and r[-3] in ("read", "write", "trim", "sync")
                   else r[-1] for r in rows[1:])
    return head, acts


def compare(name, opts, fio_dir, iolab_dir):
    """The differences between the two directories' files, as short strings."""
    diff = []
    ff, fi = files_of(fio_dir), files_of(iolab_dir)
    if ff != fi:
        diff.append(f"files fio {ff} iolab {fi}")
    windowed = any(o.startswith("--log_avg_msec") for o in opts)
    for f in sorted(set(ff) & set(fi)):
        a, b = os.path.join(fio_dir, f), os.path.join(iolab_dir, f)
        if "iolog" in opts[-1] or f == "io.log":
            ha, aa = iolog_shape(a)
            hb, ab = iolog_shape(b)
            if ha != hb:
                diff.append(f"{f}: header {ha!r} vs {hb!r}")
            for k in set(aa) | set(ab):
                if not close(aa[k], ab[k]):
                    diff.append(f"{f}: {k} {aa[k]} vs {ab[k]}")
            continue
        ca, da, bad_a, ma, pa, ta = log_shape(a, opts)
        cb, db, bad_b, mb, pb, tb = log_shape(b, opts)
        if ca != cb:
            diff.append(f"{f}: columns fio {ca} iolab {cb}")
        # --bandwidth-log: fio 3.33 writes a line only when it works out its ETA (with
        # output to a file once, at the end); iolab every window (as fio 3.36): the line
        # counts are not compared, the columns and values are.
        for d in (set(da) | set(db)) if not f.startswith("agg-") else ():
            if not close(da[d], db[d]):
                diff.append(f"{f}: dir {d} lines fio {da[d]} iolab {db[d]}")
        if bad_b and not bad_a:
            diff.append(f"{f}: iolab {bad_b[0]}")
        if any("epoch=1" in o for o in opts) and abs(ta - tb) > 60_000:
            diff.append(f"{f}: first time fio {ta} iolab {tb} (same epoch, a minute apart)")
        if "--log_prio=1" in opts and pa != pb:
            diff.append(f"{f}: priorities fio {sorted(pa)} iolab {sorted(pb)}")
        # Compressed windowed rate logs average each I/O's own rate (fio 3.33's
        # per_unit_log): a bandwidth there is one of the engine's latency, not comparable
        # (an IOPS there is 1).
        rate = windowed and ("_bw" in f or "_iops" in f or f.startswith("agg-"))
        rate = rate and not (per_unit(opts) and "_bw" in f)
        if rate and ma and mb and not 0.5 <= mb / ma <= 2:
            diff.append(f"{f}: median fio {ma} iolab {mb}")
    return diff


def per_unit(opts):
    """Whether fio 3.33 makes each I/O a sample of the windowed bandwidth and IOPS logs."""
    return any(o.startswith("--log_avg_msec=") for o in opts) and any(
        o.startswith("--log_compression=") or o == "--log_store_compressed=1" for o in opts)


def close(a, b):
    return abs(a - b) <= max(4, 0.25 * max(a, b))


def replay_jobs(work, binary):
    """Writes fio's version 3 iolog and a version 2 one by hand into work."""
    src = os.path.join(work, "src")
    os.makedirs(src)
    subprocess.run(["fio", "--name=w", *PSYNC, "--rw=randrw", "--write_iolog=v3.log",
                    "--output=/dev/null"], cwd=src, check=True)
    subprocess.run([binary, "run", "--name=w", *PSYNC, "--rw=randrw", "--bsrange=1k-16k",
                    "--write_iolog=iolab.log", "--output=/dev/null"], cwd=src, check=True)
    v2 = ["fio version 2 iolog", "data add", "data open"]
    for i in range(200):
        v2.append(f"data {'write' if i % 3 == 0 else 'read'} {(i * 7919 % 1024) * 4096} 4096")
    v2.append("data close")
    with open(os.path.join(src, "v2.log"), "w") as fh:
        fh.write("\n".join(v2) + "\n")
    return src


def ios(out):
    try:
        with open(out) as fh:
            j = json.load(fh)
    except (OSError, ValueError):
        return None
    t = Counter()
    for job in j.get("jobs", []):
        for d in ("read", "write", "trim"):
            t[d] += job.get(d, {}).get("total_ios", 0)
    return dict(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=None)
    ap.add_argument("--only", default=None, help="jobs whose name holds one of these (a,b)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.binary is None:
        build()
        a.binary = IOLAB
    a.binary = os.path.abspath(a.binary)
    work = tempfile.mkdtemp(prefix="iolab-logs-vs-fio-")
    lines = [machine(work, sh("fio --version"), os.path.basename(a.binary)),
             f"# load {os.getloadavg()[0]:.2f} (machine shared with other work)",
             f"{'job':32} {'result':7} differences"]
    print("\n".join(lines), flush=True)
    n_diff = n = n_known = 0
    for i, (name, opts) in enumerate(jobs()):
        if a.only and not any(w in name for w in a.only.split(",")):
            continue
        d = os.path.join(work, str(i))
        fd, idir = os.path.join(d, "fio"), os.path.join(d, "iolab")
        os.makedirs(fd)
        os.makedirs(idir)
        common = ["--name=j", *opts, "--output-format=json", "--output=out.json"]
        rf, ef = run(["fio", *common], fd)
        ri, ei = run([a.binary, "run", *common], idir)
        if rf or ri:
            diff = [f"exit fio {rf} {ef} iolab {ri} {ei}"]
        else:
            diff = compare(name, opts, fd, idir)
            if "rate_iops" in name:
                fi, ii = ios(os.path.join(fd, "out.json")), ios(os.path.join(idir, "out.json"))
                if fi and ii and any(not close(fi[k], ii[k]) for k in fi):
                    diff.append(f"I/Os fio {fi} iolab {ii}")
        n += 1
        n_diff += bool(diff)
        lines.append(f"{name:32} {'DIFFERS' if diff else 'same':7} {'; '.join(diff)[:300]}")
        print(lines[-1], flush=True)
    src = replay_jobs(work, a.binary)
    for name, log, more in REPLAYS:
        if a.only and not any(w in name for w in a.only.split(",")):
            continue
        got = []
        for tool in (["fio"], [a.binary, "run"]):
            d = tempfile.mkdtemp(dir=work)
            shutil.copy(os.path.join(src, "data"), os.path.join(d, "data"))
            rc, err = run([*tool, "--name=r", "--ioengine=psync",
                           f"--read_iolog={os.path.join(src, log + '.log')}", *more,
                           "--output-format=json", "--output=out.json"], d)
            got.append(ios(os.path.join(d, "out.json")) if rc == 0 else f"exit {rc} {err}")
        diff = [] if got[0] == got[1] else [f"I/Os fio {got[0]} iolab {got[1]}"]
        n += 1
        verdict = "same"
        if diff and name in KNOWN:
            verdict, diff = "known", [*diff, KNOWN[name]]
            n_known += 1
        elif diff:
            verdict = "DIFFERS"
            n_diff += 1
        lines.append(f"{name:32} {verdict:7} {'; '.join(diff)[:300]}")
        print(lines[-1], flush=True)
    lines.append(f"{n} jobs, {n_diff} differ, {n_known} known differences")
    print(lines[-1])
    print(save("logs-vs-fio", lines))
    if not a.keep:
        shutil.rmtree(work)
    else:
        print(work)
    sys.exit(1 if n_diff else 0)


if __name__ == "__main__":
    main()
