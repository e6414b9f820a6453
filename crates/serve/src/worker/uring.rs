//! The event loop on io_uring (`--net io_uring`): what arrives comes as completions of a
//! multishot recv per connection into the ring's provided buffers; a response's head and
//! buffered body go out as a sendmsg on the ring; everything a turn of the loop queued goes to
//! the kernel with the wait for the next completions, in one `io_uring_enter`. A small
//! response therefore costs no system call of its own. A larger file's head goes on the ring
//! too (MSG_MORE) where it shares the next enter with other entries, else by sendmsg (see
//! `heads_on_ring`), and its body then leaves with sendfile as on the epoll path, a full
//! socket waiting on a one-shot poll. A single thread accepts with a
//! multishot accept; several threads poll the listeners one shot and exclusively, then accept
//! with accept4, so that they share the connections (a multishot accept per thread let the
//! first thread take them all). The eventfds are multishot polls.

use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use iolab_engine::{NetDone, NetOp, NetRing, OutBody};

use super::Worker;
use crate::conn::State;
use crate::NetMode;

/// Submission entries per ring (completions: 16 times as many).
const RING_ENTRIES: u32 = 256;
/// Receive buffers per thread and their size: a request head usually fits one.
const RECV_BUFS: u16 = 256;
const RECV_BUF_SIZE: usize = 4096;
/// Poll tags of the two eventfds.
const WAKE: u64 = 0;
const HELPERS: u64 = 1;
/// Unread input a connection may hold before its receive is stopped (a client that sends
/// without reading its answers): four request heads' worth, at least 64 KiB.
const INBOX_MIN: usize = 64 * 1024;

/// A connection's token (generation << 32 | slot) as a ring tag (56 bits): the generation's
/// low 24 bits, enough to tell a slot's connections apart while a completion is in flight.
pub(super) fn tag(tok: u64) -> u64 {
    tok & ((1 << 56) - 1)
}

/// The ring for `mode`; `None` means epoll. `Auto` falls back to epoll where the kernel
/// refuses the ring (io_uring blocked by seccomp or a sysctl, or too old for multishot recv).
pub(super) fn open(mode: NetMode) -> Result<Option<NetRing>, String> {
    match mode {
        NetMode::Epoll => Ok(None),
        NetMode::IoUring => NetRing::new(RING_ENTRIES, RECV_BUFS, RECV_BUF_SIZE)
            .map(Some)
            .map_err(|e| format!("--net io_uring: {e} (--net epoll works without io_uring)")),
        NetMode::Auto => Ok(NetRing::new(RING_ENTRIES, RECV_BUFS, RECV_BUF_SIZE).ok()),
    }
}

/// Cancels what a closing connection has armed, and hands it to the kernel before the
/// descriptor goes (its number may be reused by the next accept at once); a send still
/// waiting for its linked read keeps the socket open until it is done.
pub(super) fn forget(r: &mut NetRing, tok: u64, sock: TcpStream) {
    let _ = r.cancel(NetOp::Recv, tag(tok));
    let _ = r.cancel(NetOp::PollOut, tag(tok));
    let _ = r.cancel(NetOp::Send, tag(tok));
    let _ = r.submit();
    r.close_after_send(tag(tok), sock);
}

impl Worker {
    /// Arms the listeners and eventfds on the ring (nothing for epoll, which `new` set up).
    pub(super) fn arm(&mut self) -> Result<(), String> {
        let Some(r) = self.net.as_mut() else {
            return Ok(());
        };
        let sh = &self.ctx.shared;
        let mut go = || -> io::Result<()> {
            r.poll_in(&sh.wake, WAKE)?;
            r.poll_in(self.pool.wake(), HELPERS)
        };
        go().map_err(|e| format!("--net io_uring: {e}"))?;
        for k in 0..self.ctx.shared.listeners.len() {
            self.listen_ring(k)
                .map_err(|e| format!("--net io_uring: {e}"))?;
        }
        let r = self.net.as_mut().ok_or("--net io_uring: no ring")?;
        r.submit().map_err(|e| format!("--net io_uring: {e}"))
    }

    /// Arms listener `k` on the ring. The only thread takes connections with a multishot
    /// accept (no system call of its own per connection); several threads each wait with an
    /// exclusive one-shot poll and accept one per wake-up, since a multishot accept per
    /// thread let the first thread to run take them all.
    pub(super) fn listen_ring(&mut self, k: usize) -> io::Result<()> {
        let only = self.ctx.opts.threads <= 1;
        let (Some(r), Some(l)) = (self.net.as_mut(), self.ctx.shared.listeners.get(k)) else {
            return Ok(());
        };
        if only {
            r.accept_multi(l, k as u64)
        } else {
            r.poll_listener(l, k as u64)
        }
    }

