#!/usr/bin/env python3
"""iolab serve on a site larger than the page cache it may use, against lighttpd and nginx:
the case where a server's reads wait for the disk (issue 32). One command:

  python3 bench/serve_cold.py [--gib 3] [--duration 6] [--rounds 3] [--mem 768M]
                              [--servers iolab,iolab-uring,lighttpd,nginx-aio,nginx]
                              [--site-conns 32] [--hot-conns 4] [--probe-rate 500] [--sweep]
                              [--base OLD_IOLAB]  (adds servers base, base-uring)

The site (built once under target/bench-serve-cold/, kept between runs): files from 16 KiB to
4 MiB (sizes log-uniform, about GIB GiB in all) requested with a Zipf-like popularity (s = 0.9,
the popular files spread over the sizes), plus a small hot set (4 KiB files). Each server runs
in a memory cgroup of its own (v2 memory.max, or v1 memory.limit_in_bytes) of --mem bytes, so
its page cache cannot hold the site; the page cache is dropped before each run.

Each run drives a server with two wrk at the same time for --duration seconds: --site-conns
connections on the site's files (Zipf) and --hot-conns connections on the hot set, which is
read once before the run so that it is cached. A run with the hot connections alone gives the
hot requests' latency without the disk behind them. Reported per server, medians over
--rounds rounds with the servers alternating (iolab, iolab-uring, lighttpd, nginx-aio, nginx,
iolab, ...): requests/s and MB/s of the site and of the hot set apart; their latency
percentiles (p50, p99, p99.9: wrk's, measured from each request's send, closed loop); the
server's CPU time per request (utime+stime of its processes, all threads); the disk's read
bytes and its average queue depth over the run (/proc/diskstats: weighted milliseconds in
queue / elapsed milliseconds); and the hot p99 under the site's load over the hot p99 alone
("hot x"): how much the disk waits of cold files delay the cached requests behind them.

A third run drives the site again, with the hot set beside it at a fixed offered rate
(--probe-rate requests/s, open loop: a request is due at its time whatever the server does,
and its latency counts from then, so a loop stalled behind the disk shows in full); its
percentiles are the "probe" columns, and bench/results/serve-cold-<time>.html draws each
server's probe latency over time (the worst in each 100 ms).

Servers: iolab serve on epoll and on io_uring (--threads 2), lighttpd (server.max-worker 2,
linux-sendfile backend), nginx with `sendfile on; aio threads;` (nginx-aio) and nginx with
`sendfile on` only (nginx), each with 2 workers. --sweep first measures the disk: random
reads of 128 KiB and 1 MiB, O_DIRECT, io_uring, at depths 1 to 64 (iolab run, over a 4 GiB
file beside the site), so the depth a server must keep outstanding to reach the disk's
throughput is stated with the result.

Needs root (cgroups, drop_caches). Installs wrk, nginx and lighttpd if missing. Every wrk
run holds the bench lock (benchlib.LOCK). Saves bench/results/serve-cold-<time>.txt. Not run by
cargo test.
"""
import argparse, fcntl, html, json, math, os, random, selectors, shutil, signal, socket
import statistics, subprocess, time

from benchlib import IOLAB, LOCK, ROOT, build, install, machine, save, sh

WORK = os.path.join(ROOT, "target", "bench-serve-cold")
SITE = os.path.join(WORK, "site")
PORTS = {"iolab": 18280, "iolab-uring": 18281, "lighttpd": 18282, "nginx-aio": 18283,
         "nginx": 18284, "base": 18285, "base-uring": 18286}
# --base BIN: servers "base" and "base-uring" run this (older) iolab binary, for before/after
# figures measured in the same alternating rounds.
BASE = None
TICK = os.sysconf("SC_CLK_TCK")
MIN_SIZE, MAX_SIZE = 16 << 10, 4 << 20
HOT_FILES = 16
SWEEP_SIZE = 4 << 30
ZIPF_S = 0.9

LIGHTTPD_CONF = """server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.network-backend = "sendfile"
server.event-handler = "linux-sysepoll"
server.max-worker = 2
server.max-keep-alive-requests = 1000000
server.max-connections = 4096
server.pid-file = "{work}/lighttpd.pid"
server.errorlog = "{work}/lighttpd.err"
"""

