#!/usr/bin/env python3
"""iolab serve against lighttpd (the peer) and nginx (beside it), driven by wrk.

Files of 4 KiB, 64 KiB and 1 MiB; wrk with 1, 16 and 64 connections; servers alternating
(iolab, lighttpd, nginx, iolab, ...) for PAIRS rounds, medians reported; unpinned and pinned
(server on CPU 0 with taskset, wrk on CPU 1), since client and server share two cores.
Prints requests/s, MB/s (of file bytes), p99 latency (wrk --latency), the server's CPU time
per request (utime+stime from /proc/PID/stat, children included, before and after each run)
and the ratios to lighttpd. Every wrk run holds the bench lock (flock; benchlib.LOCK), so benchmarks of
other work on this machine never overlap with it. Installs lighttpd, nginx and wrk if missing.
Not run by cargo test.

With --threads N each server gets N workers (iolab --threads N, lighttpd server.max-worker,
nginx worker_processes); with --wrk-threads N, wrk runs N threads (-tN; -t1 for one
connection, as wrk wants a connection per thread). Pinned runs need
--threads 1 (the server on CPU 0 alone).

usage: bench/serve.py [--duration S] [--pairs N] [--sizes 4k,64k,1m] [--conns 1,16,64]
                      [--pin both|on|off] [--threads N] [--wrk-threads N]
"""
import argparse, os, shutil, signal, socket, statistics, subprocess, time

from benchlib import LOCK, ROOT, build, install, machine, save, sh
WORK = os.path.join(ROOT, "target", "bench-serve")
SIZES = {"4k": 4096, "64k": 65536, "1m": 1 << 20}
PORTS = {"iolab": 18180, "lighttpd": 18181, "nginx": 18182}
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


def binary(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def wait_port(port, proc):
    t = time.time()
    while time.time() - t < 10:
        if proc.poll() is not None:
            raise SystemExit(f"server on port {port} exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def start(name, root, pin, threads):
    port = PORTS[name]
    # lighttpd's max-worker 0 is one process; N > 1 forks N workers.
    workers = threads if name == "nginx" else (0 if threads == 1 else threads)
    if name == "iolab":
        cmd = [os.path.join(ROOT, "target", "release", "iolab"), "serve", root,
               "--listen", f"127.0.0.1:{port}", "--threads", str(threads)]
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
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def cpu_ticks(pid):
    """utime+stime of pid and its children that are alive (nginx's worker), in clock ticks."""
    total = 0
    pids = [pid] + [int(c) for c in sh(f"pgrep -P {pid}").split()]
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total


def seconds(v):
    for unit, k in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * k
    return float(v)


def wrk(url, conns, duration, pin, pid, threads):
    # wrk wants at least one connection per thread: one connection is driven by one thread.
    threads = min(threads, conns)
    cmd = ["flock", LOCK, "wrk", f"-t{threads}", f"-c{conns}", f"-d{duration}s", "--latency", url]
    if pin:
        cmd = ["flock", LOCK, "taskset", "-c", "1"] + cmd[2:]
    before = cpu_ticks(pid)
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    after = cpu_ticks(pid)
    rps = p99 = None
    reqs = 0
    for line in out.splitlines():
        s = line.split()
        if line.startswith("Requests/sec:"):
            rps = float(s[1])
        elif s[:1] == ["99%"]:
            p99 = seconds(s[1])
        elif len(s) > 3 and s[1] == "requests" and s[2] == "in":
            reqs = int(s[0])
    if rps is None or p99 is None or reqs == 0:
        raise SystemExit(f"wrk output not understood:\n{out}")
    return {"rps": rps, "p99": p99, "cpu": (after - before) / TICK / reqs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--sizes", default="4k,64k,1m")
    ap.add_argument("--conns", default="1,16,64")
    ap.add_argument("--pin", default="both", choices=["both", "on", "off"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--wrk-threads", type=int, default=1)
    a = ap.parse_args()
    if a.threads > 1 and a.pin != "off":
        raise SystemExit("--threads above 1 wants --pin off (pinning puts the server on one CPU)")
    install(("lighttpd", "lighttpd"), ("nginx", "nginx-light"), ("wrk", "wrk"))
    build()
    root = os.path.join(WORK, "root")
    os.makedirs(root, exist_ok=True)
    sizes = a.sizes.split(",")
    for s in sizes:
        with open(os.path.join(root, f"{s}.bin"), "wb") as f:
            f.write(os.urandom(SIZES[s]))
    head = [
        machine(root, sh(binary("lighttpd") + " -v").splitlines()[0], sh(binary("nginx") + " -v 2>&1"),
                f"wrk {sh('wrk -v 2>&1 | head -1').split()[1]}"),
        f"# bench/serve.py --duration {a.duration} --pairs {a.pairs} --sizes {a.sizes} --conns {a.conns} "
        f"--pin {a.pin} --threads {a.threads} --wrk-threads {a.wrk_threads}; medians of {a.pairs} "
        f"alternating runs; wrk -t{a.wrk_threads}; iolab --threads {a.threads} (engine io_uring); "
        f"lighttpd {a.threads} process(es), sendfile backend, linux-sysepoll, no access log; nginx "
        f"{a.threads} worker(s), sendfile on, tcp_nopush on, access_log off; keep-alive requests "
        "unlimited for all three",
        "# MB/s counts file bytes; cpu/req is the server's utime+stime per request; x = ratio to lighttpd",
        "# load average at start (other work on this machine): "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]
    cols = f"{'size':>5} {'conns':>5} {'pin':>4} {'server':<9}{'req/s':>10}{'MB/s':>9}{'p99':>10}" \
           f"{'cpu/req':>10}{'x req/s':>9}{'x MB/s':>8}{'x cpu':>7}"
    print("\n".join(head))
    print(cols, flush=True)
    lines = []
    pins = {"both": [False, True], "on": [True], "off": [False]}[a.pin]
    servers = ["iolab", "lighttpd", "nginx"]
    for pin in pins:
        procs = {n: start(n, root, pin, a.threads) for n in servers}
        try:
            for s in sizes:
                for c in [int(x) for x in a.conns.split(",")]:
                    runs = {n: [] for n in servers}
                    for _ in range(a.pairs):
                        for n in servers:
                            url = f"http://127.0.0.1:{PORTS[n]}/{s}.bin"
                            runs[n].append(wrk(url, c, a.duration, pin, procs[n].pid, a.wrk_threads))
                    med = {n: {k: statistics.median(r[k] for r in runs[n]) for k in ("rps", "p99", "cpu")}
                           for n in servers}
                    base = med["lighttpd"]
                    for n in servers:
                        m = med[n]
                        mbs = m["rps"] * SIZES[s] / 1e6
                        line = (f"{s:>5} {c:>5} {'yes' if pin else 'no':>4} {n:<9}{m['rps']:>10.0f}{mbs:>9.1f}"
                                f"{m['p99'] * 1e3:>8.3f}ms{m['cpu'] * 1e6:>8.2f}us"
                                f"{m['rps'] / base['rps']:>9.3f}{m['rps'] / base['rps']:>8.3f}"
                                f"{m['cpu'] / base['cpu'] if base['cpu'] else float('nan'):>7.3f}")
                        print(line, flush=True)
                        lines.append(line)
        finally:
            for p in procs.values():
                p.send_signal(signal.SIGTERM)
            for p in procs.values():
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    tail = ["# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg())]
    out = save("serve", head + [cols] + lines + tail)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
