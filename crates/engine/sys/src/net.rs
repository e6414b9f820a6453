//! Safe wrappers over the network and path system calls that `iolab serve` needs and std does
//! not offer: epoll, accept4, send/sendmsg with MSG_MORE, sendfile, eventfd, openat2 with
//! RESOLVE_BENEATH, and blocking signals to wait for them. Each wrapper owns its `unsafe`; the
//! server crate stays `forbid(unsafe_code)`.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, IoSlice};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::cvt;

/// Readable (epoll's EPOLLIN).
pub const EPOLLIN: u32 = libc::EPOLLIN as u32;
/// Writable.
pub const EPOLLOUT: u32 = libc::EPOLLOUT as u32;
/// The peer shut down its writing side.
pub const EPOLLRDHUP: u32 = libc::EPOLLRDHUP as u32;
/// Hang-up (both sides closed).
pub const EPOLLHUP: u32 = libc::EPOLLHUP as u32;
/// Error on the descriptor.
pub const EPOLLERR: u32 = libc::EPOLLERR as u32;
/// Edge-triggered: one report per change of readiness.
pub const EPOLLET: u32 = libc::EPOLLET as u32;
/// Wake one of the waiters on a shared descriptor, not all (Linux 4.5).
pub const EPOLLEXCLUSIVE: u32 = libc::EPOLLEXCLUSIVE as u32;

/// Interrupt (Ctrl-C), for [`SignalSet::block`].
pub const SIGINT: libc::c_int = libc::SIGINT;
/// Termination request, for [`SignalSet::block`].
pub const SIGTERM: libc::c_int = libc::SIGTERM;

/// An epoll instance.
#[derive(Debug)]
pub struct Epoll(OwnedFd);

/// A buffer of events for [`Epoll::wait`].
pub struct EpollEvents(Vec<libc::epoll_event>);

impl EpollEvents {
    /// Room for `n` events per wait.
    pub fn with_capacity(n: usize) -> EpollEvents {
        EpollEvents(vec![libc::epoll_event { events: 0, u64: 0 }; n.max(1)])
    }

    /// Event `i` of the last wait: (event bits, the data given at registration).
    pub fn get(&self, i: usize) -> (u32, u64) {
        let e = self.0[i];
        (e.events, e.u64)
    }
}

impl Epoll {
    /// A new epoll instance (close-on-exec).
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 takes no memory arguments.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        cvt(fd as isize)?;
        // SAFETY: fd is a new descriptor that nothing else owns.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, data: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: data };
        // SAFETY: ev is a valid epoll_event for the duration of the call (ignored for DEL).
        let r = unsafe { libc::epoll_ctl(self.0.as_raw_fd(), op, fd, &mut ev) };
        cvt(r as isize).map(|_| ())
    }

    /// Watches `fd` for `events`, reporting `data` with each event.
    pub fn add(&self, fd: &impl AsFd, events: u32, data: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd.as_fd().as_raw_fd(), events, data)
    }

    /// Changes what `fd` is watched for.
    pub fn modify(&self, fd: &impl AsFd, events: u32, data: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd.as_fd().as_raw_fd(), events, data)
    }

    /// Stops watching `fd`.
    pub fn delete(&self, fd: &impl AsFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd.as_fd().as_raw_fd(), 0, 0)
    }

    /// Waits up to `timeout_ms` (-1: forever) for events; returns how many `events` holds.
    /// EINTR is reported as zero events.
    pub fn wait(&self, events: &mut EpollEvents, timeout_ms: i32) -> io::Result<usize> {
        let cap = events.0.len().min(i32::MAX as usize) as libc::c_int;
        // SAFETY: the kernel writes at most `cap` events into the vector, which holds `cap`.
        let r =
            unsafe { libc::epoll_wait(self.0.as_raw_fd(), events.0.as_mut_ptr(), cap, timeout_ms) };
        match cvt(r as isize) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(0),
            other => other,
        }
    }
}

