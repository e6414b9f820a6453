//! One connection's state, and the socket calls that move it: reading a request head in,
//! sending a response out (head, then a buffer, a static body or sendfile).

use std::fs::File;
use std::io::{self, IoSlice, Read};
use std::net::{IpAddr, TcpStream};
use std::sync::Arc;

use iolab_engine::{Buf, OutBody, Outgoing};
use iolab_sys::net;

use crate::cache::Handle;
use crate::path::Found;
use crate::route::{self, Body};

mod slice;

#[cfg(test)]
use slice::SENDFILE_CHUNK;
use slice::{must_page_in, next_slice};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Waiting for (the rest of) a request head.
    Idle,
    /// The body is being read through the engine.
    Reading,
    /// A helper is opening the file or paging it in (see `Conn::pending`).
    Waiting,
    Sending,
}

/// What a connection in `State::Waiting` does when its helper is done.
pub(crate) enum Pending {
    None,
    /// The path is being opened: the request is answered again, from what was found.
    Open,
    /// The file is being paged in, then read through the engine.
    Read {
        id: iolab_engine::FileId,
        off: u64,
        len: u64,
        direct: bool,
        rep: route::Reply,
    },
    /// The next stretch of a sendfile body is being paged in.
    Send,
}

/// What `flush` came to.
pub(crate) enum Flush {
    Done,
    /// The socket is full: wait for it.
    Wait,
    /// These bytes of the file are not in the page cache: sendfile would wait for them.
    PageIn(u64, u64),
    /// The head and a buffered body are to go through the ring (`Conn::fed`).
    Ring,
    /// A slice of the body went and more remains: the other connections go first.
    Yield,
}

