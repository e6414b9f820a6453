//! `iolab serve` under connection floods and at shutdown (issue 33): half-sent requests,
//! silent connections and slowloris trickles must not lock normal clients out (connections
//! waiting for a head are evicted to make room, and a minimum rate closes trickles), and after
//! SIGTERM a client that reads slowly holds the process no longer than the shutdown grace.
//! Every connection is to loopback; every wait has a hang guard, and nothing asserts a time.
// Tests: an unwrap that fails is the test failing, with the error shown.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-floods")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    std::fs::write(d.join("a.txt"), b"hello\n").expect("a.txt");
    d
}

/// The server process; killed if a test fails before it is stopped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `iolab serve ROOT --listen 127.0.0.1:0 EXTRA...` and reads the address it prints.
fn serve(root: &Path, extra: &[&str]) -> (Proc, SocketAddr) {
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
    let addr = line
        .split("listening on ")
        .nth(1)
        .and_then(|a| a.split_whitespace().next())
        .and_then(|a| a.parse().ok());
    let Some(addr) = addr else {
        panic!("no address in {line:?}");
    };
    (Proc(child), addr)
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

const GET_A: &[u8] = b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

/// One GET of /a.txt on a new connection, the server closing after it: the response, or why
/// there is none (the read times out after `within`: a hang guard, not a measure).
fn fetch(a: SocketAddr, within: Duration) -> Result<String, String> {
    let mut c = TcpStream::connect(a).map_err(|e| format!("connect: {e}"))?;
    c.set_read_timeout(Some(within))
        .map_err(|e| e.to_string())?;
    c.write_all(GET_A).map_err(|e| format!("write: {e}"))?;
    let mut got = Vec::new();
    c.read_to_end(&mut got)
        .map_err(|e| format!("read: {e} after {} bytes", got.len()))?;
    Ok(String::from_utf8_lossy(&got).into_owned())
}

fn served(a: SocketAddr) -> Result<(), String> {
    let text = fetch(a, Duration::from_secs(5))?;
    if text.starts_with("HTTP/1.1 200 ") && text.ends_with("hello\n") {
        Ok(())
    } else {
        Err(text)
    }
}

/// The descriptors the flood needs here, or a skip.
fn enough_descriptors(need: u64) -> bool {
    match iolab_sys::raise_nofile_limit() {
        Ok((soft, _)) if soft >= need => true,
        got => {
            iolab_testkit::skip(
                "a connection flood",
                &format!("RLIMIT_NOFILE {got:?} is below the {need} descriptors it needs"),
            );
            false
        }
    }
}

/// Regression (issue 33): with every slot taken by half-sent requests, silent connections
/// and slowloris trickles, normal clients were answered 503 until the idle timeout freed
/// slots (48 of 72 fetches); now the waiting connections are evicted to make room and every
/// fetch during the flood is answered.
#[test]
fn serve_a_flood_of_half_requests_silent_and_trickling_connections_leaves_clients_served() {
    const HALF: usize = 2000;
    const SILENT: usize = 500;
    const TRICKLES: usize = 20;
    if !enough_descriptors((HALF + SILENT + TRICKLES + 200) as u64) {
        return;
    }
    let d = dir("flood");
    for net in ["epoll", "auto"] {
        // The default limit (1024 connections), the flood over twice that.
        let (p, a) = serve(&d, &["--threads", "2", "--net", net]);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Slowloris: a byte of a head every 100 ms, each on its own connection.
        let trickles: Vec<_> = (0..TRICKLES)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let Ok(mut c) = TcpStream::connect(a) else {
                        return;
                    };
                    let head = b"GET /a.txt HTTP/1.1\r\nHost: t\r\nX-a: ";
                    for k in 0.. {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            return;
                        }
                        let b = head.get(k).copied().unwrap_or(b'a');
                        if c.write_all(&[b]).is_err() {
                            // Closed by the server: come back, as an attacker would.
                            match TcpStream::connect(a) {
                                Ok(n) => c = n,
                                Err(_) => return,
                            }
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
            })
            .collect();
        let mut held = Vec::with_capacity(HALF + SILENT);
        let mut fetches = 0;
        for k in 0..HALF + SILENT {
            // A client that cannot connect (the accept queue full) is not what is tested.
            let Ok(mut c) = TcpStream::connect(a) else {
                continue;
            };
            if k < HALF {
                let _ = c.write_all(b"GET /a.txt HTTP/1.1\r\nHo");
            }
            held.push(c);
            if k % 100 == 99 {
                fetches += 1;
                if let Err(e) = served(a) {
                    panic!(
                        "--net {net}: fetch {fetches} after {} flood connections: {e}",
                        k + 1
                    );
                }
            }
        }
        // The flood in place: normal clients still served, one after another.
        for f in 0..20 {
            if let Err(e) = served(a) {
                panic!("--net {net}: fetch {f} with the flood in place: {e}");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in trickles {
            let _ = t.join();
        }
        drop(held);
        drop(p);
    }
}

/// Sends one GET on a kept connection and reads its response (Content-Length framed).
fn get_on(c: &mut TcpStream) -> Result<String, String> {
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    while !got.ends_with(b"hello\n") {
        match c.read(&mut b) {
            Ok(0) => return Err(format!("closed after {got:?}")),
            Ok(n) => got.extend_from_slice(&b[..n]),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Ok(String::from_utf8_lossy(&got).into_owned())
}

/// True when the server has closed `c` (end of stream or reset) within the hang guard.
fn closed_by_server(c: &mut TcpStream, within: Duration) -> bool {
    let _ = c.set_read_timeout(Some(within));
    let mut b = [0u8; 256];
    loop {
        match c.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

/// With every slot taken (--max-connections 4), a new client is served by evicting the
/// connection nearest its deadline: the half-sent heads first, then the oldest idle
/// keep-alive connection; the others stay served.
#[test]
fn serve_full_slots_evict_half_sent_heads_first_then_the_oldest_idle_connection() {
    let d = dir("evict");
    for net in ["epoll", "auto"] {
        let (p, a) = serve(
            &d,
            &["--threads", "1", "--max-connections", "4", "--net", net],
        );
        let mut kept: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(a).unwrap()).collect();
        for c in &mut kept {
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            get_on(c).unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut halves: Vec<TcpStream> = (0..2)
            .map(|_| {
                let mut c = TcpStream::connect(a).unwrap();
                c.write_all(b"GET /a.txt HTTP/1.1\r\nHo").unwrap();
                c
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        // Every slot taken: two new clients take the half-sent ones' slots.
        for f in 0..2 {
            if let Err(e) = served(a) {
                panic!("--net {net}: client {f}: {e}");
            }
        }
        for (k, c) in halves.iter_mut().enumerate() {
            assert!(
                closed_by_server(c, Duration::from_secs(5)),
                "--net {net}: half-sent connection {k} was not evicted"
            );
        }
        // The idle keep-alive connections were left alone: both still served.
        for (k, c) in kept.iter_mut().enumerate() {
            if let Err(e) = get_on(c) {
                panic!(
                    "--net {net}: kept connection {k} was evicted before the half-sent ones: {e}"
                );
            }
        }
        // Two slots free, two taken by fresh new clients: the oldest kept one goes next.
        let mut fresh: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(a).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(200));
        if let Err(e) = served(a) {
            panic!("--net {net}: a client with the slots all idle: {e}");
        }
        assert!(
            closed_by_server(&mut kept[0], Duration::from_secs(5)),
            "--net {net}: the oldest idle connection was not the one evicted"
        );
        for c in &mut fresh {
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            if let Err(e) = get_on(c) {
                panic!("--net {net}: a newer connection was evicted before the oldest: {e}");
            }
        }
        drop(p);
    }
}

/// Regression: a head trickled a byte at a time kept its connection for the whole idle
/// timeout (here a minute); below --min-rate it is closed after the head's short grace.
#[test]
fn serve_a_trickled_head_below_min_rate_is_closed() {
    let d = dir("trickle");
    for net in ["epoll", "auto"] {
        let (p, a) = serve(&d, &["--idle-timeout", "60s", "--net", net]);
        let mut c = TcpStream::connect(a).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let head =
            b"GET /a.txt HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let mut closed = false;
        // A byte every 300 ms for at most 15 s: far below the default 500 bytes a second.
        for &b in head.iter().cycle().take(50) {
            if c.write_all(&[b]).is_err() || closed_by_server(&mut c, Duration::from_millis(300)) {
                closed = true;
                break;
            }
        }
        assert!(closed, "--net {net}: a trickled head kept its connection");
        // A normal client is still served.
        served(a).unwrap();
        drop(p);
    }
}

/// Regression (issue 33): after SIGTERM a client reading 4 KiB every 10 ms kept the server
/// alive for as long as the download took; now the response gets --shutdown-grace, then the
/// connection is closed and the process exits 0.
#[test]
fn serve_sigterm_with_a_slow_reader_exits_after_the_grace() {
    let d = dir("grace");
    std::fs::write(d.join("big.bin"), vec![7u8; 64 << 20]).unwrap();
    // The option on one path, the default grace (5 s) on the other.
    let runs: [&[&str]; 2] = [
        &["--net", "epoll", "--shutdown-grace", "1s"],
        &["--net", "auto"],
    ];
    for args in runs {
        let net = args[1];
        let (mut p, a) = serve(&d, args);
        let mut c = TcpStream::connect(a).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let reader = std::thread::spawn(move || {
            // 400 KB/s: the 64 MiB would take minutes.
            let mut b = [0u8; 4096];
            let mut total = 0u64;
            loop {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n as u64,
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        iolab_sys::terminate(p.0.id()).unwrap();
        // The hang guard: far above the grace, far below the download.
        let st = wait_exit(&mut p, Duration::from_secs(20));
        assert!(st.success(), "--net {net}: {st:?}");
        let mut err = String::new();
        if let Some(mut e) = p.0.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        assert!(err.contains("SIGTERM: stopped after"), "{err}");
        // The client sees its connection end, short of the whole body.
        let total = reader.join().unwrap();
        assert!(total < 64 << 20, "--net {net}: the whole body went");
    }
}

#[test]
fn serve_help_lists_the_flood_and_shutdown_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for opt in ["--min-rate", "--shutdown-grace", "--max-connections"] {
        assert!(text.contains(opt), "--help does not list {opt}: {text}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["serve", ".", "--shutdown-grace", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad duration 'soon'"), "{err}");
}
