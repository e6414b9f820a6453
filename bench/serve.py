#!/usr/bin/env python3
"""iolab serve (epoll and io_uring network paths) against lighttpd (the peer) and nginx, driven
by wrk. One command runs the whole comparison docs/benchmarks.md quotes:

  A  one server thread/process, wrk -t1, files of 4 KiB, 64 KiB, 1 MiB x 1, 16, 64
     connections, unpinned and pinned (server on CPU 0 with taskset, wrk on CPU 1);
  B  the same grid with wrk -t2, unpinned;
  C  two server threads/processes/workers each (iolab --threads 2, lighttpd
     server.max-worker 2, nginx worker_processes 2), wrk -t2, unpinned;
  S  system calls per response (strace -f over a short wrk run, 4 KiB and 1 MiB x 16
     connections): deterministic, unlike the timings, on a busy machine.

Servers alternate (iolab, iolab-uring, lighttpd, nginx, iolab, ...) for PAIRS rounds and the
medians are printed: requests/s, MB/s of file bytes, p99 latency (wrk --latency), the server's
CPU time per request (utime+stime of the process and its children from /proc, before and
after each run) and the ratios to lighttpd. Every wrk run holds the bench lock (flock;
benchlib.LOCK), so benchmarks of other work on this machine never overlap with it. Installs
lighttpd, nginx, wrk and strace if missing. Saves everything to bench/results/serve-<time>.txt.
Not run by cargo test.

usage: bench/serve.py [--sections A,B,C,S] [--duration S] [--pairs N] [--sizes 4k,64k,1m]
                      [--conns 1,16,64] [--servers iolab,iolab-uring,lighttpd,nginx]
                      [--base OLD_IOLAB]   (adds servers base, base-uring: before/after)
"""
import argparse, os, shutil, signal, socket, statistics, subprocess, time

from benchlib import LOCK, ROOT, build, install, machine, save, sh
WORK = os.path.join(ROOT, "target", "bench-serve")
SIZES = {"4k": 4096, "64k": 65536, "1m": 1 << 20}
PORTS = {"iolab": 18180, "lighttpd": 18181, "nginx": 18182, "iolab-uring": 18183,
         "base": 18184, "base-uring": 18185}
# --base BIN: servers "base" and "base-uring" run this (older) iolab binary, for before/after
# figures measured in the same alternating rounds as the current build.
BASE = None
TICK = os.sysconf("SC_CLK_TCK")

LIGHTTPD_CONF = """server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.network-backend = "sendfile"
server.event-handler = "linux-sysepoll"
server.max-worker = {workers}
server.max-keep-alive-requests = 1000000
server.pid-file = "{work}/lighttpd.pid"
server.errorlog = "{work}/lighttpd.err"
"""

NGINX_CONF = """worker_processes {workers};
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx.err;
events {{ worker_connections 1024; }}
http {{
    sendfile on;
    tcp_nopush on;
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path {work}/nginx-tmp;
    proxy_temp_path {work}/nginx-tmp;
    fastcgi_temp_path {work}/nginx-tmp;
    uwsgi_temp_path {work}/nginx-tmp;
    scgi_temp_path {work}/nginx-tmp;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"""


def interrupted(*_):
    raise KeyboardInterrupt


