#!/usr/bin/env python3
"""The tool's own cost per I/O, where the device is not the limit: iolab, fio and fio's peak tool
t/io_uring on a loop device over a file in /dev/shm (RAM), alternating (fio, iolab, t/io_uring,
fio, iolab, ...), 4 KiB random reads, O_DIRECT.

Per job and tool it prints the medians of: IOPS, IOPS per core (I/Os per CPU-second of the whole
process, children included, from wait4), CPU per I/O, and, with --syscalls, system calls per
I/O (one extra short run of each under `strace -c -f`). Then the ratios iolab/fio and
iolab/t-io_uring. t/io_uring records no per-I/O statistics unless -t1; fio and iolab record the
latency of every I/O.

The loop device and its file are removed at the end, also on failure or Ctrl-C. Not run by cargo
test. Needs root (losetup).

With --on DIR the same jobs run on a file made in DIR (e.g. on the virtio disk) instead of the
loop device: there the device is the limit, and t/io_uring's CPU per I/O shows the floor that the
kernel's own work sets under any tool's.

usage: bench/hotpath.py [--pairs N] [--runtime S] [--size MiB] [--only NAME,...] [--syscalls]
                        [--on DIR]
"""
import argparse, json, os, re, signal, statistics, subprocess, sys, tempfile

from benchlib import ROOT, IOLAB, build, install, machine, save, sh

T_IO_URING = os.path.join(os.path.dirname(ROOT), "shared", "peers", "t-io_uring")

BASE = ["--rw=randread", "--bs=4k", "--direct=1", "--norandommap", "--randrepeat=0"]
# (name, fio/iolab options, t/io_uring options or None where it has no such mode)
JOBS = [
    ("psync d1", ["--ioengine=psync", "--iodepth=1"], ["-S1", "-d1", "-s1", "-c1", "-B0", "-F0"]),
    ("pvsync2 d1", ["--ioengine=pvsync2", "--iodepth=1"], ["-S1", "-d1", "-s1", "-c1", "-B0", "-F0"]),
    ("libaio d1", ["--ioengine=libaio", "--iodepth=1"], ["-a1", "-d1", "-s1", "-c1", "-B0", "-F0"]),
    ("libaio d32", ["--ioengine=libaio", "--iodepth=32"], ["-a1", "-d32", "-s1", "-c1", "-B0", "-F0"]),
    ("libaio d32 b8", ["--ioengine=libaio", "--iodepth=32", "--iodepth_batch_submit=8",
                       "--iodepth_batch_complete_min=8"], ["-a1", "-d32", "-s8", "-c8", "-B0", "-F0"]),
    ("io_uring d1", ["--ioengine=io_uring", "--iodepth=1"], ["-d1", "-s1", "-c1", "-B0", "-F0"]),
    ("io_uring d32", ["--ioengine=io_uring", "--iodepth=32"], ["-d32", "-s1", "-c1", "-B0", "-F0"]),
    ("io_uring d128", ["--ioengine=io_uring", "--iodepth=128"], ["-d128", "-s1", "-c1", "-B0", "-F0"]),
    ("io_uring d32 b8", ["--ioengine=io_uring", "--iodepth=32", "--iodepth_batch_submit=8",
                         "--iodepth_batch_complete_min=8"], ["-d32", "-s8", "-c8", "-B0", "-F0"]),
    ("io_uring d32 b8 fixed", ["--ioengine=io_uring", "--iodepth=32", "--iodepth_batch_submit=8",
                               "--iodepth_batch_complete_min=8", "--fixedbufs=1", "--registerfiles=1"],
     ["-d32", "-s8", "-c8", "-B1", "-F1"]),
    ("io_uring d32 sqpoll", ["--ioengine=io_uring", "--iodepth=32", "--sqthread_poll=1"], None),
]

loop_dev = None
backing = None


def cleanup(*_):
    global loop_dev, backing
    if loop_dev:
        subprocess.run(["losetup", "-d", loop_dev], check=False)
        loop_dev = None
    if backing and os.path.exists(backing):
        os.remove(backing)
        backing = None


def on_signal(sig, _frame):
    cleanup()
    sys.exit(128 + sig)


def setup(size_mib):
    """A loop device over a file in /dev/shm, filled (a hole would read as no work at all)."""
    global loop_dev, backing
    fd, backing = tempfile.mkstemp(prefix="iolab-hotpath-", suffix=".img", dir="/dev/shm")
    os.close(fd)
    subprocess.run(["dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={size_mib}",
                    "status=none"], check=True)
    loop_dev = sh(f"losetup -f --show {backing}")
    if not loop_dev.startswith("/dev/loop"):
        raise SystemExit(f"losetup failed for {backing}")
    return loop_dev