NGINX_CONF = """worker_processes 2;
daemon off;
pid {work}/{name}.pid;
error_log {work}/{name}.err;
events {{ worker_connections 4096; }}
http {{
    sendfile on;
    {aio}
    tcp_nopush on;
    access_log off;
    open_file_cache max=20000 inactive=20s;
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

# wrk's script: GET paths drawn from a list (the Zipf draw is done here, in Python: the list
# holds each path as often as its popularity says), and, at the end, one line of figures.
WRK_LUA = """local paths = {{}}
for line in io.lines("{paths}") do paths[#paths + 1] = line end
math.randomseed(os.time() + {salt})
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("IOLAB %d %d %d %d %d %d %d\\n", summary.requests, summary.bytes,
    summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def sizes_for(total):
    """File sizes, log-uniform between MIN_SIZE and MAX_SIZE (4 KiB multiples), adding up to
    about `total` bytes; the same every time (a fixed seed)."""
    rng = random.Random(32)
    out, acc = [], 0
    lo, hi = math.log(MIN_SIZE), math.log(MAX_SIZE)
    while acc < total:
        s = int(math.exp(rng.uniform(lo, hi))) // 4096 * 4096
        out.append(s)
        acc += s
    return out


def build_site(gib):
    """The site's files (made once; a manifest says what was made) and the two path lists."""
    sizes = sizes_for(int(gib * (1 << 30)))
    manifest = os.path.join(WORK, "manifest.json")
    want = {"sizes": sizes, "hot": HOT_FILES}
    try:
        with open(manifest) as f:
            if json.load(f) == want:
                return sizes
    except (OSError, ValueError):
        pass
    shutil.rmtree(SITE, ignore_errors=True)
    os.makedirs(os.path.join(SITE, "c"))
    os.makedirs(os.path.join(SITE, "hot"))
    block = os.urandom(1 << 20)
    print(f"# making the site: {len(sizes)} files, {sum(sizes) / (1 << 30):.2f} GiB", flush=True)
    for i, s in enumerate(sizes):
        with open(os.path.join(SITE, "c", f"{i:05}.bin"), "wb") as f:
            left = s
            while left:
                n = min(left, len(block))
                f.write(block[:n])
                left -= n
    for i in range(HOT_FILES):
        with open(os.path.join(SITE, "hot", f"{i}.bin"), "wb") as f:
            f.write(os.urandom(4096))
    rng = random.Random(7)
    # Popularity rank -> file: a shuffle, so that the popular files are of every size.
    order = list(range(len(sizes)))
    rng.shuffle(order)
    weights = [1 / (r + 1) ** ZIPF_S for r in range(len(sizes))]
    draws = rng.choices(order, weights=weights, k=200_000)
    with open(os.path.join(WORK, "site-paths.txt"), "w") as f:
        f.writelines(f"/c/{i:05}.bin\n" for i in draws)
    with open(os.path.join(WORK, "hot-paths.txt"), "w") as f:
        f.writelines(f"/hot/{i}.bin\n" for i in range(HOT_FILES))
    with open(manifest, "w") as f:
        json.dump(want, f)
    return sizes


def cgroup(name, mem):
    """A memory cgroup for server `name` limited to `mem` bytes: its cgroup.procs path."""
    v2 = "/sys/fs/cgroup"
    if os.path.exists(os.path.join(v2, "cgroup.controllers")) and \
            "memory" in open(os.path.join(v2, "cgroup.controllers")).read():
        d, limit = os.path.join(v2, f"iolab-cold-{name}"), "memory.max"
    elif os.path.isdir("/sys/fs/cgroup/memory"):
        d, limit = os.path.join("/sys/fs/cgroup/memory", f"iolab-cold-{name}"), \
            "memory.limit_in_bytes"
    else:
        raise SystemExit("no memory cgroup (v1 or v2) on this machine")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, limit), "w") as f:
        f.write(str(mem))
    return os.path.join(d, "cgroup.procs")


