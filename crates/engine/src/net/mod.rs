//! `net` and `netsplice`, as fio's: each of a job's files is a connection. A listener (TCP
//! with `listen`, and the reading side of UDP and Unix sockets) binds when the engine opens,
//! before any job starts, and accepts when its file is added; a sender resolves its host when
//! the engine opens and connects when its file is added. [`Caps::connection`] tells the runner
//! to add files after the start line, so the listener is listening by then, and that a read of
//! 0 bytes means the peer has gone: the job ends.
//!
//! A write sends the request (TCP: with MSG_MORE while more of the job's size is to come, not
//! under pingpong); a read receives until the request is full or the peer closes (fio
//! completes a short recv and issues the rest as another I/O, so it counts more, shorter
//! reads for the same bytes). With
//! `pingpong` each request is answered: the receiver sends back what it read, the sender waits
//! for it. UDP (and, as fio, TCP) senders announce the end with fio's 8-byte close message,
//! and UDP senders the start with its open message; a UDP receiver says the close message
//! back when it ends, which ends a pingpong sender waiting for an answer. So either side may
//! be fio itself.
//! `netsplice` moves TCP data through a pipe with splice (see [`splice_out`] for why the
//! buffer is copied into the pipe rather than vmspliced); UDP and Unix sockets go through
//! send and recv there too, as in fio.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use crate::kind::Descriptor;
use crate::sys::{self, pipe, sock, sock::SockAddr};

mod opts;
mod splice;
mod wire;

use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
    SysCalls,
};
use opts::{check, interface, invalid, is_multicast};
pub use opts::{NetOpts, Proto};
use splice::{splice_in, splice_out};
use wire::{link_msg, UdpSeq, LINK_CLOSE, LINK_OPEN};

const NET_OPTIONS: &[&str] = &[
    "hostname",
    "port",
    "protocol",
    "listen",
    "pingpong",
    "nodelay",
    "ttl",
    "interface",
    "window_size",
    "mss",
];
/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const NET: Descriptor = Descriptor::data(EngineKind::Net, "net", open)
    .options(NET_OPTIONS)
    .diskless()
    .bit_based();
pub(crate) const NETSPLICE: Descriptor = Descriptor::data(EngineKind::NetSplice, "netsplice", open)
    .options(NET_OPTIONS)
    .diskless();

/// Which side of the connection the job is.
enum Role {
    /// Bound (and listening, for streams) before the start.
    Listener(OwnedFd),
    /// Where to connect or send.
    Sender(SockAddr, Option<Ipv4Addr>),
}

struct Conn {
    sock: OwnedFd,
    /// The descriptor the runner handed in (/dev/null), given back on removal.
    file: File,
    /// UDP: where the datagrams go (the sender's target, or the listener's last peer).
    peer: Option<SockAddr>,
}

impl Conn {
    /// Sends the request: a stream all of it, a datagram once.
    fn send(
        &self,
        buf: &[u8],
        flags: libc::c_int,
        udp: bool,
        calls: &mut u64,
    ) -> io::Result<usize> {
        let to = if udp { self.peer.as_ref() } else { None };
        let mut done = 0;
        while done < buf.len() {
            *calls += 1;
            done += again(|| sock::send(&self.sock, &buf[done..], flags, to))?;
            if udp {
                break;
            }
        }
        Ok(done)
    }

    /// Receives a request: a stream until it is full or the peer closes (fio completes a
    /// short recv and issues the rest as another I/O; iolab's requests are counted, so each
    /// is filled: one recv with MSG_WAITALL where fio's loop would make several); a datagram
    /// is whatever came. A datagram receiver answers whoever sent; a sender keeps its target
    /// (a multicast group is not where answers come from).
    fn recv(
        &mut self,
        buf: &mut [u8],
        udp: bool,
        listen: bool,
        calls: &mut u64,
    ) -> io::Result<usize> {
        let wait = if udp { 0 } else { sock::MSG_WAITALL };
        let mut done = 0;
        while done < buf.len() {
            *calls += 1;
            let mut from = if udp && listen {
                self.peer.as_mut()
            } else {
                None
            };
            let n = again(|| sock::recv(&self.sock, &mut buf[done..], wait, from.as_deref_mut()))?;
            done += n;
            if n == 0 || udp {
                break;
            }
        }
        Ok(done)
    }
}

