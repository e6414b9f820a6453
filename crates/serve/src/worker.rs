//! One event loop: a thread's connections, its engine, its file cache and its log buffer.
//!
//! Sockets are registered once, edge-triggered for both directions, so a request costs no
//! epoll_ctl. A read that returns less than the room offered has drained the socket (the next
//! byte will raise a new edge), so a request costs one recv, not one plus an EAGAIN.
//! Engine reads are queued while events are handled and committed once per turn of the loop.

use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use iolab_engine::{Buf, Done, Engine, EngineOpts, NetRing};
use iolab_sys::monotonic_ns;
use iolab_sys::net::{self, Epoll, EpollEvents};

use crate::blocking::{Job, Outcome, Pool};
use crate::cache::{Cache, Got};
use crate::conn::{fill, flush, start, Conn, Flush, Out, Pending, State};
use crate::http::{self, Method, Parsed};
use crate::log::LogBuf;
use crate::path::{self, Site};
use crate::route::{self, Lookup};
use crate::{ServeOpts, ServeStats, Shared};

mod answer;
mod conns;
mod reads;
mod uring;

use answer::{file_reply, note, Answer};

/// What every thread shares.
pub struct Ctx {
    pub opts: ServeOpts,
    pub site: Arc<Site>,
    pub log: Option<Arc<File>>,
    pub shared: Arc<Shared>,
}

const WAKE: u64 = u64::MAX - 1;
/// The helpers have answers.
const HELPERS: u64 = u64::MAX - 2;
/// Listener `k` has token `LISTENER - k` (connections' tokens are far below: slot indices are
/// small).
const LISTENER: u64 = u64::MAX - 3;
/// Engine reads in flight per thread.
const DEPTH: u32 = 128;
/// Refused connections (503) waiting for their client to close, per thread.
const MAX_REFUSED: usize = 1024;
/// How long a refused connection is given to close before it is dropped anyway.
const REFUSED_LINGER_NS: u64 = 1_000_000_000;
/// O_DIRECT reads are whole blocks.
const DIRECT_ALIGN: u64 = 4096;

struct Worker {
    ctx: Arc<Ctx>,
    ep: Epoll,
    conns: Vec<Conn>,
    free: Vec<usize>,
    live: usize,
    eng: Box<dyn Engine>,
    done: Vec<Done>,
    bufs: Vec<Buf>,
    cache: Cache,
    pool: Pool,
    outcomes: Vec<(u64, Outcome)>,
    now: u64,
    wall: i64,
    date: [u8; 29],
    log: Option<LogBuf>,
    rel: Vec<u8>,
    stats: ServeStats,
    /// Refused connections being given time to close (see `refuse`), with their deadlines.
    refused: Vec<(TcpStream, u64)>,
    refusal: Vec<u8>,
    /// Scratch for `evict`.
    victims: Vec<(u64, usize)>,
    stopping: bool,
    /// When stopping: the end of the shutdown grace, after which every connection closes.
    stop_deadline: u64,
    listening: bool,
    resume_accept: u64,
    idle_ns: u64,
    /// `HEAD_GRACE` capped at the idle timeout.
    head_grace_ns: u64,
    /// The io_uring network path (`--net io_uring`); epoll when `None`.
    net: Option<NetRing>,
    /// Connections (ring tags) whose receive is stopped: their unread input is over the limit.
    paused: Vec<u64>,
    /// Sends queued this turn whose completion asks for nothing soon (see `send_ring`).
    quiet_sends: u32,
    /// Connections that sent a slice of a body and have more (Flush::Yield), with their
    /// generation: taken up again after the events in hand, one slice each a turn.
    yielded: Vec<(usize, u32)>,
    /// The ring completion being handled is the last of its turn: what it queues goes to the
    /// kernel with nothing else unless the ring already holds entries (see `heads_on_ring`).
    last_of_turn: bool,
}

/// The thread's body: set up, report to `Server::start`, serve until stopped.
pub fn run(ctx: Arc<Ctx>, ready: Sender<Result<bool, String>>) -> io::Result<ServeStats> {
    let mut w = match Worker::new(ctx) {
        Ok(w) => w,
        Err(m) => {
            let _ = ready.send(Err(m));
            return Ok(ServeStats::default());
        }
    };
    let _ = ready.send(Ok(w.net.is_some()));
    drop(ready);
    let r = if w.net.is_some() {
        w.serve_uring()
    } else {
        w.serve()
    };
    w.cache.close_all(&mut *w.eng);
    r.map(|_| w.stats)
}

