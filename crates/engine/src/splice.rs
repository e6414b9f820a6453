//! `splice`, as fio's: data goes through a pipe. A write vmsplices the buffer into the pipe
//! and splices the pipe into the file at the offset; a read splices the file into the pipe and
//! vmsplices the pipe out into the buffer; at most 64 KiB (the pipe's capacity) at a time.
//! Trim and fsync are the ordinary calls. Every request completes inside `queue`.

use std::io;
use std::os::fd::{OwnedFd, RawFd};

use crate::files::{ebadf, Files};
use crate::kind::Descriptor;
use crate::sys::{self, pipe};
use crate::{Caps, Engine, EngineError, EngineKind, EngineOpts, Op, Req, SysCalls};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::Splice, "splice", open);

const KIND: EngineKind = EngineKind::Splice;

pub(crate) struct SpliceEngine {
    caps: Caps,
    files: Files,
    /// (read end, write end); empty between requests.
    pipe: (OwnedFd, OwnedFd),
    calls: SysCalls,
}

pub(crate) fn open(_opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    let pipe = pipe::pipe().map_err(|e| EngineError::os("open", KIND, e))?;
    Ok(Box::new(SpliceEngine {
        caps: Caps {
            sync_only: true,
            max_depth: 1,
            ..Caps::default()
        },
        files: Files::default(),
        pipe,
        calls: SysCalls::default(),
    }))
}

/// Retries a call that was interrupted.
fn again(mut f: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            r => return r,
        }
    }
}

impl SpliceEngine {
    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let f = self.files.get(req.file).ok_or_else(ebadf)?;
        f.check(req)?;
        let (fd, block) = (f.fd(), f.block_device);
        match req.op {
            Op::Read | Op::Write => {
                let r = self.transfer(req, fd);
                if r.is_err() {
                    // Whatever the failed call left in the pipe must not reach the next
                    // request: start again with an empty one.
                    if let Ok(p) = pipe::pipe() {
                        self.pipe = p;
                    }
                }
                r
            }
            Op::Fsync | Op::Fdatasync => {
                sys::sync_fd(fd, req.op == Op::Fdatasync, &mut self.calls.io)
            }
            Op::Trim => sys::trim_fd(fd, block, req.offset, req.len, &mut self.calls.io),
        }
    }

    /// Moves `req.len` bytes chunk by chunk; a read that reaches end of file completes with
    /// what it got.
    fn transfer(&mut self, req: &mut Req, fd: RawFd) -> io::Result<usize> {
        let (r, w) = (&self.pipe.0, &self.pipe.1);
        let calls = &mut self.calls.io;
        let (len, op, offset) = (req.len, req.op, req.offset);
        let buf = &mut req.buf.as_mut_slice()[..len];
        let mut done = 0;
        while done < len {
            let chunk = (len - done).min(pipe::CHUNK);
            let off = offset + done as u64;
            let moved = if op == Op::Read {
                *calls += 1;
                let n = again(|| pipe::file_to_pipe(fd, off, w, chunk))?;
                if n == 0 {
                    break;
                }
                let mut out = 0;
                while out < n {
                    *calls += 1;
                    let dst = &mut buf[done + out..done + n];
                    // SAFETY: dst is a live, writable part of the request's buffer, borrowed
                    // mutably for the call.
                    out += again(|| unsafe { pipe::vmsplice(r, dst.as_mut_ptr(), dst.len()) })?;
                }
                n
            } else {
                *calls += 1;
                let src = &mut buf[done..done + chunk];
                // SAFETY: src is a live part of the request's buffer, borrowed for the call.
                // The pipe holds references to its pages until the splices below drain it,
                // which they do before this request completes and the buffer is reused.
                let n = again(|| unsafe { pipe::vmsplice(w, src.as_mut_ptr(), src.len()) })?;
                let mut out = 0;
                while out < n {
                    *calls += 1;
                    let m = again(|| pipe::pipe_to_file(r, fd, off + out as u64, n - out))?;
                    if m == 0 {
                        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
                    }
                    out += m;
                }
                n
            };
            done += moved;
        }
        Ok(done)
    }
}

impl Engine for SpliceEngine {
    crate::files::file_table!(KIND);

    crate::completes_in_queue!(run);
}
