//! The data of a synchronous request: the read and write calls of the sync engines, each
//! until the request is done.

use std::io;
use std::os::fd::RawFd;

use super::{cvt, is_retry};

/// Which system call moves the data of a synchronous request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwCall {
    /// `lseek` then `read`/`write` (fio's sync).
    Seek,
    /// `read`/`write` at the file's position: fio's sync when the position is already the
    /// offset (sequential I/O), which is also what works on a FIFO, where `lseek` is ESPIPE.
    Current,
    /// `pread`/`pwrite` (psync).
    Positional,
    /// `preadv`/`pwritev` with one iovec (pvsync).
    PositionalV,
    /// `lseek` then `readv`/`writev` with one iovec (vsync).
    SeekV,
    /// `readv`/`writev` at the file's position: vsync's [`RwCall::Current`].
    CurrentV,
    /// `preadv2`/`pwritev2` with one iovec and RWF_* `flags` (pvsync2); under `nowait`,
    /// EAGAIN is the answer rather than something to retry.
    V2 { flags: libc::c_int, nowait: bool },
}

/// Moves `len` bytes at `offset` with `call`, until they are done, end of file is reached
/// (reads), or a real error occurs; short transfers continue where they stopped and EINTR
/// (and EAGAIN, unless under nowait) are retried. Counts every call in `calls`.
///
/// # Safety
/// `buf` must be valid for reads and writes of `len` bytes for the duration of the call.
#[inline]
pub unsafe fn rw_full(
    write: bool,
    call: RwCall,
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    offset: u64,
    calls: &mut u64,
) -> io::Result<usize> {
    if len == 0 {
        return Ok(0);
    }
    // The usual case first, kept out of the loop: one call that moves everything.
    *calls += 1;
    // SAFETY: buf is valid for len bytes (the caller's guarantee).
    let first = unsafe { rw_once(write, call, fd, buf, len, offset as libc::off_t, calls) };
    if matches!(first, Ok(k) if k == len) {
        return Ok(len);
    }
    // SAFETY: as above.
    unsafe { rw_rest(write, call, fd, buf, len, offset, calls, first) }
}

/// [`rw_full`] after its first call, whose answer is `first`: short transfers go on where
/// they stopped, retries are made, end of file and errors end it.
///
/// # Safety
/// As [`rw_full`].
#[allow(clippy::too_many_arguments)]
unsafe fn rw_rest(
    write: bool,
    call: RwCall,
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    offset: u64,
    calls: &mut u64,
    first: io::Result<usize>,
) -> io::Result<usize> {
    let nowait = matches!(call, RwCall::V2 { nowait: true, .. });
    let mut done = 0usize;
    let mut ret = first;
    loop {
        match ret {
            Ok(0) if !write => break,
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            Ok(k) => done += k,
            Err(e) if is_retry(&e, nowait) => {}
            Err(e) => return Err(e),
        }
        if done >= len {
            break;
        }
        let off = (offset + done as u64) as libc::off_t;
        // SAFETY: the caller guarantees buf..buf+len is valid; we stay within it.
        let p = unsafe { buf.add(done) };
        *calls += 1;
        // SAFETY: p is valid for len - done bytes (the caller's guarantee).
        ret = unsafe { rw_once(write, call, fd, p, len - done, off, calls) };
    }
    Ok(done)
}

