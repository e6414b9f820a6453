//! Static HTTP/1.1 file server on the iolab engine layer.
//!
//! One event loop per thread, on an io_uring socket ring where the kernel allows it
//! (`NetMode`: multishot recv into provided buffers, small responses sent on the ring, one
//! io_uring_enter per turn of the loop) or on epoll (edge-triggered; the fallback where
//! io_uring is blocked). Listeners are shared, each wake-up taking one connection so that the
//! threads share them. Small files are read through an [`iolab_engine::Engine`] (io_uring by
//! default) into an owned buffer and sent with their head in one message; larger files go
//! with `sendfile`, the head sent first with MSG_MORE so head and body share segments without
//! TCP_CORK, and TCP_NODELAY so the last segment never waits for an ACK. Paths are jailed twice:
//! by their bytes ([`path::jail`]) and by the kernel (openat2 RESOLVE_BENEATH).
#![forbid(unsafe_code)]

mod blocking;
mod cache;
mod conn;
pub mod date;
pub mod http;
mod listing;
mod log;
pub mod path;
pub mod range;
pub mod route;
mod run;
mod worker;

pub use run::{listen_addrs, run_until_signal, Stopped};

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_engine::EngineKind;
use iolab_sys::net::{self, EventFd};

/// Files up to this size are read through the engine into a buffer and sent with their head
/// in one call; larger ones go with sendfile.
pub const SMALL_FILE: u64 = 32 * 1024;

/// A request head's first bytes start this long a window (at most `idle_timeout`) that its
/// later bytes extend at `min_rate` (one second per `min_rate` bytes): mod_reqtimeout's
/// header=2-,MinRate=500 shape, so a trickle of a byte now and then is closed in seconds.
pub const HEAD_GRACE: Duration = Duration::from_secs(2);

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOpts {
    pub root: PathBuf,
    /// Every address to listen on (each thread accepts on all of them).
    pub listen: Vec<SocketAddr>,
    /// Event-loop threads.
    pub threads: usize,
    /// The engine that reads small files: io_uring, libaio (with O_DIRECT) or psync.
    pub engine: EngineKind,
    /// Common log format lines go here when set.
    pub access_log: Option<PathBuf>,
    /// The combined log format (with Referer and User-Agent) rather than the common one.
    pub log_combined: bool,
    /// Serve names that start with a dot.
    pub dotfiles: bool,
    /// An HTML index for directories without index.html (else 403).
    pub dir_listing: bool,
    /// A request head must arrive complete within this time of the connection becoming idle
    /// (so one byte a minute does not keep a connection), and a response that makes no
    /// progress for this long is abandoned.
    pub idle_timeout: Duration,
    /// A request head in progress must keep arriving at this many bytes a second at least
    /// (after [`HEAD_GRACE`]), as Apache's mod_reqtimeout MinRate; 0: only `idle_timeout`.
    pub min_rate: u64,
    /// After a stop, responses in flight get this long to finish; then every connection is
    /// closed and the threads end, whatever they were waiting for.
    pub shutdown_grace: Duration,
    /// Open connections at most, over all threads. When every slot is taken, the connections
    /// waiting for a request head that are nearest their deadline (silent and idle keep-alive
    /// ones, the slowest half-sent heads) are closed to make room; 503 when none is.
    pub max_connections: usize,
    /// Largest request head (request line and fields) in bytes: 414/431 beyond.
    pub max_header_bytes: usize,
    /// How sockets are waited on and read: epoll, or an io_uring ring.
    pub net: NetMode,
}

/// The network path (`--net`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetMode {
    /// epoll, edge-triggered, with recv and accept4 calls.
    Epoll,
    /// io_uring: multishot accept and recv into provided buffers, one enter per loop turn;
    /// refused at start where the kernel has no such ring.
    IoUring,
    /// io_uring where the kernel allows it, else epoll (seccomp, io_uring_disabled, old kernel).
    Auto,
}

