//! `iolab serve` as a user runs it: bad arguments, SIGTERM during a large transfer (the
//! transfer completes, the process exits 0), and curl as the client where it is installed.
// Tests: an unwrap that fails is the test failing, with the error shown.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4093) as u8).collect()
}

/// The server process; killed if a test fails before it is stopped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `iolab serve ROOT` on a free port and reads the address it prints.
fn serve(root: &Path, extra: &[&str]) -> (Proc, SocketAddr) {
    let (p, addrs) = serve_all(root, extra);
    (p, addrs[0])
}

/// Starts `iolab serve ROOT --listen 127.0.0.1:0 EXTRA...` and reads every address it prints.
fn serve_all(root: &Path, extra: &[&str]) -> (Proc, Vec<SocketAddr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("serve")
        .arg(root)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolab serve");
    let out = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).expect("a line");
    let addrs: Vec<SocketAddr> = line
        .split("listening on ")
        .nth(1)
        .map(|a| {
            a.split_whitespace()
                .filter_map(|a| a.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    assert!(!addrs.is_empty(), "no address in {line:?}");
    (Proc(child), addrs)
}

fn signal(p: &Proc, sig: &str) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -{sig} {}", p.0.id()))
        .status()
        .expect("sh")
        .success();
    assert!(ok, "kill -{sig}");
}

fn wait_exit(p: &mut Proc, within: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = p.0.try_wait().expect("wait") {
            return st;
        }
        assert!(t.elapsed() < within, "iolab serve did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn bad_arguments_exit_1_with_a_reason() {
    let d = dir("badargs");
    let iolab = env!("CARGO_BIN_EXE_iolab");
    let cases: [(&[&str], &str); 7] = [
        (&[], "which directory"),
        (
            &[".", "--net", "kqueue"],
            "--net: 'kqueue' is not one of epoll, io_uring, auto",
        ),
        (&["/nonexistent-iolab-dir"], "not a directory"),
        (&[".", "--engine", "mmap"], "not one of"),
        (&[".", "--listen", "nowhere"], "HOST:PORT"),
        (&[".", "--threads", "x"], "--threads"),
        (&[".", "--frobnicate"], "unknown option"),
    ];
    for (args, want) in cases {
        let out = Command::new(iolab)
            .arg("serve")
            .args(args)
            .current_dir(&d)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // A port already taken is a clear error too.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().to_string();
    let out = Command::new(iolab)
        .args(["serve", ".", "--listen", &port])
        .current_dir(&d)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
}

#[test]
fn help_lists_every_option_and_a_bad_one_is_named_once() {
    let iolab = env!("CARGO_BIN_EXE_iolab");
    for flag in ["--help", "-h"] {
        let out = Command::new(iolab).args(["serve", flag]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}");
        let text = String::from_utf8_lossy(&out.stdout);
        for opt in [
            "--listen",
            "--threads",
            "--engine",
            "--net",
            "--access-log",
            "--dotfiles",
            "--idle-timeout",
            "--max-connections",
            "--max-header-bytes",
            "--help",
        ] {
            assert!(text.contains(opt), "{flag} does not list {opt}: {text}");
        }
    }
    let out = Command::new(iolab)
        .args(["serve", ".", "--max-conections", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown option '--max-conections'; did you mean '--max-connections'?"),
        "{err}"
    );
    assert_eq!(err.matches("--max-conections").count(), 1, "{err}");
    assert!(
        !err.contains("--idle-timeout"),
        "the usage was reprinted: {err}"
    );
}

/// Non-UTF-8 names are served: the directory given as bytes, and a file in it requested by
/// its percent-encoded bytes.
#[test]
fn non_utf8_directory_and_file_names_are_served() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let d = dir("nonutf8");
    let root = d.join(OsStr::from_bytes(b"r\xe9pertoire"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(OsStr::from_bytes(b"caf\xe9")), b"coffee\n").unwrap();
    let (mut p, addr) = serve(&root, &[]);
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /caf%E9 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
    assert!(text.ends_with("\r\n\r\ncoffee\n"), "{text}");
    signal(&p, "TERM");
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
}

/// Regression: after SIGTERM the listener stayed open, so new connections were accepted by
/// the kernel and never answered.
#[test]
fn after_sigterm_new_connections_are_refused_at_once() {
    let d = dir("refuse");
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("big.bin"), bytes(32 << 20)).unwrap();
    let (mut p, addr) = serve(&root, &[]);
    // A transfer the client does not read keeps the server running after the signal.
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut b = [0u8; 1024];
    assert!(c.read(&mut b).unwrap() > 0);
    signal(&p, "TERM");
    let t = Instant::now();
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
                break;
            }
            // The signal may not have been taken yet: it has 2 s, not the 10 s it had.
            Ok(_) => assert!(t.elapsed() < Duration::from_secs(2), "still accepting"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        p.0.try_wait().unwrap().is_none(),
        "exited with a transfer in flight"
    );
    drop(c);
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
}

#[test]
fn sigterm_lets_a_transfer_in_flight_finish_then_exits_0() {
    sigterm_mid_transfer("sigterm", &[]);
}

/// The same on the epoll network path (the default is io_uring where the kernel has it).
#[test]
fn sigterm_mid_transfer_on_net_epoll() {
    sigterm_mid_transfer("sigterm-epoll", &["--net", "epoll"]);
}

fn sigterm_mid_transfer(name: &str, net: &[&str]) {
    let d = dir(name);
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let len = 64 << 20;
    let data = bytes(len);
    std::fs::write(root.join("big.bin"), &data).unwrap();
    std::fs::write(root.join("small.txt"), b"small\n").unwrap();
    let mut args = vec!["--threads", "2"];
    args.extend_from_slice(net);
    let (mut p, addr) = serve(&root, &args);
    // An idle keep-alive connection, which shutdown closes.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /small.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut c = BufReader::new(TcpStream::connect(addr).unwrap());
    c.get_mut()
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut line = String::new();
    loop {
        line.clear();
        c.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let mut got = vec![0u8; len];
    c.read_exact(&mut got[..1 << 16]).unwrap();
    // The client stops reading, so the rest is still in flight when the signal arrives.
    signal(&p, "TERM");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        p.0.try_wait().unwrap().is_none(),
        "exited with a transfer in flight"
    );
    // New connections are no longer served.
    let refused = match TcpStream::connect(addr) {
        Err(_) => true,
        Ok(mut s) => {
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = s.write_all(b"GET /small.txt HTTP/1.1\r\nHost: t\r\n\r\n");
            let mut b = [0u8; 64];
            !matches!(s.read(&mut b), Ok(n) if n > 0)
        }
    };
    assert!(refused, "a connection made after SIGTERM was served");
    c.get_mut()
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    c.read_exact(&mut got[1 << 16..])
        .expect("the rest of the body");
    assert!(got == data, "body differs");
    let st = wait_exit(&mut p, Duration::from_secs(10));
    assert!(st.success(), "{st:?}");
    let mut err = String::new();
    if let Some(mut e) = p.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(err.contains("SIGTERM: stopped after"), "{err}");
    drop(idle);
}

#[test]
fn sigint_on_an_idle_server_exits_0() {
    let d = dir("sigint");
    let (mut p, _) = serve(&d, &[]);
    signal(&p, "INT");
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
}

#[test]
fn curl_gets_files_ranges_and_heads() {
    if Command::new("curl").arg("--version").output().is_err() {
        iolab_testkit::skip("curl", &"curl is not installed (.ci/run installs it)");
        return;
    }
    let d = dir("curl");
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let data = bytes(3 << 20);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    std::fs::write(root.join("index.html"), b"<p>hi</p>\n").unwrap();
    let log = d.join("access.log");
    let log_s = log.to_string_lossy().to_string();
    let (mut p, addr) = serve(&root, &["--access-log", &log_s, "--engine", "psync"]);
    let url = format!("http://{addr}/f.bin");
    assert!(curl(&[&url]) == data, "curl body differs");
    assert_eq!(curl(&["-r", "100-199", &url]), &data[100..200]);
    curl_gets_several_ranges_and_heads(&url, &data);
    // Two URLs on one connection (curl reuses it), HTTP/1.0 too.
    let two = curl(&[
        &format!("http://{addr}/"),
        &format!("http://{addr}/index.html"),
    ]);
    assert_eq!(two, b"<p>hi</p>\n<p>hi</p>\n");
    assert_eq!(curl(&["-0", &format!("http://{addr}/")]), b"<p>hi</p>\n");
    let code = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{addr}/nope"),
    ]);
    assert_eq!(code, b"404");
    curl_gets_a_precompressed_sibling(&root, &addr);
    signal(&p, "TERM");
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("\"GET /f.bin HTTP/1.1\" 200 3145728"),
        "{text}"
    );
    assert!(text.contains("\"GET /f.bin HTTP/1.1\" 206 100"), "{text}");
}

