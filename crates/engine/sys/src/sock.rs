//! Sockets for the `net` and `netsplice` engines: created, configured, bound, connected and
//! used through the plain calls (fio sets its socket options before `bind`/`connect`, which
//! std's types do not allow), and `splice` between a socket and a pipe. Each wrapper owns its
//! `unsafe`.

use std::ffi::OsStr;
use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::cvt;

pub use libc::{
    AF_INET, AF_INET6, AF_UNIX, IPPROTO_IP, IPPROTO_TCP, IP_MULTICAST_TTL, MSG_MORE, MSG_WAITALL,
    SOCK_DGRAM, SOCK_STREAM, SOL_SOCKET, SO_RCVBUF, SO_REUSEADDR, SO_REUSEPORT, SO_SNDBUF,
    TCP_MAXSEG, TCP_NODELAY,
};

/// A socket address of any family, as the kernel takes it.
#[derive(Clone, Copy)]
pub struct SockAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl std::fmt::Debug for SockAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SockAddr(family {}, {} bytes)", self.family(), self.len)
    }
}

impl SockAddr {
    fn zeroed() -> SockAddr {
        SockAddr {
            // SAFETY: sockaddr_storage is plain old data; all-zero is a valid (unspecified) value.
            storage: unsafe { std::mem::zeroed() },
            len: size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    /// The address family (AF_INET, AF_INET6, AF_UNIX).
    pub fn family(&self) -> libc::c_int {
        libc::c_int::from(self.storage.ss_family)
    }

    /// An IPv4 or IPv6 address.
    pub fn inet(addr: SocketAddr) -> SockAddr {
        let mut a = SockAddr::zeroed();
        let p = (&mut a.storage as *mut libc::sockaddr_storage).cast::<u8>();
        match addr {
            SocketAddr::V4(v4) => {
                let sin = libc::sockaddr_in {
                    sin_family: AF_INET as libc::sa_family_t,
                    sin_port: v4.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(v4.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned;
                // the write covers only the storage.
                unsafe { p.cast::<libc::sockaddr_in>().write(sin) };
                a.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
            }
            SocketAddr::V6(v6) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: AF_INET6 as libc::sa_family_t,
                    sin6_port: v6.port().to_be(),
                    sin6_flowinfo: v6.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: v6.ip().octets(),
                    },
                    sin6_scope_id: v6.scope_id(),
                };
                // SAFETY: as above, for sockaddr_in6.
                unsafe { p.cast::<libc::sockaddr_in6>().write(sin6) };
                a.len = size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            }
        }
        a
    }

    /// A Unix socket path; a path too long for `sun_path` is ENAMETOOLONG.
    pub fn unix(path: &OsStr) -> io::Result<SockAddr> {
        let mut a = SockAddr::zeroed();
        // SAFETY: sockaddr_storage is larger than sockaddr_un and suitably aligned.
        let sun = unsafe {
            &mut *(&mut a.storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_un>()
        };
        let bytes = path.as_bytes();
        if bytes.is_empty() || bytes.len() >= sun.sun_path.len() || bytes.contains(&0) {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        sun.sun_family = AF_UNIX as libc::sa_family_t;
        for (d, s) in sun.sun_path.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        a.len = (size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t;
        Ok(a)
    }

    fn ptr(&self) -> *const libc::sockaddr {
        (&self.storage as *const libc::sockaddr_storage).cast()
    }
}

/// A new socket (close-on-exec) of `domain` and `ty`.
pub fn socket(domain: libc::c_int, ty: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket takes no memory arguments.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, 0) } as isize)?;
    // SAFETY: fd is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `setsockopt` of an int-valued option.
pub fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: v lives for the call and its size is passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// `getsockopt` of an int-valued option.
pub fn get_int(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: v and len are ours for the call; the kernel writes at most len bytes into v.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    cvt(r as isize).map(|_| v)
}

fn set_in_addr<T>(fd: &OwnedFd, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: v is a live value of the size passed, read by the kernel during the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            IPPROTO_IP,
            name,
            (v as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    cvt(r as isize).map(|_| ())
}

fn in_addr(a: Ipv4Addr) -> libc::in_addr {
    libc::in_addr {
        s_addr: u32::from_ne_bytes(a.octets()),
    }
}

/// Joins the multicast group `group` on the interface with address `iface` (IP_ADD_MEMBERSHIP).
pub fn join_multicast(fd: &OwnedFd, group: Ipv4Addr, iface: Ipv4Addr) -> io::Result<()> {
    let mr = libc::ip_mreq {
        imr_multiaddr: in_addr(group),
        imr_interface: in_addr(iface),
    };
    set_in_addr(fd, libc::IP_ADD_MEMBERSHIP, &mr)
}

/// Sends multicast through the interface with address `iface` (IP_MULTICAST_IF).
pub fn multicast_if(fd: &OwnedFd, iface: Ipv4Addr) -> io::Result<()> {
    set_in_addr(fd, libc::IP_MULTICAST_IF, &in_addr(iface))
}

/// `bind`.
pub fn bind(fd: &OwnedFd, addr: &SockAddr) -> io::Result<()> {
    // SAFETY: addr points at a valid address of addr.len bytes.
    cvt(unsafe { libc::bind(fd.as_raw_fd(), addr.ptr(), addr.len) } as isize).map(|_| ())
}

/// `listen` with room for `backlog` pending connections.
pub fn listen(fd: &OwnedFd, backlog: libc::c_int) -> io::Result<()> {
    // SAFETY: listen takes no memory arguments.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), backlog) } as isize).map(|_| ())
}

/// `connect` (blocking).
pub fn connect(fd: &OwnedFd, addr: &SockAddr) -> io::Result<()> {
    // SAFETY: addr points at a valid address of addr.len bytes.
    cvt(unsafe { libc::connect(fd.as_raw_fd(), addr.ptr(), addr.len) } as isize).map(|_| ())
}

/// `accept4` (blocking), close-on-exec.
pub fn accept(fd: &OwnedFd) -> io::Result<OwnedFd> {
    // SAFETY: null address and length: the peer's address is not asked for.
    let r = unsafe {
        libc::accept4(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_CLOEXEC,
        )
    };
    let fd = cvt(r as isize)?;
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `send`, or `sendto` when `to` is given; never raises SIGPIPE.
pub fn send(
    fd: &OwnedFd,
    buf: &[u8],
    flags: libc::c_int,
    to: Option<&SockAddr>,
) -> io::Result<usize> {
    let flags = flags | libc::MSG_NOSIGNAL;
    let (addr, len) = to.map_or((std::ptr::null(), 0), |a| (a.ptr(), a.len));
    // SAFETY: buf is readable for its length during the call; addr is null or valid for len.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            flags,
            addr,
            len,
        )
    };
    cvt(n)
}

/// `recv`, or `recvfrom` into `from` when given (the sender's address, for a reply).
pub fn recv(
    fd: &OwnedFd,
    buf: &mut [u8],
    flags: libc::c_int,
    from: Option<&mut SockAddr>,
) -> io::Result<usize> {
    let n = match from {
        Some(a) => {
            a.len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            let p = (&mut a.storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr>();
            // SAFETY: buf is writable for its length; the kernel writes at most a.len bytes of
            // address into the storage and updates a.len.
            unsafe {
                libc::recvfrom(
                    fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    flags,
                    p,
                    &mut a.len,
                )
            }
        }
        // SAFETY: buf is writable for its length during the call.
        None => unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), flags) },
    };
    cvt(n)
}