impl NetMode {
    pub const NAMES: [(&'static str, NetMode); 3] = [
        ("epoll", NetMode::Epoll),
        ("io_uring", NetMode::IoUring),
        ("auto", NetMode::Auto),
    ];

    pub fn from_name(s: &str) -> Option<NetMode> {
        Self::NAMES.iter().find(|n| n.0 == s).map(|n| n.1)
    }
}

impl ServeOpts {
    /// Defaults: 127.0.0.1:8080, one thread per core, io_uring for files and (where the kernel
    /// allows it) for sockets, no log, 10 s, 500 bytes/s, a 5 s grace, 1024, 16 KiB.
    pub fn new(root: &Path) -> ServeOpts {
        ServeOpts {
            root: root.to_path_buf(),
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 8080))],
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            engine: EngineKind::IoUring,
            access_log: None,
            log_combined: false,
            dotfiles: false,
            dir_listing: false,
            idle_timeout: Duration::from_secs(10),
            min_rate: 500,
            shutdown_grace: Duration::from_secs(5),
            max_connections: 1024,
            max_header_bytes: 16 * 1024,
            net: NetMode::Auto,
        }
    }
}

/// The engines `--engine` accepts.
pub const ENGINES: [EngineKind; 3] = [EngineKind::IoUring, EngineKind::Libaio, EngineKind::Psync];

/// State the threads share: the listener, the stop flag, its wake-up, and the connection count.
#[derive(Debug)]
pub(crate) struct Shared {
    pub listeners: Vec<TcpListener>,
    pub stop: AtomicBool,
    pub wake: EventFd,
    pub conns: AtomicUsize,
}

/// Stops a running server: no new connections; requests in flight finish; then the threads end.
#[derive(Clone, Debug)]
pub struct Shutdown(Arc<Shared>);

impl Shutdown {
    pub fn trigger(&self) {
        self.0.stop.store(true, Ordering::SeqCst);
        // Refuse new connections now, not when each thread next wakes: the descriptor stays
        // open (the threads still have it in their epoll), but the socket stops listening.
        for l in &self.0.listeners {
            let _ = net::stop_listening(l);
        }
        // Level-triggered: every thread's epoll sees it until the threads take it off.
        let _ = self.0.wake.notify();
    }
}

/// What a thread did, summed at the end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeStats {
    pub requests: u64,
    pub connections: u64,
    /// Connections closed to make room for new ones (see `ServeOpts::max_connections`).
    pub evicted: u64,
    /// Threads left behind by `join`: still not done a moment after the shutdown grace (a
    /// read that never returns, in a thread or in the kernel). The process may exit anyway.
    pub stuck: u64,
}

/// What `Server::join` allows the threads beyond the shutdown grace, to close their
/// connections and put their engines away.
const JOIN_MARGIN: Duration = Duration::from_secs(2);