/// curl with `args`: what it printed; it must succeed.
fn curl(args: &[&str]) -> Vec<u8> {
    curl_run(args).stdout
}

/// Several ranges of `url` (whose body is `data`) in one multipart answer, and a HEAD.
fn curl_gets_several_ranges_and_heads(url: &str, data: &[u8]) {
    // curl prints the multipart body as it comes.
    let multi = curl(&["-r", "0-9,2000000-2000009", "-D", "-", url]);
    let text = String::from_utf8_lossy(&multi);
    assert!(text.starts_with("HTTP/1.1 206"), "{text}");
    assert!(
        text.contains("Content-Type: multipart/byteranges; boundary="),
        "{text}"
    );
    assert!(
        text.contains("Content-Range: bytes 2000000-2000009/3145728\r\n"),
        "{text}"
    );
    for want in [&data[..10], &data[2_000_000..2_000_010]] {
        assert!(multi.windows(10).any(|w| w == want), "a part's bytes");
    }
    let head = String::from_utf8(curl(&["-I", url])).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("Content-Length: 3145728"), "{head}");
}

/// A precompressed sibling made by gzip: curl --compressed asks for it and decodes it.
fn curl_gets_a_precompressed_sibling(root: &Path, addr: &SocketAddr) {
    let txt: Vec<u8> = b"compress me\n".repeat(500);
    std::fs::write(root.join("t.txt"), &txt).unwrap();
    let gzipped = Command::new("gzip")
        .args(["-k", "-9"])
        .arg(root.join("t.txt"))
        .status()
        .is_ok_and(|s| s.success());
    if gzipped {
        let t = format!("http://{addr}/t.txt");
        assert_eq!(curl(&["--compressed", &t]), txt);
        let head =
            String::from_utf8(curl(&["--compressed", "-D", "-", "-o", "/dev/null", &t])).unwrap();
        assert!(head.contains("Content-Encoding: gzip\r\n"), "{head}");
        assert!(head.contains("Vary: Accept-Encoding\r\n"), "{head}");
        assert_eq!(curl(&[&t]), txt);
    } else {
        iolab_testkit::skip("curl --compressed", &"gzip is not installed");
    }
}