/// One call of [`rw_full`]'s: `n` bytes at `p` with `call` at `off` (an `lseek` before it
/// where `call` seeks, counted in `calls` when it succeeds).
///
/// # Safety
/// `p` must be valid for reads and writes of `n` bytes for the duration of the call.
#[inline(always)]
unsafe fn rw_once(
    write: bool,
    call: RwCall,
    fd: RawFd,
    p: *mut u8,
    n: usize,
    off: libc::off_t,
    calls: &mut u64,
) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: p as *mut libc::c_void,
        iov_len: n,
    };
    let ret = match call {
        // SAFETY: p is valid for n bytes (caller's guarantee).
        RwCall::Positional => unsafe {
            if write {
                libc::pwrite(fd, p as *const libc::c_void, n, off)
            } else {
                libc::pread(fd, p as *mut libc::c_void, n, off)
            }
        },
        // SAFETY: the one iovec points at p..p+n, valid for the call.
        RwCall::V2 { flags, .. } => unsafe {
            if write {
                libc::pwritev2(fd, &iov, 1, off, flags)
            } else {
                libc::preadv2(fd, &iov, 1, off, flags)
            }
        },
        // SAFETY: the one iovec points at p..p+n, valid for the call.
        RwCall::PositionalV => unsafe {
            if write {
                libc::pwritev(fd, &iov, 1, off)
            } else {
                libc::preadv(fd, &iov, 1, off)
            }
        },
        RwCall::Seek | RwCall::Current | RwCall::SeekV | RwCall::CurrentV => {
            if matches!(call, RwCall::Seek | RwCall::SeekV) {
                // SAFETY: lseek has no memory arguments.
                cvt(unsafe { libc::lseek(fd, off, libc::SEEK_SET) } as isize)?;
                *calls += 1;
            }
            // SAFETY: p is valid for n bytes (caller's guarantee); the one iovec points at
            // p..p+n.
            unsafe {
                match (matches!(call, RwCall::SeekV | RwCall::CurrentV), write) {
                    (false, true) => libc::write(fd, p as *const libc::c_void, n),
                    (false, false) => libc::read(fd, p as *mut libc::c_void, n),
                    (true, true) => libc::writev(fd, &iov, 1),
                    (true, false) => libc::readv(fd, &iov, 1),
                }
            }
        }
    };
    cvt(ret)
}

/// The file position of `fd` (`lseek(SEEK_CUR)`); 0 for a FIFO or other stream, which reads
/// and writes where it is; `None` when it cannot be known.
pub fn file_position(fd: RawFd) -> Option<u64> {
    // SAFETY: lseek takes no memory arguments.
    let r = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    match cvt(r as isize) {
        Ok(p) => Some(p as u64),
        Err(e) if e.raw_os_error() == Some(libc::ESPIPE) => Some(0),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;
    use iolab_testkit::{open_rw, TempPath};

    /// The one-call path, for each call that takes the offset with it (psync, pvsync,
    /// pvsync2): a whole transfer is one call; a read that reaches end of file goes on from
    /// the first call's answer (one more call, which returns 0) and completes with what it
    /// got; an error is the first call's, not a second call's.
    #[test]
    fn positional_whole_short_and_failed_transfers() {
        let path = TempPath::new("rw", "positional");
        let file = open_rw(&path.0, false);
        let fd = file.as_raw_fd();
        let kinds = [
            RwCall::Positional,
            RwCall::PositionalV,
            RwCall::V2 {
                flags: 0,
                nowait: false,
            },
        ];
        for kind in kinds {
            // One transfer of 8192 bytes at `off` through `buf`: its outcome and calls.
            let call = |write: bool, fd: RawFd, buf: &mut [u8], off: u64| {
                assert_eq!(buf.len(), 8192);
                let mut calls = 0;
                // SAFETY: buf is valid for its 8192 bytes during the call (and with a
                // descriptor that is not open, nothing is touched).
                let r =
                    unsafe { rw_full(write, kind, fd, buf.as_mut_ptr(), 8192, off, &mut calls) };
                (r, calls)
            };
            let mut data = iolab_testkit::pattern(7, 8192);
            let (wrote, calls) = call(true, fd, &mut data, 0);
            assert_eq!((wrote.unwrap(), calls), (8192, 1), "{kind:?}");
            let mut back = vec![0u8; 8192];
            let (read, calls) = call(false, fd, &mut back, 0);
            assert_eq!((read.unwrap(), calls), (8192, 1), "{kind:?}");
            assert_eq!(back, data);
            back.fill(0);
            let (read, calls) = call(false, fd, &mut back, 4096);
            assert_eq!((read.unwrap(), calls), (4096, 2), "{kind:?}");
            assert_eq!(back[..4096], data[4096..]);
            let (bad, calls) = call(false, -1, &mut back, 0);
            assert_eq!(bad.unwrap_err().raw_os_error(), Some(libc::EBADF));
            assert_eq!(calls, 1, "{kind:?}");
        }
    }
}