    /// Whether a file's head goes on the ring (`conn::flush`): yes where the ring's next
    /// enter carries other entries too (other completions of this turn still to handle, or
    /// entries already queued), so that the heads of a turn share one system call; no where
    /// it would carry the head alone (one connection): a sendmsg now, with the body's
    /// sendfile right after it, saves that enter and the turn that waits for its completion
    /// (64 KiB over one connection: 3 calls a response either way, one of them a plain
    /// sendmsg instead of an io_uring_enter, and one turn of the loop instead of two).
    pub(super) fn heads_on_ring(&self) -> bool {
        self.net
            .as_ref()
            .is_some_and(|r| !self.last_of_turn || r.queued() > 0)
    }

    /// Waits for the socket of connection `i` to take more (epoll's edge does it by itself).
    pub(super) fn wait_writable(&mut self, i: usize) {
        let c = &self.conns[i];
        let (Some(r), Some(s)) = (self.net.as_mut(), c.sock.as_ref()) else {
            return;
        };
        let tok = (u64::from(c.gen) << 32) | i as u64;
        if r.poll_out(s, tag(tok)).is_err() {
            self.close(i);
        }
    }

    pub(super) fn serve_uring(&mut self) -> io::Result<()> {
        let scan_every = (self.idle_ns / 8).clamp(10_000_000, 250_000_000);
        let mut next_scan = self.now + scan_every;
        let mut done = Vec::with_capacity(256);
        loop {
            if self.ctx.shared.stop.load(Ordering::SeqCst) && !self.stopping {
                self.begin_stop();
            }
            if self.stopped() {
                return Ok(());
            }
            // Engine reads in flight complete on the engine's own ring: look again at once.
            let timeout = if self.eng.in_flight() > 0 || !self.yielded.is_empty() {
                None
            } else {
                let ns = next_scan.saturating_sub(self.now).max(1_000_000);
                Some(Duration::from_nanos(ns))
            };
            let Some(r) = self.net.as_mut() else {
                return Ok(());
            };
            // The sends queued this turn complete as they are submitted (a full socket's
            // later); waiting for them and one more event costs one io_uring_enter, not two.
            r.wait_for(1 + std::mem::take(&mut self.quiet_sends), timeout)?;
            r.reap(&mut done);
            self.tick();
            let n = done.len();
            for (k, d) in done.drain(..).enumerate() {
                self.last_of_turn = k + 1 == n;
                self.on_completion(d);
            }
            self.last_of_turn = false;
            self.resume_paused();
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

    fn on_completion(&mut self, d: NetDone) {
        match d.op {
            NetOp::Accept => self.accepted(d),
            NetOp::Listen => {
                let k = d.tag as usize;
                if k < self.ctx.shared.listeners.len() {
                    // One accept4 per wake-up, then wait again at the back of the listener's
                    // queue: a thread that took every connection waiting would leave the
                    // other threads, woken for the same burst, with none.
                    self.accept_up_to(k, 1);
                    if self.listening && !self.stopping {
                        let _ = self.listen_ring(k);
                    }
                }
            }
            NetOp::PollIn => {
                match d.tag {
                    WAKE => self.begin_stop(),
                    _ => self.helped(),
                }
                if !d.more && !self.stopping {
                    self.rearm_poll(d.tag);
                }
            }
            NetOp::Recv => self.received(d),
            NetOp::PollOut => {
                if let Some(i) = self.live_slot(d.tag) {
                    if self.conns[i].state == State::Sending {
                        self.process(i);
                    }
                }
            }
            NetOp::Send => self.sent(d),
            NetOp::Cancel | NetOp::Read => {}
        }
    }

    /// A multishot accept's connection (or its end: re-armed unless stopping or paused).
    fn accepted(&mut self, d: NetDone) {
        match d.result {
            Ok(_) => {
                if let Some(sock) = d.sock {
                    self.admit(sock);
                }
            }
            // Out of descriptors, or the accept ended on an error (a listener shut down at
            // stop fails at once): tried again at a later scan rather than at once.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                self.out_of_descriptors();
            }
            Err(_) if !d.more => self.pause_accepting(),
            Err(_) => {}
        }
        if !d.more && self.listening && !self.stopping {
            let _ = self.listen_ring(d.tag as usize);
        }
    }

    fn rearm_poll(&mut self, which: u64) {
        let Some(r) = self.net.as_mut() else { return };
        let _ = match which {
            WAKE => r.poll_in(&self.ctx.shared.wake, WAKE),
            _ => r.poll_in(self.pool.wake(), HELPERS),
        };
    }

    /// The slot a ring tag names, if that connection is still the one it was armed for.
    fn live_slot(&self, t: u64) -> Option<usize> {
        let i = (t & 0xffff_ffff) as usize;
        let c = self.conns.get(i)?;
        let tok = (u64::from(c.gen) << 32) | i as u64;
        (c.sock.is_some() && tag(tok) == t).then_some(i)
    }

    fn received(&mut self, d: NetDone) {
        let slot = self.live_slot(d.tag);
        let Some(r) = self.net.as_mut() else { return };
        let Some(i) = slot else {
            if let Some(b) = d.buf {
                r.recycle(b);
            }
            return;
        };
        let c = &mut self.conns[i];
        if let Some(b) = d.buf {
            c.inbox.extend_from_slice(r.data(&b));
            r.recycle(b);
        }
        let mut rearm = !d.more;
        match d.result {
            Ok(0) => {
                c.peer_closed = true;
                rearm = false;
            }
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECANCELED) => {
                // Stopped on purpose (too much unread input): `resume_paused` re-arms.
                rearm = false;
            }
            Err(_) => {
                c.peer_closed = true;
                c.hup = true;
                rearm = false;
                // Reset while its file is read or opened: nobody is left to answer, so the
                // slot goes now (as epoll's EPOLLHUP/EPOLLERR does).
                if matches!(c.state, State::Waiting | State::Reading) {
                    self.close(i);
                    return;
                }
            }
        }
        c.readable = c.inbox_pos < c.inbox.len() || c.peer_closed;
        let limit = (4 * self.ctx.opts.max_header_bytes).max(INBOX_MIN);
        if c.inbox.len() - c.inbox_pos > limit && !self.paused.contains(&d.tag) {
            if d.more {
                let _ = r.cancel(NetOp::Recv, d.tag);
            }
            self.paused.push(d.tag);
            rearm = false;
        }
        if rearm {
            if let Some(s) = c.sock.as_ref() {
                if r.recv_multi(s, d.tag).is_err() {
                    self.close(i);
                    return;
                }
            }
        }
        self.process(i);
    }