fn wall_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Worker {
    fn new(ctx: Arc<Ctx>) -> Result<Worker, String> {
        let kind = ctx.opts.engine;
        let eng = iolab_engine::open(&EngineOpts::new(kind, DEPTH))
            .map_err(|e| format!("engine {kind}: {e}"))?;
        // An engine whose submission blocks on a buffered file (libaio) reads small files with
        // O_DIRECT too, or every cached file's read would block the event loop.
        let direct = eng.caps().buffered_submit_blocks;
        let ep = Epoll::new().map_err(|e| format!("epoll: {e}"))?;
        for (k, l) in ctx.shared.listeners.iter().enumerate() {
            ep.add(l, net::EPOLLIN | net::EPOLLEXCLUSIVE, LISTENER - k as u64)
                .map_err(|e| format!("epoll: {e}"))?;
        }
        ep.add(&ctx.shared.wake, net::EPOLLIN, WAKE)
            .map_err(|e| format!("epoll: {e}"))?;
        let pool = Pool::new(ctx.site.clone()).map_err(|e| format!("eventfd: {e}"))?;
        ep.add(pool.wake(), net::EPOLLIN, HELPERS)
            .map_err(|e| format!("epoll: {e}"))?;
        let log = ctx.log.clone().map(LogBuf::new);
        let idle_ns = ctx.opts.idle_timeout.as_nanos().min(u64::MAX as u128) as u64;
        let net = uring::open(ctx.opts.net)?;
        let mut w = Worker {
            ep,
            conns: Vec::new(),
            free: Vec::new(),
            live: 0,
            eng,
            done: Vec::new(),
            bufs: Vec::new(),
            cache: Cache::new(direct),
            pool,
            outcomes: Vec::new(),
            now: monotonic_ns(),
            wall: 0,
            date: [b' '; 29],
            log,
            rel: Vec::new(),
            stats: ServeStats::default(),
            refused: Vec::new(),
            refusal: Vec::with_capacity(256),
            victims: Vec::new(),
            stopping: false,
            stop_deadline: u64::MAX,
            listening: true,
            resume_accept: 0,
            idle_ns,
            head_grace_ns: (crate::HEAD_GRACE.as_nanos() as u64).min(idle_ns),
            net,
            paused: Vec::new(),
            quiet_sends: 0,
            yielded: Vec::new(),
            last_of_turn: false,
            ctx,
        };
        w.arm()?;
        w.tick();
        Ok(w)
    }

    /// Updates the clocks and, once a second, the Date header and the log.
    fn tick(&mut self) {
        self.now = monotonic_ns();
        let wall = wall_secs();
        if wall != self.wall {
            self.wall = wall;
            let mut d = Vec::with_capacity(29);
            crate::date::http_date(wall, &mut d);
            let n = d.len().min(29);
            self.date[..n].copy_from_slice(&d[..n]);
            if let Some(l) = self.log.as_mut() {
                l.tick(wall, false);
            }
        }
    }

    fn serve(&mut self) -> io::Result<()> {
        let mut events = EpollEvents::with_capacity(256);
        let scan_every = (self.idle_ns / 8).clamp(10_000_000, 250_000_000);
        let mut next_scan = self.now + scan_every;
        loop {
            if self.ctx.shared.stop.load(Ordering::SeqCst) && !self.stopping {
                self.begin_stop();
            }
            if self.stopped() {
                return Ok(());
            }
            let timeout = if self.eng.in_flight() > 0 || !self.yielded.is_empty() {
                0
            } else {
                (next_scan.saturating_sub(self.now) / 1_000_000 + 1) as i32
            };
            let n = self.ep.wait(&mut events, timeout)?;
            self.tick();
            for k in 0..n {
                let (bits, data) = events.get(k);
                let listeners = self.ctx.shared.listeners.len() as u64;
                match data {
                    WAKE => self.begin_stop(),
                    HELPERS => self.helped(),
                    t if t <= LISTENER && LISTENER - t < listeners => {
                        self.accept((LISTENER - t) as usize)
                    }
                    tok => {
                        let i = (tok & 0xffff_ffff) as usize;
                        let gen = (tok >> 32) as u32;
                        let Some(c) = self.conns.get_mut(i) else {
                            continue;
                        };
                        if c.gen != gen || c.sock.is_none() {
                            continue;
                        }
                        if bits & (net::EPOLLRDHUP | net::EPOLLHUP | net::EPOLLERR) != 0 {
                            c.hup = true;
                            c.readable = true;
                        } else if bits & net::EPOLLIN != 0 {
                            c.readable = true;
                        }
                        // Reset or gone both ways while its file is read or opened: nobody
                        // is left to answer, so the slot goes now (the read's or the
                        // helper's answer finds the connection's generation moved on).
                        if bits & (net::EPOLLHUP | net::EPOLLERR) != 0
                            && matches!(c.state, State::Waiting | State::Reading)
                        {
                            self.close(i);
                            continue;
                        }
                        self.process(i);
                    }
                }
            }
            self.resume_yielded();
            if self.eng.in_flight() > 0 {
                self.reap(n == 0)?;
            }
            if self.now >= next_scan {
                next_scan = self.now + scan_every;
                self.scan();
            }
        }
    }

    /// The connections that gave way after a slice of their body send their next one.
    fn resume_yielded(&mut self) {
        if self.yielded.is_empty() {
            return;
        }
        for (i, gen) in std::mem::take(&mut self.yielded) {
            let live = self
                .conns
                .get(i)
                .is_some_and(|c| c.gen == gen && c.sock.is_some());
            if live && self.conns[i].state == State::Sending {
                self.process(i);
            }
        }
    }

    /// Moves connection `i` on as far as it can go without blocking.
    fn process(&mut self, i: usize) {
        let heads_on_ring = self.heads_on_ring();
        loop {
            let c = &mut self.conns[i];
            if c.sock.is_none() {
                return;
            }
            match c.state {
                State::Reading | State::Waiting => return,
                State::Sending if c.in_ring => return,
                State::Sending => match flush(c, self.now + self.idle_ns, heads_on_ring) {
                    Ok(Flush::Done) => self.finish(i),
                    Ok(Flush::Ring) => {
                        self.send_ring(i, None);
                        return;
                    }
                    Ok(Flush::Wait) => {
                        self.wait_writable(i);
                        return;
                    }
                    Ok(Flush::Yield) => {
                        let gen = self.conns[i].gen;
                        self.yielded.push((i, gen));
                        return;
                    }
                    Ok(Flush::PageIn(off, len)) => {
                        let file = match &c.out {
                            Out::File { file, .. } | Out::Multi { file, .. } => file.clone(),
                            _ => return,
                        };
                        if !self.hand_over(i, Job::PageIn { file, off, len }, Pending::Send) {
                            // No helper to be had: send it from here, as before.
                            self.conns[i].paged = true;
                        }
                    }
                    Err(_) => {
                        self.close(i);
                        return;
                    }
                },
                State::Idle => {
                    if self.request(i) {
                        continue;
                    }
                    let c = &mut self.conns[i];
                    if c.head_start == 0 && c.rend > c.rstart {
                        c.head_start = self.now;
                    }
                    if c.eof || (self.stopping && c.rstart == c.rend) {
                        self.close(i);
                        return;
                    }
                    if !c.readable {
                        return;
                    }
                    if fill(c).is_err() {
                        self.close(i);
                        return;
                    }
                }
            }
        }
    }

    /// The response is out: log it, then wait for the next request or close.
    fn finish(&mut self, i: usize) {
        self.stats.requests += 1;
        let c = &mut self.conns[i];
        if let Some(l) = self.log.as_mut() {
            let [(r, referer), (a, agent)] = &c.log_fields;
            let combined = self.ctx.opts.log_combined.then_some((
                r.then_some(referer.as_slice()),
                a.then_some(agent.as_slice()),
            ));
            l.line(
                c.peer,
                self.wall,
                &c.request_line,
                c.status,
                c.body_sent,
                combined,
            );
        }
        if let Out::Buf { buf, .. } = std::mem::replace(&mut c.out, Out::None) {
            self.bufs.push(buf);
        }
        c.wbuf.clear();
        c.wpos = 0;
        c.paged = false;
        c.resident = false;
        if !c.keep || self.stopping {
            self.close(i);
            return;
        }
        c.state = State::Idle;
        c.deadline = self.now + self.idle_ns;
    }

    /// Parses and starts answering one buffered request. False when no whole head is buffered.
    fn request(&mut self, i: usize) -> bool {
        let max = self.ctx.opts.max_header_bytes;
        let c = &mut self.conns[i];
        if c.rstart == c.rend {
            return false;
        }
        let date = &self.date;
        let (rbuf, wbuf) = (&c.rbuf[c.rstart..c.rend], &mut c.wbuf);
        wbuf.clear();
        let req = match http::parse(rbuf, max) {
            Parsed::Partial => return false,
            Parsed::Error(s) => {
                refuse_head(c, date, s);
                return true;
            }
            Parsed::Request(r) => r,
        };
        // A whole head: the next one's clock starts with its first byte.
        c.head_start = 0;
        if self.log.is_some() {
            note(&mut c.request_line, &mut c.log_fields, &req);
        }
        let keep = !self.stopping;
        let mut ans = Answer::default();
        let rep = if req.method == Method::Other {
            route::reply(wbuf, date, &req, Lookup::Status(405), keep)
        } else {
            match path::jail(req.target, self.ctx.site.dotfiles, &mut self.rel) {
                Err(s) => route::reply(wbuf, date, &req, Lookup::Status(s), keep),
                Ok(j) => {
                    let got = match c.resolved.take() {
                        Some((found, d)) => {
                            self.cache
                                .install(&self.rel, found, d, &mut *self.eng, self.now)
                        }
                        None => match self.cache.fresh(&self.rel, self.now) {
                            Some(e) => Got::File(e),
                            None => {
                                let tok = (u64::from(c.gen) << 32) | i as u64;
                                if open_later(
                                    &self.pool,
                                    &mut self.cache,
                                    &self.rel,
                                    self.now,
                                    tok,
                                    j.trailing,
                                ) {
                                    c.state = State::Waiting;
                                    c.pending = Pending::Open;
                                    c.deadline = self.now + self.idle_ns;
                                    return true;
                                }
                                Got::Status(500)
                            }
                        },
                    };
                    match got {
                        Got::File(e) => {
                            ans.resident = e.resident(self.now);
                            file_reply(e, &req, wbuf, date, keep, &mut c.mp, &mut ans)
                        }
                        Got::Listing(page) => {
                            let len = page.len() as u64;
                            ans.listing = Some(page);
                            route::reply(wbuf, date, &req, Lookup::Listing(len), keep)
                        }
                        Got::Redirect => route::reply(wbuf, date, &req, Lookup::Redirect(j), keep),
                        Got::Status(s) => route::reply(wbuf, date, &req, Lookup::Status(s), keep),
                    }
                }
            }
        };
        c.rstart += req.len;
        if c.rstart == c.rend {
            c.rstart = 0;
            c.rend = 0;
        }
        self.dispatch(i, rep, ans);
        true
    }
}

/// Answers a request head that cannot be parsed with status `s` and closes after it; the rest
/// of the buffer goes unread, and the log line has `-` for the request.
fn refuse_head(c: &mut Conn, date: &[u8; 29], s: u16) {
    c.head_start = 0;
    let rep = route::error(&mut c.wbuf, date, s, 1, false);
    c.rstart = c.rend;
    c.request_line.clear();
    c.request_line.push(b'-');
    c.log_fields[0].0 = false;
    c.log_fields[1].0 = false;
    start(c, rep, None);
}

/// Opening may block: a helper opens `rel` (the buffered request's path; the caller marks the
/// connection waiting), and the request is answered again from the buffer with what it
/// found. False when no helper could take it.
fn open_later(
    pool: &Pool,
    cache: &mut Cache,
    rel: &[u8],
    now: u64,
    tok: u64,
    trailing: bool,
) -> bool {
    let job = Job::Resolve {
        rel: rel.to_vec(),
        trailing,
        direct: cache.direct(),
    };
    if !pool.submit(tok, job) {
        return false;
    }
    cache.revalidating(rel, now);
    true
}
