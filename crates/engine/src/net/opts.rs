//! The net engines' options, and fio's checks of them.

use std::net::Ipv4Addr;

use crate::sys::sock;
use crate::{EngineError, EngineKind, ErrorKind};

/// fio's `protocol=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Proto {
    #[default]
    Tcp,
    TcpV6,
    Udp,
    UdpV6,
    Unix,
}

impl Proto {
    /// fio's name for the protocol.
    pub fn from_name(s: &str) -> Option<Proto> {
        Some(match s {
            "tcp" => Proto::Tcp,
            "tcpv6" => Proto::TcpV6,
            "udp" => Proto::Udp,
            "udpv6" => Proto::UdpV6,
            "unix" => Proto::Unix,
            _ => return None,
        })
    }

    pub(crate) fn is_tcp(self) -> bool {
        matches!(self, Proto::Tcp | Proto::TcpV6)
    }

    pub(crate) fn is_udp(self) -> bool {
        matches!(self, Proto::Udp | Proto::UdpV6)
    }

    pub(crate) fn is_v6(self) -> bool {
        matches!(self, Proto::TcpV6 | Proto::UdpV6)
    }

    pub(crate) fn domain(self) -> libc::c_int {
        match self {
            Proto::Tcp | Proto::Udp => sock::AF_INET,
            Proto::TcpV6 | Proto::UdpV6 => sock::AF_INET6,
            Proto::Unix => sock::AF_UNIX,
        }
    }

    pub(crate) fn kind(self) -> libc::c_int {
        if self.is_udp() {
            sock::SOCK_DGRAM
        } else {
            sock::SOCK_STREAM
        }
    }
}

/// The net engines' options (fio's names), and what the runner says of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetOpts {
    /// The host to connect to, a multicast group to join, or the Unix socket's path (fio's
    /// `hostname`, else the job's `filename`).
    pub hostname: Option<String>,
    /// TCP/UDP port (0: none given); clones of a job use the ports after it, as fio.
    pub port: u32,
    pub proto: Proto,
    /// TCP: accept a connection rather than make one.
    pub listen: bool,
    /// Answer every request (receiver) or wait for its answer (sender).
    pub pingpong: bool,
    /// TCP_NODELAY on the connection.
    pub nodelay: bool,
    /// IP_MULTICAST_TTL of a multicast sender (fio's default 1).
    pub ttl: u32,
    /// The address of the interface for multicast (IP_MULTICAST_IF, IP_ADD_MEMBERSHIP).
    pub interface: Option<String>,
    /// SO_RCVBUF/SO_SNDBUF in bytes (0: the kernel's).
    pub window_size: u32,
    /// TCP_MAXSEG (0: the kernel's).
    pub mss: u32,
    /// The job reads (set by the runner from `rw`).
    pub reads: bool,
    /// The job writes.
    pub writes: bool,
    /// The job's offsets are random (refused, as fio).
    pub random: bool,
    /// Bytes the job writes in all (None: unbounded, time based): MSG_MORE goes with every
    /// send before the last.
    pub size: Option<u64>,
}

impl Default for NetOpts {
    fn default() -> NetOpts {
        NetOpts {
            hostname: None,
            port: 0,
            proto: Proto::Tcp,
            listen: false,
            pingpong: false,
            nodelay: false,
            ttl: 1,
            interface: None,
            window_size: 0,
            mss: 0,
            reads: false,
            writes: true,
            random: false,
            size: None,
        }
    }
}

pub(super) fn invalid(kind: EngineKind, why: &str) -> EngineError {
    EngineError::new(ErrorKind::InvalidRequest, "open", kind).hint(why)
}

/// fio's checks of a net job, in fio's order and words; `listen` follows the direction for
/// datagram and Unix sockets.
pub(super) fn check(kind: EngineKind, o: &mut NetOpts) -> Result<(), EngineError> {
    if o.random {
        return Err(invalid(
            kind,
            "network IO can't be random; use rw=read or rw=write",
        ));
    }
    if o.proto == Proto::Unix && o.port != 0 {
        return Err(invalid(kind, "network IO port not valid with unix socket"));
    }
    if o.proto != Proto::Unix && o.port == 0 {
        return Err(invalid(
            kind,
            "network IO requires port for tcp or udp (port=)",
        ));
    }
    if o.port > 65535 {
        return Err(invalid(kind, &format!("port={}: at most 65535", o.port)));
    }
    if !o.proto.is_tcp() {
        if o.listen {
            return Err(invalid(kind, "listen only valid for TCP proto IO"));
        }
        if o.reads && o.writes {
            return Err(invalid(
                kind,
                "datagram network connections must be read OR write",
            ));
        }
        if o.proto == Proto::Unix && o.hostname.is_none() {
            return Err(invalid(kind, "UNIX sockets need host/filename"));
        }
        o.listen = o.reads;
    }
    Ok(())
}

pub(super) fn is_multicast(host: &str) -> Option<Ipv4Addr> {
    host.parse::<Ipv4Addr>().ok().filter(Ipv4Addr::is_multicast)
}

pub(super) fn interface(kind: EngineKind, o: &NetOpts) -> Result<Option<Ipv4Addr>, EngineError> {
    match &o.interface {
        None => Ok(None),
        Some(i) => i
            .parse::<Ipv4Addr>()
            .map(Some)
            .map_err(|_| invalid(kind, &format!("interface={i}: not a valid interface IP"))),
    }
}
