//! A ring for sockets: multishot accept, multishot recv into a ring of provided buffers,
//! poll for readiness, and cancellation, all batched into one `io_uring_enter` per turn of
//! the caller's loop. The server's event loop uses it in place of epoll plus one `recv` per
//! request; what goes out still leaves through `sendmsg`/`sendfile` on the non-blocking
//! socket (the same calls the epoll loop makes), with a poll on the ring when a socket is full.
//!
//! Every operation carries a caller's tag (56 bits) and its kind in the top byte of the
//! user_data, so a completion says what it finished and for whom. Received bytes stay in the
//! ring's buffers until the caller hands the [`RecvBuf`] back: the token is the proof that the
//! kernel no longer owns that buffer.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, FromRawFd};
use std::time::Duration;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

mod provided;
mod send;

use provided::Provided;
use send::Sends;
pub use send::{OutBody, Outgoing};

/// The buffer group the ring's receive buffers are registered as.
const BGID: u16 = 0;

/// What an operation was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetOp {
    Accept,
    Recv,
    /// Readable (POLLIN), multishot: eventfds.
    PollIn,
    /// Writable (POLLOUT), one shot: a full socket.
    PollOut,
    Cancel,
    /// A response's bytes (sendmsg of a head and a body), owned by the ring until done.
    Send,
    /// A listener has a connection waiting (one shot, exclusive wake-up).
    Listen,
    /// A file read linked to a send ([`NetRing::read_send`]): never reported (its send's
    /// completion says how both went: ECANCELED when the read failed or came up short).
    Read,
}

impl NetOp {
    const ALL: [NetOp; 8] = [
        NetOp::Accept,
        NetOp::Recv,
        NetOp::PollIn,
        NetOp::PollOut,
        NetOp::Cancel,
        NetOp::Send,
        NetOp::Listen,
        NetOp::Read,
    ];

    fn data(self, tag: u64) -> u64 {
        ((self as u64) << 56) | (tag & TAG_MASK)
    }
}

/// Tags are the low 56 bits of the user_data; the all-ones tag is the ring's own (its self
/// test) and never reported.
pub const TAG_MASK: u64 = (1 << 56) - 1;
const OWN_TAG: u64 = TAG_MASK;

/// Received bytes in one of the ring's buffers; give it back with [`NetRing::recycle`].
#[derive(Debug)]
pub struct RecvBuf {
    bid: u16,
    len: usize,
}

/// One completion.
#[derive(Debug)]
pub struct NetDone {
    pub op: NetOp,
    pub tag: u64,
    /// Bytes received, or the accepted descriptor's number, or the poll mask.
    pub result: io::Result<usize>,
    /// A multishot operation stays armed (IORING_CQE_F_MORE); when false it has ended and must
    /// be armed again to go on.
    pub more: bool,
    /// Accept: the new connection (non-blocking, close-on-exec).
    pub sock: Option<TcpStream>,
    /// Recv: where the bytes are.
    pub buf: Option<RecvBuf>,
    /// Send: the bytes handed over, back (`result` says how many went).
    pub sent: Option<Outgoing>,
}

/// A socket ring owned by one thread.
pub struct NetRing {
    ring: IoUring,
    bufs: Provided,
    registered: bool,
    /// Entries pushed and not yet handed to the kernel.
    pending: usize,
    /// The self test is running: `reap` reports the ring's own completions.
    own: bool,
    /// Sends in flight by slot (the slot is in their user_data), and the free slots.
    sends: Sends,
    /// io_uring_enter calls made.
    pub enters: u64,
}

// SAFETY: the buffer mappings belong to this NetRing alone (the raw pointers are what makes
// the type not Send by default); moving it moves that ownership. A SINGLE_ISSUER ring must
// still be used by the thread that created it, which the kernel checks (EEXIST).
unsafe impl Send for NetRing {}

