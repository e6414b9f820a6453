//! What goes out on the socket ring: a response's head and buffered body as one sendmsg,
//! optionally preceded by the read that fills the body from a file, linked to it (a small
//! file's response then costs one pair of entries and no system call of its own).

use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use io_uring::{opcode, squeue, types};

use super::{NetOp, NetRing};

/// The body that follows a head in a [`Outgoing`].
#[derive(Debug)]
pub enum OutBody {
    None,
    Static(&'static [u8]),
    Owned(Vec<u8>),
    /// `Buf` bytes `pos..end` (an engine read's buffer).
    Buf(crate::Buf),
}

/// Bytes to send: `head[head_pos..]`, then the body from `body_pos` to `body_end`. The ring
/// owns them while the kernel reads them and gives them back with the completion.
#[derive(Debug)]
pub struct Outgoing {
    pub head: Vec<u8>,
    pub head_pos: usize,
    pub body: OutBody,
    pub body_pos: usize,
    pub body_end: usize,
    /// More of the response follows by other means (sendfile): sent with MSG_MORE, so these
    /// bytes wait to share a segment with the first of the rest.
    pub more: bool,
}

impl Outgoing {
    fn body(&self) -> &[u8] {
        let b: &[u8] = match &self.body {
            OutBody::None => &[],
            OutBody::Static(b) => b,
            OutBody::Owned(v) => v,
            OutBody::Buf(b) => b.as_slice(),
        };
        let end = self.body_end.min(b.len());
        &b[self.body_pos.min(end)..end]
    }

    /// Advances past `n` bytes sent: the head first, then the body.
    pub fn advance(&mut self, n: usize) {
        let h = (self.head.len() - self.head_pos).min(n);
        self.head_pos += h;
        self.body_pos = (self.body_pos + n - h).min(self.body_end);
    }

    /// Nothing is left to send.
    pub fn is_done(&self) -> bool {
        self.head_pos >= self.head.len() && self.body_pos >= self.body_end
    }
}

/// A sendmsg's header and its two iovecs (head, body).
type Msg = (libc::msghdr, [libc::iovec; 2]);

/// A send in flight: the bytes, and the message header the kernel reads (boxed: its address
/// must not move while the kernel holds it).
struct SendSlot {
    tag: u64,
    out: Outgoing,
    /// Read by the kernel, not by us: kept alive until the completion, then reused.
    msg: Box<Msg>,
    /// The file a linked read fills the body from: open until the read is done.
    file: Option<Arc<File>>,
    /// The socket of a connection closed while its linked send waited for the read: the
    /// send names the descriptor, which the kernel looks up only when the read is done, so
    /// its number must not be reused before then (see [`NetRing::close_after_send`]).
    sock: Option<TcpStream>,
}

/// Sends in flight by slot (the slot is in their user_data), and the free slots.
#[derive(Default)]
pub(super) struct Sends {
    slots: Vec<Option<SendSlot>>,
    free: Vec<u32>,
    /// Message headers of completed sends, for the next ones (no allocation per response).
    /// Boxed: a header handed to the kernel must stay where it is while the box moves between
    /// this list and a slot (a `Vec<Msg>` would move the header itself).
    #[allow(clippy::vec_box)]
    msgs: Vec<Box<Msg>>,
}

impl Sends {
    /// The send in slot `slot` completed: its tag and bytes back, its slot and header free.
    pub(super) fn take(&mut self, slot: usize) -> Option<(u64, Outgoing)> {
        let s = self.slots.get_mut(slot).and_then(Option::take)?;
        self.free.push(slot as u32);
        self.msgs.push(s.msg);
        Some((s.tag, s.out))
    }

    /// Forgets the sends in flight (the ring is going and the kernel may yet read their
    /// bytes or fill their buffers): leaked, not freed.
    pub(super) fn leak(&mut self) {
        for s in self.slots.drain(..).flatten() {
            std::mem::forget(s);
        }
    }

    /// The slot holding the send for `tag`.
    pub(super) fn find(&self, tag: u64) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.tag == tag))
    }
}

impl NetRing {
    /// Sends `out` on `s` (sendmsg, MSG_NOSIGNAL | MSG_WAITALL: the kernel sends what a full
    /// socket left over when it has room again, so the completion comes once every byte is
    /// out, or with an error); it gives `out` back with the count sent. On failure to queue,
    /// `out` comes back with the error.
    pub fn send(
        &mut self,
        s: &TcpStream,
        tag: u64,
        out: Outgoing,
    ) -> Result<(), (io::Error, Outgoing)> {
        self.queue_send(s, tag, out, None)
    }

    /// As [`send`](Self::send), with the body first read from `file` at `off`: a read of the
    /// body's bytes (`out.body`, a `Buf`, from `body_pos` to `body_end`) linked to the send,
    /// so the send starts when the read is done, both in the same submission. A read that
    /// fails or comes up short cancels the send (its completion says ECANCELED; nothing is
    /// sent). Meant for a file in the page cache: the read is then done inline at submission;
    /// otherwise the kernel's workers wait for the file system, and the loop does not.
    pub fn read_send(
        &mut self,
        s: &TcpStream,
        tag: u64,
        out: Outgoing,
        file: Arc<File>,
        off: u64,
    ) -> Result<(), (io::Error, Outgoing)> {
        if !matches!(out.body, OutBody::Buf(_)) || out.body_pos >= out.body_end {
            let e = io::Error::new(io::ErrorKind::InvalidInput, "read_send: no body to read");
            return Err((e, out));
        }
        self.queue_send(s, tag, out, Some((file, off)))
    }

