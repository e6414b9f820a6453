#!/usr/bin/env python3
"""fio 3.33's own test suite (its t/run-fio-tests.py) run against iolab, and against fio itself.

    tools/fiosuite.py [--iolab PATH] [--fio PATH|--no-fio] [--tarball PATH] [--work DIR]
                      [--only N ...] [--skip N ...] [--expect-pass FILE]

The suite comes from ../shared/peers/fio-3.33-tests.tar.gz (fio's t/ and tools/ folders of tag
fio-3.33); it is unpacked under --work (default target/fiosuite). iolab runs it as fio: through
a symlink named `fio` to the iolab binary. The suite's requirements are checked as fio's own
build would answer them (a config-host.h saying libaio and io_uring, no zoned block devices), so
a test that needs 4 CPUs, root with zoned null_blk, or fio's unit-test binary is skipped by the
suite itself with its reason. Tests of fio's C helper programs (t/axmap, t/ieee754,
t/lfsr-test, t/stest) test no fio binary, and are skipped here with that reason.

Prints one row per test: the test, iolab's result, fio's result. With --expect-pass FILE
(one test number a line, '#' comments) exits 1 when a listed test does not pass for iolab: the
list is what CI holds iolab to. Exit 2 when the tarball is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELPERS = {1000: "t/axmap", 1001: "t/ieee754", 1002: "t/lfsr-test", 1005: "t/stest"}
LINE = re.compile(r"^Test (\d+) (PASSED|FAILED|SKIPPED)(.*)$")


def unpack(tarball, work):
    src = os.path.join(work, "fio-3.33")
    if not os.path.isdir(src):
        os.makedirs(work, exist_ok=True)
        with tarfile.open(tarball) as t:
            t.extractall(work, filter="data")
    # What fio's configure would have written on this machine, as far as the suite asks.
    with open(os.path.join(src, "config-host.h"), "w") as f:
        f.write("#define CONFIG_LIBAIO\n#define CONFIG_LINUX\n/* io_uring_setup */\n")
    return src


def test_ids(src):
    """The suite's test numbers, in its order, read from its own table."""
    with open(os.path.join(src, "t", "run-fio-tests.py")) as f:
        return [int(n) for n in re.findall(r"'test_id':\s*(\d+)", f.read())]


def prune(art, keep_bytes=1 << 20):
    """Removes a finished test's large files (its data files and per-I/O logs: 5 GiB for t0002,
    2 GiB of latency logs for 1010) and keeps its records (.command, .output, .stderr, ...).
    The suite reads them while the test runs, so they are not needed after it; without this
    the whole suite needs about 14 GiB at once."""
    for d, _, names in os.walk(art):
        for n in names:
            path = os.path.join(d, n)
            try:
                if os.path.getsize(path) > keep_bytes:
                    os.remove(path)
            except OSError:
                pass


def run_suite(src, binary, name, work, only, skip=()):
    link_dir = os.path.join(work, "as-fio", name)
    os.makedirs(link_dir, exist_ok=True)
    link = os.path.join(link_dir, "fio")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(binary), link)
    art = os.path.join(work, "artifacts", name)
    shutil.rmtree(art, ignore_errors=True)
    os.makedirs(art, exist_ok=True)
    results = {}
    log = []
    # One test a run, each in its own artifact folder, pruned after it: the peak disk use is
    # one test's (5 GiB) rather than the suite's.
    for n in test_ids(src):
        if only and n not in only:
            continue
        if n in skip:
            results[n] = ("SKIPPED", "--skip: not run this time")
            continue
        if n in HELPERS:
            results[n] = ("SKIPPED", f"{HELPERS[n]}: one of fio's C test programs, "
                                     "not a test of fio")
            continue
        out = os.path.join(art, str(n))
        cmd = [sys.executable, "t/run-fio-tests.py", "-f", link, "-a", out, "-o", str(n)]
        p = subprocess.run(cmd, cwd=src, capture_output=True, text=True, errors="replace")
        log.append(p.stdout + p.stderr)
        for line in p.stdout.splitlines():
            m = LINE.match(line)
            if m and int(m.group(1)) == n:
                results[n] = (m.group(2), m.group(3).strip(" :"))
        if n not in results:
            results[n] = ("FAILED", f"no result line (exit {p.returncode})")
        prune(out)
    return results, "".join(log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target", "release", "iolab"))
    ap.add_argument("--fio", default=shutil.which("fio"))
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--tarball", default=os.path.join(
        ROOT, "..", "shared", "peers", "fio-3.33-tests.tar.gz"))
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "fiosuite"))
    ap.add_argument("--only", type=int, nargs="*")
    ap.add_argument("--skip", type=int, nargs="*", default=[],
                    help="tests not to run (CI leaves out the slowest; --expect-pass then "
                         "does not hold them)")
    ap.add_argument("--expect-pass")
    args = ap.parse_args()
    if not os.path.exists(args.tarball):
        print(f"fiosuite: skipped: {args.tarball} not found (fio's suite is kept in shared/)")
        return 2
    src = unpack(args.tarball, args.work)
    iolab, log = run_suite(src, args.iolab, "iolab", args.work, args.only, args.skip)
    with open(os.path.join(args.work, "iolab.log"), "w") as f:
        f.write(log)
    fio = {}
    if args.fio and not args.no_fio:
        fio, log = run_suite(src, args.fio, "fio", args.work, args.only, args.skip)
        with open(os.path.join(args.work, "fio.log"), "w") as f:
            f.write(log)
    print(f"{'test':>5}  {'iolab':8} {'fio 3.33':8}  detail (iolab's, where it did not pass)")
    for n in sorted(set(iolab) | set(fio)):
        a = iolab.get(n, ("-", ""))
        b = fio.get(n, ("-", ""))
        detail = a[1] if a[0] != "PASSED" else ""
        print(f"{n:>5}  {a[0]:8} {b[0]:8}  {detail[:150]}")
    for name, res in (("iolab", iolab), ("fio", fio)):
        if res:
            c = {k: sum(1 for v in res.values() if v[0] == k) for k in ("PASSED", "FAILED", "SKIPPED")}
            print(f"fiosuite: {name}: {c['PASSED']} passed, {c['FAILED']} failed, "
                  f"{c['SKIPPED']} skipped")
    if args.expect_pass:
        with open(args.expect_pass) as f:
            want = [int(x.split("#")[0]) for x in f if x.split("#")[0].strip()]
        bad = [n for n in want if n not in args.skip and iolab.get(n, ("-",))[0] != "PASSED"]
        if bad:
            print(f"fiosuite: expected to pass for iolab and did not: {bad}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