def binary(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def wait_port(port, proc, within=10):
    t = time.time()
    while time.time() - t < within:
        if proc.poll() is not None:
            raise SystemExit(f"server on port {port} exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def start(name, root, pin, threads, prefix=()):
    """Starts server `name` on its port (under `prefix`, e.g. valgrind, when given)."""
    port = PORTS[name]
    # A server left on the port (from an interrupted run, or started by hand) would answer
    # in place of this one.
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        raise SystemExit(f"port {port} ({name}) is taken by another process: stop it first")
    except OSError:
        pass
    # lighttpd's max-worker 0 is one process; N > 1 forks N workers.
    workers = threads if name == "nginx" else (0 if threads == 1 else threads)
    if name.startswith(("iolab", "base")):
        net = "io_uring" if name.endswith("-uring") else "epoll"
        exe = BASE if name.startswith("base") else os.path.join(ROOT, "target", "release", "iolab")
        cmd = [exe, "serve", root,
               "--listen", f"127.0.0.1:{port}", "--threads", str(threads), "--net", net]
    elif name == "lighttpd":
        conf = os.path.join(WORK, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(LIGHTTPD_CONF.format(root=root, port=port, work=WORK, workers=workers))
        cmd = [binary("lighttpd"), "-D", "-f", conf]
    else:
        conf = os.path.join(WORK, "nginx.conf")
        os.makedirs(os.path.join(WORK, "nginx-tmp"), exist_ok=True)
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(root=root, port=port, work=WORK, workers=workers))
        cmd = [binary("nginx"), "-c", conf, "-p", WORK]
    if pin:
        cmd = ["taskset", "-c", "0"] + cmd
    cmd = list(prefix) + cmd
    # A session of its own: lighttpd with workers stops them with kill(0, SIGTERM), which
    # otherwise reached this script too (it died after the last row, before saving).
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    wait_port(port, p, 60 if prefix else 10)
    return p


def cpu_ticks(pid):
    """(utime+stime, utime) of pid and its children that are alive (nginx's worker), in clock
    ticks."""
    total = user = 0
    pids = [pid] + [int(c) for c in sh(f"pgrep -P {pid}").split()]
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            user += int(fields[11])
        except (OSError, IndexError, ValueError):
            pass
    return total, user


def seconds(v):
    for unit, k in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * k
    return float(v)


def size_bytes(v):
    """wrk's byte counts ("512.34MB", binary units) in bytes."""
    for unit, k in (("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("TB", 1 << 40), ("B", 1)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * k
    return float(v)


def parse_wrk(out, size):
    """wrk's summary: requests/s and the count of the 2xx responses, p99, and `flag`: error
    statuses, socket errors, and whether fewer bytes came than the responses times the
    `size`-byte file. wrk's own counts include error statuses (a 404 costs less than a file
    and would flatter a server): they are taken out, and a flagged run is marked in the
    table."""
    rps = p99 = secs = None
    reqs = bad = errors = 0
    read = 0.0
    for line in out.splitlines():
        s = line.split()
        if line.startswith("Requests/sec:"):
            rps = float(s[1])
        elif s[:1] == ["99%"]:
            p99 = seconds(s[1])
        elif len(s) >= 6 and s[1] == "requests" and s[2] == "in" and s[5] == "read":
            reqs = int(s[0])
            secs = seconds(s[3].rstrip(","))
            read = size_bytes(s[4])
        elif line.strip().startswith("Non-2xx or 3xx responses:"):
            bad = int(s[-1])
        elif line.strip().startswith("Socket errors:"):
            errors = sum(int(x.rstrip(",")) for x in s[3::2])
    if rps is None or p99 is None or reqs == 0 or not secs:
        raise SystemExit(f"wrk output not understood:\n{out}")
    # Bytes read are rounded to wrk's two decimals: a response shorter than the file shows as
    # fewer bytes than the responses times the file.
    short = read < reqs * size * 0.99
    return {"rps": rps * (reqs - bad) / reqs, "p99": p99, "reqs": reqs - bad,
            "flag": bad + errors + short}


def wrk(url, conns, duration, pin, pid, threads, size):
    # wrk wants at least one connection per thread: one connection is driven by one thread.
    threads = min(threads, conns)
    cmd = ["flock", LOCK, "wrk", f"-t{threads}", f"-c{conns}", f"-d{duration}s", "--latency", url]
    if pin:
        cmd = ["flock", LOCK, "taskset", "-c", "1"] + cmd[2:]
    before = cpu_ticks(pid)
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    after = cpu_ticks(pid)
    r = parse_wrk(out, size)
    r["cpu"] = (after[0] - before[0]) / TICK / max(r["reqs"], 1)
    r["usr"] = (after[1] - before[1]) / TICK / max(r["reqs"], 1)
    return r


def grid(a, root, sizes, conns, pin, threads, wrk_threads, label, lines):
    """One section: every size x connection count, servers alternating, medians and ratios."""
    servers = a.servers
    procs = {n: start(n, root, pin, threads) for n in servers}
    try:
        for s in sizes:
            for c in conns:
                runs = {n: [] for n in servers}
                for _ in range(a.pairs):
                    for n in servers:
                        url = f"http://127.0.0.1:{PORTS[n]}/{s}.bin"
                        runs[n].append(wrk(url, c, a.duration, pin, procs[n].pid, wrk_threads,
                                               SIZES[s]))
                med = {n: {k: statistics.median(r[k] for r in runs[n]) for k in ("rps", "p99", "cpu", "usr")}
                       for n in servers}
                base = med.get("lighttpd") or med[servers[0]]
                for n in servers:
                    m = med[n]
                    mbs = m["rps"] * SIZES[s] / 1e6
                    xcpu = m["cpu"] / base["cpu"] if base["cpu"] else float("nan")
                    line = (f"{label:>3} {s:>5} {c:>5} {'yes' if pin else 'no':>4} {n:<12}"
                            f"{m['rps']:>10.0f}{mbs:>9.1f} {m['p99'] * 1e3:>8.3f}ms"
                            f"{m['cpu'] * 1e6:>8.2f}us{m['usr'] * 1e6:>7.2f}us"
                            f"{m['rps'] / base['rps']:>9.3f}{xcpu:>7.3f}"
                            + (" !" if any(r["flag"] for r in runs[n]) else ""))
                    print(line, flush=True)
                    lines.append(line)
    finally:
        stop_all(procs)


def stop_all(procs):
    for p in procs.values():
        p.send_signal(signal.SIGTERM)
    for p in procs.values():
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


# System calls strace 6.1 has no name for.
UNNAMED = {"syscall_0x1c3": "cachestat"}


def count_syscalls(name, pid, size, conns, duration):
    """System calls per response of server `name` (process `pid`, its threads and its children)
    over a wrk run: the total, and the most frequent by name. Counted from strace's full trace,
    not from `strace -c`: strace 6.1's summary silently leaves out the calls it has no name for
    (cachestat, 451, which iolab made once per response, never showed)."""
    out = os.path.join(WORK, "strace.txt")
    pids = [pid] + [int(c) for c in sh(f"pgrep -P {pid}").split()]
    # raw=all: arguments as numbers, so the trace stays short (no buffers dumped).
    trace = ["strace", "-f", "-qq", "-e", "raw=all", "-e", "signal=none", "-o", out]
    tr = subprocess.Popen(trace + [x for p in pids for x in ("-p", str(p))],
                          stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    reqs = wrk(f"http://127.0.0.1:{PORTS[name]}/{size}.bin", conns, duration, False, pid, 1,
               SIZES[size])["reqs"]
    tr.send_signal(signal.SIGINT)
    tr.wait(timeout=60)
    counts = {}
    with open(out, errors="replace") as f:
        for row in f:
            # "PID name(args) = r", or "PID name(args <unfinished ...>" then "PID <... name
            # resumed>": each call counted once, at its start.
            call = row.split(None, 1)[1] if " " in row else ""
            if call.startswith("<...") or "(" not in call:
                continue
            n = call.split("(", 1)[0]
            n = UNNAMED.get(n, n)
            counts[n] = counts.get(n, 0) + 1
    total = sum(counts.values())
    top = ", ".join(f"{n} {c / reqs:.2f}" for n, c in sorted(counts.items(), key=lambda x: -x[1])
                    if c / reqs >= 0.01)
    return f"{total / reqs:6.2f} calls/response: {top}"


def syscalls(a, root, lines):
    """Each server traced over a short wrk run: calls per response, by system call."""
    procs = {n: start(n, root, False, 1) for n in a.servers}
    try:
        for s in ("4k", "1m"):
            for n in a.servers:
                calls = count_syscalls(n, procs[n].pid, s, 16, 3)
                line = f"  S {s:>5}    16   no {n:<12} {calls}"
                print(line, flush=True)
                lines.append(line)
    finally:
        stop_all(procs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sections", default="A,B,C,S")
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--sizes", default="4k,64k,1m")
    ap.add_argument("--conns", default="1,16,64")
    ap.add_argument("--servers", default="iolab,iolab-uring,lighttpd,nginx")
    ap.add_argument("--base", help="an older iolab binary, run as servers base and base-uring")
    a = ap.parse_args()
    # SIGTERM (kill, a CI timeout) unwinds like ^C: the servers started so far are stopped by
    # the `finally`s instead of being left on their ports.
    signal.signal(signal.SIGTERM, interrupted)
    global BASE
    BASE = a.base
    if any(n.startswith("base") for n in a.servers.split(",")) and not BASE:
        raise SystemExit("servers base and base-uring need --base BIN")
    a.servers = a.servers.split(",")
    bad = [n for n in a.servers if n not in PORTS]
    if bad:
        raise SystemExit(f"unknown server(s) {bad}; known: {sorted(PORTS)}")
    sections = a.sections.split(",")
    install(("lighttpd", "lighttpd"), ("nginx", "nginx-light"), ("wrk", "wrk"), ("strace", "strace"))
    build()
    os.makedirs(WORK, exist_ok=True)
    root = os.path.join(WORK, "root")
    os.makedirs(root, exist_ok=True)
    sizes = a.sizes.split(",")
    for s in set(sizes) | {"4k", "1m"}:
        with open(os.path.join(root, f"{s}.bin"), "wb") as f:
            f.write(os.urandom(SIZES[s]))
    conns = [int(x) for x in a.conns.split(",")]
    cells = len(sizes) * len(conns) * len(a.servers) * a.pairs * a.duration
    minutes = (cells * (("A" in sections) * 2 + ("B" in sections) + ("C" in sections))) / 60
    head = [
        machine(root, sh(binary("lighttpd") + " -v").splitlines()[0], sh(binary("nginx") + " -v 2>&1"),
                f"wrk {sh('wrk -v 2>&1 | head -1').split()[1]}"),
        f"# bench/serve.py --sections {a.sections} --duration {a.duration} --pairs {a.pairs} "
        f"--sizes {a.sizes} --conns {a.conns} --servers {','.join(a.servers)}; medians of {a.pairs} "
        "alternating runs; iolab --net epoll, iolab-uring --net io_uring (both engine io_uring for "
        "small files); lighttpd sendfile backend, linux-sysepoll, no access log; nginx sendfile on, "
        "tcp_nopush on, access_log off; keep-alive requests unlimited for all",
        "# sections: A 1 server thread, wrk -t1, unpinned and pinned; B 1 thread, wrk -t2; "
        "C 2 threads/processes/workers, wrk -t2; S system calls per response (strace -f, counted)",
        "# MB/s counts file bytes; cpu/req is the server's utime+stime per request, usr/req its utime "
        "(the rest is the kernel's, the TCP stack's above all); x = ratio to lighttpd; "
        "! = a run had error statuses, socket errors or short responses (left out of req/s)"
        + (f"; base, base-uring = {a.base}" if a.base else ""),
        "# load average at start (other work on this machine): "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]
    cols = f"sec {'size':>5} {'conns':>5} {'pin':>4} {'server':<12}{'req/s':>10}{'MB/s':>9}{'p99':>11}" \
           f"{'cpu/req':>10}{'usr/req':>9}{'x req/s':>9}{'x cpu':>7}"
    print("\n".join(head))
    print(f"# about {minutes:.0f} minutes of wrk runs", flush=True)
    print(cols, flush=True)
    lines = []
    try:
        if "A" in sections:
            for pin in (False, True):
                grid(a, root, sizes, conns, pin, 1, 1, "A", lines)
        if "B" in sections:
            grid(a, root, sizes, conns, False, 1, 2, "B", lines)
        if "C" in sections:
            grid(a, root, sizes, conns, False, 2, 2, "C", lines)
        if "S" in sections:
            syscalls(a, root, lines)
    finally:
        tail = ["# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg())]
        out = save("serve", head + [cols] + lines + tail)
        print(f"saved {out}")


if __name__ == "__main__":
    main()