/// curl with a time limit; its output, after asserting that it succeeded.
fn curl_run(args: &[&str]) -> std::process::Output {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .output()
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The status code curl received.
fn curl_code(args: &[&str]) -> String {
    let mut a = vec!["-o", "/dev/null", "-w", "%{http_code}"];
    a.extend_from_slice(args);
    String::from_utf8(curl(&a)).unwrap()
}

/// If-Match and If-Unmodified-Since: a tag that is not the file's, and a date before it was
/// written, in IMF-fixdate, RFC 850 and asctime form, all fail; the file's own tag and a later
/// date pass.
fn curl_sees_conditionals(url: &str) {
    assert_eq!(curl_code(&["-H", "If-Match: \"nope\"", url]), "412");
    for date in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ] {
        let h = format!("If-Unmodified-Since: {date}");
        assert_eq!(curl_code(&["-H", &h, url]), "412", "{date}");
    }
    let later = "If-Unmodified-Since: Fri, 01 Jan 2100 00:00:00 GMT";
    assert_eq!(curl_code(&["-H", later, url]), "200");
    let head = String::from_utf8(curl(&["-I", url])).unwrap();
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .unwrap_or_else(|| panic!("no ETag in {head}"));
    assert_eq!(curl_code(&["-H", &format!("If-Match: {etag}"), url]), "200");
}

/// Siblings by q-value: zstd over br at 0.5, br over zstd at 0.1, the plain file otherwise.
fn curl_sees_siblings(url: &str, plain: &[u8]) {
    let zst = ["-H", "Accept-Encoding: br;q=0.5, zstd", "-D", "-", url];
    let text = String::from_utf8_lossy(&curl(&zst)).to_string();
    assert!(text.contains("Content-Encoding: zstd\r\n"), "{text}");
    assert!(text.contains("Vary: Accept-Encoding\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\nzstd stand-in"), "{text}");
    let br = curl(&["-H", "Accept-Encoding: br, zstd;q=0.1", url]);
    assert_eq!(br, b"br stand-in");
    assert_eq!(curl(&[url]), plain);
}

