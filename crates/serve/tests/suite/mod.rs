//! The suite both network paths run (see `tests/serve.rs` and `tests/uring.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iolab_engine::EngineKind;
use iolab_serve::{ServeOpts, Server};
use iolab_testkit::pattern;

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-{:?}", super::net()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("root")).expect("scratch dir");
    d
}

/// A root with the files most tests use, and a secret beside it.
fn site(name: &str) -> PathBuf {
    let d = scratch(name);
    let r = d.join("root");
    std::fs::write(r.join("index.html"), b"<h1>home</h1>\n").unwrap();
    std::fs::write(r.join("a.txt"), pattern(1, 1000)).unwrap();
    std::fs::write(r.join("big.bin"), pattern(2, 300_000)).unwrap();
    std::fs::write(r.join("empty"), b"").unwrap();
    std::fs::create_dir_all(r.join("noindex")).unwrap();
    std::fs::create_dir_all(r.join("docs")).unwrap();
    std::fs::write(r.join("docs/index.html"), b"docs\n").unwrap();
    std::fs::write(r.join(".hidden"), b"hidden\n").unwrap();
    std::fs::write(d.join("secret.txt"), SECRET).unwrap();
    d
}

const SECRET: &[u8] = b"TOP-SECRET-7f3a9c";

fn start(root: &Path, tweak: impl FnOnce(&mut ServeOpts)) -> Server {
    let mut o = ServeOpts::new(root);
    o.listen = vec!["127.0.0.1:0".parse().unwrap()];
    o.threads = 2;
    o.net = super::net();
    tweak(&mut o);
    Server::start(&o).expect("server starts")
}

fn stop(s: Server) -> iolab_serve::ServeStats {
    s.shutdown().trigger();
    s.join().expect("threads end cleanly")
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    BufReader::new(s)
}

/// Reads one response; `head` for the answer to HEAD (no body whatever Content-Length says).
fn read_resp(r: &mut BufReader<TcpStream>, head: bool) -> Resp {
    let mut line = String::new();
    r.read_line(&mut line).expect("status line");
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).expect("header");
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').expect("name: value");
        headers.push((n.to_string(), v.trim().to_string()));
    }
    let mut resp = Resp {
        status,
        headers,
        body: Vec::new(),
    };
    let len: usize = resp
        .header("content-length")
        .map_or(0, |v| v.parse().expect("length"));
    if !head && status != 304 {
        resp.body = vec![0; len];
        r.read_exact(&mut resp.body).expect("body");
    }
    resp
}

fn get(addr: SocketAddr, path: &str, extra: &str) -> Resp {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n"),
    )
}

fn raw(addr: SocketAddr, req: &str) -> Resp {
    let mut c = connect(addr);
    c.get_mut().write_all(req.as_bytes()).unwrap();
    read_resp(&mut c, req.starts_with("HEAD"))
}