pub(crate) struct NetEngine {
    kind: EngineKind,
    o: NetOpts,
    /// What a connection's errors name: `host:port`, `port N`, or the socket's path.
    peer: PathBuf,
    role: Role,
    caps: Caps,
    conns: Vec<Option<Conn>>,
    /// netsplice over TCP: (read end, write end).
    pipe: Option<(OwnedFd, OwnedFd)>,
    written: u64,
    /// A read found the end of the stream: the peer has gone.
    gone: bool,
    seq: UdpSeq,
    calls: SysCalls,
}

/// SO_RCVBUF where the socket receives, SO_SNDBUF where it sends (both under pingpong), and
/// TCP_MAXSEG: set before bind or connect, as fio does.
fn tune(kind: EngineKind, o: &NetOpts, fd: &OwnedFd) -> Result<(), EngineError> {
    let err = |what: &'static str| move |e| EngineError::os(what, kind, e);
    let w = libc::c_int::try_from(o.window_size).unwrap_or(libc::c_int::MAX);
    if w > 0 && (o.listen || o.pingpong) {
        sock::set_int(fd, sock::SOL_SOCKET, sock::SO_RCVBUF, w)
            .map_err(err("window_size (SO_RCVBUF)"))?;
    }
    if w > 0 && (!o.listen || o.pingpong) {
        sock::set_int(fd, sock::SOL_SOCKET, sock::SO_SNDBUF, w)
            .map_err(err("window_size (SO_SNDBUF)"))?;
    }
    let mss = libc::c_int::try_from(o.mss).unwrap_or(libc::c_int::MAX);
    if mss > 0 && o.proto.is_tcp() {
        sock::set_int(fd, sock::IPPROTO_TCP, sock::TCP_MAXSEG, mss)
            .map_err(err("mss (TCP_MAXSEG)"))?;
    }
    Ok(())
}

fn listener(kind: EngineKind, o: &NetOpts) -> Result<OwnedFd, EngineError> {
    let os = |what| move |e| EngineError::os(what, kind, e);
    let fd = sock::socket(o.proto.domain(), o.proto.kind()).map_err(os("socket"))?;
    if o.proto == Proto::Unix {
        let path = o.hostname.as_deref().unwrap_or_default();
        let addr =
            SockAddr::unix(OsStr::new(path)).map_err(|e| os("bind")(e).path(Path::new(path)))?;
        // As fio: a socket file left by an earlier run is replaced.
        let _ = std::fs::remove_file(path);
        sock::bind(&fd, &addr).map_err(|e| os("bind")(e).path(Path::new(path)))?;
    } else {
        sock::set_int(&fd, sock::SOL_SOCKET, sock::SO_REUSEADDR, 1)
            .map_err(os("setsockopt SO_REUSEADDR"))?;
        sock::set_int(&fd, sock::SOL_SOCKET, sock::SO_REUSEPORT, 1)
            .map_err(os("setsockopt SO_REUSEPORT"))?;
        tune(kind, o, &fd)?;
        let mut ip = if o.proto.is_v6() {
            IpAddr::from(std::net::Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::from(Ipv4Addr::UNSPECIFIED)
        };
        if let Some(h) = &o.hostname {
            let group = is_multicast(h)
                .filter(|_| o.proto.is_udp())
                .ok_or_else(|| {
                    invalid(
                        kind,
                        &format!(
                            "hostname={h}: hostname not valid for non-multicast inbound network IO"
                        ),
                    )
                })?;
            if o.proto.is_v6() {
                return Err(invalid(kind, "IPv6 not supported for multicast network IO"));
            }
            let iface = interface(kind, o)?.unwrap_or(Ipv4Addr::UNSPECIFIED);
            sock::join_multicast(&fd, group, iface).map_err(os("setsockopt IP_ADD_MEMBERSHIP"))?;
            ip = IpAddr::from(group);
        }
        let port = o.port as u16;
        sock::bind(&fd, &SockAddr::inet(SocketAddr::new(ip, port)))
            .map_err(|e| os("bind")(e).hint(format!("port {port}")))?;
    }
    if !o.proto.is_udp() {
        sock::listen(&fd, 10).map_err(os("listen"))?;
    }
    Ok(fd)
}

fn target(kind: EngineKind, o: &NetOpts) -> Result<SockAddr, EngineError> {
    let Some(host) = o.hostname.as_deref() else {
        let hint = if o.reads {
            "connect with no host to connect to (hostname=); did you forget to set 'listen'?"
        } else {
            "connect with no host to connect to (hostname=)"
        };
        return Err(invalid(kind, hint));
    };
    if o.proto == Proto::Unix {
        return SockAddr::unix(OsStr::new(host))
            .map_err(|e| EngineError::os("connect", kind, e).path(Path::new(host)));
    }
    let unresolved = |e: io::Error| {
        EngineError::new(ErrorKind::InvalidRequest, "getaddrinfo", kind)
            .hint(format!("hostname={host}: {e}"))
    };
    let found = (host, o.port as u16)
        .to_socket_addrs()
        .map_err(unresolved)?;
    let addr = found
        .into_iter()
        .find(|a| a.is_ipv6() == o.proto.is_v6())
        .ok_or_else(|| {
            let fam = if o.proto.is_v6() { "IPv6" } else { "IPv4" };
            unresolved(io::Error::other(format!("no {fam} address")))
        })?;
    Ok(SockAddr::inet(addr))
}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(build(opts)?))
}