/// The response being sent: the head in `Conn::wbuf`, then this.
pub(crate) enum Out {
    None,
    Static(&'static [u8], usize),
    Owned(Vec<u8>, usize),
    Buf {
        buf: Buf,
        pos: usize,
        end: usize,
    },
    File {
        file: Arc<File>,
        off: u64,
        end: u64,
    },
    /// `multipart/byteranges` laid out in `Conn::mp`: part `k`, at `fpos` in the framing and
    /// `off` in the file.
    Multi {
        file: Arc<File>,
        k: usize,
        fpos: usize,
        off: u64,
    },
}

pub(crate) struct Conn {
    pub(crate) sock: Option<TcpStream>,
    pub(crate) gen: u32,
    pub(crate) peer: Option<IpAddr>,
    pub(crate) rbuf: Vec<u8>,
    pub(crate) rstart: usize,
    pub(crate) rend: usize,
    pub(crate) wbuf: Vec<u8>,
    pub(crate) wpos: usize,
    pub(crate) out: Out,
    pub(crate) state: State,
    pub(crate) keep: bool,
    /// Edge-triggered: bytes may be waiting that we have not read.
    pub(crate) readable: bool,
    /// The peer closed, reset or failed: read on to the end (or the error) even after a short
    /// read, since no further edge will come to say the end is there.
    pub(crate) hup: bool,
    pub(crate) eof: bool,
    /// Idle: the time by which a whole request head must have arrived. Sending: the time by
    /// which the client must have taken more bytes.
    pub(crate) deadline: u64,
    /// Idle: when the first byte of the head being read arrived (0: none yet). See
    /// [`Conn::head_deadline`].
    pub(crate) head_start: u64,
    pub(crate) status: u16,
    pub(crate) body_sent: u64,
    pub(crate) request_line: Vec<u8>,
    /// Referer and User-Agent for the combined log (whether sent, and the value).
    pub(crate) log_fields: [(bool, Vec<u8>); 2],
    /// Where the body starts in the buffer an engine read fills.
    pub(crate) read_range: (usize, usize),
    pub(crate) pending: Pending,
    /// The parts of a multipart/byteranges response.
    pub(crate) mp: route::Multipart,
    /// What a helper found for the path of the buffered request.
    pub(crate) resolved: Option<(Found, Option<File>)>,
    /// The next sendfile goes ahead without looking at the page cache (just paged in).
    pub(crate) paged: bool,
    /// The whole file was found in the page cache when the response began: none of its
    /// slices asks again (a 1 MiB body made three cachestat calls more a response).
    pub(crate) resident: bool,
    /// Fed by a ring (`--net io_uring`): input arrives in `inbox`, never read from the socket.
    pub(crate) fed: bool,
    /// Bytes the ring received that the request buffer has yet to take, from `inbox_pos`.
    pub(crate) inbox: Vec<u8>,
    pub(crate) inbox_pos: usize,
    /// The ring saw the peer's end of stream: `eof` once the inbox is empty.
    pub(crate) peer_closed: bool,
    /// The ring holds the head and body (a send in flight): nothing to do until it is back.
    pub(crate) in_ring: bool,
    /// The socket's segment size, asked once a connection, for its first body longer than
    /// a slice (0: not asked; `u32::MAX`: the kernel would not say). See [`slice_len`].
    pub(crate) mss: u32,
}

impl Conn {
    pub(crate) fn new() -> Conn {
        Conn {
            sock: None,
            gen: 0,
            peer: None,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(512),
            wpos: 0,
            out: Out::None,
            state: State::Idle,
            keep: true,
            readable: false,
            hup: false,
            eof: false,
            deadline: 0,
            head_start: 0,
            status: 0,
            body_sent: 0,
            request_line: Vec::new(),
            log_fields: [(false, Vec::new()), (false, Vec::new())],
            read_range: (0, 0),
            pending: Pending::None,
            mp: route::Multipart::default(),
            resolved: None,
            paged: false,
            resident: false,
            fed: false,
            inbox: Vec::new(),
            inbox_pos: 0,
            peer_closed: false,
            in_ring: false,
            mss: 0,
        }
    }
}

impl Conn {
    /// When a connection waiting for a request head is closed: at `deadline` (the idle
    /// timeout), or sooner once a head has begun and falls behind `rate` bytes a second after
    /// `grace_ns` (mod_reqtimeout's MinRate). Also the order of eviction when every slot is
    /// taken: the earliest first, so silent and idle keep-alive connections go oldest first,
    /// half-sent heads slowest first, and a new client, whose whole timeout is ahead, last.
    pub(crate) fn head_deadline(&self, rate: u64, grace_ns: u64) -> u64 {
        if rate == 0 || self.head_start == 0 {
            return self.deadline;
        }
        let got = (self.rend - self.rstart + self.inbox.len() - self.inbox_pos) as u64;
        let earned = u128::from(got) * 1_000_000_000 / u128::from(rate);
        let by_rate = u128::from(self.head_start + grace_ns) + earned;
        self.deadline.min(by_rate.min(u128::from(u64::MAX)) as u64)
    }
}

/// A reply's head is in `c.wbuf`: its status and keep-alive taken, nothing of it sent yet.
pub(crate) fn begin(c: &mut Conn, rep: &route::Reply) {
    c.status = rep.status;
    c.keep = c.keep && rep.keep_alive;
    c.wpos = 0;
    c.body_sent = 0;
}

/// Starts sending a reply whose head is in `c.wbuf`.
pub(crate) fn start(c: &mut Conn, rep: route::Reply, handle: Option<Handle>) {
    begin(c, &rep);
    c.out = match (rep.body, handle) {
        (Body::Static(b), _) => Out::Static(b, 0),
        (Body::File { offset, len }, Some(Handle::Send(file))) => Out::File {
            file,
            off: offset,
            end: offset + len,
        },
        (Body::Multi, Some(Handle::Send(file))) => Out::Multi {
            file,
            k: 0,
            fpos: 0,
            off: c.mp.parts.first().map_or(0, |p| p.1),
        },
        _ => Out::None,
    };
    c.state = State::Sending;
}

/// Reads what the socket has into the request buffer.
pub(crate) fn fill(c: &mut Conn) -> io::Result<()> {
    if c.rstart > 0 {
        c.rbuf.copy_within(c.rstart..c.rend, 0);
        c.rend -= c.rstart;
        c.rstart = 0;
    }
    let room = c.rbuf.len() - c.rend;
    if room == 0 {
        return Ok(());
    }
    if c.fed {
        take_inbox(c, room);
        return Ok(());
    }
    let Some(sock) = c.sock.as_ref() else {
        return Ok(());
    };
    loop {
        match (&*sock).read(&mut c.rbuf[c.rend..]) {
            Ok(0) => {
                c.eof = true;
                c.readable = false;
                return Ok(());
            }
            Ok(n) => {
                c.rend += n;
                if n < room && !c.hup {
                    c.readable = false;
                }
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                c.readable = false;
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Moves what the ring received into the request buffer, up to `room` bytes.
fn take_inbox(c: &mut Conn, room: usize) {
    let have = &c.inbox[c.inbox_pos..];
    let n = have.len().min(room);
    c.rbuf[c.rend..c.rend + n].copy_from_slice(&have[..n]);
    c.rend += n;
    c.inbox_pos += n;
    if c.inbox_pos == c.inbox.len() {
        c.inbox.clear();
        c.inbox_pos = 0;
        c.readable = false;
        c.eof = c.peer_closed;
    }
}

/// Sends what it can of the response. `heads_on_ring`: a file's head is to go through the
/// ring (it shares an `io_uring_enter` with other entries) rather than a sendmsg from here.
pub(crate) fn flush(c: &mut Conn, deadline: u64, heads_on_ring: bool) -> io::Result<Flush> {
    if let Some(f) = ring_flush(c, heads_on_ring) {
        return Ok(f);
    }
    loop {
        if matches!(c.out, Out::Multi { .. }) && c.wpos == c.wbuf.len() {
            match flush_multi(c, deadline)? {
                Some(f) => return Ok(f),
                None => continue,
            }
        }
        if matches!(c.out, Out::File { .. }) && c.wpos == c.wbuf.len() {
            match file_slice(c, deadline)? {
                Some(f) => return Ok(f),
                None => continue,
            }
        }
        let Some(sock) = c.sock.as_ref() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let head = &c.wbuf[c.wpos..];
        let r = match &mut c.out {
            Out::None if head.is_empty() => return Ok(Flush::Done),
            Out::None => net::send_vectored(sock, &[IoSlice::new(head)], false),
            Out::Static(b, pos) => {
                if head.is_empty() && *pos == b.len() {
                    return Ok(Flush::Done);
                }
                let body = &b[*pos..];
                let r = net::send_vectored(sock, &[IoSlice::new(head), IoSlice::new(body)], false);
                if let Ok(n) = r {
                    *pos += n.saturating_sub(head.len());
                }
                r
            }
            Out::Owned(b, pos) => {
                if head.is_empty() && *pos == b.len() {
                    return Ok(Flush::Done);
                }
                let body = &b[*pos..];
                let r = net::send_vectored(sock, &[IoSlice::new(head), IoSlice::new(body)], false);
                if let Ok(n) = r {
                    let k = n.saturating_sub(head.len());
                    *pos += k;
                    c.body_sent += k as u64;
                }
                r
            }
            Out::Buf { buf, pos, end } => {
                if head.is_empty() && pos == end {
                    return Ok(Flush::Done);
                }
                let body = &buf.as_slice()[*pos..*end];
                let r = net::send_vectored(sock, &[IoSlice::new(head), IoSlice::new(body)], false);
                if let Ok(n) = r {
                    let b = n.saturating_sub(head.len());
                    *pos += b;
                    c.body_sent += b as u64;
                }
                r
            }
            Out::Multi { .. } => net::send_vectored(sock, &[IoSlice::new(head)], true),
            // MSG_MORE: the head waits for the body's first bytes to share a segment.
            Out::File { .. } => net::send_vectored(sock, &[IoSlice::new(head)], true),
        };
        match r {
            Ok(n) => {
                let h = n.min(head.len());
                c.wpos += h;
                c.deadline = deadline;
                if let Out::Static(..) | Out::None = c.out {
                    c.body_sent += (n - h) as u64;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flush::Wait),
            Err(e) => return Err(e),
        }
    }
}

/// Sends the next slice of a sendfile body once its head is out: `Some` to return from
/// `flush` (done, yield to the other connections, wait for the socket, or page in first),
/// `None` to go on sending.
fn file_slice(c: &mut Conn, deadline: u64) -> io::Result<Option<Flush>> {
    let Some(sock) = c.sock.as_ref() else {
        return Err(io::ErrorKind::NotConnected.into());
    };
    let Out::File { file, off, end } = &mut c.out else {
        return Ok(None);
    };
    if off == end {
        return Ok(Some(Flush::Done));
    }
    let left = *end - *off;
    let sent = c.wbuf.len() as u64 + c.body_sent;
    let want = next_slice(&mut c.mss, sock, left, sent, c.body_sent + left);
    if must_page_in(&mut c.paged, c.resident, file, *off, want as u64) {
        return Ok(Some(Flush::PageIn(*off, want as u64)));
    }
    match net::sendfile(sock, file, off, want) {
        Ok(0) => Err(io::ErrorKind::UnexpectedEof.into()),
        Ok(n) => {
            c.body_sent += n as u64;
            c.deadline = deadline;
            Ok((n == want && off < end).then_some(Flush::Yield))
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Some(Flush::Wait)),
        Err(e) => Err(e),
    }
}

/// With a ring, a head and a buffered body go through it (`Flush::Ring`) rather than a
/// sendmsg here; `None` for what is sent from here (sendfile bodies, a file's head when not
/// `heads_on_ring`) and for epoll.
fn ring_flush(c: &Conn, heads_on_ring: bool) -> Option<Flush> {
    let body_left = match &c.out {
        _ if !c.fed => return None,
        Out::None => false,
        Out::Static(b, pos) => *pos < b.len(),
        Out::Owned(b, pos) => *pos < b.len(),
        Out::Buf { pos, end, .. } => pos < end,
        // A file's head goes through the ring too (with MSG_MORE, so it waits for the body's
        // first bytes) where it shares the ring's next enter with other entries; the body then
        // leaves from here by sendfile once the head's completion is back. A head that would
        // be that enter's only entry goes by sendmsg from here instead, with the body right
        // after it: one call where the ring cost an enter and a turn of the loop of its own.
        Out::File { .. } if heads_on_ring && c.wpos < c.wbuf.len() => return Some(Flush::Ring),
        Out::File { .. } | Out::Multi { .. } => return None,
    };
    Some(if c.wpos < c.wbuf.len() || body_left {
        Flush::Ring
    } else {
        Flush::Done
    })
}

/// One step of a multipart/byteranges body (the response head is out): a part's head, a
/// stretch of its bytes, or the closing delimiter. `None`: progress made, call again.
fn flush_multi(c: &mut Conn, deadline: u64) -> io::Result<Option<Flush>> {
    let Some(sock) = c.sock.as_ref() else {
        return Err(io::ErrorKind::NotConnected.into());
    };
    let Out::Multi { file, k, fpos, off } = &mut c.out else {
        return Ok(Some(Flush::Done));
    };
    let mp = &c.mp;
    let Some(&(pre_end, first, last)) = mp.parts.get(*k) else {
        // The closing delimiter.
        let tail = &mp.framing[*fpos..];
        if tail.is_empty() {
            return Ok(Some(Flush::Done));
        }
        match net::send_vectored(sock, &[IoSlice::new(tail)], false) {
            Ok(n) => {
                *fpos += n;
                c.body_sent += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(Flush::Wait)),
            Err(e) => return Err(e),
        }
        c.deadline = deadline;
        return Ok(None);
    };
    if *fpos < pre_end {
        let part_head = &mp.framing[*fpos..pre_end];
        match net::send_vectored(sock, &[IoSlice::new(part_head)], true) {
            Ok(n) => {
                *fpos += n;
                c.body_sent += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(Flush::Wait)),
            Err(e) => return Err(e),
        }
        c.deadline = deadline;
        return Ok(None);
    }
    // A part's bytes go as a file body's do (see `slice_len`): a part up to a chunk in one
    // call, a longer one in slices of whole segments, giving way to the other connections
    // after each.
    let sent = c.wbuf.len() as u64 + c.body_sent;
    let want = next_slice(&mut c.mss, sock, last + 1 - *off, sent, last + 1 - first);
    if must_page_in(&mut c.paged, c.resident, file, *off, want as u64) {
        return Ok(Some(Flush::PageIn(*off, want as u64)));
    }
    let n = match net::sendfile(sock, file, off, want) {
        Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(Flush::Wait)),
        Err(e) => return Err(e),
    };
    c.body_sent += n as u64;
    c.deadline = deadline;
    if *off > last {
        *k += 1;
        if let Some(p) = mp.parts.get(*k) {
            *off = p.1;
        }
    } else if n == want {
        return Ok(Some(Flush::Yield));
    }
    Ok(None)
}

/// The head and buffered body of the response, handed to the ring (the connection keeps
/// nothing to send until [`from_ring`] puts them back). A file's body stays in `c.out`.
pub(crate) fn to_ring(c: &mut Conn) -> Outgoing {
    let (body, body_pos, body_end) = match std::mem::replace(&mut c.out, Out::None) {
        Out::Static(b, pos) => (OutBody::Static(b), pos, b.len()),
        Out::Owned(v, pos) => {
            let n = v.len();
            (OutBody::Owned(v), pos, n)
        }
        Out::Buf { buf, pos, end } => (OutBody::Buf(buf), pos, end),
        rest => {
            c.out = rest;
            (OutBody::None, 0, 0)
        }
    };
    c.in_ring = true;
    Outgoing {
        head: std::mem::take(&mut c.wbuf),
        head_pos: c.wpos,
        body,
        body_pos,
        body_end,
        more: !matches!(c.out, Out::None),
    }
}

/// Puts back what [`to_ring`] handed over, `sent` bytes further on.
pub(crate) fn from_ring(c: &mut Conn, mut o: Outgoing, sent: usize) {
    let head = (o.head.len() - o.head_pos.min(o.head.len())).min(sent);
    c.body_sent += (sent - head) as u64;
    o.advance(sent);
    c.wbuf = o.head;
    c.wpos = o.head_pos;
    c.out = match o.body {
        // What stayed behind (a file's body, or nothing).
        OutBody::None => std::mem::replace(&mut c.out, Out::None),
        OutBody::Static(b) => Out::Static(b, o.body_pos),
        OutBody::Owned(v) => Out::Owned(v, o.body_pos),
        OutBody::Buf(buf) => Out::Buf {
            buf,
            pos: o.body_pos,
            end: o.body_end,
        },
    };
    c.in_ring = false;
}

/// Reads and discards what a refused client sent. True once it has closed (or failed).
pub(crate) fn drain(sock: &TcpStream) -> bool {
    let mut b = [0u8; 1024];
    // Bounded: a client that keeps sending is dropped at its deadline instead.
    for _ in 0..32 {
        match (&*sock).read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return e.kind() != io::ErrorKind::WouldBlock,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's head handed to the ring must leave the file's body behind for sendfile, and
    /// come back without losing it (the body would otherwise never be sent).
    #[test]
    fn a_files_head_goes_to_the_ring_and_its_body_stays_for_sendfile() {
        let Ok(file) = File::open("/dev/null") else {
            return;
        };
        let mut c = Conn::new();
        c.fed = true;
        c.wbuf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        c.out = Out::File {
            file: Arc::new(file),
            off: 0,
            end: 65536,
        };
        assert!(matches!(ring_flush(&c, true), Some(Flush::Ring)));
        let o = to_ring(&mut c);
        assert!(o.more, "MSG_MORE: the body follows");
        assert!(matches!(o.body, OutBody::None));
        assert!(matches!(c.out, Out::File { end: 65536, .. }));
        let n = o.head.len();
        from_ring(&mut c, o, n);
        assert_eq!((c.wpos, c.body_sent, c.in_ring), (n, 0, false));
        assert!(matches!(
            c.out,
            Out::File {
                off: 0,
                end: 65536,
                ..
            }
        ));
        // The head is out: the body is sendfile's, not the ring's.
        assert!(ring_flush(&c, true).is_none());
        // A buffered body goes whole, and its send is the response's last.
        c.wbuf.clear();
        c.wbuf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        c.wpos = 0;
        c.out = Out::Static(b"hello", 0);
        let o = to_ring(&mut c);
        assert!(!o.more && matches!(c.out, Out::None));
    }

    /// A connection on a loopback socket whose response body is a file of `body` (already
    /// cached: no page-in asked), and the client's end of the socket.
    fn file_conn(tag: &str, body: &[u8]) -> io::Result<(Conn, TcpStream)> {
        let path = std::env::temp_dir().join(format!("iolab-conn-{tag}-{}", std::process::id()));
        std::fs::write(&path, body)?;
        let file = File::open(&path)?;
        std::fs::remove_file(&path)?;
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        let peer = TcpStream::connect(l.local_addr()?)?;
        let (sock, _) = l.accept()?;
        sock.set_nonblocking(true)?;
        let mut c = Conn::new();
        c.sock = Some(sock);
        c.paged = true;
        c.out = Out::File {
            file: Arc::new(file),
            off: 0,
            end: body.len() as u64,
        };
        Ok((c, peer))
    }

    /// A body longer than a chunk gives way after each slice (Flush::Yield) so that the
    /// other connections' bodies go in turn; it still arrives whole and in order.
    #[test]
    fn a_long_body_gives_way_after_each_slice_and_arrives_whole() -> io::Result<()> {
        let n = 3 * SENDFILE_CHUNK + 100;
        let body: Vec<u8> = (0..n as u32).map(|k| (k % 253) as u8).collect();
        let (mut c, peer) = file_conn("y", &body)?;
        let reader = std::thread::spawn(move || {
            let mut peer = peer;
            let mut got = vec![0u8; n];
            peer.read_exact(&mut got).map(|_| got)
        });
        let mut yields = 0;
        loop {
            match flush(&mut c, 0, false)? {
                Flush::Done => break,
                Flush::Yield => yields += 1,
                Flush::Wait => std::thread::sleep(std::time::Duration::from_millis(1)),
                Flush::Ring | Flush::PageIn(..) => panic!("a file body goes by sendfile"),
            }
        }
        // Full slices, each followed by more, give turns away (a full socket may cut a slice
        // short, which waits instead): at least one.
        assert!(yields >= 1, "{yields}");
        let got = reader
            .join()
            .map_err(|_| io::Error::other("reader panicked"))??;
        assert!(got == body, "the body arrived changed");
        Ok(())
    }

    /// A file's head that would go to the ring alone (one connection) is sent from here,
    /// and the body by sendfile right after it, in the same flush: the response is whole
    /// with no ring involved (a head left for the ring would come back as `Flush::Ring`).
    #[test]
    fn a_files_head_alone_goes_out_here_with_its_body() -> io::Result<()> {
        let body: Vec<u8> = (0..65536u32).map(|k| (k % 251) as u8).collect();
        let (mut c, peer) = file_conn("h", &body)?;
        c.fed = true;
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n";
        c.wbuf.extend_from_slice(head);
        assert!(ring_flush(&c, false).is_none());
        let want = head.len() + body.len();
        let reader = std::thread::spawn(move || {
            let mut peer = peer;
            let mut got = vec![0u8; want];
            peer.read_exact(&mut got).map(|_| got)
        });
        loop {
            match flush(&mut c, 0, false)? {
                Flush::Done => break,
                // A full socket: the reader makes room.
                Flush::Wait => std::thread::sleep(std::time::Duration::from_millis(1)),
                Flush::Yield => {}
                Flush::Ring | Flush::PageIn(..) => panic!("the head and body go out from here"),
            }
        }
        assert_eq!((c.wpos, c.body_sent), (head.len(), 65536));
        let got = reader
            .join()
            .map_err(|_| io::Error::other("reader panicked"))??;
        assert_eq!(&got[..head.len()], head);
        assert!(
            got[head.len()..] == body[..],
            "the body arrives as the file has it"
        );
        Ok(())
    }
}