def setup_file(dirname, size_mib):
    """A file of size_mib in dirname, filled with random data; removed by cleanup()."""
    global backing
    fd, backing = tempfile.mkstemp(prefix="iolab-hotpath-", suffix=".img", dir=dirname)
    os.close(fd)
    subprocess.run(["dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={size_mib}",
                    "conv=fsync", "status=none"], check=True)
    return backing


# `taskset -c CPU` before every tool's command line with --pin CPU.
PIN = []


def run_with_rusage(cmd):
    """Runs cmd as a child; returns (stdout, user+system CPU seconds of it and its children)."""
    cmd = PIN + cmd
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                os.execvp(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.read()}")
        return out.read(), ru.ru_utime + ru.ru_stime


def fio_like(binary, dev, opts, runtime):
    cmd = [binary, "--name=hot", f"--filename={dev}", f"--runtime={runtime}", "--time_based",
           "--output-format=json"] + BASE + opts
    out, cpu = run_with_rusage(cmd)
    j = json.loads(out[out.index("{"):])["jobs"][0]
    ios = j["read"]["total_ios"]
    secs = j["read"]["runtime"] / 1000.0 or runtime
    return {"iops": ios / secs, "ios": ios, "cpu": cpu}


def t_io_uring(dev, opts, runtime):
    cmd = [T_IO_URING, "-b4096", "-p0", "-n1", "-R1", "-O1", f"-r{runtime}"] + opts + [dev]
    out, cpu = run_with_rusage(cmd)
    per_sec = []
    for m in re.finditer(r"^IOPS=([\d.]+)(K|M)?", out, re.M):
        per_sec.append(float(m.group(1)) * {"K": 1e3, "M": 1e6, None: 1}[m.group(2)])
    if not per_sec:  # a run shorter than its first report prints only its maximum
        per_sec = [float(m.group(1)) * {"K": 1e3, "M": 1e6, None: 1}[m.group(2)]
                   for m in re.finditer(r"^Maximum IOPS=([\d.]+)(K|M)?", out, re.M)]
    if not per_sec:
        raise SystemExit(f"no IOPS lines from {' '.join(cmd)}:\n{out}")
    iops = statistics.mean(per_sec)
    return {"iops": iops, "ios": iops * runtime, "cpu": cpu}


def strace_count(cmd):
    """(system calls, standard output) of one run of cmd under `strace -c -f`."""
    with tempfile.NamedTemporaryFile(mode="r") as f:
        p = subprocess.run(PIN + ["strace", "-f", "-c", "-o", f.name] + cmd, capture_output=True, text=True)
        total = re.search(r"^\s*100\.00\s+\S+\s+\S+\s+(\d+)", f.read(), re.M)
    return (int(total.group(1)) if total else float("nan")), p.stdout