def start(name, mem):
    port = PORTS[name]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        raise SystemExit(f"port {port} ({name}) is taken by another process: stop it first")
    except OSError:
        pass
    if name.startswith(("iolab", "base")):
        net = "io_uring" if name.endswith("-uring") else "epoll"
        exe = BASE if name.startswith("base") else IOLAB
        cmd = [exe, "serve", SITE, "--listen", f"127.0.0.1:{port}", "--threads", "2",
               "--net", net, "--max-connections", "4096"]
    elif name == "lighttpd":
        conf = os.path.join(WORK, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(LIGHTTPD_CONF.format(root=SITE, port=port, work=WORK))
        cmd = [shutil.which("lighttpd") or "/usr/sbin/lighttpd", "-D", "-f", conf]
    else:
        conf = os.path.join(WORK, f"{name}.conf")
        os.makedirs(os.path.join(WORK, "nginx-tmp"), exist_ok=True)
        aio = "aio threads;" if name == "nginx-aio" else ""
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(root=SITE, port=port, work=WORK, name=name, aio=aio))
        cmd = [shutil.which("nginx") or "/usr/sbin/nginx", "-c", conf, "-p", WORK]
    procs = cgroup(name, mem)
    # The server joins its cgroup before it execs, so every process and thread it makes is
    # in it, and so is every page it reads into the cache.
    wrapper = ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh"]
    p = subprocess.Popen(wrapper + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    t = time.time()
    while time.time() - t < 10:
        if p.poll() is not None:
            raise SystemExit(f"{name} exited: {p.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{name}: nothing listens on {port}")


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def cpu_ticks(pid):
    """utime+stime of the process group led by `pid` (nginx's and lighttpd's workers too)."""
    total = 0
    for p in sh(f"pgrep -g {pid}").split():
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total


def device_of(path):
    """The /proc/diskstats name of the device holding `path` (the whole disk, e.g. vda)."""
    dev = os.stat(path).st_dev
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"))
    if os.path.exists(f"/sys/class/block/{name}/partition"):
        name = os.path.basename(os.path.dirname(os.path.realpath(f"/sys/class/block/{name}")))
    return name


def diskstats(dev):
    """(sectors read, weighted milliseconds in queue) of `dev`."""
    with open("/proc/diskstats") as f:
        for line in f:
            s = line.split()
            if s[2] == dev:
                return int(s[5]), int(s[13])
    raise SystemExit(f"{dev} not in /proc/diskstats")


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def wrk_cmd(port, conns, duration, paths, salt):
    lua = os.path.join(WORK, f"wrk-{salt}.lua")
    with open(lua, "w") as f:
        f.write(WRK_LUA.format(paths=paths, salt=salt))
    return ["wrk", "-t1", f"-c{conns}", f"-d{duration}s", "--timeout", "10s", "-s", lua,
            f"http://127.0.0.1:{port}"]


def parse(out):
    for line in out.splitlines():
        if line.startswith("IOLAB "):
            reqs, nbytes, us, p50, p99, p999, errors = (int(x) for x in line.split()[1:])
            secs = us / 1e6
            return {"rps": reqs / secs, "mbs": nbytes / secs / 1e6, "reqs": reqs,
                    "p50": p50 / 1e3, "p99": p99 / 1e3, "p999": p999 / 1e3, "err": errors}
    raise SystemExit(f"wrk output not understood:\n{out}")


def probe(port, rate, duration):
    """The hot set at a fixed offered rate (open loop): a request is due every 1/rate s,
    whatever the server does, and its latency counts from when it was due, so a stalled loop
    shows in full (no coordinated omission). Requests go on idle keep-alive connections, a new
    one opened when all are busy (at most 256). Returns [(due time from start s, latency s)];
    a request still unanswered at the end counts with its wait so far."""
    sel = selectors.DefaultSelector()
    idle, busy, out = [], {}, []
    t0 = time.monotonic()
    n = 0
    req = [f"GET /hot/{i}.bin HTTP/1.1\r\nHost: x\r\n\r\n".encode() for i in range(HOT_FILES)]
    while True:
        now = time.monotonic()
        while n * (1 / rate) <= now - t0 and now - t0 < duration:
            due = t0 + n / rate
            if idle:
                c = idle.pop()
            elif len(busy) < 256:
                c = socket.create_connection(("127.0.0.1", port))
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(c, selectors.EVENT_READ)
            else:
                break
            c.sendall(req[n % HOT_FILES])
            busy[c] = [due, b""]
            n += 1
        if now - t0 >= duration and not busy:
            break
        if now - t0 >= duration + 5:
            out.extend((d - t0, now - d) for d, _ in busy.values())
            break
        wait = max(0.0, t0 + n / rate - time.monotonic()) if now - t0 < duration else 0.05
        for key, _ in sel.select(timeout=min(wait, 0.05)):
            c = key.fileobj
            got = c.recv(65536)
            if not got:
                sel.unregister(c)
                d = busy.pop(c)[0]
                out.append((d - t0, time.monotonic() - d))
                c.close()
                continue
            b = busy[c]
            b[1] += got
            # The hot files are 4 KiB: head, then exactly 4096 bytes.
            h = b[1].find(b"\r\n\r\n")
            if h >= 0 and len(b[1]) - h - 4 >= 4096:
                out.append((b[0] - t0, time.monotonic() - b[0]))
                del busy[c]
                idle.append(c)
    for c in idle + list(busy):
        c.close()
    return out


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q / 100 * len(v)))] if v else float("nan")