/// Accepts one connection, already non-blocking and close-on-exec (accept4: one call where
/// std's accept plus set_nonblocking takes two). On a non-blocking listener, `WouldBlock`
/// when none is waiting.
pub fn accept_nonblocking(listener: &TcpListener) -> io::Result<TcpStream> {
    loop {
        // SAFETY: null address pointers ask the kernel not to report the peer's address.
        let fd = unsafe {
            libc::accept4(
                listener.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        match cvt(fd as isize) {
            // SAFETY: fd is a new connected socket that nothing else owns.
            Ok(_) => return Ok(unsafe { TcpStream::from_raw_fd(fd) }),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Sends the slices in one `sendmsg` without raising SIGPIPE. `more` sets MSG_MORE: the kernel
/// holds a partial segment back because more data follows at once (a response head before its
/// sendfile body), which packs head and body together without TCP_CORK's 200 ms timer.
pub fn send_vectored(sock: &TcpStream, bufs: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
    // SAFETY: msghdr is plain old data; all-zero is a valid empty message.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = bufs.len();
    let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
    loop {
        // SAFETY: IoSlice is ABI-compatible with iovec (std guarantees it on Unix); the slices
        // outlive the call and the kernel only reads them.
        let r = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, flags) };
        match cvt(r) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// Copies up to `count` bytes of `file` from `*offset` to the socket in the kernel (sendfile);
/// advances `*offset` by what was sent. 0 means end of file.
pub fn sendfile(
    sock: &TcpStream,
    file: &File,
    offset: &mut u64,
    count: usize,
) -> io::Result<usize> {
    let mut off = *offset as libc::off_t;
    loop {
        // SAFETY: sendfile reads and updates the one off_t the pointer points at.
        let r = unsafe { libc::sendfile(sock.as_raw_fd(), file.as_raw_fd(), &mut off, count) };
        match cvt(r) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(n) => {
                *offset = off as u64;
                return Ok(n);
            }
        }
    }
}

/// Sets or clears TCP_CORK: while set, the kernel sends only full segments; clearing it sends
/// what is held at once (no Nagle wait), which makes it the end-of-response marker.
pub fn set_cork(sock: &TcpStream, on: bool) -> io::Result<()> {
    let v: libc::c_int = on.into();
    // SAFETY: setsockopt reads one c_int from the pointer, which points at `v`.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CORK,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// The connection's current maximum segment size (TCP_MAXSEG: the kernel's `mss_cache`;
/// 32768 on this machine's loopback connections as the server asks it, 1448 over most
/// Ethernet paths).
pub fn tcp_mss(sock: &TcpStream) -> io::Result<u32> {
    let v = super::sock::get_int(sock, libc::IPPROTO_TCP, libc::TCP_MAXSEG)?;
    u32::try_from(v).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))
}

/// Sets SO_LINGER to zero: closing the socket then resets the connection (RST) instead of
/// the orderly FIN, as a client that crashes or gives up does.
pub fn set_linger_zero(sock: &TcpStream) -> io::Result<()> {
    let v = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt reads one `linger` from the pointer, which points at `v`.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&v as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// Sets a listening socket's accept backlog (listen(2) again on a listening socket changes
/// it; the kernel caps it at net.core.somaxconn). std binds with 128, which a burst of
/// connections overflows: the kernel then drops their SYNs, and the clients wait and retry.
pub fn set_backlog(listener: &TcpListener, backlog: u32) -> io::Result<()> {
    let n = backlog.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: listen takes no memory arguments.
    let r = unsafe { libc::listen(listener.as_raw_fd(), n) };
    cvt(r as isize).map(|_| ())
}

/// Stops a listening socket listening, though its descriptor stays open: Linux takes
/// shutdown(SHUT_RD) on a listener as a disconnect, which resets the connections waiting in
/// its queue and makes new ones refused at once. Any thread may call it; an accept on the
/// socket then fails (EINVAL).
pub fn stop_listening(listener: &TcpListener) -> io::Result<()> {
    // SAFETY: shutdown takes no memory arguments.
    let r = unsafe { libc::shutdown(listener.as_raw_fd(), libc::SHUT_RD) };
    cvt(r as isize).map(|_| ())
}

/// cachestat(2) (Linux 6.5): the same number on every architecture that has it.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
const SYS_CACHESTAT: libc::c_long = 451;

/// Whether bytes `off..off + len` of `file` are all in the page cache, so that reading them
/// (or sendfile) will not wait for the file system: cachestat(2), counted in 4 KiB pages
/// (on larger pages the answer errs towards "no"). `None` where the kernel cannot say
/// (before 6.5, or a file system without a page cache).
pub fn page_cached(file: &File, off: u64, len: u64) -> Option<bool> {
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "loongarch64"
    ))]
    {
        if len == 0 {
            return Some(true);
        }
        // struct cachestat_range and struct cachestat (include/uapi/linux/mman.h).
        let range: [u64; 2] = [off, len];
        let mut st = [0u64; 5];
        // SAFETY: the kernel reads two u64 from `range` and writes five u64 into `st`, both
        // of which live for the call.
        let r = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                range.as_ptr(),
                st.as_mut_ptr(),
                0,
            )
        };
        if r < 0 {
            return None;
        }
        let pages = (off + len).div_ceil(4096) - off / 4096;
        Some(st[0] >= pages)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "loongarch64"
    )))]
    {
        let _ = (file, off, len);
        None
    }
}

