#!/usr/bin/env python3
"""fio-plot (PyPI) over iolab's logs and JSON, beside the same over fio's (issue 16): one job
run by fio 3.33 and by iolab, with bandwidth, IOPS and latency logs named as fio-plot wants
them (RW-iodepth-D-numjobs-N_TYPE.J.log) and JSON output; then fio-plot's log graphs (-g, for
bw/iops/lat and for clat), its JSON bar charts (-l, -N) and its latency histogram (-H) from
each; then again with per_job_logs=0 (both jobs' lines in one file per kind). A chart counts
when fio-plot exits 0 and writes its PNG. Also compares the two sets of logs: the same file
names, columns, line counts within one window per direction, and in a shared file the same
number of blocks (places where the time goes back: a new job's lines).

Needs the network once: fio-plot is installed into a venv (default /tmp/iolab-fio-plot-venv).
Not run by cargo test. The PNGs stay in the work directory (printed) for a look.

usage: bench/fio-plot.py [--binary PATH] [--venv DIR] [--dir DIR]
"""
import argparse, os, subprocess, sys, tempfile

from benchlib import IOLAB, ROOT, build, install, machine, save

JOB = """[global]
ioengine=null
size=1g
time_based
runtime=4
rate_iops=2000
log_avg_msec=500
[randrw-job]
rw=randrw
bs=4k
iodepth=1
numjobs=2
write_bw_log=randrw-iodepth-1-numjobs-2
write_iops_log=randrw-iodepth-1-numjobs-2
write_lat_log=randrw-iodepth-1-numjobs-2
"""

# fio-plot's arguments for each chart; slat is left out: the null engine is synchronous, so
# fio and iolab both leave the slat log empty, which fio-plot cannot draw.
CHARTS = {
    "log-bw-iops-lat": ["-g", "-t", "bw", "iops", "lat"],
    "log-clat": ["-g", "-t", "clat"],
    "json-qd": ["-l", "-f", "read"],
    "json-numjobs": ["-N", "-f", "read"],
    "json-histogram": ["-H", "-f", "read"],
}


def venv_fio_plot(venv):
    exe = os.path.join(venv, "bin", "fio-plot")
    if not os.path.exists(exe):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "fio-plot"],
                       check=True)
    return exe


def run_job(tool, work, variant):
    d = os.path.join(work, variant, "fio" if tool == "fio" else "iolab")
    os.makedirs(d, exist_ok=True)
    job = os.path.join(work, variant + ".fio")
    cmd = [tool] if tool.endswith("fio") else [tool, "run"]
    subprocess.run(cmd + [job, "--output-format=json", "--output=randrw-1-2.json"],
                   cwd=d, check=True, stdout=subprocess.DEVNULL)
    return d


def logs(d):
    """{file name: (columns of its first line, lines per direction)} of d's logs."""
    out = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".log"):
            continue
        rows = [l.split(", ") for l in open(os.path.join(d, f)) if l.strip()]
        per_dir = [sum(1 for r in rows if r[2] == str(k)) for k in range(2)]
        blocks = 1 + sum(int(b[0]) < int(a[0]) for a, b in zip(rows, rows[1:]))
        out[f] = (len(rows[0]) if rows else 0, per_dir, blocks if rows else 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=None, help="default: build and use target/release/iolab")
    ap.add_argument("--venv", default="/tmp/iolab-fio-plot-venv")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    install(("fio", "fio"))
    if a.binary is None:
        build()
        a.binary = IOLAB
    a.binary = os.path.abspath(a.binary)
    fio_plot = venv_fio_plot(a.venv)
    version = subprocess.run([os.path.join(a.venv, "bin", "pip"), "show", "fio-plot"],
                             capture_output=True, text=True).stdout.split("\n")[1]
    work = a.dir or tempfile.mkdtemp(prefix="iolab-fio-plot-")
    variants = {"per-job": JOB, "shared": JOB.replace("numjobs=2", "numjobs=2\nper_job_logs=0")}
    for variant, text in variants.items():
        with open(os.path.join(work, variant + ".fio"), "w") as fh:
            fh.write(text)
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout
    lines = [machine(work, fio_ver.strip(), f"fio-plot {version.split(': ')[-1]}",
                     f"iolab {os.path.relpath(a.binary, ROOT)}"),
             "# job: " + JOB.replace("\n", " ").strip() + "; then with per_job_logs=0"]
    failed = 0
    for variant in variants:
        failed += compare(variant, work, a.binary, fio_plot, lines)
    lines.append(f"{'all drawn, logs alike' if not failed else f'{failed} failures'}; "
                 f"charts in {work}")
    print("\n".join(lines))
    print(save("fio-plot", lines))
    sys.exit(1 if failed else 0)


def compare(variant, work, binary, fio_plot, lines):
    """Both tools' run of one variant, every chart of each, and their logs side by side."""
    dirs = {name: run_job(tool, work, variant) for name, tool in [("fio", "fio"), ("iolab", binary)]}
    failed = 0
    for chart, args in CHARTS.items():
        row = []
        for name, d in dirs.items():
            png = os.path.join(work, f"{variant}-{name}-{chart}.png")
            r = subprocess.run([fio_plot, "-i", d, "-T", f"{name} {chart}", "-r", "randrw",
                                "-d", "1", "-n", "2", "-o", png, *args],
                               capture_output=True, text=True)
            ok = r.returncode == 0 and os.path.exists(png) and os.path.getsize(png) > 10_000
            failed += not ok
            row.append(f"{name} {'drawn' if ok else 'FAILED: ' + r.stdout[-200:].strip()}")
        lines.append(f"{variant:8} {chart:16} " + "; ".join(row))
    theirs, ours = logs(dirs["fio"]), logs(dirs["iolab"])
    if sorted(theirs) != sorted(ours):
        failed += 1
        lines.append(f"log files differ: fio {sorted(theirs)} iolab {sorted(ours)}")
    for f in sorted(theirs):
        (tc, tn, tb), (oc, on, ob) = theirs[f], ours.get(f, (0, [0, 0], 0))
        # A window at the runtime's end may or may not make a line (timing), in both tools.
        same = tc == oc and tb == ob and all(abs(x - y) <= 2 for x, y in zip(tn, on))
        failed += not same
        lines.append(f"{f}: columns fio {tc} iolab {oc}; lines read/write fio {tn} iolab {on}; "
                     f"blocks fio {tb} iolab {ob}" + ("" if same else "  DIFFERENT"))
    return failed


if __name__ == "__main__":
    main()