def chart(series, duration, path):
    """An HTML page: each server's probe latency over time (log scale), one line a server."""
    w, h, pad = 900, 360, 50
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    lo, hi = 1e-5, 10.0
    def y(v):
        v = min(max(v, lo), hi)
        return pad + (h - 2 * pad) * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))
    def x(t):
        return pad + (w - 2 * pad) * t / duration
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-size="12">']
    for e in range(-5, 2):
        parts.append(f'<line x1="{pad}" x2="{w - pad}" y1="{y(10 ** e):.1f}" y2="{y(10 ** e):.1f}" stroke="#ddd"/>'
                     f'<text x="4" y="{y(10 ** e) + 4:.1f}">{10 ** e * 1e3:g} ms</text>')
    for k, (name, pts) in enumerate(series.items()):
        col = colors[k % len(colors)]
        # The worst latency in each 100 ms: what a user saw at worst, at that moment.
        buckets = {}
        for t, lat in pts:
            b = int(t * 10)
            buckets[b] = max(buckets.get(b, 0), lat)
        line = " ".join(f"{x(b / 10):.1f},{y(v):.1f}" for b, v in sorted(buckets.items()))
        parts.append(f'<polyline fill="none" stroke="{col}" points="{line}"/>')
        parts.append(f'<text x="{w - pad + 4}" y="{pad + 16 * k}" fill="{col}">{html.escape(name)}</text>')
    parts.append(f'<text x="{w / 2:.0f}" y="{h - 10}">seconds into the run (the worst hot latency in each 100 ms)</text></svg>')
    with open(path, "w") as f:
        f.write("<!doctype html><meta charset=utf-8><title>hot requests under the site load</title>"
                "<h1>Hot 4 KiB requests at a fixed rate while the site loads the disk</h1>"
                + "".join(parts))


def warm_hot(port):
    """Each hot file read once through the server, so that it is in the cache (its cgroup's)."""
    for i in range(HOT_FILES):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET /hot/{i}.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        while s.recv(65536):
            pass
        s.close()


def run_once(name, a, dev):
    """One server, started fresh: the hot set alone, then the site and the hot set together."""
    drop_caches()
    p = start(name, a.mem_bytes)
    try:
        port = PORTS[name]
        warm_hot(port)
        hot_paths = os.path.join(WORK, "hot-paths.txt")
        site_paths = os.path.join(WORK, "site-paths.txt")
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            alone = parse(subprocess.run(wrk_cmd(port, a.hot_conns, a.duration, hot_paths, 1),
                                         capture_output=True, text=True).stdout)
            drop_caches()
            warm_hot(port)
            sec0, q0 = diskstats(dev)
            cpu0 = cpu_ticks(p.pid)
            t0 = time.time()
            site = subprocess.Popen(wrk_cmd(port, a.site_conns, a.duration, site_paths, 2),
                                    stdout=subprocess.PIPE, text=True)
            hot = subprocess.run(wrk_cmd(port, a.hot_conns, a.duration, hot_paths, 3),
                                 capture_output=True, text=True).stdout
            site_out = site.communicate()[0]
            wall = time.time() - t0
            cpu1 = cpu_ticks(p.pid)
            sec1, q1 = diskstats(dev)
            # The hot set at a fixed rate beside the site's load: latency over time.
            drop_caches()
            warm_hot(port)
            site = subprocess.Popen(wrk_cmd(port, a.site_conns, a.duration, site_paths, 4),
                                    stdout=subprocess.PIPE, text=True)
            pts = probe(port, a.probe_rate, a.duration)
            site.communicate()
        r = {"alone": alone, "hot": parse(hot), "site": parse(site_out), "probe": pts}
        lats = [lat for _, lat in pts]
        r["probe_p"] = {q: pct(lats, q) * 1e3 for q in (50, 99, 99.9)}
        reqs = r["hot"]["reqs"] + r["site"]["reqs"]
        r["cpu_us"] = (cpu1 - cpu0) / TICK / max(reqs, 1) * 1e6
        r["disk_mb"] = (sec1 - sec0) * 512 / 1e6
        r["qdepth"] = (q1 - q0) / (wall * 1e3)
        r["hotx"] = r["hot"]["p99"] / r["alone"]["p99"] if r["alone"]["p99"] else float("nan")
        return r
    finally:
        stop(p)