/// Binds one listening socket, non-blocking, with a long backlog; the address it got.
fn listen(a: SocketAddr) -> Result<(TcpListener, SocketAddr), StartError> {
    let listener =
        TcpListener::bind(a).map_err(|e| StartError(format!("cannot listen on {a}: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| StartError(format!("listener {a}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| StartError(format!("listener {a}: {e}")))?;
    // A burst of connects must wait in the queue to be answered (503 if need be), not be
    // dropped by a full one. The kernel caps this at net.core.somaxconn.
    let _ = net::set_backlog(&listener, 4096);
    Ok((listener, bound))
}

/// A running server.
pub struct Server {
    addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<std::io::Result<ServeStats>>>,
    /// The threads run on io_uring rings rather than epoll.
    uring: bool,
    grace: Duration,
}

/// Why the server could not start.
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

impl Server {
    /// Binds, opens the root and the log, and starts the threads. Each thread opens its own
    /// engine (io_uring rings belong to the thread that uses them); an engine the kernel
    /// refuses is reported here, before anything is served.
    pub fn start(opts: &ServeOpts) -> Result<Server, StartError> {
        if !ENGINES.contains(&opts.engine) {
            return Err(StartError(format!(
                "engine {} cannot serve files (use io_uring, libaio or psync)",
                opts.engine
            )));
        }
        let site = path::Site::open(&opts.root, opts.dotfiles)
            .map_err(|e| StartError(format!("{}: {e}", opts.root.display())))?
            .with_listing(opts.dir_listing);
        if opts.listen.is_empty() {
            return Err(StartError("no address to listen on".into()));
        }
        let mut listeners = Vec::new();
        let mut addrs = Vec::new();
        for &a in &opts.listen {
            let (l, bound) = listen(a)?;
            listeners.push(l);
            addrs.push(bound);
        }
        let log = match &opts.access_log {
            Some(p) => {
                Some(Arc::new(log::open(p).map_err(|e| {
                    StartError(format!("access log {}: {e}", p.display()))
                })?))
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            listeners,
            stop: AtomicBool::new(false),
            wake: EventFd::new().map_err(|e| StartError(format!("eventfd: {e}")))?,
            conns: AtomicUsize::new(0),
        });
        let ctx = Arc::new(worker::Ctx {
            opts: opts.clone(),
            site: Arc::new(site),
            log,
            shared: shared.clone(),
        });
        let mut threads = Vec::new();
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..opts.threads.max(1) {
            let ctx = ctx.clone();
            let tx = tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("serve-{i}"))
                .spawn(move || worker::run(ctx, tx))
                .map_err(|e| StartError(format!("thread: {e}")))?;
            threads.push(t);
        }
        drop(tx);
        let mut server = Server {
            addrs,
            shared,
            threads,
            uring: false,
            grace: opts.shutdown_grace,
        };
        // Every thread says whether its engine and epoll came up.
        for _ in 0..server.threads.len() {
            match rx.recv() {
                Ok(Ok(uring)) => server.uring |= uring,
                Ok(Err(m)) => {
                    server.shutdown().trigger();
                    let _ = server.join();
                    return Err(StartError(m));
                }
                Err(_) => break,
            }
        }
        Ok(server)
    }

    /// The network path the threads run: "epoll" or "io_uring" (`NetMode::Auto` resolved).
    pub fn net_name(&self) -> &'static str {
        if self.uring {
            "io_uring"
        } else {
            "epoll"
        }
    }

    /// The first address actually bound (port 0 becomes the port the kernel chose).
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address bound, in the order of `ServeOpts::listen`.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// A handle that stops the server, usable from any thread.
    pub fn shutdown(&self) -> Shutdown {
        Shutdown(self.shared.clone())
    }

    /// Waits for every thread to end (after a shutdown) and sums what they did. A thread not
    /// done within the shutdown grace and a margin is left running (counted in
    /// `ServeStats::stuck`): one stuck in a read that never returns cannot be joined, and
    /// must not keep the process from exiting.
    pub fn join(self) -> std::io::Result<ServeStats> {
        let mut total = ServeStats::default();
        let mut first_err = None;
        // The grace counts from the stop (or from here, for a stop already made).
        let mut until = None;
        let mut threads = self.threads;
        while !threads.iter().all(|t| t.is_finished()) {
            if self.shared.stop.load(Ordering::SeqCst) {
                let u = *until.get_or_insert_with(|| Instant::now() + self.grace + JOIN_MARGIN);
                if Instant::now() >= u {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for t in threads.drain(..) {
            if !t.is_finished() {
                total.stuck += 1;
                continue;
            }
            match t.join() {
                Ok(Ok(s)) => {
                    total.requests += s.requests;
                    total.connections += s.connections;
                    total.evicted += s.evicted;
                }
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(std::io::Error::other("a server thread panicked"));
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(total),
        }
    }
}

/// The head of the response the server gives to the raw bytes of one request, looking files up
/// beneath `site` (no cache, no body). The request-handling path the fuzz test drives: parse,
/// jail, resolve, conditionals and ranges, head.
pub fn response_head(site: &path::Site, raw: &[u8], max_header: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let date = b"Thu, 01 Jan 1970 00:00:00 GMT";
    let req = match http::parse(raw, max_header) {
        http::Parsed::Partial => return None,
        http::Parsed::Error(s) => {
            route::error(&mut out, date, s, 1, false);
            return Some(out);
        }
        http::Parsed::Request(r) => r,
    };
    let mut rel = Vec::new();
    let mut cbuf = Vec::new();
    let meta;
    let found = match path::jail(req.target, site.dotfiles, &mut rel) {
        Err(s) => route::Lookup::Status(s),
        Ok(j) => match path::resolve(site, &rel, j.trailing, &mut cbuf) {
            path::Found::File(_, ident, name, _) => {
                meta = route::Meta::new(ident, &name);
                route::Lookup::File(&meta)
            }
            path::Found::Listing(p) => route::Lookup::Listing(p.len() as u64),
            path::Found::Redirect => route::Lookup::Redirect(j),
            path::Found::Status(s) => route::Lookup::Status(s),
        },
    };
    let mut mp = route::Multipart {
        allowed: true,
        ..route::Multipart::default()
    };
    route::reply_with(&mut out, date, &req, found, true, &mut mp);
    Some(out)
}
