#!/usr/bin/env python3
"""Memory of a long run writing every fio log at log_avg_msec=1000 (issue 16): the null
engine, unthrottled, with bw, IOPS, lat/clat/slat and histogram logs, for DURATION seconds
(an hour by default). Samples the process's VmRSS every INTERVAL seconds and prints the
trend: the first sample after the warm-up, the last, the peak (VmHWM), and the slope of a
least-squares line through the samples. Flat memory is what the logs promise: they are
written as the run goes, not kept. Not run by cargo test.

usage: bench/logs-rss.py [--duration S] [--interval S] [--binary PATH] [--dir DIR]
"""
import argparse, os, shutil, signal, subprocess, tempfile, time

from benchlib import IOLAB, build, machine, save

STOP = []


def stop(signum, _frame):
    """SIGINT/SIGTERM end the run early; the samples so far are still summarised and saved."""
    STOP.append(signum)


def status(pid):
    """VmRSS, VmHWM, RssAnon and RssFile of pid, KiB; None when it is gone. RssAnon is the
    heap and stacks (what a leak grows); RssFile the mapped pages of the binary and libraries,
    which VmRSS counts too."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            f = dict(l.split(":", 1) for l in fh if ":" in l)
        return tuple(int(f[k].split()[0]) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))
    except (OSError, KeyError, ValueError):
        return None


def slope(points):
    """KiB per hour of a least-squares line through (seconds, KiB)."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    return sxy / sxx * 3600 if sxx else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=3600)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--binary", default=None, help="default: build and use target/release/iolab")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    if a.binary is None:
        build()
        a.binary = IOLAB
    a.binary = os.path.abspath(a.binary)
    work = a.dir or tempfile.mkdtemp(prefix="iolab-logs-rss-")
    args = [a.binary, "run", "--name=rss", "--ioengine=null", "--rw=randrw", "--bs=4k",
            "--size=1g", "--time_based", f"--runtime={a.duration}", "--log_avg_msec=1000",
            "--write_bw_log=rss", "--write_iops_log=rss", "--write_lat_log=rss",
            "--write_hist_log=rss", "--log_hist_msec=1000", "--output-format=json"]
    # Run under `chrt --idle 0` on a shared machine: the null engine takes a whole CPU.
    policy = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_IDLE: "SCHED_IDLE",
              os.SCHED_BATCH: "SCHED_BATCH"}.get(os.sched_getscheduler(0), "other")
    lines = [machine(work, os.path.basename(a.binary)),
             f"# {policy}, nice {os.nice(0)}, load {os.getloadavg()[0]:.2f}; samples every "
             f"{a.interval} s", "# " + " ".join(args[1:])]
    # The curve so far is kept in a file as it grows, so a run cut short still leaves it.
    live = save("logs-rss", lines).replace(".txt", "-running.txt")
    os.rename(live.replace("-running.txt", ".txt"), live)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    p = subprocess.Popen(args, cwd=work, stdout=subprocess.DEVNULL)
    t0, samples, anon, hwm = time.time(), [], [], 0
    while p.poll() is None:
        if STOP:
            p.terminate()
            p.wait()
            lines.append(f"# stopped by signal {STOP[0]} at {time.time() - t0:.0f} s: partial")
            break
        time.sleep(a.interval)
        s = status(p.pid)
        if s:
            samples.append((time.time() - t0, s[0]))
            anon.append((samples[-1][0], s[2]))
            hwm = max(hwm, s[1])
            lines.append(f"{samples[-1][0]:8.1f} s  VmRSS {s[0]} KiB  RssAnon {s[2]} KiB  "
                         f"RssFile {s[3]} KiB")
            print(lines[-1], flush=True)
            with open(live, "a") as fh:
                fh.write(lines[-1] + "\n")
    # The first samples hold the start (threads, buffers); the trend is what follows.
    warm = min(30, a.duration / 4)
    steady = [x for x in samples if x[0] >= warm] or samples
    steady_anon = [x for x in anon if x[0] >= warm] or anon
    logs = sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work))
    lines += [f"exit {p.returncode}; {len(samples)} samples",
              f"VmRSS after warm-up {steady[0][1]} KiB, at the end {steady[-1][1]} KiB, "
              f"peak VmHWM {hwm} KiB; slope {slope(steady):+.0f} KiB/hour",
              f"RssAnon after warm-up {steady_anon[0][1] if steady_anon else 0} KiB, at the end "
              f"{steady_anon[-1][1] if steady_anon else 0} KiB; slope "
              f"{slope(steady_anon):+.0f} KiB/hour",
              f"log files: {logs} bytes"]
    print("\n".join(lines[-3:]))
    os.remove(live)
    print(save("logs-rss-partial" if STOP else "logs-rss", lines))
    if not a.dir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
