//! Requests and their completions: what moves through [`crate::Engine::queue`] and comes
//! back from [`crate::Engine::reap`].

use std::io;

use crate::{errno_name, sys, Buf};

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    Fsync,
    Fdatasync,
    /// Discard: `BLKDISCARD` on block devices, `FALLOC_FL_PUNCH_HOLE` on files.
    Trim,
}

impl Op {
    /// fio's name for the direction, as used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Trim => "trim",
        }
    }

    /// fio's io_ddir_name: the word its iolog and error lines use.
    pub fn ddir_name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Fsync => "sync",
            Op::Fdatasync => "datasync",
        }
    }

    /// Whether the request moves data through its buffer.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// A file registered with an engine by [`Engine::add_file`](crate::Engine::add_file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub(crate) u32);

impl FileId {
    /// Stands for a file of a job that is not open now (fio's `openfiles`); no engine hands
    /// it out, so a request on it fails as an unknown file.
    pub const CLOSED: FileId = FileId(u32::MAX);

    /// The slot number (registered-file index where the engine registers files).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// One I/O request. The buffer travels with it and comes back in [`Done`].
#[derive(Debug)]
pub struct Req {
    pub op: Op,
    pub file: FileId,
    pub offset: u64,
    /// Bytes to transfer (read/write: at most `buf.len()`) or to discard (trim).
    pub len: usize,
    pub buf: Buf,
    /// The caller's own value, returned untouched.
    pub tag: u64,
    /// The I/O priority of this request (`sys::task::ioprio_value`; 0: the thread's own), for
    /// fio's cmdprio options. Engines with [`Caps::ioprio`](crate::Caps::ioprio) pass it to the kernel (io_uring's
    /// `sqe.ioprio`, libaio's `aio_reqprio`); the others leave it.
    pub ioprio: u16,
    /// Bytes already transferred by earlier partial completions.
    pub(crate) done: usize,
}

impl Req {
    /// A read of `buf.len()` bytes at `offset`.
    pub fn read(file: FileId, offset: u64, buf: Buf) -> Req {
        Req::data(Op::Read, file, offset, buf.len(), buf)
    }

    /// A write of `buf.len()` bytes at `offset`.
    pub fn write(file: FileId, offset: u64, buf: Buf) -> Req {
        Req::data(Op::Write, file, offset, buf.len(), buf)
    }

    /// A data request of `len` bytes (at most `buf.len()`).
    pub fn data(op: Op, file: FileId, offset: u64, len: usize, buf: Buf) -> Req {
        Req {
            op,
            file,
            offset,
            len,
            buf,
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// `fsync` (or `fdatasync` when `data_only`) of the whole file.
    pub fn sync(file: FileId, data_only: bool) -> Req {
        let op = if data_only { Op::Fdatasync } else { Op::Fsync };
        Req::data(op, file, 0, 0, Buf::empty())
    }

    /// Discard `len` bytes at `offset`.
    pub fn trim(file: FileId, offset: u64, len: usize) -> Req {
        Req::data(Op::Trim, file, offset, len, Buf::empty())
    }

    /// The same request with the I/O priority `ioprio` (see [`Req::ioprio`]).
    pub fn with_ioprio(mut self, ioprio: u16) -> Req {
        self.ioprio = ioprio;
        self
    }

    /// The same request with the caller's `tag`.
    pub fn with_tag(mut self, tag: u64) -> Req {
        self.tag = tag;
        self
    }

    /// The part of the transfer that is still to do: (file offset, buffer start, length).
    pub(crate) fn remaining(&self) -> (u64, usize, usize) {
        (
            self.offset + self.done as u64,
            self.done,
            self.len - self.done,
        )
    }

    /// Applies one kernel completion of the remaining part. Returns the request's final
    /// outcome, or `None` when the rest must be submitted again: after a short transfer, or an
    /// EINTR/EAGAIN (EAGAIN is final under `nowait`). A read that returns 0 has reached end of
    /// file and completes with what it got; a write that returns 0 is ENOSPC.
    pub(crate) fn complete_part(
        &mut self,
        res: io::Result<usize>,
        nowait: bool,
    ) -> Option<io::Result<usize>> {
        match res {
            Err(e) if sys::is_retry(&e, nowait) => None,
            Err(e) => Some(Err(e)),
            // A trim's answer (fallocate's, io_uring's) is 0, not a count: it did all of it,
            // as the synchronous path (sys::trim_fd) says.
            Ok(_) if self.op == Op::Trim => Some(Ok(self.len)),
            Ok(n) if !self.op.is_data() => Some(Ok(n)),
            Ok(0) if self.op == Op::Read || self.len == 0 => Some(Ok(self.done)),
            Ok(0) => Some(Err(io::Error::from_raw_os_error(libc::ENOSPC))),
            Ok(n) => {
                self.done += n;
                if self.done >= self.len {
                    Some(Ok(self.done))
                } else {
                    None
                }
            }
        }
    }
}

/// A completed request: the request (with its buffer) and its outcome. `Ok(n)` is the number of
/// bytes transferred: `len` unless a read reached end of file.
#[derive(Debug)]
pub struct Done {
    pub req: Req,
    pub result: io::Result<usize>,
}

impl Done {
    /// A one-line description of a failed request: operation, offset, length, errno name.
    pub fn error_message(&self, engine: &str) -> Option<String> {
        let err = self.result.as_ref().err()?;
        let name = err.raw_os_error().map(errno_name).unwrap_or("error");
        Some(format!(
            "{engine}: {} of {} bytes at offset {} failed: {name}: {err}",
            self.req.op.name(),
            self.req.len,
            self.req.offset
        ))
    }
}

/// The outcome of [`Engine::queue`](crate::Engine::queue).
#[derive(Debug)]
pub enum Queued {
    /// Completed during the call (synchronous engines, or an error found before submission).
    Done(Done),
    /// Accepted; it goes to the kernel at the next [`Engine::commit`](crate::Engine::commit).
    Queued,
    /// The queue is full: commit and reap, then queue this request again.
    Busy(Req),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_transfers_resubmit_and_eof_completes() {
        let mut r = Req::read(FileId(0), 0, Buf::new(8192).unwrap());
        assert!(r.complete_part(Ok(4096), false).is_none());
        assert_eq!(r.remaining(), (4096, 4096, 4096));
        assert!(r
            .complete_part(Err(io::Error::from_raw_os_error(libc::EINTR)), false)
            .is_none());
        assert_eq!(r.complete_part(Ok(0), false).unwrap().unwrap(), 4096);
    }

    /// Regression: io_uring's trim (fallocate) answers 0, which was counted as 0 bytes trimmed.
    #[test]
    fn a_trim_completes_its_whole_length() {
        let mut t = Req::trim(FileId(0), 4096, 8192);
        assert_eq!(t.complete_part(Ok(0), false).unwrap().unwrap(), 8192);
    }

    #[test]
    fn zero_byte_write_is_enospc_and_errors_are_final() {
        let mut w = Req::write(FileId(0), 0, Buf::new(512).unwrap());
        let e = w.complete_part(Ok(0), false).unwrap().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        let mut w = Req::write(FileId(0), 0, Buf::new(512).unwrap());
        let again = w.complete_part(Err(io::Error::from_raw_os_error(libc::EAGAIN)), true);
        assert_eq!(
            again.unwrap().unwrap_err().raw_os_error(),
            Some(libc::EAGAIN)
        );
    }
}