/// The listing (names escaped in the link and the text, dotfiles left out), keep-alive asked
/// for by HTTP/1.0 (answered, and curl reuses the connection), and an error as an HTML page.
fn curl_sees_listing_keep_alive_and_error_page(addr: std::net::SocketAddr, url: &str) {
    let page = String::from_utf8(curl(&[&format!("http://{addr}/sub/")])).unwrap();
    assert!(
        page.contains("href=\"./a%20b%26%3Cx%3E.txt\">a b&amp;&lt;x&gt;.txt</a>"),
        "{page}"
    );
    assert!(!page.contains("hidden"), "{page}");
    let file = format!("http://{addr}/sub/a%20b%26%3Cx%3E.txt");
    assert_eq!(curl(&[&file]), b"12345");
    let out = curl_run(&["-v", "-0", "-H", "Connection: keep-alive", url, &file]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("< Connection: keep-alive"), "{err}");
    assert!(err.contains("Re-using existing connection"), "{err}");
    let nope = String::from_utf8(curl(&["-D", "-", &format!("http://{addr}/nope")])).unwrap();
    assert!(nope.starts_with("HTTP/1.1 404"), "{nope}");
    assert!(nope.contains("Content-Type: text/html"), "{nope}");
    assert!(nope.contains("<title>404 Not Found</title>"), "{nope}");
}

/// What issue 17 lists that `curl_gets_files_ranges_and_heads` leaves out, each through curl:
/// If-Match and If-Unmodified-Since (412, the three date forms), a zstd sibling chosen by
/// q-value, a directory listing, keep-alive asked for by an HTTP/1.0 client, an HTML error
/// page, the combined log escaping what curl sent, and [::1] beside a host name.
#[test]
fn curl_sees_conditionals_siblings_listings_keep_alive_and_the_log() {
    if Command::new("curl").arg("--version").output().is_err() {
        iolab_testkit::skip(
            "curl's view of serve",
            &"curl is not installed (.ci/run installs it)",
        );
        return;
    }
    let d = dir("curl-expect");
    let root = d.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a b&<x>.txt"), b"12345").unwrap();
    std::fs::write(root.join("sub/.hidden"), b"h").unwrap();
    let plain = bytes(1000);
    std::fs::write(root.join("t.txt"), &plain).unwrap();
    // Stand-ins for compressed bytes: the server sends them as they are.
    std::fs::write(root.join("t.txt.zst"), b"zstd stand-in").unwrap();
    std::fs::write(root.join("t.txt.br"), b"br stand-in").unwrap();
    let log = d.join("access.log");
    let log_s = log.to_string_lossy().to_string();
    let ipv6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    let mut extra = vec![
        "--dir-listing",
        "--access-log",
        &log_s,
        "--log-format",
        "combined",
        "--listen",
        "localhost:0",
    ];
    if ipv6 {
        extra.extend(["--listen", "[::1]:0"]);
    } else {
        iolab_testkit::skip("curl on [::1]", &"no IPv6 loopback on this machine");
    }
    let (mut p, addrs) = serve_all(&root, &extra);
    let addr = addrs[0];
    let url = format!("http://{addr}/t.txt");
    curl_sees_conditionals(&url);
    curl_sees_siblings(&url, &plain);
    curl_sees_listing_keep_alive_and_error_page(addr, &url);
    // [::1] and the host name's addresses answer too.
    for a in &addrs[1..] {
        assert_eq!(curl(&["-g", &format!("http://{a}/t.txt")]), plain, "{a}");
    }
    // What curl sends in the log, escaped: a quote cannot end the field early.
    curl(&["-A", "ua\" 200 5 \"x", "-e", "http://r/", &url]);
    signal(&p, "TERM");
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("\"GET /t.txt HTTP/1.1\" 200 1000 \"http://r/\" \"ua\\\" 200 5 \\\"x\"\n"),
        "{text}"
    );
    assert!(text.contains("\"GET /t.txt HTTP/1.1\" 412 "), "{text}");
}

#[test]
fn listen_takes_names_ipv6_and_several_addresses() {
    let d = dir("listen");
    std::fs::write(d.join("f.txt"), b"here\n").unwrap();
    let ipv6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    let mut extra = vec!["--listen", "localhost:0"];
    if ipv6 {
        extra.extend(["--listen", "[::1]:0"]);
    } else {
        iolab_testkit::skip("listen [::1]", &"no IPv6 loopback on this machine");
    }
    let (mut p, addrs) = serve_all(&d, &extra);
    // 127.0.0.1:0, then localhost's addresses, then [::1]:0 (each its own free port).
    assert!(addrs.len() >= 2, "{addrs:?}");
    assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    assert_eq!(addrs.iter().any(|a| a.is_ipv6()), ipv6, "{addrs:?}");
    for a in &addrs {
        let mut s = TcpStream::connect(a).unwrap();
        s.write_all(b"GET /f.txt HTTP/1.0\r\n\r\n").unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"), "{a}");
        assert!(got.ends_with(b"\r\n\r\nhere\n"), "{a}");
    }
    signal(&p, "TERM");
    assert!(wait_exit(&mut p, Duration::from_secs(10)).success());
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["serve", ".", "--listen", "no-such-host.invalid:80"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-host.invalid"), "{err}");
}