/// `splice` between two descriptors without offsets (a socket and a pipe).
pub fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: no memory is passed; null offsets mean "the descriptors' own positions".
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE,
        )
    };
    cvt(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unix_path_too_long_for_sun_path_is_refused() {
        let long = "x".repeat(200);
        let e = SockAddr::unix(OsStr::new(&long)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENAMETOOLONG));
        assert_eq!(
            SockAddr::unix(OsStr::new("/tmp/s")).unwrap().family(),
            AF_UNIX
        );
    }

    #[test]
    fn loopback_datagram_goes_through() {
        let a = socket(AF_INET, SOCK_DGRAM).unwrap();
        bind(&a, &SockAddr::inet("127.0.0.1:0".parse().unwrap())).unwrap();
        let std_a = std::net::UdpSocket::from(a.try_clone().unwrap());
        let to = SockAddr::inet(std_a.local_addr().unwrap());
        let b = socket(AF_INET, SOCK_DGRAM).unwrap();
        assert_eq!(send(&b, b"hello", 0, Some(&to)).unwrap(), 5);
        let mut buf = [0u8; 16];
        let mut from = SockAddr::zeroed();
        assert_eq!(recv(&a, &mut buf, 0, Some(&mut from)).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(from.family(), AF_INET);
    }
}