fn build(opts: &EngineOpts) -> Result<NetEngine, EngineError> {
    let kind = opts.kind;
    let mut o = opts.net.clone();
    check(kind, &mut o)?;
    let role = if o.listen {
        Role::Listener(listener(kind, &o)?)
    } else {
        let multicast = o.hostname.as_deref().and_then(is_multicast);
        if multicast.is_some() && o.proto.is_v6() {
            return Err(invalid(kind, "multicast not supported on IPv6"));
        }
        Role::Sender(target(kind, &o)?, interface(kind, &o)?)
    };
    let pipe = if kind == EngineKind::NetSplice && o.proto.is_tcp() {
        Some(pipe::pipe().map_err(|e| EngineError::os("pipe", kind, e))?)
    } else {
        None
    };
    let peer = match (&o.hostname, o.proto, o.listen) {
        (Some(h), Proto::Unix, _) => PathBuf::from(h),
        (Some(h), _, false) => PathBuf::from(format!("{h} port {}", o.port)),
        _ => PathBuf::from(format!("port {}", o.port)),
    };
    Ok(NetEngine {
        kind,
        o,
        peer,
        role,
        caps: Caps {
            direct_io: false,
            sync_only: true,
            max_depth: 1,
            connection: true,
            finishes: true,
            ..Caps::default()
        },
        conns: Vec::new(),
        pipe,
        written: 0,
        gone: false,
        seq: UdpSeq::default(),
        calls: SysCalls::default(),
    })
}

/// A datagram receiver's connection: its bound socket, once the sender's open message has
/// come (as fio's receiver waits for it); the sender's address is where answers go.
fn wait_open(
    kind: EngineKind,
    l: &OwnedFd,
    path: &Path,
) -> Result<(OwnedFd, Option<SockAddr>), EngineError> {
    let s = l.try_clone().map_err(os_err(kind, "dup", path))?;
    let mut from = SockAddr::inet(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
    let mut m = [0u8; 8];
    let n = again(|| sock::recv(&s, &mut m, sock::MSG_WAITALL, Some(&mut from)))
        .map_err(os_err(kind, "recvfrom udp link open", path))?;
    if n != 8 || m != link_msg(LINK_OPEN) {
        let e = EngineError::new(ErrorKind::Io, "recvfrom udp link open", kind);
        return Err(e.hint("bad udp open message: the sender is not a net job"));
    }
    Ok((s, Some(from)))
}

/// A sender's connection: a stream connected, or a datagram socket (multicast TTL and
/// interface set for a group) that has sent fio's open message.
fn dial(
    kind: EngineKind,
    o: &NetOpts,
    to: &SockAddr,
    iface: Option<Ipv4Addr>,
    path: &Path,
) -> Result<(OwnedFd, Option<SockAddr>), EngineError> {
    let s = sock::socket(o.proto.domain(), o.proto.kind()).map_err(os_err(kind, "socket", path))?;
    tune(kind, o, &s)?;
    if !o.proto.is_udp() {
        sock::connect(&s, to).map_err(os_err(kind, "connect", path))?;
        return Ok((s, None));
    }
    if o.hostname.as_deref().and_then(is_multicast).is_some() {
        if let Some(i) = iface {
            sock::multicast_if(&s, i).map_err(os_err(kind, "setsockopt IP_MULTICAST_IF", path))?;
        }
        let ttl = libc::c_int::try_from(o.ttl).unwrap_or(255);
        sock::set_int(&s, sock::IPPROTO_IP, sock::IP_MULTICAST_TTL, ttl).map_err(os_err(
            kind,
            "setsockopt IP_MULTICAST_TTL",
            path,
        ))?;
    }
    sock::send(&s, &link_msg(LINK_OPEN), 0, Some(to)).map_err(os_err(
        kind,
        "sendto udp link open",
        path,
    ))?;
    Ok((s, Some(*to)))
}

fn os_err(kind: EngineKind, op: &'static str, path: &Path) -> impl Fn(io::Error) -> EngineError {
    let path = path.to_path_buf();
    move |e| EngineError::os(op, kind, e).path(&path)
}

/// Runs a call again after EINTR, unless a stop woke the thread.
fn again(mut f: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match f() {
            Err(e) if sys::is_retry(&e, false) => {}
            r => return r,
        }
    }
}