    fn queue_send(
        &mut self,
        s: &TcpStream,
        tag: u64,
        mut out: Outgoing,
        read: Option<(Arc<File>, u64)>,
    ) -> Result<(), (io::Error, Outgoing)> {
        // A link must not be split across two submissions (the send would no longer wait
        // for the read): room for both entries, or submit what is there first.
        let need = if read.is_some() { 2 } else { 1 };
        if let Err(e) = self.room(need) {
            return Err((e, out));
        }
        let slot = match self.sends.free.pop() {
            Some(k) => k,
            None => {
                self.sends.slots.push(None);
                (self.sends.slots.len() - 1) as u32
            }
        };
        let mut msg = self.sends.msgs.pop().unwrap_or_else(|| {
            // SAFETY: msghdr and iovec are plain old data; all-zero is an empty message. Only
            // the iovecs and msg_iov/msg_iovlen are set below, so a reused one stays so.
            Box::new(unsafe { std::mem::zeroed::<Msg>() })
        });
        let mut file = None;
        if let Some((f, off)) = read {
            let (pos, end) = (out.body_pos, out.body_end);
            let OutBody::Buf(b) = &mut out.body else {
                unreachable!("checked by read_send");
            };
            let dst = &mut b.as_mut_slice()[pos.min(end)..end];
            let e = opcode::Read::new(types::Fd(f.as_raw_fd()), dst.as_mut_ptr(), dst.len() as u32)
                .offset(off)
                .build()
                // Not CQE_SKIP_SUCCESS: when a read with it fails, the kernel posts no
                // completion for the send it cancels (seen on 6.18), and the slot would wait
                // for ever. Its completion is dropped by `reap` instead.
                .flags(squeue::Flags::IO_LINK)
                .user_data(NetOp::Read.data(u64::from(slot)));
            // SAFETY: the entry points into the heap block of the Buf in `out`, which moves
            // into the slot below with its block unmoved and stays there until the send's
            // completion, which comes after the read's (they are linked); the file is kept
            // open in the slot as long.
            if let Err(err) = unsafe { self.push_raw(e) } {
                self.sends.free.push(slot);
                self.sends.msgs.push(msg);
                return Err((err, out));
            }
            file = Some(f);
        }
        let head = &out.head[out.head_pos.min(out.head.len())..];
        let body = out.body();
        msg.1[0] = libc::iovec {
            iov_base: head.as_ptr() as *mut libc::c_void,
            iov_len: head.len(),
        };
        msg.1[1] = libc::iovec {
            iov_base: body.as_ptr() as *mut libc::c_void,
            iov_len: body.len(),
        };
        let more = if out.more { libc::MSG_MORE } else { 0 };
        msg.0.msg_iov = msg.1.as_mut_ptr();
        msg.0.msg_iovlen = 2;
        let e = opcode::SendMsg::new(types::Fd(s.as_raw_fd()), &msg.0)
            .flags((libc::MSG_NOSIGNAL | libc::MSG_WAITALL | more) as u32)
            .build()
            .user_data(NetOp::Send.data(u64::from(slot)));
        // The iovecs point into the heap blocks of `out` (a Vec's, a Buf's or static bytes)
        // and the entry at the boxed header: none of them moves when `out` and the box move
        // into the slot, where they stay until the completion is reaped.
        // SAFETY: as said, and the room for it was made above, so a pushed read is never
        // left without its send.
        if let Err(err) = unsafe { self.push_raw(e) } {
            // Not reached (room was made); were it, the read pushed would still write into
            // the buffer: the slot, its bytes and its file are leaked rather than reused.
            if let Some(f) = file {
                std::mem::forget((out, msg, f));
                return Err((err, Outgoing::empty()));
            }
            self.sends.free.push(slot);
            self.sends.msgs.push(msg);
            return Err((err, out));
        }
        self.sends.slots[slot as usize] = Some(SendSlot {
            tag,
            out,
            msg,
            file,
            sock: None,
        });
        Ok(())
    }

    /// Closes `sock` once the send with `tag` is done, if one is in flight whose read was
    /// linked to it; else at once. The caller has cancelled what it armed for the connection:
    /// the send then completes (ECANCELED, or sent) and the socket closes with it, rather
    /// than before the kernel looks its descriptor up (after the read), when the number could
    /// already name the next connection.
    pub fn close_after_send(&mut self, tag: u64, sock: TcpStream) {
        let slot = self
            .sends
            .slots
            .iter_mut()
            .flatten()
            .find(|s| s.tag == tag && s.file.is_some());
        if let Some(s) = slot {
            s.sock = Some(sock);
        }
    }
}

impl Outgoing {
    fn empty() -> Outgoing {
        Outgoing {
            head: Vec::new(),
            head_pos: 0,
            body: OutBody::None,
            body_pos: 0,
            body_end: 0,
            more: false,
        }
    }
}
