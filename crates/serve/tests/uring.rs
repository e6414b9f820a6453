//! The serve suite (`tests/suite`) on the io_uring network path (`--net io_uring`):
//! multishot accept and recv into provided buffers instead of epoll. Skipped, saying why,
//! where the kernel gives no such ring (io_uring blocked or too old).
// Tests: an unwrap that fails is the test failing, with the error shown.
#![allow(clippy::unwrap_used)]

mod suite;

fn net() -> iolab_serve::NetMode {
    static PROBE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *PROBE.get_or_init(|| match iolab_engine::NetRing::new(8, 2, 4096) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: no io_uring socket ring here ({e}); the suite runs on epoll");
            false
        }
    });
    if ok {
        iolab_serve::NetMode::IoUring
    } else {
        iolab_serve::NetMode::Epoll
    }
}

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn server(name: &str) -> (iolab_serve::Server, std::path::PathBuf) {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-uring-only")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("a.txt"), b"0123456789").unwrap();
    let mut o = iolab_serve::ServeOpts::new(&d);
    o.listen = vec!["127.0.0.1:0".parse().unwrap()];
    o.threads = 1;
    o.net = net();
    (iolab_serve::Server::start(&o).unwrap(), d)
}

/// A client that sends far more pipelined requests than the server buffers (its receive
/// stops and resumes) gets every answer, in order.
#[test]
fn a_flood_of_pipelined_requests_is_answered_in_full() {
    let (s, _d) = server("flood");
    let n = 30_000;
    let req = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";
    let mut c = TcpStream::connect(s.local_addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut w = c.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let all: Vec<u8> = req.iter().copied().cycle().take(req.len() * n).collect();
        w.write_all(&all).unwrap();
    });
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut answers = 0;
    while answers < n {
        let k = match c.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.unwrap(),
        };
        assert!(k > 0, "closed after {answers} answers");
        got.extend_from_slice(&buf[..k]);
        // Count whole answers as they come, keeping the tail of a partial one.
        while let Some(end) = find(&got, b"0123456789") {
            assert!(
                got.starts_with(b"HTTP/1.1 200 "),
                "{:?}",
                &got[..got.len().min(80)]
            );
            got.drain(..end + 10);
            answers += 1;
        }
    }
    writer.join().unwrap();
    assert!(got.is_empty(), "bytes beyond the answers");
    s.shutdown().trigger();
    let st = s.join().unwrap();
    assert_eq!(st.requests, n as u64);
}

fn find(h: &[u8], needle: &[u8]) -> Option<usize> {
    h.windows(needle.len()).position(|w| w == needle)
}

/// Regression: a connection the server closes while its multishot receive is armed must
/// really close (the ring's reference to the socket is cancelled), so the client sees the end.
#[test]
fn connection_close_reaches_the_client_with_a_receive_armed() {
    let (s, _d) = server("close");
    for _ in 0..50 {
        let mut c = TcpStream::connect(s.local_addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).expect("the server closes");
        assert!(got.ends_with(b"0123456789"));
    }
    s.shutdown().trigger();
    s.join().unwrap();
}

/// One thread takes its connections with a multishot accept: a burst of connections made at
/// once (more than the listen backlog's first wake-up holds) are all served, and a stop ends
/// the accept without a spin.
#[test]
fn a_burst_of_connections_is_accepted_by_one_thread() {
    let (s, _d) = server("burst");
    let mut cs: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(s.local_addr()).unwrap())
        .collect();
    for c in &mut cs {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
    }
    for c in &mut cs {
        let mut got = Vec::new();
        c.read_to_end(&mut got).expect("answered and closed");
        assert!(got.starts_with(b"HTTP/1.1 200 ") && got.ends_with(b"0123456789"));
    }
    s.shutdown().trigger();
    let st = s.join().unwrap();
    assert_eq!((st.connections, st.requests), (100, 100));
}

/// A small file is read on the socket ring, linked to its send. One cut short after it was
/// cached (its size trusted for a second) must not go out as the head's promised length of
/// stale buffer bytes: the short read cancels the send and the connection closes, or (the
/// second being up) the new length is served. Either way every byte sent is the file's.
#[test]
fn a_small_file_cut_short_is_never_padded_with_stale_bytes() {
    let (s, d) = server("cut");
    let get = |path: &str| {
        let mut c = TcpStream::connect(s.local_addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let req = format!("GET /{path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        c.write_all(req.as_bytes()).unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        got
    };
    // A stale buffer would hold this earlier file's bytes.
    std::fs::write(d.join("z.txt"), b"zzzzzzzzzz").unwrap();
    assert!(get("z.txt").ends_with(b"zzzzzzzzzz"));
    assert!(get("a.txt").ends_with(b"0123456789"));
    std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("a.txt"))
        .and_then(|f| f.set_len(4))
        .unwrap();
    let got = get("a.txt");
    let head_end = find(&got, b"\r\n\r\n").map_or(got.len(), |k| k + 4);
    let (head, body) = got.split_at(head_end);
    let promised = String::from_utf8_lossy(head)
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: ").map(str::to_owned));
    match promised.as_deref() {
        // Closed before anything was sent.
        None => assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got)),
        Some("4") => assert_eq!(body, b"0123"),
        Some(n) => panic!("promised {n} bytes of a 4-byte file, sent {body:?}"),
    }
    s.shutdown().trigger();
    s.join().unwrap();
}