impl NetRing {
    /// A ring with `sq` submission entries and `bufs` receive buffers of `buf_size` bytes
    /// (`bufs` a power of two). Fails where io_uring is blocked or too old (multishot recv
    /// needs Linux 6.0): the caller falls back to epoll.
    pub fn new(sq: u32, bufs: u16, buf_size: usize) -> io::Result<NetRing> {
        if !bufs.is_power_of_two() || buf_size == 0 || buf_size > u32::MAX as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "receive buffers: a power-of-two count of non-empty buffers",
            ));
        }
        let ring = create(sq)?;
        let bufs = Provided::new(bufs, buf_size)?;
        let mut r = NetRing {
            ring,
            bufs,
            registered: false,
            pending: 0,
            own: true,
            sends: Sends::default(),
            enters: 0,
        };
        // SAFETY: the entries mapping is page-aligned, holds `count` entries and outlives the
        // registration (Drop unregisters before unmapping).
        unsafe {
            r.ring.submitter().register_buf_ring_with_flags(
                r.bufs.entries.as_ptr() as u64,
                r.bufs.count,
                BGID,
                0,
            )?;
        }
        r.registered = true;
        r.self_test()?;
        Ok(r)
    }

    /// Multishot recv with a buffer ring (Linux 6.0) is what this ring is for; a kernel that
    /// accepts the ring and the registration but not that (5.19) fails here, at start, not on
    /// every connection.
    fn self_test(&mut self) -> io::Result<()> {
        use std::io::Write;
        let (a, mut b) = std::os::unix::net::UnixStream::pair()?;
        let tag = OWN_TAG;
        let fd = types::Fd(a.as_raw_fd());
        let e = opcode::RecvMulti::new(fd, BGID)
            .build()
            .user_data(NetOp::Recv.data(tag));
        self.push(e)?;
        b.write_all(b"?")?;
        let mut out = Vec::new();
        let mut ok = None;
        for _ in 0..100 {
            self.wait(Some(Duration::from_millis(10)))?;
            self.reap(&mut out);
            for d in out.drain(..) {
                if let Some(buf) = d.buf {
                    self.recycle(buf);
                }
                if d.op == NetOp::Recv && d.tag == tag && ok.is_none() {
                    ok = Some(match d.result {
                        Ok(1) if d.more => Ok(()),
                        Ok(_) => Err(io::Error::other("multishot recv ended at once")),
                        Err(e) => Err(e),
                    });
                }
            }
            if ok.is_some() {
                break;
            }
        }
        let ok = ok.unwrap_or_else(|| Err(io::ErrorKind::TimedOut.into()));
        self.own = false;
        // Ends the receive (the cancel's completion, and the recv's last one, are dropped by
        // the next `reap`: the tag is the ring's own).
        self.cancel(NetOp::Recv, tag)?;
        self.submit()?;
        ok.map_err(|e| io::Error::new(e.kind(), format!("multishot recv (Linux 6.0): {e}")))
    }

    fn push(&mut self, e: squeue::Entry) -> io::Result<()> {
        // SAFETY: the entries pushed here point at no caller memory (fd, flags, ids and the
        // buffer group the ring owns).
        unsafe { self.push_raw(e) }
    }

    /// Queues `e`, submitting what is queued first when the queue is full.
    ///
    /// # Safety
    /// The memory `e` points at stays valid, and unmoved, until its completion.
    unsafe fn push_raw(&mut self, e: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the caller's promise.
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                self.pending += 1;
                return Ok(());
            }
            // Full: hand what is there to the kernel and go on.
            self.submit()?;
        }
    }

    /// Room for `n` more entries in the submission queue (submitting what is there if not).
    fn room(&mut self, n: usize) -> io::Result<()> {
        let free = |r: &mut IoUring| {
            let sq = r.submission();
            sq.capacity() - sq.len()
        };
        if free(&mut self.ring) < n {
            self.submit()?;
        }
        if free(&mut self.ring) < n {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(())
    }

    /// Accepts every connection on `l` until cancelled or failed; each completion carries one.
    pub fn accept_multi(&mut self, l: &TcpListener, tag: u64) -> io::Result<()> {
        let e = opcode::AcceptMulti::new(types::Fd(l.as_raw_fd()))
            .flags(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC)
            .build()
            .user_data(NetOp::Accept.data(tag));
        self.push(e)
    }

    /// Receives whatever arrives on `s` into the ring's buffers until the peer closes, an
    /// error, the buffers run out (ENOBUFS), or a cancel.
    pub fn recv_multi(&mut self, s: &TcpStream, tag: u64) -> io::Result<()> {
        let e = opcode::RecvMulti::new(types::Fd(s.as_raw_fd()), BGID)
            .build()
            .user_data(NetOp::Recv.data(tag));
        self.push(e)
    }

    /// Completes (multishot) each time `fd` becomes readable.
    pub fn poll_in(&mut self, fd: &impl AsFd, tag: u64) -> io::Result<()> {
        let e = opcode::PollAdd::new(types::Fd(fd.as_fd().as_raw_fd()), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(NetOp::PollIn.data(tag));
        self.push(e)
    }

    /// Completes once when listener `l` has a connection waiting. Exclusive (EPOLLEXCLUSIVE):
    /// of the rings waiting on one listener, a connection wakes one, not all, so several
    /// threads share the connections where a multishot accept in each would let the first
    /// to run take them all.
    pub fn poll_listener(&mut self, l: &TcpListener, tag: u64) -> io::Result<()> {
        let e = opcode::PollAdd::new(
            types::Fd(l.as_raw_fd()),
            (libc::POLLIN as u32) | (libc::EPOLLEXCLUSIVE as u32),
        )
        .build()
        .user_data(NetOp::Listen.data(tag));
        self.push(e)
    }

    /// Completes once when `s` has room to send.
    pub fn poll_out(&mut self, s: &TcpStream, tag: u64) -> io::Result<()> {
        let e = opcode::PollAdd::new(types::Fd(s.as_raw_fd()), libc::POLLOUT as u32)
            .build()
            .user_data(NetOp::PollOut.data(tag));
        self.push(e)
    }

    /// Cancels the operation `op` with `tag` (it completes with ECANCELED, or not at all if
    /// it had already ended).
    pub fn cancel(&mut self, op: NetOp, tag: u64) -> io::Result<()> {
        let target = match op {
            // A send's user_data names its slot: find the slot that holds `tag`.
            NetOp::Send => match self.sends.find(tag) {
                Some(k) => op.data(k as u64),
                None => return Ok(()),
            },
            _ => op.data(tag),
        };
        let e = opcode::AsyncCancel::new(target)
            .build()
            .user_data(NetOp::Cancel.data(tag));
        self.push(e)
    }

    /// Entries pushed and not yet handed to the kernel: what the next `io_uring_enter` would
    /// carry.
    pub fn queued(&self) -> usize {
        self.pending
    }

    /// Hands the pushed entries to the kernel now (before a descriptor they name is closed,
    /// since its number may be reused at once).
    pub fn submit(&mut self) -> io::Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        self.enters += 1;
        let r = self.ring.submit();
        self.pending = self.ring.submission().len();
        match r {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EINTR)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Submits what is pushed and waits for at least one completion, no longer than
    /// `timeout` (`None`: do not wait, but still collect what is ready: with DEFER_TASKRUN the
    /// kernel posts completions only inside an enter that asks for events).
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.wait_for(1, timeout)
    }

    /// As [`wait`](Self::wait), for at least `min` completions (those that the entries just
    /// submitted post at once count too): a caller that knows its sends will complete at once,
    /// and need nothing done soon when they do, waits for them and one more event in one
    /// `io_uring_enter`, not two.
    pub fn wait_for(&mut self, min: u32, timeout: Option<Duration>) -> io::Result<()> {
        self.enters += 1;
        let r = match timeout {
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring
                    .submitter()
                    .submit_with_args(min.max(1) as usize, &args)
            }
            None => {
                let n = self.ring.submission().len() as u32;
                // SAFETY: no argument is passed; `n` counts entries already in the SQ.
                // IORING_ENTER_GETEVENTS (1) with min_complete 0 runs the pending completions
                // and returns at once.
                unsafe { self.ring.submitter().enter::<libc::sigset_t>(n, 0, 1, None) }
            }
        };
        self.pending = self.ring.submission().len();
        match r {
            Ok(_) => Ok(()),
            // Timed out, interrupted, or completions to reap first: all "look at the CQ".
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Moves the completions that are ready into `out`.
    pub fn reap(&mut self, out: &mut Vec<NetDone>) {
        for cqe in self.ring.completion() {
            let data = cqe.user_data();
            let Some(&op) = NetOp::ALL.get((data >> 56) as usize) else {
                continue;
            };
            if op == NetOp::Read {
                continue;
            }
            let flags = cqe.flags();
            let res = cqe.result();
            let result = if res < 0 {
                Err(io::Error::from_raw_os_error(-res))
            } else {
                Ok(res as usize)
            };
            if data & TAG_MASK == OWN_TAG && op != NetOp::Send && !self.own {
                if let Some(bid) = cqueue::buffer_select(flags).filter(|&b| b < self.bufs.count) {
                    self.bufs.offer(bid);
                    self.bufs.publish();
                }
                continue;
            }
            let buf = match (op, cqueue::buffer_select(flags)) {
                (NetOp::Recv, Some(bid)) if bid < self.bufs.count => Some(RecvBuf {
                    bid,
                    len: res.max(0) as usize,
                }),
                _ => None,
            };
            let sock = match op {
                // SAFETY: a successful accept's result is a new connected socket that nothing
                // else owns.
                NetOp::Accept if res >= 0 => Some(unsafe { TcpStream::from_raw_fd(res) }),
                _ => None,
            };
            let (tag, sent) = match op {
                NetOp::Send => match self.sends.take((data & TAG_MASK) as usize) {
                    Some((tag, out)) => (tag, Some(out)),
                    None => continue,
                },
                _ => (data & TAG_MASK, None),
            };
            out.push(NetDone {
                op,
                tag,
                result,
                more: cqueue::more(flags),
                sock,
                buf,
                sent,
            });
        }
    }

    /// The bytes a recv completion delivered.
    pub fn data(&self, b: &RecvBuf) -> &[u8] {
        self.bufs.slice(b)
    }

    /// Gives a buffer back to the kernel for later receives.
    pub fn recycle(&mut self, b: RecvBuf) {
        self.bufs.offer(b.bid);
        self.bufs.publish();
    }

    /// Receive buffers' size.
    pub fn buf_size(&self) -> usize {
        self.bufs.size
    }
}

impl Drop for NetRing {
    fn drop(&mut self) {
        // Sends still in flight: the kernel may yet read their bytes, so they are leaked.
        self.sends.leak();
        // Socket receives run as task work in the owning thread, which is here, not in the
        // kernel: once the group is unregistered no receive can pick one of its buffers.
        if self.registered && self.ring.submitter().unregister_buf_ring(BGID).is_err() {
            // The kernel may still write into the buffers: leak them rather than unmap.
            let bufs = std::mem::replace(&mut self.bufs, Provided::leaked());
            std::mem::forget(bufs);
        }
    }
}

/// The ring, with deferred task work (completions run when we wait, in our thread) where the
/// kernel has it, else cooperative task work, else plain.
fn create(sq: u32) -> io::Result<IoUring> {
    let cq = (sq * 16).max(1024);
    let tries: [fn(&mut io_uring::Builder) -> &mut io_uring::Builder; 3] = [
        |b| b.setup_single_issuer().setup_defer_taskrun(),
        |b| b.setup_coop_taskrun(),
        |b| b,
    ];
    let mut last = None;
    for f in tries {
        let mut b = IoUring::builder();
        b.setup_cqsize(cq);
        match f(&mut b).build(sq) {
            Ok(r) => return Ok(r),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn ring() -> Option<NetRing> {
        match NetRing::new(64, 16, 4096) {
            Ok(r) => Some(r),
            Err(e) => {
                iolab_testkit::skip("io_uring socket ring", &e);
                None
            }
        }
    }

    fn until(r: &mut NetRing, out: &mut Vec<NetDone>, want: impl Fn(&[NetDone]) -> bool) {
        for _ in 0..200 {
            r.wait(Some(Duration::from_millis(10))).unwrap();
            r.reap(out);
            if want(out) {
                return;
            }
        }
        panic!("no completion came: {out:?}");
    }

    #[test]
    fn multishot_accept_and_recv_deliver_bytes_in_provided_buffers() {
        let Some(mut r) = ring() else { return };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        r.accept_multi(&l, 7).unwrap();
        let mut c1 = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut out = Vec::new();
        until(&mut r, &mut out, |o| {
            o.iter().any(|d| d.op == NetOp::Accept)
        });
        let d = out.pop().unwrap();
        assert_eq!((d.tag, d.more), (7, true));
        let s = d.sock.unwrap();
        r.recv_multi(&s, 9).unwrap();
        for msg in [&b"hello"[..], b" world"] {
            c1.write_all(msg).unwrap();
            out.clear();
            until(&mut r, &mut out, |o| o.iter().any(|d| d.op == NetOp::Recv));
            let d = out.pop().unwrap();
            assert_eq!(d.tag, 9);
            assert!(d.more, "the multishot receive stays armed");
            let b = d.buf.unwrap();
            assert_eq!(r.data(&b), msg);
            r.recycle(b);
        }
        // More messages than buffers: recycling keeps the receive going.
        for k in 0..40u8 {
            c1.write_all(&[k; 100]).unwrap();
            out.clear();
            until(&mut r, &mut out, |o| o.iter().any(|d| d.op == NetOp::Recv));
            for d in out.drain(..) {
                let b = d.buf.unwrap();
                assert!(r.data(&b).iter().all(|&x| x == k));
                r.recycle(b);
            }
        }
        drop(c1);
        out.clear();
        until(&mut r, &mut out, |o| {
            o.iter().any(|d| d.op == NetOp::Recv && !d.more)
        });
        let end = out.iter().find(|d| !d.more).unwrap();
        assert_eq!(
            end.result.as_ref().ok(),
            Some(&0),
            "the peer's close ends it"
        );
    }

    #[test]
    fn cancel_ends_a_multishot_receive_and_poll_out_sees_room() {
        let Some(mut r) = ring() else { return };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        r.recv_multi(&s, 3).unwrap();
        r.poll_out(&s, 4).unwrap();
        let mut out = Vec::new();
        until(&mut r, &mut out, |o| {
            o.iter().any(|d| d.op == NetOp::PollOut)
        });
        r.cancel(NetOp::Recv, 3).unwrap();
        until(&mut r, &mut out, |o| {
            o.iter().any(|d| d.op == NetOp::Recv && !d.more)
        });
        let d = out.iter().find(|d| d.op == NetOp::Recv).unwrap();
        assert_eq!(
            d.result.as_ref().err().and_then(|e| e.raw_os_error()),
            Some(libc::ECANCELED)
        );
        (&s).write_all(b"x").unwrap();
        let mut b = [0u8; 1];
        c.read_exact(&mut b).unwrap();
        assert_eq!(r.buf_size(), 4096);
        assert!(r.enters > 0);
    }

    #[test]
    fn send_hands_the_bytes_back_with_the_count() {
        let Some(mut r) = ring() else { return };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let mut body = crate::Buf::new(4096).unwrap();
        body.as_mut_slice()[..5].copy_from_slice(b"world");
        let out = Outgoing {
            head: b"hello ".to_vec(),
            head_pos: 0,
            body: OutBody::Buf(body),
            body_pos: 0,
            body_end: 5,
            more: false,
        };
        r.send(&s, 11, out).map_err(|e| e.0).unwrap();
        let mut done = Vec::new();
        until(&mut r, &mut done, |o| o.iter().any(|d| d.op == NetOp::Send));
        let d = done.pop().unwrap();
        assert_eq!((d.tag, d.result.as_ref().ok()), (11, Some(&11)));
        let mut back = d.sent.unwrap();
        back.advance(11);
        assert!(back.is_done());
        assert_eq!(back.head, b"hello ");
        let mut got = [0u8; 11];
        c.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello world");
    }

    fn out_buf(head: &[u8], len: usize) -> Outgoing {
        Outgoing {
            head: head.to_vec(),
            head_pos: 0,
            body: OutBody::Buf(crate::Buf::new(4096).unwrap()),
            body_pos: 0,
            body_end: len,
            more: false,
        }
    }

    /// A file's bytes read on the ring and sent after the head, the read linked to the send;
    /// a read that comes up short sends nothing (the send is cancelled), so a truncated file
    /// never goes out as a buffer's stale bytes behind a head that promised more.
    #[test]
    fn read_send_sends_a_files_bytes_and_nothing_when_the_read_is_short() {
        let Some(mut r) = ring() else { return };
        let path = std::env::temp_dir().join(format!("iolab-readsend-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        let file = std::sync::Arc::new(std::fs::File::open(&path).unwrap());
        let _ = std::fs::remove_file(&path);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        r.read_send(&s, 5, out_buf(b"head:", 6), file.clone(), 2)
            .map_err(|e| e.0)
            .unwrap();
        let mut done = Vec::new();
        until(&mut r, &mut done, |o| o.iter().any(|d| d.op == NetOp::Send));
        assert!(done.iter().all(|d| d.op == NetOp::Send), "{done:?}");
        let d = done.pop().unwrap();
        assert_eq!((d.tag, d.result.as_ref().ok()), (5, Some(&11)));
        let mut got = [0u8; 11];
        c.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"head:234567");
        // Past the end: 4 bytes of the 6 wanted.
        r.read_send(&s, 6, out_buf(b"head:", 6), file, 6)
            .map_err(|e| e.0)
            .unwrap();
        done.clear();
        until(&mut r, &mut done, |o| o.iter().any(|d| d.op == NetOp::Send));
        let d = done.pop().unwrap();
        assert_eq!(d.tag, 6);
        assert_eq!(
            d.result.as_ref().err().and_then(|e| e.raw_os_error()),
            Some(libc::ECANCELED)
        );
        assert!(d.sent.is_some(), "the bytes come back");
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "nothing sent: {rest:?}");
        // Nothing to read into: refused, the bytes handed back.
        let (e, back) = r
            .read_send(&s, 7, out_buf(b"x", 0), file_of(), 0)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(back.head, b"x");
    }

    fn file_of() -> std::sync::Arc<std::fs::File> {
        std::sync::Arc::new(std::fs::File::open("/dev/null").unwrap())
    }
}