    /// Hands connection `i`'s head and buffered body to the ring: its sendmsg goes to the
    /// kernel with the turn's other entries, in the same io_uring_enter. With `read`, the
    /// body is first read from that file at that offset, by a read linked to the send.
    pub(super) fn send_ring(&mut self, i: usize, read: Option<(Arc<File>, u64)>) {
        let c = &mut self.conns[i];
        let tok = (u64::from(c.gen) << 32) | i as u64;
        // Its completion only ends the response: no request is buffered to answer next, and
        // the connection stays open (a close, which a client reading to the end waits for,
        // is prompt). The loop need not wake for it alone.
        let quiet = c.keep
            && !self.stopping
            && c.rstart == c.rend
            && c.inbox_pos >= c.inbox.len()
            && !c.peer_closed;
        let out = crate::conn::to_ring(c);
        // A file's head is only the start: its sendfile follows the completion at once.
        let quiet = quiet && !out.more;
        // A linked read posts a completion of its own as well.
        let cqes = 1 + u32::from(read.is_some());
        let queued = match (self.net.as_mut(), c.sock.as_ref(), read) {
            (Some(r), Some(s), None) => r.send(s, tag(tok), out),
            (Some(r), Some(s), Some((file, off))) => r.read_send(s, tag(tok), out, file, off),
            (_, _, _) => Err((std::io::ErrorKind::NotConnected.into(), out)),
        };
        match queued {
            Ok(()) => self.quiet_sends += u32::from(quiet) * cqes,
            Err((_, out)) => {
                crate::conn::from_ring(c, out, 0);
                self.close(i);
            }
        }
    }

    /// A send came back: the connection takes its bytes back and goes on (or closes on an
    /// error); a closed connection's buffer returns to the pool.
    fn sent(&mut self, d: NetDone) {
        let Some(out) = d.sent else { return };
        let Some(i) = self.live_slot(d.tag) else {
            if let OutBody::Buf(b) = out.body {
                self.bufs.push(b);
            }
            return;
        };
        let c = &mut self.conns[i];
        match d.result {
            Ok(n) => {
                crate::conn::from_ring(c, out, n);
                c.deadline = self.now + self.idle_ns;
                self.process(i);
            }
            Err(_) => {
                crate::conn::from_ring(c, out, 0);
                self.close(i);
            }
        }
    }

    /// Receives again for stopped connections that have read most of their input.
    fn resume_paused(&mut self) {
        if self.paused.is_empty() {
            return;
        }
        let limit = (4 * self.ctx.opts.max_header_bytes).max(INBOX_MIN);
        let mut k = 0;
        while k < self.paused.len() {
            let t = self.paused[k];
            let Some(i) = self.live_slot(t).filter(|&i| !self.conns[i].peer_closed) else {
                self.paused.swap_remove(k);
                continue;
            };
            let c = &self.conns[i];
            if c.inbox.len() - c.inbox_pos > limit / 2 {
                k += 1;
                continue;
            }
            self.paused.swap_remove(k);
            if let (Some(r), Some(s)) = (self.net.as_mut(), c.sock.as_ref()) {
                if r.recv_multi(s, t).is_err() {
                    self.close(i);
                }
            }
        }
    }
}