impl NetEngine {
    /// The connection for a file: accepted or connected, with the options fio sets on it.
    fn connect(&mut self, path: &Path) -> Result<(OwnedFd, Option<SockAddr>), EngineError> {
        let (kind, o, calls) = (self.kind, &self.o, &mut self.calls.io);
        *calls += 1;
        let (sock, peer) = match &self.role {
            Role::Listener(l) if o.proto.is_udp() => wait_open(kind, l, path)?,
            Role::Listener(l) => {
                let s = again_fd(|| sock::accept(l)).map_err(os_err(kind, "accept", path))?;
                (s, None)
            }
            Role::Sender(to, iface) => dial(kind, o, to, *iface, path)?,
        };
        if o.nodelay && o.proto.is_tcp() {
            sock::set_int(&sock, sock::IPPROTO_TCP, sock::TCP_NODELAY, 1).map_err(|e| {
                os_err(kind, "setsockopt TCP_NODELAY", path)(e).hint("disable with nodelay=0")
            })?;
        }
        Ok((sock, peer))
    }

    fn transfer(&mut self, req: &mut Req, op: Op) -> io::Result<usize> {
        let i = req.file.0 as usize;
        let c = self
            .conns
            .get_mut(i)
            .and_then(Option::as_mut)
            .ok_or_else(crate::files::ebadf)?;
        let buf = &mut req.buf.as_mut_slice()[..req.len];
        let (udp, listen) = (self.o.proto.is_udp(), self.o.listen);
        match (op, &self.pipe) {
            (Op::Write, Some(p)) => splice_out(p, &c.sock, buf, &mut self.calls.io),
            (Op::Read, Some(p)) => splice_in(p, &c.sock, buf, &mut self.calls.io),
            (Op::Write, None) => {
                let more = !udp
                    && !self.o.pingpong
                    && self
                        .o
                        .size
                        .is_none_or(|s| (self.written + buf.len() as u64) < s);
                if udp {
                    self.seq.stamp(buf);
                }
                let done = c.send(
                    buf,
                    if more { sock::MSG_MORE } else { 0 },
                    udp,
                    &mut self.calls.io,
                )?;
                self.written += done as u64;
                Ok(done)
            }
            (Op::Read, None) => {
                let n = c.recv(buf, udp, listen, &mut self.calls.io)?;
                // A whole datagram only: a shorter one (the close message) leaves an earlier
                // datagram's trailer in the buffer.
                if udp && n == buf.len() {
                    self.seq.check(buf);
                }
                Ok(n)
            }
            _ => Ok(0),
        }
    }

    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let op = req.op;
        if !op.is_data() {
            return Ok(0);
        }
        if !self.o.proto.is_tcp() && (self.o.listen == (op == Op::Write)) {
            // fio's prep: a datagram receiver does not write, nor a sender read.
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let n = self.transfer(req, op)?;
        // fio's close message ends the job: a datagram of its own, or a stream's last 8 bytes
        // at a request's start (the stream ends there, so the request gets no more).
        if op == Op::Read && self.is_close(req, n) {
            return Ok(0);
        }
        if !self.o.pingpong || n == 0 {
            return Ok(n);
        }
        let back = match op {
            Op::Read if self.o.reads => Op::Write,
            Op::Write if self.o.writes => Op::Read,
            _ => return Ok(n),
        };
        let len = req.len;
        req.len = n;
        let r = self.transfer(req, back);
        req.len = len;
        // A sender waiting for its answer may get the receiver's goodbye instead (a datagram
        // receiver says it when it ends, as fio's does), or the end of the stream: the job
        // ends with this write, instead of waiting for an answer that will never come.
        if back == Op::Read && matches!(r, Ok(m) if m == 0 || self.is_close(req, m)) {
            self.gone = true;
        }
        r.map(|_| n)
    }