/// Whether the server closed the connection (EOF or reset) within `within`.
fn closed_within(c: &mut TcpStream, within: Duration) -> bool {
    c.set_read_timeout(Some(within)).unwrap();
    let mut b = [0u8; 4096];
    loop {
        match c.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn every_status_code() {
    let d = site("status");
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    let ok = get(a, "/a.txt", "");
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body, pattern(1, 1000));
    assert_eq!(ok.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(ok.header("server"), Some("iolab"));
    assert!(ok.header("date").is_some_and(|v| v.ends_with(" GMT")));
    let etag = ok.header("etag").expect("etag").to_string();
    let lm = ok
        .header("last-modified")
        .expect("last-modified")
        .to_string();
    assert_eq!(get(a, "/", "").body, b"<h1>home</h1>\n");
    assert_eq!(get(a, "/docs/", "").body, b"docs\n");
    let r = get(a, "/docs?x=1", "");
    assert_eq!((r.status, r.header("location")), (301, Some("/docs/?x=1")));
    // Regression: "//docs" redirected to "//docs/", which a browser reads as another host.
    let r = get(a, "//docs", "");
    assert_eq!((r.status, r.header("location")), (301, Some("/docs/")));
    assert_eq!(
        get(a, "/a.txt", &format!("If-None-Match: {etag}\r\n")).status,
        304
    );
    assert_eq!(
        get(a, "/a.txt", &format!("If-Modified-Since: {lm}\r\n")).status,
        304
    );
    let old = "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n";
    assert_eq!(get(a, "/a.txt", old).status, 200);
    assert_eq!(get(a, "/a.txt", "Range: bytes=0-9\r\n").status, 206);
    let r = get(a, "/a.txt", "Range: bytes=5000-\r\n");
    assert_eq!(
        (r.status, r.header("content-range")),
        (416, Some("bytes */1000"))
    );
    assert_eq!(get(a, "/noindex/", "").status, 403);
    assert_eq!(get(a, "/../secret.txt", "").status, 403);
    assert_eq!(get(a, "/nope", "").status, 404);
    let r = raw(a, "DELETE /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    assert_eq!(raw(a, "GET /a.txt HTTP/1.1\r\n\r\n").status, 400);
    assert_eq!(raw(a, "GET /a.txt HTTP/9\r\n\r\n").status, 400);
    assert_eq!(raw(a, "BAD\x01 / HTTP/1.1\r\nHost: t\r\n\r\n").status, 400);
    let long = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(20_000));
    assert_eq!(raw(a, &long).status, 414);
    let big = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n",
        "b".repeat(20_000)
    );
    assert_eq!(raw(a, &big).status, 431);
    let head = raw(a, "HEAD /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(
        (head.status, head.header("content-length")),
        (200, Some("1000"))
    );
    assert_eq!(get(a, "/empty", "").body, b"");
    assert_eq!(get(a, "/big.bin", "").body, pattern(2, 300_000));
    stop(s);
}

#[test]
fn ranges_are_the_bytes_asked_for() {
    let d = site("ranges");
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    for (file, full) in [
        ("/a.txt", pattern(1, 1000)),
        ("/big.bin", pattern(2, 300_000)),
    ] {
        let n = full.len() as u64;
        for (spec, lo, hi) in [
            ("0-0", 0, 0),
            ("0-99", 0, 99),
            ("10-", 10, n - 1),
            ("-7", n - 7, n - 1),
            ("500-999999999", 500, n - 1),
            (&format!("{}-{}", n - 1, n - 1), n - 1, n - 1),
        ] {
            let r = get(a, file, &format!("Range: bytes={spec}\r\n"));
            assert_eq!(r.status, 206, "{file} {spec}");
            assert_eq!(r.body, &full[lo as usize..=hi as usize], "{file} {spec}");
            assert_eq!(
                r.header("content-range"),
                Some(format!("bytes {lo}-{hi}/{n}").as_str())
            );
        }
        // Several ranges close together: merged into one part.
        let r = get(a, file, "Range: bytes=0-1,5-6\r\n");
        assert_eq!((r.status, r.body.as_slice()), (206, &full[..7]));
        let r = get(a, file, "Range: bytes=-0\r\n");
        assert_eq!(r.status, 416);
        let r = get(a, file, "Range: bytes=0-1\r\nIf-Range: \"not-it\"\r\n");
        assert_eq!((r.status, r.body.len()), (200, full.len()));
    }
    stop(s);
}

#[test]
fn keep_alive_pipelining_and_http10() {
    let d = site("keepalive");
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    let mut c = connect(a);
    for _ in 0..5 {
        c.get_mut()
            .write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(read_resp(&mut c, false).body, pattern(1, 1000));
    }
    // Ten requests in one write, mixed sizes, methods and outcomes; answers in order.
    let mut batch = String::new();
    let paths = ["/a.txt", "/big.bin", "/nope", "/", "/a.txt"];
    for p in paths.iter().cycle().take(10) {
        batch.push_str(&format!("GET {p} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    batch.push_str("HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    c.get_mut().write_all(batch.as_bytes()).unwrap();
    for p in paths.iter().cycle().take(10) {
        let r = read_resp(&mut c, false);
        match *p {
            "/nope" => assert_eq!(r.status, 404),
            "/big.bin" => assert_eq!(r.body, pattern(2, 300_000)),
            "/a.txt" => assert_eq!(r.body, pattern(1, 1000)),
            _ => assert_eq!(r.status, 200),
        }
    }
    let h = read_resp(&mut c, true);
    assert_eq!(
        (h.status, h.header("content-length")),
        (200, Some("300000"))
    );
    // Connection: close is honoured.
    c.get_mut()
        .write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert_eq!(read_resp(&mut c, false).header("connection"), Some("close"));
    assert!(closed_within(c.get_mut(), Duration::from_secs(5)));
    // HTTP/1.0: closed after the response unless keep-alive is asked for.
    let mut c = connect(a);
    c.get_mut()
        .write_all(b"GET /a.txt HTTP/1.0\r\n\r\n")
        .unwrap();
    assert_eq!(read_resp(&mut c, false).status, 200);
    assert!(closed_within(c.get_mut(), Duration::from_secs(5)));
    let mut c = connect(a);
    for _ in 0..2 {
        c.get_mut()
            .write_all(b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        let r = read_resp(&mut c, false);
        assert_eq!(r.header("connection"), Some("keep-alive"));
    }
    let st = stop(s);
    assert!(st.requests >= 20, "{st:?}");
}

/// FNV-1a, 64 bits: enough to tell any changed byte.
fn fnv(h: &mut u64, data: &[u8]) {
    for &b in data {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

#[test]
fn a_100_mib_file_arrives_byte_exact() {
    let d = scratch("hundred");
    let path = d.join("root/100m.bin");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut want = 0xcbf2_9ce4_8422_2325u64;
    for i in 0..100 {
        let chunk = pattern(1000 + i, 1 << 20);
        fnv(&mut want, &chunk);
        f.write_all(&chunk).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let s = start(&d.join("root"), |_| {});
    let mut c = connect(s.local_addr());
    c.get_mut()
        .write_all(b"GET /100m.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut line = String::new();
    let mut len = 0u64;
    loop {
        line.clear();
        c.read_line(&mut line).unwrap();
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    assert_eq!(len, 100 << 20);
    let mut got = 0xcbf2_9ce4_8422_2325u64;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len as usize;
    while left > 0 {
        let n = c.read(&mut buf[..left.min(1 << 20)]).unwrap();
        assert!(n > 0, "connection closed with {left} bytes to go");
        fnv(&mut got, &buf[..n]);
        left -= n;
    }
    assert_eq!(got, want);
    stop(s);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn every_engine_serves_small_files_byte_exact() {
    let d = scratch("engines");
    let sizes = [1usize, 511, 4095, 4096, 5000, 12_345, 32_768, 32_769];
    for &n in &sizes {
        std::fs::write(d.join(format!("root/f{n}")), pattern(n as u64, n)).unwrap();
    }
    for kind in [EngineKind::IoUring, EngineKind::Libaio, EngineKind::Psync] {
        let mut o = ServeOpts::new(&d.join("root"));
        o.net = super::net();
        o.listen = vec!["127.0.0.1:0".parse().unwrap()];
        o.threads = 1;
        o.engine = kind;
        let s = match Server::start(&o) {
            Ok(s) => s,
            Err(e) => {
                iolab_testkit::skip(&format!("serving with engine {kind}"), &e);
                continue;
            }
        };
        let a = s.local_addr();
        for &n in &sizes {
            let want = pattern(n as u64, n);
            let r = get(a, &format!("/f{n}"), "");
            assert_eq!((r.status, r.body.len()), (200, n), "{kind} f{n}");
            assert!(r.body == want, "{kind}: f{n} differs");
            let r = get(a, &format!("/f{n}"), "Range: bytes=-3\r\n");
            assert_eq!(r.body, &want[n.saturating_sub(3)..], "{kind} f{n} tail");
        }
        let st = stop(s);
        assert_eq!(st.requests, 2 * sizes.len() as u64, "{kind}");
    }
}

#[test]
fn no_traversal_request_leaks_the_secret() {
    let d = site("traversal");
    let root = d.join("root");
    std::os::unix::fs::symlink("../secret.txt", root.join("link")).unwrap();
    std::os::unix::fs::symlink(d.join("secret.txt"), root.join("abslink")).unwrap();
    std::os::unix::fs::symlink(&d, root.join("updir")).unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("inside")).unwrap();
    let s = start(&root, |_| {});
    let a = s.local_addr();
    let corpus = [
        "/../secret.txt",
        "/../../secret.txt",
        "/docs/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/..%2fsecret.txt",
        "/..%2Fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/docs/%2e%2e/%2e%2e/secret.txt",
        "/..%5csecret.txt",
        "/%5c..%5csecret.txt",
        "/..\\secret.txt",
        "/%252e%252e/secret.txt",
        "/secret.txt%00.html",
        "/a.txt%00",
        "/%00",
        "/link",
        "/abslink",
        "/updir/secret.txt",
        "/updir/",
        "/updir/root/../secret.txt",
        "//../secret.txt",
        "/./../secret.txt",
        "/docs/./../../secret.txt",
        "http://t/../secret.txt",
        "http://t/%2e%2e/secret.txt",
        "/%2f..%2fsecret.txt",
        "/%c0%ae%c0%ae/secret.txt",
        "/..;/secret.txt",
        "/.hidden",
        "/%2ehidden",
        "/docs/../.hidden",
    ];
    assert!(corpus.len() >= 30);
    for p in corpus {
        let r = get(a, p, "");
        assert!(
            matches!(r.status, 400 | 403 | 404),
            "{p}: status {}",
            r.status
        );
        assert!(
            !r.body.windows(SECRET.len()).any(|w| w == SECRET),
            "{p} leaked the secret"
        );
        assert!(!r.body.starts_with(b"hidden"), "{p} served a dotfile");
    }
    // Absolute paths that are not even origin-form.
    for t in ["secret.txt", "../secret.txt", "C:\\secret.txt"] {
        let r = raw(a, &format!("GET {t} HTTP/1.1\r\nHost: t\r\n\r\n"));
        assert_eq!(r.status, 400, "{t}");
    }
    // A symlink that stays inside is fine.
    assert_eq!(get(a, "/inside", "").body, pattern(1, 1000));
    stop(s);
    // --dotfiles serves the hidden file, and still nothing outside.
    let s = start(&root, |o| o.dotfiles = true);
    assert_eq!(get(s.local_addr(), "/.hidden", "").body, b"hidden\n");
    assert_eq!(get(s.local_addr(), "/link", "").status, 403);
    stop(s);
}

#[test]
fn a_slow_client_is_closed_at_the_header_deadline() {
    let d = site("slow");
    let s = start(&d.join("root"), |o| o.idle_timeout = Duration::from_secs(1));
    let a = s.local_addr();
    // One byte every 100 ms: bytes keep coming, but the head is never done in time.
    let mut c = TcpStream::connect(a).unwrap();
    let t = Instant::now();
    let mut closed = false;
    for b in b"GET /a.txt HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter() {
        if c.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if t.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    assert!(
        closed || closed_within(&mut c, Duration::from_secs(3)),
        "a client dribbling its head was not closed"
    );
    // An idle keep-alive connection is closed too, after its response.
    let mut c = connect(a);
    c.get_mut()
        .write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    assert_eq!(read_resp(&mut c, false).status, 200);
    assert!(closed_within(c.get_mut(), Duration::from_secs(4)));
    // The server still answers others.
    assert_eq!(get(a, "/a.txt", "").status, 200);
    stop(s);
}

#[test]
fn connections_over_the_limit_get_503() {
    let d = site("limit");
    let s = start(&d.join("root"), |o| {
        o.max_connections = 2;
        o.threads = 1;
    });
    let a = s.local_addr();
    // Both slots busy answering (bodies their clients do not read): none can be evicted to
    // make room, as idle or half-sent connections would be.
    std::fs::write(d.join("root/huge.bin"), vec![7u8; 32 << 20]).unwrap();
    let mut held: Vec<_> = (0..2).map(|_| connect(a)).collect();
    for c in held.iter_mut() {
        c.get_mut()
            .write_all(b"GET /huge.bin HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut line = String::new();
        c.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200 "), "{line}");
    }
    let mut third = connect(a);
    assert_eq!(read_resp(&mut third, false).status, 503);
    drop(held);
    // Once they are gone, new connections are served again.
    let t = Instant::now();
    loop {
        let r = get(a, "/a.txt", "");
        if r.status == 200 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "still {}", r.status);
        std::thread::sleep(Duration::from_millis(20));
    }
    stop(s);
}

#[test]
fn the_access_log_has_one_common_log_format_line_per_request() {
    let d = site("log");
    let log = d.join("access.log");
    let s = start(&d.join("root"), |o| o.access_log = Some(log.clone()));
    let a = s.local_addr();
    get(a, "/a.txt", "");
    get(a, "/nope", "");
    raw(a, "HEAD /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    stop(s);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let a_line = lines
        .iter()
        .find(|l| l.contains("\"GET /a.txt HTTP/1.1\" 200 1000"));
    assert!(
        a_line.is_some_and(|l| l.starts_with("127.0.0.1 - - [")),
        "{text}"
    );
    assert!(text.contains("\"GET /nope HTTP/1.1\" 404 "), "{text}");
    assert!(text.contains("\"HEAD /a.txt HTTP/1.1\" 200 -"), "{text}");
}

#[test]
fn bad_options_are_refused_at_start() {
    let d = site("badopts");
    let mut o = ServeOpts::new(&d.join("root/a.txt"));
    o.listen = vec!["127.0.0.1:0".parse().unwrap()];
    assert!(Server::start(&o).is_err());
    let mut o = ServeOpts::new(&d.join("root"));
    o.listen = vec!["127.0.0.1:0".parse().unwrap()];
    o.engine = EngineKind::Mmap;
    let e = Server::start(&o).err().expect("mmap refused");
    assert!(e.to_string().contains("io_uring, libaio or psync"), "{e}");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn site_dir() -> iolab_serve::path::Site {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-fuzz");
        let _ = std::fs::create_dir_all(d.join("root/dir"));
        let _ = std::fs::write(d.join("root/f.txt"), b"0123456789");
        let _ = std::fs::write(d.join("secret"), SECRET);
        iolab_serve::path::Site::open(&d.join("root"), false).unwrap()
    }

    const SEEDS: [&str; 8] = [
        "GET /f.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=1-3\r\n\r\n",
        "GET /f.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET /f.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n",
        "GET /f.txt HTTP/1.0\r\nRange: bytes=0-18446744073709551615\r\nIf-Range: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n",
        "GET /caf%E9 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0, *;q=1\r\n\r\n",
        "HEAD /dir HTTP/1.0\r\nIf-None-Match: *\r\n\r\n",
        "GET /../secret HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n",
        "GET http://x/%2e%2e/f.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=-5\r\nIf-Range: \"a\"\r\n\r\n",
    ];

    fn check(site: &iolab_serve::path::Site, bytes: &[u8]) {
        if let Some(head) = iolab_serve::response_head(site, bytes, 1024) {
            assert!(head.starts_with(b"HTTP/1.1 "));
            assert!(head.ends_with(b"\r\n\r\n"));
            assert!(!head.windows(SECRET.len()).any(|w| w == SECRET));
        }
    }

    /// Range headers that once were, or easily could be, wrong: overflow, empty and reversed
    /// bounds, zero-length suffixes, several ranges, odd spacing and case.
    const RANGE_SEEDS: [&str; 16] = [
        "bytes=0-9,5-20,-3",
        "bytes=,,0-1,",
        "bytes=9-9,0-0,5-5,18446744073709551615-",
        "bytes=-1,-1,-1,0-",
        "bytes=0-0",
        "bytes=-0",
        "bytes=0-",
        "bytes=99999999999999999999-",
        "bytes=0-18446744073709551615",
        "bytes=18446744073709551615-18446744073709551615",
        "bytes=-18446744073709551616",
        "bytes=5-1",
        "bytes=1-2,3-4",
        " BYTES = 7 - 9 ",
        "bytes=--1",
        "bytes=",
    ];

    /// Header fields the server acts on, to build requests that reach its header logic.
    const FIELDS: [&str; 9] = [
        "Host",
        "Range",
        "If-Range",
        "If-None-Match",
        "If-Modified-Since",
        "Connection",
        "Content-Length",
        "Transfer-Encoding",
        "Accept-Encoding",
    ];

    fn check_range(header: &[u8], size: u64) {
        use iolab_serve::range::{self, Ranges};
        match range::parse(header, size) {
            range::Range::Part(a, b) => {
                assert!(a <= b && b < size, "{header:?} of {size}: {a}-{b}");
            }
            range::Range::Unsatisfiable | range::Range::Full => {}
        }
        let mut parts = Vec::new();
        match range::parse_set(header, size, &mut parts) {
            Ranges::One(a, b) => {
                assert!(a <= b && b < size, "{header:?} of {size}: {a}-{b}");
                assert!(parts.is_empty());
            }
            Ranges::Many => {
                assert!((2..=range::MAX_PARTS).contains(&parts.len()), "{header:?}");
                for w in parts.windows(2) {
                    // Sorted, apart: no byte is sent twice.
                    assert!(w[0].1 < w[1].0, "{header:?} of {size}: {parts:?}");
                }
                for &(a, b) in &parts {
                    assert!(a <= b && b < size, "{header:?} of {size}: {parts:?}");
                }
            }
            Ranges::Full | Ranges::Unsatisfiable => assert!(parts.is_empty()),
        }
    }

    #[test]
    fn range_seeds_stay_in_bounds() {
        for h in RANGE_SEEDS {
            for size in [0, 1, 10, u64::MAX] {
                check_range(h.as_bytes(), size);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn ranges_are_within_the_file_or_refused(
            seed in 0usize..RANGE_SEEDS.len(),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
            size in prop_oneof![0u64..64, any::<u64>()],
        ) {
            let mut h = RANGE_SEEDS[seed].as_bytes().to_vec();
            for (pos, byte) in edits {
                let p = pos % (h.len() + 1);
                h.insert(p, byte);
            }
            check_range(&h, size);
        }

        #[test]
        fn lists_of_ranges_are_within_the_file_sorted_and_apart(
            specs in proptest::collection::vec(
                (proptest::option::of(0u64..5000), proptest::option::of(0u64..5000)),
                1..80,
            ),
            size in prop_oneof![0u64..64, 0u64..6000, any::<u64>()],
        ) {
            let s = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
            let list: Vec<String> = specs.iter().map(|(a, b)| format!("{}-{}", s(*a), s(*b))).collect();
            check_range(format!("bytes={}", list.join(",")).as_bytes(), size);
        }

        #[test]
        fn accept_encoding_chooses_only_what_exists_and_is_wanted(
            items in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("br".to_string()), Just("zstd".to_string()), Just("gzip".to_string()),
                        Just("x-gzip".to_string()), Just("*".to_string()), Just("identity".to_string()),
                        "[ -~]{0,8}",
                    ],
                    proptest::option::of(prop_oneof![
                        Just("0".to_string()), Just("1".to_string()), Just("0.5".to_string()),
                        Just("1.000".to_string()), Just("0.001".to_string()), "[ -~]{0,6}",
                    ]),
                ),
                0..8,
            ),
            mask in 0u8..8,
            raw in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            use iolab_serve::http::{choose_encoding, Encoding};
            let av: Vec<Encoding> = Encoding::ALL.iter().enumerate()
                .filter(|(k, _)| mask & (1 << k) != 0).map(|(_, e)| *e).collect();
            let h: Vec<String> = items.iter().map(|(n, q)| match q {
                Some(q) => format!("{n};q={q}"),
                None => n.clone(),
            }).collect();
            let h = h.join(", ");
            if let Some(e) = choose_encoding(Some(h.as_bytes()), &av) {
                prop_assert!(av.contains(&e));
                // Only what the header names (or covers with `*`) is chosen.
                let l = h.to_ascii_lowercase();
                prop_assert!(l.contains(e.token()) || l.contains('*'), "{h}");
            }
            if let Some(e) = choose_encoding(Some(&raw), &av) {
                prop_assert!(av.contains(&e));
            }
            prop_assert_eq!(choose_encoding(None, &av), None);
        }

        #[test]
        fn ranges_of_numbers_are_within_the_file(
            a in proptest::option::of(any::<u64>()),
            b in proptest::option::of(any::<u64>()),
            size in any::<u64>(),
        ) {
            let s = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
            check_range(format!("bytes={}-{}", s(a), s(b)).as_bytes(), size);
        }

        #[test]
        fn requests_with_any_header_fields_never_panic(
            fields in proptest::collection::vec(
                (0usize..FIELDS.len(), proptest::collection::vec(any::<u8>(), 0..40)),
                0..10,
            ),
            version in 0u8..2,
        ) {
            let mut b = format!("GET /f.txt HTTP/1.{version}\r\n").into_bytes();
            for (f, value) in fields {
                b.extend_from_slice(FIELDS[f].as_bytes());
                b.extend_from_slice(b": ");
                b.extend(value.into_iter().filter(|&c| c != b'\r' && c != b'\n'));
                b.extend_from_slice(b"\r\n");
            }
            b.extend_from_slice(b"\r\n");
            if let iolab_serve::http::Parsed::Request(r) = iolab_serve::http::parse(&b, 1024) {
                assert!(r.len <= b.len());
            }
            check(&site_dir(), &b);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            check(&site_dir(), &bytes);
        }

        #[test]
        fn mutated_requests_never_panic(
            seed in 0usize..SEEDS.len(),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..12),
        ) {
            let mut b = SEEDS[seed].as_bytes().to_vec();
            for (pos, byte, op) in edits {
                let p = pos % (b.len() + 1);
                match op {
                    0 => b.insert(p, byte),
                    1 if p < b.len() => { b.remove(p); }
                    _ if p < b.len() => b[p] = byte,
                    _ => b.push(byte),
                }
            }
            check(&site_dir(), &b);
        }
    }
}

#[test]
fn if_match_and_if_unmodified_since_give_412_in_every_date_form() {
    let d = site("precond");
    let f = d.join("root/a.txt");
    // 1994-11-06 08:49:37 UTC, RFC 9110's example instant.
    let t = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    let etag = get(a, "/a.txt", "").header("etag").unwrap().to_string();
    let st = |h: &str| get(a, "/a.txt", &format!("{h}\r\n")).status;
    assert_eq!(st(&format!("If-Match: {etag}")), 200);
    let r = get(a, "/a.txt", "If-Match: \"nope\"\r\n");
    assert_eq!(r.status, 412);
    assert!(String::from_utf8_lossy(&r.body).contains("412 Precondition Failed"));
    for (ok, late) in [
        (
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:36 GMT",
        ),
        (
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:36 GMT",
        ),
        ("Sun Nov  6 08:49:37 1994", "Sun Nov  6 08:49:36 1994"),
    ] {
        assert_eq!(st(&format!("If-Unmodified-Since: {ok}")), 200, "{ok}");
        assert_eq!(st(&format!("If-Unmodified-Since: {late}")), 412, "{late}");
        assert_eq!(st(&format!("If-Modified-Since: {ok}")), 304, "{ok}");
        assert_eq!(st(&format!("If-Modified-Since: {late}")), 200, "{late}");
    }
    stop(s);
}

#[test]
fn error_bodies_are_small_html_pages() {
    let d = site("errhtml");
    let s = start(&d.join("root"), |_| {});
    let r = get(s.local_addr(), "/nope", "");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let body = String::from_utf8(r.body).unwrap();
    assert!(body.starts_with("<!DOCTYPE html>"), "{body}");
    assert!(body.contains("<title>404 Not Found</title>"), "{body}");
    stop(s);
}

#[test]
fn the_combined_log_escapes_what_the_client_sent() {
    let d = site("combined");
    let log = d.join("access.log");
    let s = start(&d.join("root"), |o| {
        o.access_log = Some(log.clone());
        o.log_combined = true;
    });
    let a = s.local_addr();
    get(
        a,
        "/a.txt",
        "Referer: http://x/\r\nUser-Agent: ua\" 200 5\"\r\n",
    );
    // A byte beyond ASCII in a field (obs-text, which parsers pass) and a tab.
    let mut c = connect(a);
    c.get_mut()
        .write_all(b"GET /a.txt?\"q HTTP/1.1\r\nHost: t\r\nUser-Agent: a\tb\xff\r\n\r\n")
        .unwrap();
    assert_eq!(read_resp(&mut c, false).status, 200);
    get(a, "/nope", "");
    stop(s);
    let text = std::fs::read_to_string(&log).unwrap();
    // Two threads: the lines come in either order.
    assert_eq!(text.lines().count(), 3, "{text}");
    for want in [
        "\"GET /a.txt HTTP/1.1\" 200 1000 \"http://x/\" \"ua\\\" 200 5\\\"\"\n",
        "\"GET /a.txt?\\\"q HTTP/1.1\" 200 1000 \"-\" \"a\\x09b\\xff\"\n",
        "\"GET /nope HTTP/1.1\" 404 ",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    let nope = text.lines().find(|l| l.contains("/nope"));
    assert!(nope.is_some_and(|l| l.ends_with(" \"-\" \"-\"")), "{text}");
}

/// The parts of a multipart/byteranges body: (Content-Type, Content-Range, bytes).
fn multipart_parts(r: &Resp) -> Vec<(String, String, Vec<u8>)> {
    let ct = r.header("content-type").unwrap();
    let b = ct
        .strip_prefix("multipart/byteranges; boundary=")
        .unwrap_or_else(|| panic!("{ct}"));
    let delim = format!("\r\n--{b}");
    let body = &r.body;
    let find = |from: usize| {
        body[from..]
            .windows(delim.len())
            .position(|w| w == delim.as_bytes())
            .map(|p| p + from)
    };
    let mut parts = Vec::new();
    let mut at = find(0).expect("first delimiter");
    assert_eq!(at, 0, "the body starts with a delimiter");
    loop {
        let rest = &body[at + delim.len()..];
        if rest == b"--\r\n" {
            return parts;
        }
        let head_end = rest
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("part head");
        let head = String::from_utf8(rest[..head_end].to_vec()).unwrap();
        let field = |n: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(n))
                .unwrap_or_else(|| panic!("{n} in {head}"))
                .to_string()
        };
        let data_at = at + delim.len() + head_end + 4;
        let next = find(data_at).expect("next delimiter");
        parts.push((
            field("Content-Type: "),
            field("Content-Range: "),
            body[data_at..next].to_vec(),
        ));
        at = next;
    }
}

#[test]
fn several_ranges_are_multipart_byteranges() {
    let d = site("multirange");
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    // A small file (read through the engine) and a large one (sendfile).
    for (path, data) in [
        ("/a.txt", pattern(1, 1000)),
        ("/big.bin", pattern(2, 300_000)),
    ] {
        let size = data.len();
        let r = get(a, path, "Range: bytes=0-9, 500-599, -5\r\n");
        assert_eq!(r.status, 206, "{path}");
        assert_eq!(r.header("content-range"), None);
        let parts = multipart_parts(&r);
        let want = [(0, 9), (500, 599), (size - 5, size - 1)];
        assert_eq!(parts.len(), 3, "{path}");
        for ((ct, cr, bytes), (x, y)) in parts.iter().zip(want) {
            assert_eq!(cr, &format!("bytes {x}-{y}/{size}"));
            assert_eq!(bytes, &data[x..=y], "{path} {cr}");
            assert!(!ct.is_empty());
        }
        // HEAD promises the length GET sends.
        let h = raw(
            a,
            &format!("HEAD {path} HTTP/1.1\r\nHost: t\r\nRange: bytes=0-9, 500-599, -5\r\n\r\n"),
        );
        assert_eq!(
            h.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        // Overlapping and adjacent ranges are merged: one part is a plain 206.
        let r = get(a, path, "Range: bytes=100-199,150-299,0-120\r\n");
        assert_eq!(r.status, 206);
        assert_eq!(
            r.header("content-range").unwrap(),
            format!("bytes 0-299/{size}")
        );
        assert_eq!(r.body, &data[..300]);
        // Many small ranges close together coalesce into one part; more than 16 parts after
        // that, or more than 64 ranges, is the whole file.
        let close: Vec<String> = (0..40).map(|i| format!("{}-{}", i * 20, i * 20)).collect();
        let r = get(a, path, &format!("Range: bytes={}\r\n", close.join(",")));
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes 0-780/{size}").as_str())
        );
        let flood: Vec<String> = (0..65).map(|i| format!("{i}-{i}")).collect();
        let r = get(a, path, &format!("Range: bytes={}\r\n", flood.join(",")));
        assert_eq!((r.status, r.body.len()), (200, size), "{path}");
    }
    stop(s);
}

/// A part longer than a sendfile chunk (256 KiB) goes in slices, between other connections'
/// turns: it still arrives whole, then the next part; 17 parts apart are the whole file; and
/// a connection goes on after a multipart response.
#[test]
fn long_and_many_parts_arrive_whole() {
    let d = site("multirange-long");
    let s = start(&d.join("root"), |_| {});
    let a = s.local_addr();
    let data = pattern(2, 300_000);
    let r = get(a, "/big.bin", "Range: bytes=0-279999, 290000-\r\n");
    let parts = multipart_parts(&r);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].1, "bytes 0-279999/300000");
    assert!(
        parts[0].2 == data[..280_000],
        "the long part arrived changed"
    );
    assert_eq!(parts[1].2, &data[290_000..]);
    let apart: Vec<String> = (0..17)
        .map(|i| format!("{}-{}", i * 200, i * 200))
        .collect();
    let r = get(
        a,
        "/big.bin",
        &format!("Range: bytes={}\r\n", apart.join(",")),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body, pattern(2, 300_000));
    // Pipelined after a multipart response, the connection still works.
    let mut c = connect(a);
    let req = "GET /a.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=0-1,900-901\r\n\r\n";
    c.get_mut()
        .write_all(format!("{req}GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .unwrap();
    assert_eq!(multipart_parts(&read_resp(&mut c, false)).len(), 2);
    assert_eq!(read_resp(&mut c, false).body, pattern(1, 1000));
    stop(s);
}

#[test]
fn dir_listing_lists_escaped_sorted_names_without_dotfiles() {
    let d = site("listing");
    let r = d.join("root/noindex");
    std::fs::write(r.join("b <i>&'x'.txt"), b"12345").unwrap();
    std::fs::write(r.join("a b.txt"), b"abc").unwrap();
    std::fs::write(r.join(".secret"), b"s").unwrap();
    std::fs::create_dir(r.join("sub")).unwrap();
    std::fs::write(d.join("root/noindex/sub/deep.txt"), b"d").unwrap();
    let off = start(&d.join("root"), |_| {});
    assert_eq!(get(off.local_addr(), "/noindex/", "").status, 403);
    stop(off);
    let s = start(&d.join("root"), |o| o.dir_listing = true);
    let a = s.local_addr();
    let l = get(a, "/noindex/", "");
    assert_eq!(l.status, 200);
    assert_eq!(l.header("content-type"), Some("text/html; charset=utf-8"));
    let page = String::from_utf8(l.body).unwrap();
    assert!(page.contains("<title>Index of /noindex/</title>"), "{page}");
    let rows: Vec<&str> = page.lines().filter(|l| l.contains("href=\"./")).collect();
    assert_eq!(rows.len(), 3, "{page}");
    assert!(rows[0].contains("href=\"./a%20b.txt\">a b.txt</a></td><td>3</td>"));
    assert!(
        rows[1].contains(
            "href=\"./b%20%3Ci%3E%26%27x%27.txt\">b &lt;i&gt;&amp;&#39;x&#39;.txt</a></td><td>5<"
        ),
        "{page}"
    );
    assert!(rows[2].contains("href=\"./sub/\">sub/</a>"), "{page}");
    assert!(!page.contains("secret"), "{page}");
    assert!(page.contains("href=\"../\""));
    // Every link leads to its file.
    assert_eq!(get(a, "/noindex/a%20b.txt", "").body, b"abc");
    assert_eq!(
        get(a, "/noindex/b%20%3Ci%3E%26%27x%27.txt", "").body,
        b"12345"
    );
    assert!(String::from_utf8(get(a, "/noindex/sub/", "").body)
        .unwrap()
        .contains("deep.txt"));
    // A directory with index.html still serves it; HEAD has the length and no body.
    assert_eq!(get(a, "/docs/", "").body, b"docs\n");
    let h = raw(a, "HEAD /noindex/ HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(
        h.header("content-length"),
        Some(page.len().to_string().as_str())
    );
    // Keep-alive goes on after a listing.
    let mut c = connect(a);
    c.get_mut()
        .write_all(
            b"GET /noindex/ HTTP/1.1\r\nHost: t\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n",
        )
        .unwrap();
    assert_eq!(read_resp(&mut c, false).body, page.as_bytes());
    assert_eq!(read_resp(&mut c, false).body, pattern(1, 1000));
    stop(s);
    let s = start(&d.join("root"), |o| {
        o.dir_listing = true;
        o.dotfiles = true;
    });
    let page = String::from_utf8(get(s.local_addr(), "/noindex/", "").body).unwrap();
    assert!(page.contains("href=\"./.secret\""), "{page}");
    stop(s);
}

#[test]
fn precompressed_siblings_follow_accept_encoding() {
    let d = site("precompressed");
    let r = d.join("root");
    // Stand-ins for compressed bytes: the server sends them as they are.
    std::fs::write(r.join("a.txt.gz"), pattern(7, 300)).unwrap();
    std::fs::write(r.join("a.txt.br"), pattern(8, 200)).unwrap();
    let s = start(&r, |_| {});
    let a = s.local_addr();
    let plain = get(a, "/a.txt", "");
    assert_eq!(plain.body, pattern(1, 1000));
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("vary"), Some("Accept-Encoding"));
    let br = get(a, "/a.txt", "Accept-Encoding: gzip, deflate, br\r\n");
    assert_eq!(br.body, pattern(8, 200));
    assert_eq!(br.header("content-encoding"), Some("br"));
    assert_eq!(br.header("vary"), Some("Accept-Encoding"));
    assert_eq!(br.header("content-type"), Some("text/plain; charset=utf-8"));
    let gz = get(a, "/a.txt", "Accept-Encoding: br;q=0.5, gzip\r\n");
    assert_eq!(gz.body, pattern(7, 300));
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    // Each representation has its own ETag, and a validator works against its own.
    let tags = [&plain, &br, &gz].map(|r| r.header("etag").unwrap().to_string());
    assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2]);
    let inm = format!("Accept-Encoding: gzip\r\nIf-None-Match: {}\r\n", tags[2]);
    assert_eq!(get(a, "/a.txt", &inm).status, 304);
    let inm = format!("Accept-Encoding: gzip\r\nIf-None-Match: {}\r\n", tags[0]);
    assert_eq!(get(a, "/a.txt", &inm).status, 200);
    // Refused codings, zstd without a sibling: the plain file.
    for ae in ["identity", "br;q=0, gzip;q=0", "zstd", "*;q=0"] {
        let r = get(a, "/a.txt", &format!("Accept-Encoding: {ae}\r\n"));
        assert_eq!(r.body, pattern(1, 1000), "{ae}");
    }
    // Ranges apply to the encoded bytes.
    let r = get(
        a,
        "/a.txt",
        "Accept-Encoding: gzip\r\nRange: bytes=10-19\r\n",
    );
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-range"), Some("bytes 10-19/300"));
    assert_eq!(r.body, &pattern(7, 300)[10..20]);
    // A file without siblings says nothing of them.
    let b = get(a, "/big.bin", "Accept-Encoding: gzip, br\r\n");
    assert_eq!(
        (b.header("vary"), b.header("content-encoding")),
        (None, None)
    );
    // The siblings are served by their own names too.
    assert_eq!(get(a, "/a.txt.gz", "").body, pattern(7, 300));
    stop(s);
}