def sweep(dev_file):
    """Random O_DIRECT reads of 128 KiB and of 1 MiB (a page-in's read-ahead is of that order)
    over a 4 GiB file of written data beside the site (made once; the device itself cannot be
    opened here) at each depth: (bs, depth, MB/s)."""
    if not os.path.exists(dev_file) or os.path.getsize(dev_file) != SWEEP_SIZE:
        block = os.urandom(1 << 20)
        with open(dev_file, "wb") as f:
            for _ in range(SWEEP_SIZE >> 20):
                f.write(block)
        os.sync()
    rows = []
    for bs, depth in [(b, d) for b in ("128k", "1m") for d in (1, 2, 4, 8, 16, 32, 64)]:
        out = subprocess.run([IOLAB, "run", "--name=sweep", f"--filename={dev_file}",
                              "--rw=randread", f"--bs={bs}", "--direct=1", "--ioengine=io_uring",
                              "--readonly",
                              f"--iodepth={depth}", "--runtime=3", "--time_based",
                              "--output-format=json"], capture_output=True, text=True)
        try:
            bw = json.loads(out.stdout)["jobs"][0]["read"]["bw_bytes"] / 1e6
        except (ValueError, KeyError, IndexError):
            raise SystemExit(f"sweep at depth {depth} failed: {out.stderr}")
        rows.append((bs, depth, bw))
    return rows