    /// `n` bytes read into the request are fio's close message.
    fn is_close(&self, req: &Req, n: usize) -> bool {
        n == 8 && req.len > 8 && req.buf.as_slice()[..8] == link_msg(LINK_CLOSE)
    }

    fn close(&mut self, c: &Conn) {
        // Both sides say goodbye as fio does; a peer that has gone already is no error. A
        // datagram receiver says it to whoever sent last (a pingpong sender waiting for an
        // answer ends on it; over a stream the end of the stream tells it). A datagram can be
        // lost like any other when the receiver is behind, and then the receiver would wait
        // for ever: a sender says it three times over UDP, 10 ms apart (fio says it once; the
        // receiver ends at the first it sees).
        let udp = self.o.proto.is_udp();
        if self.o.listen && !udp {
            return;
        }
        let times = if udp && !self.o.listen { 3 } else { 1 };
        for i in 0..times {
            if i > 0 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            self.calls.io += 1;
            let _ = sock::send(&c.sock, &link_msg(LINK_CLOSE), 0, c.peer.as_ref());
        }
    }
}

fn again_fd(mut f: impl FnMut() -> io::Result<OwnedFd>) -> io::Result<OwnedFd> {
    loop {
        match f() {
            Err(e) if sys::is_retry(&e, false) => {}
            r => return r,
        }
    }
}

impl Engine for NetEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        let side = if self.o.listen { "listen" } else { "connect" };
        format!("{} ({:?}, {side})", self.kind, self.o.proto).to_lowercase()
    }

    fn add_file(&mut self, file: File, _path: &Path) -> Result<FileId, EngineError> {
        let (sock, peer) = self.connect(&self.peer.clone())?;
        let id = FileId(self.conns.len() as u32);
        self.conns.push(Some(Conn { sock, file, peer }));
        Ok(id)
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        let c = self
            .conns
            .get_mut(id.0 as usize)
            .and_then(Option::take)
            .ok_or_else(|| crate::files::bad_file(id, self.kind, "remove_file"))?;
        self.close(&c);
        Ok(c.file)
    }

    fn queue(&mut self, mut req: Req) -> Queued {
        let result = self.run(&mut req);
        if req.op == Op::Read && req.len > 0 && matches!(result, Ok(0)) {
            self.gone = true;
        }
        Queued::Done(Done { req, result })
    }

    fn finished(&self) -> bool {
        self.gone
    }

    fn dropped(&self) -> u64 {
        self.seq.dropped
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}

