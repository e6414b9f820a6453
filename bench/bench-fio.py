#!/usr/bin/env python3
"""bench-fio (fio-plot's benchmark driver, PyPI) run through iolab as through fio (issue 29).

bench-fio runs a matrix of fio jobs (modes x depths x numjobs), one fio process each, and stops
at the first run that exits non-zero or writes anything to standard error. This runs the same
matrix twice, once with fio 3.33 first on PATH and once with a symlink named `fio` to iolab,
and checks that both finish the whole matrix with one JSON result per benchmark; then fio-plot
draws its JSON bar charts (-l: IOPS and latency by depth) from each result folder. Prints what
each tool produced; exit 1 when iolab's run falls short of fio's.

Needs the network once: fio-plot (which brings bench-fio) is installed into a venv (default
/tmp/iolab-fio-plot-venv). Not run by cargo test. The matrix is small (buffered, 16 MiB, 1 s a
benchmark): it tests the driver's contract, not speed.

usage: bench/bench-fio.py [--binary PATH] [--venv DIR] [--dir DIR]
"""
import argparse, glob, os, subprocess, sys, tempfile

from benchlib import IOLAB, ROOT, build, install, machine, save

MODES = ["randread", "randwrite", "read", "write"]
DEPTHS = ["1", "4"]


def venv_tools(venv):
    bin_dir = os.path.join(venv, "bin")
    if not os.path.exists(os.path.join(bin_dir, "bench-fio")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(bin_dir, "pip"), "install", "-q", "fio-plot"], check=True)
    return os.path.join(bin_dir, "bench-fio"), os.path.join(bin_dir, "fio-plot")


def run_matrix(bench_fio, fio_dir, work, name):
    target = os.path.join(work, name, "target")
    out = os.path.join(work, name, "out")
    os.makedirs(target, exist_ok=True)
    env = dict(os.environ, PATH=fio_dir + os.pathsep + os.environ["PATH"])
    r = subprocess.run([bench_fio, "--target", target, "--type", "directory", "--size", "16M",
                        "--mode", *MODES, "--iodepth", *DEPTHS, "--numjobs", "1",
                        "--runtime", "1", "-b", "4k", "--direct", "0", "--engine", "psync",
                        "--output", out, "--quiet", "--destructive"],
                       capture_output=True, text=True, env=env)
    results = sorted(glob.glob(os.path.join(out, "**", "*.json"), recursive=True))
    return r, out, results


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
    bench_fio, fio_plot = venv_tools(a.venv)
    work = a.dir or tempfile.mkdtemp(prefix="iolab-bench-fio-")
    as_fio = os.path.join(work, "as-fio")
    os.makedirs(as_fio, exist_ok=True)
    link = os.path.join(as_fio, "fio")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(a.binary), link)
    fio_dir = os.path.dirname(subprocess.run(["sh", "-c", "command -v fio"], capture_output=True,
                                             text=True).stdout.strip())
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [machine(work, fio_ver, f"iolab {os.path.relpath(a.binary, ROOT)}"),
             f"# bench-fio --mode {' '.join(MODES)} --iodepth {' '.join(DEPTHS)} --numjobs 1 "
             "--runtime 1 -b 4k --direct 0 --engine psync --size 16M --type directory"]
    want = len(MODES) * len(DEPTHS)
    got = {}
    for name, d in (("fio", fio_dir), ("iolab", as_fio)):
        r, out, results = run_matrix(bench_fio, d, work, name)
        got[name] = len(results)
        tail = (r.stdout + r.stderr).strip().splitlines()[-1:] if r.returncode else []
        lines.append(f"{name}: exit {r.returncode}, {len(results)} of {want} results"
                     + (f"; last line: {tail[0][:200]}" if tail else ""))
        for mode in MODES:
            folders = sorted({os.path.dirname(p) for p in results})
            if not folders:
                break
            png = os.path.join(work, f"{name}-{mode}.png")
            p = subprocess.run([fio_plot, "-i", folders[0], "-T", f"{name} {mode}", "-r", mode,
                                "-l", "-n", "1", "-d", *DEPTHS, "-o", png],
                               capture_output=True, text=True)
            ok = p.returncode == 0 and os.path.exists(png)
            lines.append(f"  fio-plot -l {mode}: {'drawn' if ok else 'FAILED ' + p.stdout[-200:]}")
    ok = got.get("iolab") == want and got.get("iolab", 0) >= got.get("fio", 0)
    lines.append(("iolab finished the matrix as fio did" if ok else "iolab fell short")
                 + f"; results and charts in {work}")
    print("\n".join(lines))
    print(save("bench-fio", lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
