#!/usr/bin/env python3
"""The differential harness: random fio jobs run by fio 3.33 and by iolab, compared.

    tools/fiodiff.py campaign [--jobs N] [--seed S] [--out DIR] [--iolab PATH] [--fio PATH]
                              [--minimize] [--only-kinds K,K] [--max-fail N]
    tools/fiodiff.py one JOBFILE [--iolab PATH] [--fio PATH]     # one job, differences printed
    tools/fiodiff.py gen [--jobs N] [--seed S]                   # print the jobs a campaign runs

Each job is a small fio job drawn at random from a table of fio's options (I/O pattern, block
sizes, mixes, files and their service, offsets and sizes, loops, io_size, number_ios, strided
zones, random maps, seeds and distributions, sync options, buffer contents, verify, engines and
depths), given as a job file or as a command line. fio and iolab each run it in an empty
folder of their own with `--output-format=json --output=out.json` and the job's
`write_iolog=io.log`, and the two runs are compared on:

  exit     the exit status (0, or not 0)
  streams  which streams carry anything (standard output, standard error)
  iolog    the I/O sequence of write_iolog, timestamps left out (verify reads included)
  files    the bytes of every file the job leaves, verify headers' time and crc left out
  counts   per direction io_bytes and total_ios, and sync total_ios, of the JSON
  options  the JSON's "job options"

A campaign prints the counts of identical and differing jobs by kind and writes, for each
differing job, `DIR/diffs/NNNN-KINDS/job.fio` (or `cmdline`) with `what.txt` saying what
differed; with --minimize each is first reduced to the fewest options that still differ in
the same kinds. `DIR/summary.json` holds the figures. Exit status: 0 when at most --max-fail
jobs differ (default: any number), 1 otherwise, 2 when fio is missing.

No third-party modules; the job draw depends only on the seed, so a campaign is repeatable.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("exit", "streams", "iolog", "files", "counts", "options")
TIMEOUT = 60


# ---------------------------------------------------------------------------------------------
# The job generator.

SIZES_K = [16, 32, 48, 64, 96, 100, 128, 256, 512, 1024]
BS = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k"]
SYNC_ENGINES = ["psync", "pvsync2", "sync", "pvsync", "vsync"]
ASYNC_ENGINES = ["libaio", "io_uring"]
VERIFY = ["crc32c", "md5", "crc64", "sha1", "sha256", "xxhash", "crc32", "crc16", "crc7",
          "meta", "pattern", "sha512", "sha3-256", "crc32c-intel"]


def kib(k):
    return f"{k}k"


def draw(rng):
    """One random job: a list of (name, value) pairs in the order written."""
    o = []
    rw = rng.choice(["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw",
                     "randrw", "write", "randwrite"])
    if rng.random() < 0.12:
        # fio's modifiers: a seq job's hole, a random job's offsets per new random draw.
        rw += ":" + (rng.choice(["4k", "8k", "1k"]) if "rand" not in rw else str(rng.randint(2, 4)))
    o.append(("rw", rw))
    engine = rng.choice(SYNC_ENGINES * 2 + ASYNC_ENGINES)
    o.append(("ioengine", engine))
    if engine in ASYNC_ENGINES:
        o.append(("iodepth", str(rng.choice([1, 2, 4, 8, 16]))))
    size_k = rng.choice(SIZES_K)
    o.append(("size", kib(size_k)))

    r = rng.random()
    if r < 0.55:
        o.append(("bs", rng.choice(BS[:6])))
    elif r < 0.68:
        o.append(("bs", f"{rng.choice(BS[:6])},{rng.choice(BS[:6])}"))
    elif r < 0.8:
        lo, hi = sorted(rng.sample(range(0, 6), 2))
        o.append(("bsrange", f"{BS[lo]}-{BS[hi]}"))
    elif r < 0.9:
        a, b = rng.sample(BS[1:6], 2)
        p = rng.choice([10, 25, 50, 75, 90])
        o.append(("bssplit", f"{a}/{p}:{b}/{100 - p}"))
    else:
        o.append(("bs", rng.choice(["1k", "3k", "2300", "4k", "5k"])))
    if "rw" in rw.split(":")[0] and rng.random() < 0.7:
        o.append(("rwmixread", str(rng.choice([0, 10, 25, 30, 50, 70, 75, 90, 100]))))

    if rng.random() < 0.3:
        o.append(("nrfiles", str(rng.randint(2, 4))))
        if rng.random() < 0.7:
            o.append(("file_service_type", rng.choice(
                ["roundrobin", "sequential", "random", "roundrobin:2", "sequential:3"])))
    if rng.random() < 0.15:
        o.append(("offset", rng.choice(["4k", "8k", "16k", "10%", "25%"])))
    if rng.random() < 0.2:
        o.append(("loops", str(rng.randint(2, 3))))
    r = rng.random()
    if r < 0.1:
        o.append(("io_size", kib(rng.choice([size_k // 2, size_k * 2, size_k + 4]))))
    elif r < 0.17:
        o.append(("number_ios", str(rng.randint(1, 20))))
    if rng.random() < 0.07:
        o.append(("zonemode", "strided"))
        o.append(("zonesize", "8k"))
        o.append(("zoneskip" if rng.random() < 0.5 else "zonerange",
                  rng.choice(["8k", "16k", "32k"])))
    if "rand" in rw:
        if rng.random() < 0.25:
            o.append(("norandommap", "1"))
        if rng.random() < 0.15:
            o.append(("random_generator", rng.choice(["tausworthe", "lfsr", "tausworthe64"])))
        if rng.random() < 0.1:
            o.append(("random_distribution", rng.choice(
                ["zipf:1.2", "pareto:0.3", "normal:50", "random", "zoned:50/10:50/90"])))
        if rng.random() < 0.12:
            o.append(("percentage_random", str(rng.choice([0, 25, 50, 90, 100]))))
    if rng.random() < 0.3:
        o.append(("randseed", str(rng.randint(1, 1 << 20))))

    writes = "write" in rw or "rw" in rw.split(":")[0]
    if writes and rng.random() < 0.25:
        o.append((rng.choice(["fsync", "fdatasync"]), str(rng.randint(1, 4))))
    if writes and rng.random() < 0.15:
        o.append((rng.choice(["end_fsync", "fsync_on_close"]), "1"))
    r = rng.random()
    if r < 0.15:
        o.append(("buffer_pattern", rng.choice(["0xdeadbeef", "0x00", "\"abcd\"", "0xaa55"])))
    elif r < 0.2:
        o.append(("zero_buffers", "1"))
    elif r < 0.25:
        o.append(("scramble_buffers", "0"))
    elif r < 0.3:
        o.append(("refill_buffers", "1"))
    if writes and rng.random() < 0.2:
        v = rng.choice(VERIFY)
        o.append(("verify", v))
        if v == "pattern":
            o.append(("verify_pattern", rng.choice(["0xdeadbeef", "0x12345678", "\"xyz\""])))
        if rng.random() < 0.2:
            o.append(("do_verify", "0"))
    if rng.random() < 0.15:
        o.append(("direct", "1"))
    return o


def job_file(opts, log="io.log"):
    lines = ["[j]"] + [f"{k}={v}" for k, v in opts] + [f"write_iolog={log}"]
    return "\n".join(lines) + "\n"


def cmdline(opts, log="io.log"):
    return ["--name=j"] + [f"--{k}={v}" for k, v in opts] + [f"--write_iolog={log}"]


# ---------------------------------------------------------------------------------------------
# Running one job with one tool.

class Run:
    def __init__(self, rc, stdout, stderr, folder):
        self.rc, self.stdout, self.stderr, self.folder = rc, stdout, stderr, folder

    def json(self):
        try:
            with open(os.path.join(self.folder, "out.json")) as f:
                text = f.read()
            # fio may put lines before the JSON object (its own informational lines).
            return json.loads(text[text.index("{"):])
        except (OSError, ValueError):
            return None


def run_tool(tool, opts, as_cmdline, folder):
    os.makedirs(folder, exist_ok=True)
    if as_cmdline:
        args = cmdline(opts)
    else:
        with open(os.path.join(folder, "job.fio"), "w") as f:
            f.write(job_file(opts))
        args = ["job.fio"]
    cmd = tool + args + ["--output-format=json", "--output=out.json"]
    try:
        p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT,
                           errors="replace", stdin=subprocess.DEVNULL)
        return Run(p.returncode, p.stdout, p.stderr, folder)
    except subprocess.TimeoutExpired:
        return Run("timeout", "", "", folder)


# ---------------------------------------------------------------------------------------------
# Comparing two runs.

OWN_FILES = {"job.fio", "out.json", "io.log"}


def iolog(folder):
    try:
        with open(os.path.join(folder, "io.log")) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    if not lines:
        return []
    out = [lines[0]]
    v3 = lines[0].startswith("fio version 3")
    for line in lines[1:]:
        out.append(line.split(" ", 1)[1] if v3 and " " in line else line)
    return out


def masked(data):
    """A file's bytes with fio's verify headers' times and header crc zeroed (they differ
    from run to run in fio itself)."""
    b = bytearray(data)
    for off in range(0, len(b) - 40, 512):
        if b[off] == 0xCA and b[off + 1] == 0xAC:
            b[off + 24:off + 32] = bytes(8)
            b[off + 36:off + 40] = bytes(4)
    return bytes(b)


def file_digests(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if name in OWN_FILES or not os.path.isfile(p):
            continue
        with open(p, "rb") as f:
            out[name] = hashlib.sha256(masked(f.read())).hexdigest()[:16]
    return out


def counts(doc):
    if not doc or not doc.get("jobs"):
        return None
    res = []
    for j in doc["jobs"]:
        c = {}
        for d in ("read", "write", "trim"):
            s = j.get(d, {})
            c[d] = (s.get("io_bytes"), s.get("total_ios"))
        c["sync"] = j.get("sync", {}).get("total_ios")
        c["error"] = j.get("error")
        res.append(c)
    return res


def job_options(doc):
    if not doc or not doc.get("jobs"):
        return None
    return [j.get("job options") for j in doc["jobs"]]


def streams(r):
    return ("stdout" if r.stdout.strip() else "-", "stderr" if r.stderr.strip() else "-")


def compare(f, i, again=None):
    """The kinds in which iolab's run `i` differs from fio's run `f`, each with a short why.
    `again` runs fio once more: where fio's own two runs leave different bytes (fio's
    scramble_buffers writes the issue time into every 512 bytes written), the files are not
    compared."""
    d = {}
    if (f.rc == 0) != (i.rc == 0) or "timeout" in (f.rc, i.rc):
        d["exit"] = f"fio {f.rc}, iolab {i.rc}"
    if streams(f) != streams(i):
        d["streams"] = f"fio {streams(f)}, iolab {streams(i)}"
    if f.rc != 0 or i.rc != 0:
        return d
    a, b = iolog(f.folder), iolog(i.folder)
    if a != b:
        d["iolog"] = first_difference(a, b)
    fa, fb = file_digests(f.folder), file_digests(i.folder)
    if fa != fb and (again is None or file_digests(again().folder) == fa):
        d["files"] = f"fio {fa}, iolab {fb}"
    ja, jb = f.json(), i.json()
    ca, cb = counts(ja), counts(jb)
    if ca != cb:
        d["counts"] = f"fio {ca}, iolab {cb}"
    oa, ob = job_options(ja), job_options(jb)
    if oa != ob:
        d["options"] = f"fio {oa}, iolab {ob}"
    return d


def first_difference(a, b):
    if a is None or b is None:
        return f"fio log {'missing' if a is None else len(a)}, iolab {'missing' if b is None else len(b)}"
    for n, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {n + 1}: fio '{x}', iolab '{y}' (lines: fio {len(a)}, iolab {len(b)})"
    return f"fio {len(a)} lines, iolab {len(b)} lines; first extra: " + (
        a[len(b)] if len(a) > len(b) else b[len(a)])


class Pair:
    def __init__(self, fio, iolab, scratch):
        self.fio, self.iolab, self.scratch = fio, iolab, scratch
        self.n = 0

    def differ(self, opts, as_cmdline):
        self.n += 1
        base = os.path.join(self.scratch, str(self.n))
        f = run_tool(self.fio, opts, as_cmdline, os.path.join(base, "fio"))
        i = run_tool(self.iolab, opts, as_cmdline, os.path.join(base, "iolab"))
        d = compare(f, i, lambda: run_tool(self.fio, opts, as_cmdline, os.path.join(base, "fio2")))
        shutil.rmtree(base, ignore_errors=True)
        return d, f, i


def minimize(pair, opts, as_cmdline, kinds, budget=40):
    """Greedily leaves out options while the job still differs in every one of `kinds`."""
    keep = list(opts)
    changed = True
    while changed and budget > 0:
        changed = False
        for n in range(len(keep)):
            if keep[n][0] in ("rw", "size"):
                continue
            trial = keep[:n] + keep[n + 1:]
            budget -= 1
            d, _, _ = pair.differ(trial, as_cmdline)
            if all(k in d for k in kinds):
                keep = trial
                changed = True
                break
            if budget <= 0:
                break
    return keep


# ---------------------------------------------------------------------------------------------


def tools_of(args):
    fio = shutil.which(args.fio) if not os.path.isabs(args.fio) else args.fio
    if not fio:
        print(f"fiodiff: no {args.fio} on PATH: nothing to compare with", file=sys.stderr)
        sys.exit(2)
    iolab = args.iolab or os.path.join(ROOT, "target", "release", "iolab")
    if not os.access(iolab, os.X_OK):
        print(f"fiodiff: {iolab} is not an executable (cargo build --release)", file=sys.stderr)
        sys.exit(2)
    return [fio], [iolab, "run"]


def campaign(args):
    fio, iolab = tools_of(args)
    out = args.out
    shutil.rmtree(os.path.join(out, "diffs"), ignore_errors=True)
    os.makedirs(os.path.join(out, "diffs"), exist_ok=True)
    os.makedirs(args.scratch or out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="scratch-", dir=args.scratch or out)
    pair = Pair(fio, iolab, scratch)
    rng = random.Random(args.seed)
    by_kind = {k: 0 for k in KINDS}
    identical = 0
    rows = []
    try:
        for n in range(args.jobs):
            opts = draw(rng)
            as_cmdline = rng.random() < 0.3
            d, f, i = pair.differ(opts, as_cmdline)
            if not d:
                identical += 1
            for k in d:
                by_kind[k] += 1
            rows.append({"n": n, "kinds": sorted(d), "opts": opts, "cmdline": as_cmdline})
            if d:
                small = minimize(pair, opts, as_cmdline, list(d)) if args.minimize else opts
                write_reproducer(out, n, d, opts, small, as_cmdline, f, i)
            if not args.quiet:
                print(f"{n + 1:5}/{args.jobs} {'same' if not d else ' '.join(sorted(d))}",
                      flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tried = len(rows)
    summary = {"seed": args.seed, "tried": tried, "identical": identical,
               "differing_by_kind": by_kind, "jobs": rows}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"fiodiff: seed {args.seed}: {identical} of {tried} jobs identical to fio "
          f"({100.0 * identical / max(tried, 1):.1f}%); differing by kind: "
          + ", ".join(f"{k} {v}" for k, v in by_kind.items()))
    print(f"fiodiff: reproducers in {os.path.join(out, 'diffs')}")
    differing = tried - identical
    return 0 if args.max_fail is None or differing <= args.max_fail else 1


def write_reproducer(out, n, d, opts, small, as_cmdline, f, i):
    folder = os.path.join(out, "diffs", f"{n:04}-{'-'.join(sorted(d))}")
    os.makedirs(folder, exist_ok=True)
    if as_cmdline:
        with open(os.path.join(folder, "cmdline"), "w") as fh:
            fh.write("fio " + " ".join(cmdline(small)) + " --output-format=json --output=out.json\n")
    with open(os.path.join(folder, "job.fio"), "w") as fh:
        fh.write(job_file(small))
    with open(os.path.join(folder, "what.txt"), "w") as fh:
        for k, why in sorted(d.items()):
            fh.write(f"{k}: {why}\n")
        if small != opts:
            fh.write("\nthe job as drawn:\n" + job_file(opts))
        fh.write(f"\nfio: exit {f.rc}\nstderr: {f.stderr[-2000:]}\n")
        fh.write(f"iolab: exit {i.rc}\nstderr: {i.stderr[-2000:]}\n")


def one(args):
    fio, iolab = tools_of(args)
    with open(args.job) as f:
        text = f.read()
    scratch = tempfile.mkdtemp(prefix="fiodiff-", dir=args.scratch)
    try:
        res = {}
        for name, tool in (("fio", fio), ("iolab", iolab)):
            folder = os.path.join(scratch, name)
            os.makedirs(folder)
            with open(os.path.join(folder, "job.fio"), "w") as fh:
                fh.write(text if "write_iolog" in text else text.rstrip("\n") + "\nwrite_iolog=io.log\n")
            p = subprocess.run(tool + ["job.fio", "--output-format=json", "--output=out.json"],
                               cwd=folder, capture_output=True, text=True, timeout=TIMEOUT,
                               errors="replace", stdin=subprocess.DEVNULL)
            res[name] = Run(p.returncode, p.stdout, p.stderr, folder)
        d = compare(res["fio"], res["iolab"])
        for k, why in sorted(d.items()):
            print(f"{k}: {why}")
        print("identical" if not d else f"{len(d)} kinds differ")
        return 1 if d else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("campaign")
    c.add_argument("--jobs", type=int, default=200)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--out", default=os.path.join(ROOT, "target", "fiodiff"))
    c.add_argument("--minimize", action="store_true")
    c.add_argument("--max-fail", type=int, default=None)
    c.add_argument("--quiet", action="store_true")
    g = sub.add_parser("gen")
    g.add_argument("--jobs", type=int, default=10)
    g.add_argument("--seed", type=int, default=1)
    o = sub.add_parser("one")
    o.add_argument("job")
    for p in (c, o):
        p.add_argument("--fio", default="fio")
        p.add_argument("--iolab", default=None)
        p.add_argument("--scratch", default=None, help="where jobs run (default: the --out folder, or $TMPDIR for one)")
    args = ap.parse_args()
    if args.cmd == "campaign":
        sys.exit(campaign(args))
    if args.cmd == "one":
        sys.exit(one(args))
    rng = random.Random(args.seed)
    for _ in range(args.jobs):
        opts = draw(rng)
        rng.random()
        print(job_file(opts))


if __name__ == "__main__":
    main()
