//! Bodies of small files read through the engine, and work handed to the helper threads
//! (opening a path, paging a file in), with what happens when each comes back.

use std::fs::File;
use std::io;
use std::sync::Arc;

use iolab_engine::{Buf, Done, FileId, Op, Queued, Req};

use super::{Worker, DEPTH, DIRECT_ALIGN};
use crate::blocking::{Job, Outcome};
use crate::conn::{Out, Pending, State};
use crate::route;
use crate::SMALL_FILE;

impl Worker {
    /// Commits queued reads and handles what completed; waits a little for one when the loop
    /// has nothing else to do.
    pub(super) fn reap(&mut self, wait: bool) -> io::Result<()> {
        self.eng.commit()?;
        let min = usize::from(wait);
        let timeout = Some(std::time::Duration::from_millis(1));
        let mut done = std::mem::take(&mut self.done);
        self.eng.reap(min, DEPTH as usize, timeout, &mut done)?;
        for d in done.drain(..) {
            self.complete(d, true);
        }
        self.done = done;
        Ok(())
    }

    /// A read finished: its connection sends (now, when `drive`; else the caller's loop does),
    /// or closes if the file came up short.
    pub(super) fn complete(&mut self, d: Done, drive: bool) {
        self.cache.end(d.req.file, &mut *self.eng);
        let i = (d.req.tag & 0xffff_ffff) as usize;
        let gen = (d.req.tag >> 32) as u32;
        let buf = d.req.buf;
        let Some(c) = self.conns.get_mut(i) else {
            self.bufs.push(buf);
            return;
        };
        if c.gen != gen || c.sock.is_none() || c.state != State::Reading {
            self.bufs.push(buf);
            return;
        }
        let (pos, end) = c.read_range;
        match d.result {
            Ok(n) if n >= end => {
                c.out = Out::Buf { buf, pos, end };
                c.state = State::Sending;
                if drive {
                    self.process(i);
                }
            }
            _ => {
                // Truncated under us or a read error: the head promised bytes we do not have.
                self.bufs.push(buf);
                self.close(i);
            }
        }
    }

    /// Hands `job` for connection `i` to a helper; the connection waits (no longer than the
    /// idle timeout). False when no helper could take it.
    pub(super) fn hand_over(&mut self, i: usize, job: Job, then: Pending) -> bool {
        let c = &mut self.conns[i];
        let tok = (u64::from(c.gen) << 32) | i as u64;
        if !self.pool.submit(tok, job) {
            return false;
        }
        c.state = State::Waiting;
        c.pending = then;
        c.deadline = self.now + self.idle_ns;
        true
    }

    /// Helpers are done with some jobs: their connections go on.
    pub(super) fn helped(&mut self) {
        self.pool.wake().clear();
        let mut outcomes = std::mem::take(&mut self.outcomes);
        self.pool.take(&mut outcomes);
        for (tok, outcome) in outcomes.drain(..) {
            let i = (tok & 0xffff_ffff) as usize;
            let Some(c) = self.conns.get_mut(i) else {
                continue;
            };
            // A connection closed meanwhile (its slot perhaps reused) has nothing to go on.
            if c.gen != (tok >> 32) as u32 || c.sock.is_none() || c.state != State::Waiting {
                continue;
            }
            match (std::mem::replace(&mut c.pending, Pending::None), outcome) {
                (Pending::Open, Outcome::Resolved(found, d)) => {
                    c.resolved = Some((found, d));
                    c.state = State::Idle;
                }
                (
                    Pending::Read {
                        id,
                        off,
                        len,
                        direct,
                        rep,
                    },
                    _,
                ) => {
                    // A synchronous engine completes here and leaves the sending to us.
                    self.read(i, id, off, len, direct, rep);
                }
                (_, _) => {
                    c.state = State::Sending;
                    c.paged = true;
                }
            }
            self.process(i);
        }
        self.outcomes = outcomes;
    }

    /// A buffer for a small file's bytes: a free one, or a new one; None (the connection
    /// closed) when memory runs out.
    fn small_buf(&mut self, i: usize) -> Option<Buf> {
        if let Some(b) = self.bufs.pop() {
            return Some(b);
        }
        match Buf::new(SMALL_FILE as usize) {
            Ok(b) => Some(b),
            Err(_) => {
                self.close(i);
                None
            }
        }
    }

    /// Sends a small file's `len` bytes at `off`, read on the socket ring into a buffer, with
    /// the head in `c.wbuf`: the read linked to the send, both queued for the turn's one
    /// io_uring_enter (no engine read to reap and send on a later turn). The caller has seen
    /// the file in the page cache, so the read is done inline when submitted.
    pub(super) fn read_ring(
        &mut self,
        i: usize,
        file: Arc<File>,
        off: u64,
        len: u64,
        rep: route::Reply,
    ) {
        let Some(buf) = self.small_buf(i) else {
            return;
        };
        let c = &mut self.conns[i];
        crate::conn::begin(c, &rep);
        c.out = Out::Buf {
            buf,
            pos: 0,
            end: len as usize,
        };
        c.state = State::Sending;
        self.send_ring(i, Some((file, off)));
    }

    /// Reads a small file through the engine (the caller has counted the read in with
    /// `Cache::begin`); the connection sends when it completes.
    pub(super) fn read(
        &mut self,
        i: usize,
        id: FileId,
        off: u64,
        len: u64,
        direct: bool,
        rep: route::Reply,
    ) {
        let Some(buf) = self.small_buf(i) else {
            return;
        };
        let c = &mut self.conns[i];
        crate::conn::begin(c, &rep);
        c.state = State::Reading;
        // Read from 0 to the end of the range: the whole small file in one request.
        let end = off + len;
        let want = if direct {
            end.div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN
        } else {
            end
        };
        c.read_range = (off as usize, end as usize);
        let tok = (u64::from(c.gen) << 32) | i as u64;
        let mut req = Req::data(Op::Read, id, 0, want as usize, buf).with_tag(tok);
        loop {
            match self.eng.queue(req) {
                Queued::Queued => return,
                Queued::Done(d) => {
                    // Synchronous engine: the caller's loop sends it, without recursing.
                    self.complete(d, false);
                    return;
                }
                Queued::Busy(r) => {
                    req = r;
                    // Full queue: submit, and wait for at least one read to make room.
                    let _ = self.eng.commit();
                    let mut done = Vec::new();
                    if self.eng.reap(1, DEPTH as usize, None, &mut done).is_err() {
                        self.bufs.push(req.buf);
                        self.cache.end(id, &mut *self.eng);
                        self.close(i);
                        return;
                    }
                    for d in done {
                        self.complete(d, true);
                    }
                }
            }
        }
    }
}
