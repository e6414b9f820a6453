#!/usr/bin/env python3
"""What a response costs each server, measured in ways a busy machine does not blur:

  cpu   the server's CPU time (utime+stime from /proc) per request over a wrk run (timed, so
        still somewhat load-sensitive, but not a throughput race);
  sys   system calls per response (strace -f over a wrk run, counted), the top ones by name;
  ir    user-space instructions per request (callgrind, counters zeroed after a warm-up, then
        a fixed number of keep-alive requests from a small client of this script's own).

For each size x connection count given, for iolab (--net epoll), iolab-uring (--net io_uring)
and lighttpd, servers started as bench/serve.py starts them. Saves
bench/results/serve-cost-<time>.txt.

usage: bench/serve_cost.py [--sizes 4k,64k,1m] [--conns 1,16,64] [--measures cpu,sys,ir]
                           [--servers iolab,iolab-uring,lighttpd] [--requests N] [--duration S]
"""
import argparse, os, selectors, signal, socket, subprocess, time

import serve
from benchlib import build, install, machine, save, sh

CG_OUT = os.path.join(serve.WORK, "callgrind.out")


def fixed_requests(port, path, conns, total):
    """Sends `total` GETs over `conns` keep-alive connections (one request in flight each)
    and reads every response whole. Returns the number answered."""
    sel = selectors.DefaultSelector()
    req = f"GET /{path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    state = {}
    sent = 0
    for _ in range(min(conns, total)):
        s = socket.create_connection(("127.0.0.1", port))
        s.setblocking(False)
        s.sendall(req)
        sent += 1
        state[s] = [b"", None]
        sel.register(s, selectors.EVENT_READ)
    done = 0
    while state:
        for key, _ in sel.select(timeout=30):
            s = key.fileobj
            st = state[s]
            chunk = s.recv(1 << 20)
            if not chunk:
                raise SystemExit("server closed a connection")
            st[0] += chunk
            if st[1] is None and b"\r\n\r\n" in st[0]:
                head, _, rest = st[0].partition(b"\r\n\r\n")
                m = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                st[1] = len(head) + 4 + int(m[0].split(b":")[1])
            if st[1] is not None and len(st[0]) >= st[1]:
                done += 1
                st[0], st[1] = st[0][st[1]:], None
                if sent < total:
                    s.sendall(req)
                    sent += 1
                else:
                    sel.unregister(s)
                    s.close()
                    del state[s]
    return done


def callgrind_ir(path):
    """The total instruction count of a callgrind dump."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals in {path}")


def ir_per_request(name, root, size, conns, n):
    for f in os.listdir(serve.WORK):
        if f.startswith("callgrind.out"):
            os.remove(os.path.join(serve.WORK, f))
    vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", f"--callgrind-out-file={CG_OUT}.%p"]
    p = serve.start(name, root, False, 1, prefix=vg)
    try:
        port = serve.PORTS[name]
        fixed_requests(port, f"{size}.bin", conns, 200)
        sh(f"callgrind_control -z {p.pid}")
        got = fixed_requests(port, f"{size}.bin", conns, n)
        sh(f"callgrind_control -d {p.pid}")
        dumps = sorted(f for f in os.listdir(serve.WORK)
                       if f.startswith("callgrind.out") and f.endswith(".1"))
        if not dumps:
            raise SystemExit("callgrind wrote no dump")
        return callgrind_ir(os.path.join(serve.WORK, dumps[-1])) / got
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def syscalls(name, proc, size, conns, duration):
    return serve.count_syscalls(name, proc.pid, size, conns, duration)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4k,64k,1m")
    ap.add_argument("--conns", default="1,16,64")
    ap.add_argument("--servers", default="iolab,iolab-uring,lighttpd")
    ap.add_argument("--measures", default="cpu,sys,ir")
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--duration", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    servers = a.servers.split(",")
    measures = a.measures.split(",")
    install(("lighttpd", "lighttpd"), ("wrk", "wrk"), ("strace", "strace"), ("valgrind", "valgrind"))
    build()
    root = os.path.join(serve.WORK, "root")
    os.makedirs(root, exist_ok=True)
    sizes = a.sizes.split(",")
    for s in sizes:
        with open(os.path.join(root, f"{s}.bin"), "wb") as f:
            f.write(os.urandom(serve.SIZES[s]))
    conns = [int(c) for c in a.conns.split(",")]
    head = [machine(root, sh(serve.binary("lighttpd") + " -v").splitlines()[0]),
            f"# bench/serve_cost.py --sizes {a.sizes} --conns {a.conns} --servers {a.servers} "
            f"--measures {a.measures} --requests {a.requests} --duration {a.duration} "
            f"--rounds {a.rounds}; one server thread; cpu: median over rounds of utime+stime per "
            "request (wrk -t1, servers alternating); sys: strace -f over one wrk run, calls counted; ir: "
            "callgrind user-space instructions per request, fixed-count client",
            "# load average at start (other work on this machine): "
            + " ".join(f"{x:.2f}" for x in os.getloadavg())]
    print("\n".join(head), flush=True)
    lines = []

    def out(line):
        print(line, flush=True)
        lines.append(line)

    try:
        if "cpu" in measures or "sys" in measures:
            procs = {n: serve.start(n, root, False, 1) for n in servers}
            try:
                for s in sizes:
                    for c in conns:
                        if "cpu" in measures:
                            runs = {n: [] for n in servers}
                            for _ in range(a.rounds):
                                for n in servers:
                                    url = f"http://127.0.0.1:{serve.PORTS[n]}/{s}.bin"
                                    runs[n].append(serve.wrk(url, c, a.duration, False, procs[n].pid, 1,
                                                             serve.SIZES[s]))
                            for n in servers:
                                cpu = sorted(r["cpu"] for r in runs[n])[len(runs[n]) // 2]
                                rps = sorted(r["rps"] for r in runs[n])[len(runs[n]) // 2]
                                out(f"cpu {s:>4} {c:>3} {n:<12} {cpu * 1e6:8.2f} us/request "
                                    f"({rps:.0f} req/s under load)")
                        if "sys" in measures:
                            for n in servers:
                                out(f"sys {s:>4} {c:>3} {n:<12} "
                                    + syscalls(n, procs[n], s, c, a.duration))
            finally:
                serve.stop_all(procs)
        if "ir" in measures:
            for s in sizes:
                for c in conns:
                    for n in servers:
                        try:
                            ir = ir_per_request(n, root, s, c, a.requests)
                        except (SystemExit, OSError) as e:
                            # Seen: the uring server with one connection stalls under valgrind
                            # (its helper thread gets no turn while the loop waits in the ring).
                            out(f"ir  {s:>4} {c:>3} {n:<12} not measured: {e}")
                            continue
                        out(f"ir  {s:>4} {c:>3} {n:<12} {ir:10.0f} instructions/request (user space)")
    finally:
        tail = ["# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg())]
        print("saved", save("serve-cost", head + lines + tail))


if __name__ == "__main__":
    main()