/// An eventfd: a counter other threads can make readable to wake an epoll loop.
#[derive(Debug)]
pub struct EventFd(OwnedFd);

impl EventFd {
    /// A new non-blocking eventfd at zero.
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd takes no memory arguments.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        cvt(fd as isize)?;
        // SAFETY: fd is a new descriptor that nothing else owns.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the eventfd readable (adds one to its counter).
    pub fn notify(&self) -> io::Result<()> {
        let one: u64 = 1;
        // SAFETY: write reads 8 bytes from the pointer, which points at `one`.
        let r = unsafe { libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8) };
        cvt(r).map(|_| ())
    }

    /// Takes the counter back to zero (no longer readable); a no-op when it is zero.
    pub fn clear(&self) {
        let mut n: u64 = 0;
        // SAFETY: read writes at most 8 bytes into `n`, which has 8. EAGAIN (zero) is fine.
        let _ = unsafe { libc::read(self.0.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
    }
}

impl AsFd for EventFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Opens `path` relative to the directory `dir` so that resolution can never leave `dir`:
/// openat2 with RESOLVE_BENEATH (no `..` above it, no absolute symlinks, no symlink that leads
/// outside) and RESOLVE_NO_MAGICLINKS (no /proc/*/fd tricks). `flags` are open(2) flags;
/// O_CLOEXEC is added. ENOSYS on kernels before 5.6.
pub fn open_beneath(dir: &File, path: &CStr, flags: libc::c_int) -> io::Result<File> {
    // SAFETY: open_how is plain old data; all-zero is valid (and required for unused fields).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    loop {
        // SAFETY: path is NUL-terminated; the kernel reads sizeof(open_how) bytes from `how`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        match cvt(r as isize) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
            // SAFETY: r is a new descriptor that nothing else owns.
            Ok(fd) => return Ok(unsafe { File::from_raw_fd(fd as RawFd) }),
        }
    }
}

/// Sets or clears O_NONBLOCK on a descriptor.
pub fn set_nonblocking(fd: &impl AsFd, on: bool) -> io::Result<()> {
    let raw = fd.as_fd().as_raw_fd();
    // SAFETY: F_GETFL takes no memory arguments.
    let flags = cvt(unsafe { libc::fcntl(raw, libc::F_GETFL) } as isize)? as libc::c_int;
    let new = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    if new != flags {
        // SAFETY: F_SETFL takes an int, no memory.
        cvt(unsafe { libc::fcntl(raw, libc::F_SETFL, new) } as isize)?;
    }
    Ok(())
}

/// A set of signals blocked in the calling thread (and in threads it starts afterwards), to be
/// received with [`SignalSet::wait`] instead of by a handler.
pub struct SignalSet(libc::sigset_t);

impl SignalSet {
    /// Blocks `signals` in the calling thread. Call before starting threads, so that they
    /// inherit the mask and the signal is left to [`SignalSet::wait`].
    pub fn block(signals: &[libc::c_int]) -> io::Result<SignalSet> {
        // SAFETY: sigset_t is plain old data; sigemptyset initialises it below.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid sigset_t owned by this frame.
        unsafe { libc::sigemptyset(&mut set) };
        for &s in signals {
            // SAFETY: as above; an invalid signal number is reported as -1.
            cvt(unsafe { libc::sigaddset(&mut set, s) } as isize)?;
        }
        // SAFETY: pthread_sigmask reads `set`; the old mask is not asked for.
        let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(SignalSet(set))
    }

