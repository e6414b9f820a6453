//! Pipes, `splice` and `vmsplice`, for the splice engine.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::cvt;

/// Most bytes moved through the pipe at once: its default capacity (fio's SPLICE_DEF_SIZE).
pub const CHUNK: usize = 64 * 1024;

/// A pipe: (read end, write end), close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds is a two-element array the kernel fills with two new descriptors.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } as isize)?;
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `splice` from a file at `off` into the pipe's write end.
pub fn file_to_pipe(fd: RawFd, off: u64, pipe_w: &OwnedFd, len: usize) -> io::Result<usize> {
    let mut o =
        libc::loff_t::try_from(off).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: o is a valid loff_t the kernel reads and advances; no other memory is passed.
    let n = unsafe {
        libc::splice(
            fd,
            &mut o,
            pipe_w.as_raw_fd(),
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE,
        )
    };
    cvt(n)
}

/// `splice` from the pipe's read end into a file at `off`.
pub fn pipe_to_file(pipe_r: &OwnedFd, fd: RawFd, off: u64, len: usize) -> io::Result<usize> {
    let mut o =
        libc::loff_t::try_from(off).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: as above; o is ours for the call.
    let n = unsafe {
        libc::splice(
            pipe_r.as_raw_fd(),
            std::ptr::null_mut(),
            fd,
            &mut o,
            len,
            libc::SPLICE_F_MOVE,
        )
    };
    cvt(n)
}

/// `vmsplice` of `len` bytes at `ptr` into the pipe (write end) or out of it to `ptr` (read
/// end). Returns the bytes moved.
///
/// # Safety
/// `ptr..ptr+len` must be valid memory (writable for the read end) for the whole call.
pub unsafe fn vmsplice(pipe: &OwnedFd, ptr: *mut u8, len: usize) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: ptr.cast(),
        iov_len: len,
    };
    // SAFETY: the caller guarantees the memory; iov lives for the call.
    let n = unsafe { libc::vmsplice(pipe.as_raw_fd(), &iov, 1, 0) };
    cvt(n)
}

/// `write` of `buf` into the pipe's write end: a copy, unlike [`vmsplice`], whose pages a
/// socket spliced from the pipe keeps referencing until the data is acknowledged.
pub fn write(pipe_w: &OwnedFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is readable for its length during the call.
    let n = unsafe { libc::write(pipe_w.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    cvt(n)
}
