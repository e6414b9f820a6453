//! Connections coming and going: accepting (one per wake-up), taking a socket into a slot,
//! refusing over the limit, closing, and the stop and idle scans.

use std::io::{self, IoSlice};
use std::net::TcpStream;
use std::sync::atomic::Ordering;

use iolab_engine::NetOp;
use iolab_sys::net;

use super::{uring, Worker, LISTENER, MAX_REFUSED, REFUSED_LINGER_NS};
use crate::conn::{drain, Conn, Out, Pending, State};
use crate::route::{self, Body};

impl Worker {
    /// One connection per wake-up: the listener is level-triggered, so the rest wake this
    /// thread again or (EPOLLEXCLUSIVE) another one. Taking a whole burst here gave one
    /// thread every connection of a client that connects all at once (wrk: 16 to one thread,
    /// none to the other).
    pub(super) fn accept(&mut self, k: usize) {
        self.accept_up_to(k, 1);
    }

    /// Accepts at most `max` of the connections waiting on listener `k`.
    pub(super) fn accept_up_to(&mut self, k: usize, max: usize) {
        for _ in 0..max {
            let sock = match net::accept_nonblocking(&self.ctx.shared.listeners[k]) {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                    self.out_of_descriptors();
                    return;
                }
                // Stopped listening (shutdown): nothing more will come.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return,
                Err(_) => continue,
            };
            self.admit(sock);
        }
    }

    /// An accepted connection: served, in a slot made by evicting others if need be (see
    /// `evict`), or refused when every connection is busy answering.
    pub(super) fn admit(&mut self, sock: TcpStream) {
        let ctx = self.ctx.clone();
        let (shared, max) = (&ctx.shared, ctx.opts.max_connections);
        let take_slot = || {
            let ok = shared.conns.fetch_add(1, Ordering::SeqCst) < max;
            if !ok {
                shared.conns.fetch_sub(1, Ordering::SeqCst);
            }
            ok
        };
        if take_slot() {
            self.adopt(sock);
            return;
        }
        // (Another thread may take the room made here first.)
        if self.evict() > 0 && take_slot() {
            self.adopt(sock);
        } else {
            self.refuse(sock);
        }
    }

    /// Every slot is taken: closes this thread's connections that wait for a request head
    /// and are nearest their deadline (`Conn::head_deadline`: silent and idle keep-alive
    /// connections oldest first, half-sent heads slowest first; a new client last), a few
    /// at a time (a thirty-second of them, 1 to 32) so that a flood does not scan the
    /// slots on every accept. Connections answering are never evicted. How many were closed.
    ///
    /// nginx closes idle keep-alive connections when it runs out (`ngx_drain_connections`);
    /// this goes on to the incomplete heads, so that connections that never finish a
    /// request cannot keep the clients that do out.
    pub(super) fn evict(&mut self) -> usize {
        let (rate, grace) = (self.ctx.opts.min_rate, self.head_grace_ns);
        let mut waiting = std::mem::take(&mut self.victims);
        waiting.clear();
        waiting.extend(self.conns.iter().enumerate().filter_map(|(i, c)| {
            let idle = c.sock.is_some() && c.state == State::Idle && !c.in_ring;
            idle.then(|| (c.head_deadline(rate, grace), i))
        }));
        let n = (self.live / 32).clamp(1, 32).min(waiting.len());
        if n > 0 && n < waiting.len() {
            waiting.select_nth_unstable(n - 1);
        }
        for &(_, i) in &waiting[..n] {
            self.close(i);
        }
        self.stats.evicted += n as u64;
        self.victims = waiting;
        n
    }

    /// Out of descriptors: free some (the refused connections lingering, the connections
    /// nearest their deadline) for the next wake-up, or, with none to free, stop listening for
    /// a moment rather than spin on a listener that stays ready.
    pub(super) fn out_of_descriptors(&mut self) {
        let freed = self.refused.len();
        self.refused.clear();
        if freed + self.evict() == 0 {
            self.pause_accepting();
        }
    }

    /// Stop listening for a moment.
    pub(super) fn pause_accepting(&mut self) {
        self.unlisten();
        self.resume_accept = self.now + 100_000_000;
    }

    /// Takes an accepted connection into a free slot and starts reading from it.
    pub(super) fn adopt(&mut self, sock: TcpStream) {
        let _ = sock.set_nodelay(true);
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.conns.push(Conn::new());
                self.conns.len() - 1
            }
        };
        let c = &mut self.conns[i];
        c.gen = c.gen.wrapping_add(1);
        let tok = (u64::from(c.gen) << 32) | i as u64;
        let ev = net::EPOLLIN | net::EPOLLOUT | net::EPOLLRDHUP | net::EPOLLET;
        let armed = match self.net.as_mut() {
            Some(r) => r.recv_multi(&sock, uring::tag(tok)).is_ok(),
            None => self.ep.add(&sock, ev, tok).is_ok(),
        };
        if !armed {
            self.ctx.shared.conns.fetch_sub(1, Ordering::SeqCst);
            self.free.push(i);
            return;
        }
        c.inbox.clear();
        c.inbox_pos = 0;
        c.fed = self.net.is_some();
        c.peer_closed = false;
        if c.rbuf.len() != self.ctx.opts.max_header_bytes {
            c.rbuf = vec![0; self.ctx.opts.max_header_bytes.max(64)];
        }
        c.peer = if self.log.is_some() {
            sock.peer_addr().ok().map(|a| a.ip())
        } else {
            None
        };
        c.sock = Some(sock);
        c.mss = 0;
        c.rstart = 0;
        c.rend = 0;
        c.state = State::Idle;
        c.keep = true;
        c.readable = true;
        c.hup = false;
        c.eof = false;
        c.out = Out::None;
        c.deadline = self.now + self.idle_ns;
        c.head_start = 0;
        self.live += 1;
        self.stats.connections += 1;
    }

    pub(super) fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.sock.is_none() {
            return;
        }
        if let (Some(r), Some(s)) = (self.net.as_mut(), c.sock.take()) {
            uring::forget(r, (u64::from(c.gen) << 32) | i as u64, s);
        }
        c.sock = None;
        c.gen = c.gen.wrapping_add(1);
        if let Out::Buf { buf, .. } = std::mem::replace(&mut c.out, Out::None) {
            self.bufs.push(buf);
        }
        if let Pending::Read { id, .. } = std::mem::replace(&mut c.pending, Pending::None) {
            self.cache.end(id, &mut *self.eng);
        }
        c.resolved = None;
        c.state = State::Idle;
        self.free.push(i);
        self.live -= 1;
        self.ctx.shared.conns.fetch_sub(1, Ordering::SeqCst);
    }

    /// Over the connection limit: a short 503 with `Connection: close` (the socket is new, so
    /// it has room), then a FIN. The socket is kept, its input read and dropped, until the
    /// client closes or a second passes: closing with the request unread would send a reset,
    /// which can make the client lose the 503.
    pub(super) fn refuse(&mut self, sock: TcpStream) {
        let out = &mut self.refusal;
        out.clear();
        let rep = route::error(out, &self.date, 503, 1, false);
        if let Body::Static(b) = rep.body {
            out.extend_from_slice(b);
        }
        let _ = net::send_vectored(&sock, &[IoSlice::new(out)], false);
        let _ = sock.shutdown(std::net::Shutdown::Write);
        if drain(&sock) {
            return;
        }
        if self.refused.len() >= MAX_REFUSED {
            // Oldest first: it has had the longest to read its answer.
            self.refused.remove(0);
        }
        self.refused.push((sock, self.now + REFUSED_LINGER_NS));
    }

    /// Stop accepting; close what is idle; let the rest finish their response and close.
    pub(super) fn begin_stop(&mut self) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        let grace = self
            .ctx
            .opts
            .shutdown_grace
            .as_nanos()
            .min(u64::MAX as u128) as u64;
        self.stop_deadline = self.now.saturating_add(grace);
        self.unlisten();
        let _ = self.ep.delete(&self.ctx.shared.wake);
        for i in 0..self.conns.len() {
            let c = &mut self.conns[i];
            if c.sock.is_none() {
                continue;
            }
            c.keep = false;
            if c.state == State::Idle {
                self.close(i);
            }
        }
    }

    /// Whether a stopping thread is done: nothing left in flight, or the grace is over (then
    /// every connection is closed now; an engine read that never returns is left behind, and
    /// `Server::join` does not wait for it).
    pub(super) fn stopped(&mut self) -> bool {
        if !self.stopping {
            return false;
        }
        if self.live == 0 && self.eng.in_flight() == 0 {
            return true;
        }
        if self.now < self.stop_deadline {
            return false;
        }
        for i in 0..self.conns.len() {
            self.close(i);
        }
        true
    }

    /// Closes connections past their deadline; resumes accepting after a descriptor shortage.
    pub(super) fn scan(&mut self) {
        let now = self.now;
        self.refused
            .retain(|(s, deadline)| now < *deadline && !drain(s));
        let (rate, grace) = (self.ctx.opts.min_rate, self.head_grace_ns);
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let due = match c.state {
                State::Reading => continue,
                State::Idle => c.head_deadline(rate, grace),
                State::Waiting | State::Sending => c.deadline,
            };
            if c.sock.is_some() && self.now > due {
                self.close(i);
            }
        }
        if !self.listening && !self.stopping && self.now >= self.resume_accept {
            self.listening = true;
            for k in 0..self.ctx.shared.listeners.len() {
                let l = &self.ctx.shared.listeners[k];
                let ev = net::EPOLLIN | net::EPOLLEXCLUSIVE;
                let _ = if self.net.is_some() {
                    self.listen_ring(k)
                } else {
                    self.ep.add(l, ev, LISTENER - k as u64)
                };
            }
        }
    }

    /// Takes the listeners out of this thread's epoll.
    pub(super) fn unlisten(&mut self) {
        if self.listening {
            for (k, l) in self.ctx.shared.listeners.iter().enumerate() {
                let _ = match self.net.as_mut() {
                    // Whichever is armed (see `listen_ring`); the other's cancel finds nothing.
                    Some(r) => r
                        .cancel(NetOp::Listen, k as u64)
                        .and_then(|_| r.cancel(NetOp::Accept, k as u64)),
                    None => self.ep.delete(l),
                };
            }
            self.listening = false;
        }
    }
}
