#!/usr/bin/env python3
"""A normal client's answer times while a flood of connections that never finish a request
holds the server (issue 33): iolab serve (epoll and io_uring) against nginx and lighttpd, each
with two workers and its default connection limit (iolab 1024, nginx worker_connections 1024
as bench/serve.py configures it, lighttpd's default).

The flood, all over loopback: HALF connections that send half a request line and stop, SILENT
connections that send nothing, TRICKLE slowloris connections that send a byte of a head each
second; a connection the server closes comes back (an attacker reconnects). Meanwhile a
normal client GETs a 6-byte file on a new connection every 100 ms with a 10 s limit. Printed
per server: fetches, answered 200, other statuses, errors (timeout, reset), the median and
worst answer time. Run on a machine others use, the times are indicative only.

usage: bench/serve_flood.py [--half 3000] [--silent 1500] [--trickle 500] [--seconds 15]
                            [--servers iolab,iolab-uring,nginx,lighttpd] [--base OLD_IOLAB]
Not run by cargo test.
"""
import argparse, os, resource, socket, statistics, threading, time

from benchlib import ROOT, build, install, machine, save
import serve as servebench

ROOTDIR = os.path.join(ROOT, "target", "bench-serve-flood")
GET = b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
HALF = b"GET /a.txt HTTP/1.1\r\nHo"
TRICKLE_HEAD = b"GET /a.txt HTTP/1.1\r\nHost: t\r\nX-a: "


def fetch(port):
    """(status or error, seconds) of one GET on a new connection."""
    t = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(GET)
            got = b""
            while True:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "empty"
    except OSError as e:
        status = type(e).__name__
    return status, time.monotonic() - t


def closed(s):
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def connect(port, kind):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.setblocking(False)
        if kind == "half":
            s.send(HALF)
        return [kind, s, 0]
    except OSError:
        return None


def flood(port, a, stop, counts):
    conns = []
    for kind, n in (("half", a.half), ("silent", a.silent), ("trickle", a.trickle)):
        for _ in range(n):
            c = connect(port, kind)
            if c:
                conns.append(c)
    counts["opened"] = len(conns)
    last = 0.0
    while not stop.is_set():
        now = time.monotonic()
        tick = now - last >= 1.0
        for k, c in enumerate(conns):
            if c is None or closed(c[1]):
                if c:
                    c[1].close()
                    counts["closed by server"] = counts.get("closed by server", 0) + 1
                conns[k] = connect(port, c[0] if c else "silent")
            elif tick and c[0] == "trickle":
                try:
                    c[1].send(TRICKLE_HEAD[c[2]:c[2] + 1] or b"a")
                    c[2] += 1
                except OSError:
                    pass
        if tick:
            last = now
        time.sleep(0.2)
    for c in conns:
        if c:
            c[1].close()


def run(name, a, lines):
    port = servebench.PORTS[name]
    p = servebench.start(name, ROOTDIR, False, 2)
    stop = threading.Event()
    counts = {}
    f = threading.Thread(target=flood, args=(port, a, stop, counts))
    f.start()
    results = []
    t = time.monotonic()
    while time.monotonic() - t < a.seconds:
        results.append(fetch(port))
        time.sleep(0.1)
    stop.set()
    f.join()
    servebench.stop_all({name: p})
    ok = [d for s, d in results if s == "200"]
    other = [s for s, _ in results if s != "200"]
    times = [d for _, d in results]
    line = (f"{name:12} fetches {len(results):4}  200: {len(ok):4}  other: {len(other):4} "
            f"({', '.join(sorted(set(other))) or '-'})  median {statistics.median(times)*1000:7.1f} ms"
            f"  worst {max(times)*1000:8.1f} ms  flood opened {counts.get('opened', 0)}, "
            f"closed by the server {counts.get('closed by server', 0)}")
    print(line, flush=True)
    lines.append(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", type=int, default=3000)
    ap.add_argument("--silent", type=int, default=1500)
    ap.add_argument("--trickle", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--servers", default="iolab,iolab-uring,nginx,lighttpd")
    ap.add_argument("--base", help="an older iolab binary: adds servers base, base-uring")
    a = ap.parse_args()
    if a.base:
        servebench.BASE = os.path.abspath(a.base)
        a.servers += ",base,base-uring"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    install(("nginx", "nginx"), ("lighttpd", "lighttpd"))
    build()
    os.makedirs(ROOTDIR, exist_ok=True)
    os.makedirs(servebench.WORK, exist_ok=True)
    with open(os.path.join(ROOTDIR, "a.txt"), "wb") as fh:
        fh.write(b"hello\n")
    lines = [machine(ROOTDIR),
             f"# flood: {a.half} half-sent, {a.silent} silent, {a.trickle} trickling; "
             f"a GET every 100 ms for {a.seconds:g} s; 2 workers each; indicative only "
             "(a 2-CPU machine shared with builds)"]
    print("\n".join(lines), flush=True)
    for name in a.servers.split(","):
        run(name, a, lines)
    print(save("serve-flood", lines))


if __name__ == "__main__":
    main()
