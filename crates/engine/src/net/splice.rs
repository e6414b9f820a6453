//! netsplice over TCP: the data through a pipe, with splice on the socket's side.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::again;
use crate::sys::{pipe, sock};

/// netsplice's write: the buffer into the pipe, the pipe into the socket (splice), a pipe's
/// capacity at a time. fio vmsplices the buffer into the pipe; but TCP keeps referencing
/// spliced pages until they are acknowledged, so a buffer the job reuses would change data
/// already sent. The buffer is copied into the pipe instead (as `send` copies it), and the
/// socket's side is still a splice.
pub(super) fn splice_out(
    p: &(OwnedFd, OwnedFd),
    s: &OwnedFd,
    buf: &mut [u8],
    calls: &mut u64,
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let end = (done + pipe::CHUNK).min(buf.len());
        let src = &buf[done..end];
        *calls += 1;
        let n = again(|| pipe::write(&p.1, src))?;
        let mut out = 0;
        while out < n {
            *calls += 1;
            let m = again(|| sock::splice(p.0.as_raw_fd(), s.as_raw_fd(), n - out))?;
            if m == 0 {
                return Err(io::Error::from_raw_os_error(libc::EPIPE));
            }
            out += m;
        }
        done += n;
    }
    Ok(done)
}

/// netsplice's read: the socket into the pipe (splice), the pipe into the buffer (vmsplice),
/// until the request is full or the peer closes.
pub(super) fn splice_in(
    p: &(OwnedFd, OwnedFd),
    s: &OwnedFd,
    buf: &mut [u8],
    calls: &mut u64,
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let want = (buf.len() - done).min(pipe::CHUNK);
        *calls += 1;
        let n = again(|| sock::splice(s.as_raw_fd(), p.1.as_raw_fd(), want))?;
        if n == 0 {
            break;
        }
        let mut out = 0;
        while out < n {
            *calls += 1;
            let dst = &mut buf[done + out..done + n];
            // SAFETY: dst is a live, writable part of the request's buffer, borrowed mutably
            // for the call.
            out += again(|| unsafe { pipe::vmsplice(&p.0, dst.as_mut_ptr(), dst.len()) })?;
        }
        done += n;
    }
    Ok(done)
}