impl Drop for NetEngine {
    fn drop(&mut self) {
        let conns = std::mem::take(&mut self.conns);
        for c in conns.iter().flatten() {
            self.close(c);
        }
        if let (true, Proto::Unix, Some(p)) = (self.o.listen, self.o.proto, &self.o.hostname) {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    fn sender(port: u16, set: impl FnOnce(&mut NetOpts)) -> NetEngine {
        let mut o = EngineOpts::new(EngineKind::Net, 1);
        o.net = NetOpts {
            hostname: Some("127.0.0.1".into()),
            port: u32::from(port),
            ..NetOpts::default()
        };
        set(&mut o.net);
        build(&o).unwrap()
    }

    fn null() -> File {
        File::open("/dev/null").unwrap()
    }

    #[test]
    fn a_pingpong_sender_reads_each_answer_into_its_buffer() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // The peer answers each block with its bytes inverted, so the answer shows in the
        // sender's buffer only if it was read there.
        let peer = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut blocks = 0;
            let mut b = [0u8; 4096];
            while s.read_exact(&mut b).is_ok() {
                b.iter_mut().for_each(|x| *x = !*x);
                s.write_all(&b).unwrap();
                blocks += 1;
            }
            blocks
        });
        let mut e = sender(port, |n| n.pingpong = true);
        let f = e.add_file(null(), Path::new("t")).unwrap();
        for seed in 0..4u8 {
            let sent = crate::testutil::pattern(4096, seed);
            let want: Vec<u8> = sent.as_slice().iter().map(|x| !x).collect();
            let Queued::Done(d) = e.queue(Req::write(f, 0, sent)) else {
                panic!("net completes in queue");
            };
            assert_eq!(d.result.unwrap(), 4096);
            assert!(d.req.buf.as_slice() == want.as_slice(), "answer {seed}");
        }
        drop(e);
        assert_eq!(peer.join().unwrap(), 4);
    }

    /// fio's receiver says goodbye when it ends (its file is closed); a pingpong sender that
    /// waits for an answer gets that instead and ends, where it used to wait for ever (the
    /// corpus' netio_multicast.fio, whose receivers end at their runtime).
    #[test]
    fn a_udp_pingpong_sender_ends_when_its_receiver_says_goodbye() {
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut o = EngineOpts::new(EngineKind::Net, 1);
        o.net = NetOpts {
            proto: Proto::Udp,
            port: u32::from(port),
            pingpong: true,
            reads: true,
            writes: false,
            ..NetOpts::default()
        };
        let mut rx = build(&o).unwrap();
        // The receiver answers one datagram, then ends.
        let receiver = std::thread::spawn(move || {
            let f = rx.add_file(null(), Path::new("r")).unwrap();
            let Queued::Done(d) = rx.queue(Req::read(f, 0, crate::Buf::new(64).unwrap())) else {
                panic!("net completes in queue");
            };
            assert_eq!(d.result.unwrap(), 64);
            drop(rx);
        });
        let mut tx = sender(port, |n| {
            n.proto = Proto::Udp;
            n.pingpong = true;
        });
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let f = tx.add_file(null(), Path::new("t")).unwrap();
            let mut results = Vec::new();
            for seed in 0..2u8 {
                let Queued::Done(d) =
                    tx.queue(Req::write(f, 0, crate::testutil::pattern(64, seed)))
                else {
                    panic!("net completes in queue");
                };
                results.push(d.result.unwrap());
                results.push(usize::from(tx.finished()));
            }
            let _ = done.send(results);
        });
        receiver.join().unwrap();
        let results = ended
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the sender still waits for an answer 10 s after its receiver ended");
        // The first write is answered; the second gets the goodbye, and the job ends there.
        assert_eq!(results, [64, 0, 64, 1]);
    }

    #[test]
    fn nodelay_window_size_and_mss_are_set_on_the_connection() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut e = sender(port, |n| {
            n.nodelay = true;
            n.window_size = 256 * 1024;
            n.mss = 1000;
        });
        e.add_file(null(), Path::new("t")).unwrap();
        let _peer = l.accept().unwrap();
        let conn = &e.conns[0].as_ref().unwrap().sock;
        let get = |level, name| sock::get_int(conn, level, name).unwrap();
        assert_eq!(get(sock::IPPROTO_TCP, sock::TCP_NODELAY), 1);
        // The kernel doubles what it is given for its own bookkeeping.
        assert_eq!(get(sock::SOL_SOCKET, sock::SO_SNDBUF), 2 * 256 * 1024);
        assert!(get(sock::IPPROTO_TCP, sock::TCP_MAXSEG) <= 1000);
    }

    #[test]
    fn datagrams_never_seen_are_counted_as_dropped_from_fio_s_numbers() {
        let (mut tx, mut rx) = (UdpSeq::default(), UdpSeq::default());
        let mut bufs: Vec<Vec<u8>> = (0..5).map(|_| vec![0u8; 4096]).collect();
        for b in &mut bufs {
            tx.stamp(b);
        }
        // Numbers 0, 1 and 4 arrive: 2 and 3 were lost.
        for i in [0, 1, 4] {
            rx.check(&bufs[i]);
        }
        assert_eq!(rx.dropped, 2);
        // A trailer that gives another size is not fio's: no more counting.
        let mut odd = bufs[0].clone();
        odd[4096 - 8..].copy_from_slice(&1000u64.to_le_bytes());
        rx.check(&odd);
        rx.check(&bufs[3]);
        assert!(rx.off);
        assert_eq!(rx.dropped, 2);
    }

    #[test]
    fn a_unix_listener_without_a_path_and_a_udp_listen_are_refused_as_fio_does() {
        let mut o = EngineOpts::new(EngineKind::Net, 1);
        o.net.proto = Proto::Unix;
        o.net.reads = true;
        o.net.writes = false;
        let e = open(&o).err().unwrap().to_string();
        assert!(e.contains("UNIX sockets need host/filename"), "{e}");
        o.net = NetOpts {
            proto: Proto::Udp,
            port: 4000,
            listen: true,
            ..NetOpts::default()
        };
        let e = open(&o).err().unwrap().to_string();
        assert!(e.contains("listen only valid for TCP"), "{e}");
        o.net = NetOpts {
            port: 4000,
            hostname: Some("127.0.0.1".into()),
            listen: true,
            ..NetOpts::default()
        };
        let e = open(&o).err().unwrap().to_string();
        assert!(e.contains("not valid for non-multicast inbound"), "{e}");
    }
}
