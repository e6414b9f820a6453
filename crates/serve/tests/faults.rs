//! `iolab serve` under hostile or broken clients and a stalled file system, over loopback:
//! floods of half-requests that close or reset, clients beyond the connection limit, a file
//! whose read never returns, and connections made after shutdown. Each test has a time limit.
// Tests: an unwrap that fails is the test failing, with the error shown.
#![allow(clippy::unwrap_used)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use iolab_engine::sys::net;
use iolab_serve::{ServeOpts, Server};

/// Runs `body` on its own thread and fails the test if it takes longer than `secs`.
fn limit(secs: u64, body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => t.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked: show its message.
            if let Err(p) = t.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("test took longer than {secs} s"),
    }
}

fn root(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-faults")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("a.txt"), b"hello\n").unwrap();
    d
}

fn start(root: &Path, tweak: impl FnOnce(&mut ServeOpts)) -> Server {
    let mut o = ServeOpts::new(root);
    o.listen = "127.0.0.1:0".parse().unwrap();
    o.threads = 1;
    tweak(&mut o);
    Server::start(&o).expect("server starts")
}

fn stop(s: Server) {
    s.shutdown().trigger();
    s.join().expect("threads end cleanly");
}

/// Sends `req` on a new connection and reads until the server closes or `within` passes:
/// the status code, the whole text, or the error that ended the read.
fn exchange(a: SocketAddr, req: &[u8], within: Duration) -> Result<(u16, String), String> {
    let mut c = TcpStream::connect(a).map_err(|e| format!("connect: {e}"))?;
    c.set_read_timeout(Some(within)).unwrap();
    c.write_all(req).map_err(|e| format!("write: {e}"))?;
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        match c.read(&mut b) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&b[..n]);
                // One response is enough when the connection is kept; when the server says it
                // closes, the close must be clean (a FIN, not a reset).
                let text = String::from_utf8_lossy(&got);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    if head.contains("Connection: close") {
                        continue;
                    }
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.trim().parse::<usize>().ok());
                    if len.is_some_and(|n| body.len() >= n) {
                        break;
                    }
                }
            }
            Err(e) => return Err(format!("read: {e} after {} bytes", got.len())),
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line in {text:?}"))?;
    Ok((status, text))
}

const GET_A: &[u8] = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";

/// A normal client is answered 200 within `within`, retrying while it is told 503.
fn served_within(a: SocketAddr, within: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < within {
        match exchange(a, GET_A, within) {
            Ok((200, text)) => return text.ends_with("hello\n"),
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    false
}

/// Regression: connections that sent half a request and then closed or reset kept their slot
/// until the idle timeout, so a flood of them locked every client out for 10 s.
#[test]
fn half_requests_that_close_or_reset_give_their_slot_back_at_once() {
    limit(60, || {
        let d = root("flood");
        // The limit is far below the flood, and the idle timeout far above the test's patience.
        let s = start(&d, |o| {
            o.max_connections = 32;
            o.idle_timeout = Duration::from_secs(30);
        });
        let a = s.local_addr();
        for round in 0..20 {
            for k in 0..100 {
                let mut c = TcpStream::connect(a).unwrap();
                let _ = c.write_all(b"GET /a.txt HTTP/1.1\r\nHo");
                if (round + k) % 2 == 0 {
                    // SO_LINGER 0: the close sends a reset instead of a FIN.
                    net::set_linger_zero(&c).unwrap();
                }
                drop(c);
            }
            assert!(
                served_within(a, Duration::from_secs(3)),
                "round {round}: a normal client was not served within 3 s of a half-request flood"
            );
        }
        stop(s);
    });
}

/// Regression: beyond --max-connections a client that had sent its request got a connection
/// reset (the server closed with the request unread) instead of the 503.
#[test]
fn beyond_the_limit_every_client_reads_a_whole_503() {
    limit(60, || {
        let d = root("limit");
        let s = start(&d, |o| o.max_connections = 1);
        let a = s.local_addr();
        let mut held = TcpStream::connect(a).unwrap();
        held.write_all(GET_A).unwrap();
        let mut b = [0u8; 256];
        assert!(held.read(&mut b).unwrap() > 0);
        for i in 0..300 {
            let r = exchange(a, GET_A, Duration::from_secs(5));
            let (status, text) = r.unwrap_or_else(|e| panic!("client {i}: {e}"));
            assert_eq!(status, 503, "client {i}: {text}");
            assert!(text.contains("Connection: close\r\n"), "{text}");
            assert!(text.ends_with("503 Service Unavailable\n"), "{text}");
        }
        drop(held);
        assert!(served_within(a, Duration::from_secs(3)));
        stop(s);
    });
}

/// Regression: after shutdown the listener stayed open, so the kernel accepted connections
/// that were never answered.
#[test]
fn after_shutdown_new_connections_are_refused_at_once() {
    limit(30, || {
        let d = root("refuse");
        std::fs::write(d.join("big"), vec![7u8; 8 << 20]).unwrap();
        let s = start(&d, |_| {});
        let a = s.local_addr();
        // A transfer in flight keeps the server running after the shutdown.
        let mut c = TcpStream::connect(a).unwrap();
        c.write_all(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut b = [0u8; 1024];
        assert!(c.read(&mut b).unwrap() > 0);
        let stopper = s.shutdown();
        stopper.trigger();
        let e = TcpStream::connect_timeout(&a, Duration::from_secs(2))
            .expect_err("a connection made after shutdown was accepted");
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        // The transfer in flight still completes.
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        s.join().expect("threads end cleanly");
    });
}