def med(runs, *keys):
    vals = []
    for r in runs:
        for k in keys[:-1]:
            r = r[k]
        vals.append(r[keys[-1]])
    return statistics.median(vals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=3.0)
    ap.add_argument("--duration", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mem", default="768M")
    ap.add_argument("--servers", default="iolab,iolab-uring,lighttpd,nginx-aio,nginx")
    ap.add_argument("--site-conns", type=int, default=32)
    ap.add_argument("--hot-conns", type=int, default=4)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--probe-rate", type=float, default=500.0)
    ap.add_argument("--base", help="an older iolab binary: adds servers base, base-uring")
    a = ap.parse_args()
    global BASE
    if a.base:
        BASE = os.path.abspath(a.base)
        if "base" not in a.servers:
            a.servers += ",base,base-uring"
    if os.getuid() != 0:
        raise SystemExit("needs root: memory cgroups and drop_caches")
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    a.mem_bytes = int(float(a.mem[:-1]) * units[a.mem[-1].upper()]) \
        if a.mem[-1].upper() in units else int(a.mem)
    servers = a.servers.split(",")
    for s in servers:
        if s not in PORTS:
            raise SystemExit(f"unknown server {s}: one of {', '.join(PORTS)}")
    install(("wrk", "wrk"), ("nginx", "nginx"), ("lighttpd", "lighttpd"))
    build()
    os.makedirs(WORK, exist_ok=True)
    sizes = build_site(a.gib)
    dev = device_of(SITE)
    head = [machine(SITE, sh("nginx -v 2>&1"), sh("lighttpd -v 2>&1 | head -1"),
                    sh("wrk -v 2>&1 | head -1")),
            f"# python3 bench/serve_cold.py --gib {a.gib} --duration {a.duration} "
            f"--rounds {a.rounds} --mem {a.mem} --servers {a.servers} "
            f"--site-conns {a.site_conns} --hot-conns {a.hot_conns} --probe-rate {a.probe_rate:g}"
            + (f" --base {a.base}" if a.base else ""),
            f"# site: {len(sizes)} files, {sum(sizes) / (1 << 30):.2f} GiB, {MIN_SIZE >> 10} KiB "
            f"to {MAX_SIZE >> 20} MiB log-uniform, Zipf s={ZIPF_S}; hot: {HOT_FILES} x 4 KiB; "
            f"each server in a {a.mem} memory cgroup; caches dropped before each run; device "
            f"{dev} (read_ahead_kb {sh(f'cat /sys/block/{dev}/queue/read_ahead_kb')}, "
            f"scheduler {sh(f'cat /sys/block/{dev}/queue/scheduler')})",
            "# medians of the rounds, servers alternating. site/hot: requests/s, MB/s, "
            "latency p50/p99/p99.9 in ms (wrk, closed loop); hot alone p99: the hot set with no "
            "site load; hot x: hot p99 under load / alone; cpu: server CPU us a request; disk: "
            "MB read from the device in the run and its average queue depth; probe: the hot "
            "set at --probe-rate requests/s (open loop, latency from when each was due) beside "
            "the site's load, p50/p99/p99.9 in ms"]
    print("\n".join(head), flush=True)
    lines = []
    if a.sweep:
        for bs, depth, bw in sweep(os.path.join(WORK, "sweep.bin")):
            line = f"# disk sweep: randread {bs:>4} O_DIRECT io_uring depth {depth:>2}: {bw:8.1f} MB/s"
            print(line, flush=True)
            lines.append(line)
    runs = {n: [] for n in servers}
    for rnd in range(a.rounds):
        for n in servers:
            r = run_once(n, a, dev)
            runs[n].append(r)
            print(f"# round {rnd + 1} {n}: site {r['site']['rps']:.0f}/s hot {r['hot']['rps']:.0f}/s "
                  f"hot p99 {r['hot']['p99']:.2f} ms (alone {r['alone']['p99']:.2f}) "
                  f"disk {r['disk_mb']:.0f} MB q {r['qdepth']:.1f}"
                  + (f" errors {r['site']['err'] + r['hot']['err']}"
                     if r['site']['err'] + r['hot']['err'] else ""), flush=True)
    cols = (f"{'server':<12}{'site/s':>8}{'MB/s':>7}{'p50':>7}{'p99':>8}{'p99.9':>8}"
            f"{'hot/s':>8}{'p50':>7}{'p99':>7}{'p99.9':>8}{'alone':>7}{'hot x':>7}"
            f"{'total/s':>9}{'cpu':>7}{'disk MB':>9}{'qd':>6}"
            f"{'probe p50':>10}{'p99':>8}{'p99.9':>8}")
    lines.append(cols)
    for n in servers:
        rs = runs[n]
        m = lambda *k: med(rs, *k)
        lines.append(
            f"{n:<12}{m('site', 'rps'):>8.0f}{m('site', 'mbs'):>7.0f}{m('site', 'p50'):>7.2f}"
            f"{m('site', 'p99'):>8.1f}{m('site', 'p999'):>8.1f}{m('hot', 'rps'):>8.0f}"
            f"{m('hot', 'p50'):>7.2f}{m('hot', 'p99'):>7.2f}{m('hot', 'p999'):>8.2f}"
            f"{m('alone', 'p99'):>7.2f}{m('hotx'):>7.1f}"
            f"{statistics.median(r['site']['rps'] + r['hot']['rps'] for r in rs):>9.0f}"
            f"{m('cpu_us'):>7.1f}{m('disk_mb'):>9.0f}{m('qdepth'):>6.1f}"
            f"{m('probe_p', 50):>10.2f}{m('probe_p', 99):>8.2f}{m('probe_p', 99.9):>8.2f}"
            + (" !" if any(r['site']['err'] + r['hot']['err'] for r in rs) else ""))
    print("\n".join(lines[-len(servers) - 1:]))
    out = save("serve-cold", head + lines + [
        "# ! = a run had socket errors, timeouts or error statuses (wrk's counts)",
        "# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg())])
    # The chart: each server's run with the median probe p99.
    series = {}
    for n in servers:
        rs = sorted(runs[n], key=lambda r: r["probe_p"][99])
        series[n] = rs[len(rs) // 2]["probe"]
    page = out[:-4] + ".html"
    chart(series, a.duration, page)
    print(f"saved {out} and {page}")


if __name__ == "__main__":
    main()