def calls_per_io(tool, dev, opts, topts):
    """System calls per I/O over a 1-second run under strace (slower, but the count is what
    matters)."""
    if tool.startswith("t/io_uring"):
        extra = ["-t1"] if tool.endswith("-t1") else []
        calls, out = strace_count([T_IO_URING, "-b4096", "-p0", "-n1", "-R1", "-O1", "-r2"] + topts + extra + [dev])
        m = re.findall(r"^IOPS=([\d.]+)(K|M)?", out, re.M)
        ios = sum(float(v) * {"K": 1e3, "M": 1e6, "": 1}[u] for v, u in m) * 2 / max(len(m), 1)
    else:
        binary = "fio" if tool == "fio" else IOLAB_AS_FIO
        calls, out = strace_count([binary, "--name=hot", f"--filename={dev}", "--runtime=1", "--time_based",
                                   "--output-format=json"] + BASE + opts)
        try:
            ios = json.loads(out[out.index("{"):])["jobs"][0]["read"]["total_ios"]
        except (ValueError, KeyError, IndexError):
            ios = 0
    return calls / ios if ios else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--size", type=int, default=1024, help="MiB of the RAM-backed device")
    ap.add_argument("--only", help="comma-separated job names")
    ap.add_argument("--syscalls", action="store_true", help="also count system calls per I/O")
    ap.add_argument("--on", metavar="DIR", help="a file in DIR instead of the RAM-backed loop device")
    ap.add_argument("--pin", type=int, metavar="CPU",
                    help="run every tool on this CPU only (taskset): at depth 1 the scheduler's placement of "
                         "the tool and the loop device's worker moves IOPS by up to a third from run to run")
    a = ap.parse_args()
    if a.pin is not None:
        PIN[:] = ["taskset", "-c", str(a.pin)]
    if os.geteuid() != 0 and not a.on:
        raise SystemExit("bench/hotpath.py needs root (losetup)")
    install(("fio", "fio"), ("strace", "strace"))
    build()
    have_t = os.access(T_IO_URING, os.X_OK)
    if not have_t:
        print(f"# {T_IO_URING} absent: its column is skipped (see shared/peers/README.md)")
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        if a.on:
            dev = setup_file(a.on, a.size)
            where = machine(a.on, sh("fio --version"), f"file {dev} ({a.size} MiB)")
        else:
            dev = setup(a.size)
            where = machine("/dev/shm", sh("fio --version"), f"device {dev} over /dev/shm ({a.size} MiB)")
        head = [where,
                f"# bench/hotpath.py --pairs {a.pairs} --runtime {a.runtime}"
                + (" --syscalls" if a.syscalls else "") + (f" --on {a.on}" if a.on else "") + (f" --pin {a.pin}" if a.pin is not None else "")
                + "; medians; CPU is the whole process's (wait4), children included"]
        print("\n".join(head), flush=True)
        cols = (f"{'job':<22}{'tool':<15}{'IOPS':>11}{'IOPS/core':>11}{'CPU ns/IO':>11}"
                + (f"{'calls/IO':>10}" if a.syscalls else "") + f"{'vs fio':>9}{'vs t/io_uring':>14}")
        lines = [cols]
        print(cols, flush=True)
        for name, opts, topts in JOBS:
            if a.only and name not in a.only.split(","):
                continue
            tools = {"fio": lambda: fio_like("fio", dev, opts, a.runtime),
                     "iolab": lambda: fio_like(IOLAB_AS_FIO, dev, opts, a.runtime)}
            if have_t and topts is not None:
                tools["t/io_uring"] = lambda: t_io_uring(dev, topts, a.runtime)
                if "fixed" in name:
                    # -t1: t/io_uring tracking each I/O's latency too, as fio and iolab do.
                    tools["t/io_uring -t1"] = lambda: t_io_uring(dev, topts + ["-t1"], a.runtime)
            res = {t: [] for t in tools}
            for _ in range(a.pairs):
                for t, f in tools.items():
                    res[t].append(f())
            med = {t: {k: statistics.median(r[k] for r in rs) for k in ("iops", "ios", "cpu")}
                   for t, rs in res.items()}
            per_core = {t: statistics.median(r["ios"] / max(r["cpu"], 1e-9) for r in rs)
                        for t, rs in res.items()}
            calls = {t: calls_per_io(t, dev, opts, topts) for t in tools} if a.syscalls else {}
            for t in tools:
                m = med[t]
                vs_fio = per_core[t] / per_core["fio"] if t == "iolab" else None
                vs_t = (m["iops"] / med["t/io_uring"]["iops"]) if t == "iolab" and "t/io_uring" in med else None
                if t == "t/io_uring -t1":
                    # The row's ratio: iolab's IOPS over this one's.
                    vs_t = med["iolab"]["iops"] / m["iops"]
                line = (f"{name if t == 'fio' else '':<22}{t:<15}{m['iops']:>11.0f}{per_core[t]:>11.0f}"
                        f"{m['cpu'] / max(m['ios'], 1) * 1e9:>11.0f}"
                        + (f"{calls.get(t, float('nan')):>10.2f}" if a.syscalls else "")
                        + (f"{vs_fio:>9.3f}" if vs_fio else f"{'':>9}")
                        + (f"{vs_t:>14.3f}" if vs_t else f"{'':>14}"))
                print(line, flush=True)
                lines.append(line)
        lines.append("# vs fio: iolab's I/Os per CPU-second / fio's; vs t/io_uring: iolab's IOPS / t/io_uring's")
        print(f"saved {save('hotpath', head + lines)}")
    finally:
        cleanup()


IOLAB_AS_FIO = os.path.join(ROOT, "target", "hotpath", "fio")

if __name__ == "__main__":
    os.makedirs(os.path.dirname(IOLAB_AS_FIO), exist_ok=True)
    if os.path.lexists(IOLAB_AS_FIO):
        os.remove(IOLAB_AS_FIO)
    os.symlink(IOLAB, IOLAB_AS_FIO)
    main()