    /// Waits until one of the signals arrives and returns its number.
    pub fn wait(&self) -> io::Result<libc::c_int> {
        let mut sig: libc::c_int = 0;
        loop {
            // SAFETY: sigwait reads the set and writes one int through the pointer.
            let r = unsafe { libc::sigwait(&self.0, &mut sig) };
            match r {
                0 => return Ok(sig),
                libc::EINTR => continue,
                e => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn epoll_reports_a_readable_socket_with_its_data() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let s = accept_nonblocking(&l).unwrap();
        l.set_nonblocking(true).unwrap();
        let ep = Epoll::new().unwrap();
        ep.add(&s, EPOLLIN | EPOLLET, 42).unwrap();
        let mut evs = EpollEvents::with_capacity(4);
        assert_eq!(ep.wait(&mut evs, 0).unwrap(), 0);
        c.write_all(b"x").unwrap();
        assert_eq!(ep.wait(&mut evs, 1000).unwrap(), 1);
        let (bits, data) = evs.get(0);
        assert_eq!(data, 42);
        assert!(bits & EPOLLIN != 0);
        // A second accept finds nobody waiting.
        let e = accept_nonblocking(&l).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn sendfile_and_send_vectored_deliver_in_order() {
        let dir = std::env::temp_dir().join(format!("iolab-net-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        let f = File::open(&p).unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let s = accept_nonblocking(&l).unwrap();
        let head = [IoSlice::new(b"ab"), IoSlice::new(b"c")];
        assert_eq!(send_vectored(&s, &head, true).unwrap(), 3);
        let mut off = 2;
        assert_eq!(sendfile(&s, &f, &mut off, 5).unwrap(), 5);
        assert_eq!(off, 7);
        drop(s);
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"abc23456");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_beneath_refuses_to_leave_the_directory() {
        let dir = std::env::temp_dir().join(format!("iolab-beneath-{}", std::process::id()));
        let root = dir.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(dir.join("secret"), b"s").unwrap();
        std::fs::write(root.join("ok"), b"o").unwrap();
        let _ = std::os::unix::fs::symlink("../secret", root.join("out"));
        let _ = std::os::unix::fs::symlink("ok", root.join("in"));
        let rootf = File::open(&root).unwrap();
        assert!(open_beneath(&rootf, c"ok", libc::O_RDONLY).is_ok());
        assert!(open_beneath(&rootf, c"in", libc::O_RDONLY).is_ok());
        for bad in [c"../secret", c"out", c"/etc/passwd"] {
            let e = open_beneath(&rootf, bad, libc::O_RDONLY).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EXDEV), "{bad:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_stopped_listener_refuses_and_linger_zero_resets() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        set_backlog(&l, 4096).unwrap();
        let a = l.local_addr().unwrap();
        let c = TcpStream::connect(a).unwrap();
        let (mut s, _) = l.accept().unwrap();
        set_linger_zero(&c).unwrap();
        drop(c);
        let mut b = [0u8; 8];
        let e = s.read(&mut b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        stop_listening(&l).unwrap();
        let e = TcpStream::connect(a).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn page_cached_sees_a_file_just_written() {
        let p = std::env::temp_dir().join(format!("iolab-cached-{}", std::process::id()));
        std::fs::write(&p, vec![1u8; 3 * 4096]).unwrap();
        let f = File::open(&p).unwrap();
        // Written a moment ago: in the page cache (unless the kernel cannot say).
        if let Some(c) = page_cached(&f, 0, 3 * 4096) {
            assert!(c);
            // Beyond the end of the file nothing is cached.
            assert_eq!(page_cached(&f, 0, 5 * 4096), Some(false));
        }
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn eventfd_wakes_epoll() {
        let ev = EventFd::new().unwrap();
        let ep = Epoll::new().unwrap();
        ep.add(&ev, EPOLLIN, 7).unwrap();
        let mut evs = EpollEvents::with_capacity(2);
        assert_eq!(ep.wait(&mut evs, 0).unwrap(), 0);
        ev.notify().unwrap();
        assert_eq!(ep.wait(&mut evs, 1000).unwrap(), 1);
        assert_eq!(evs.get(0).1, 7);
        ev.clear();
        assert_eq!(ep.wait(&mut evs, 0).unwrap(), 0);
    }
}
