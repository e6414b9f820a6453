//! From a parsed request and what its path resolved to, the response: status, head, and which
//! bytes of the file (if any) make the body. Pure: no I/O, so the fuzz test can drive it.

use crate::date;
use crate::http::{self, Head, Method, Request};
use crate::path::{Ident, Jailed};
use crate::range::{self, Ranges};

/// What the server knows of a file it serves, computed once per version of the file.
#[derive(Clone, Debug)]
pub struct Meta {
    pub ident: Ident,
    pub size: u64,
    /// Last modification, Unix seconds.
    pub mtime: i64,
    pub last_modified: [u8; 29],
    /// Strong validator: inode, size and modification time in nanoseconds.
    pub etag: String,
    pub mime: &'static str,
    /// A precompressed sibling's coding (its bytes are what is sent).
    pub encoding: Option<&'static str>,
    /// The file has precompressed siblings: responses say `Vary: Accept-Encoding`.
    pub vary: bool,
}

impl Meta {
    pub fn new(ident: Ident, name: &[u8]) -> Meta {
        let mtime = ident.mtime_ns.div_euclid(1_000_000_000) as i64;
        let mut lm = Vec::with_capacity(29);
        date::http_date(mtime, &mut lm);
        let mut last_modified = [b' '; 29];
        let n = lm.len().min(29);
        last_modified[..n].copy_from_slice(&lm[..n]);
        Meta {
            ident,
            size: ident.size,
            mtime,
            last_modified,
            etag: format!(
                "\"{:x}-{:x}-{:x}\"",
                ident.ino, ident.size, ident.mtime_ns as u128
            ),
            mime: http::content_type(name),
            encoding: None,
            vary: false,
        }
    }
}

/// What the path of a request came to.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'a> {
    File(&'a Meta),
    /// A directory listing of this many bytes.
    Listing(u64),
    Redirect(Jailed),
    Status(u16),
}

/// The body a reply needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    None,
    Static(&'static [u8]),
    /// `len` bytes of the file from `offset`.
    File {
        offset: u64,
        len: u64,
    },
    /// `multipart/byteranges`: the parts in the [`Multipart`] the reply was given.
    Multi,
    /// Bytes the caller holds (a directory listing).
    Owned,
}

/// Several ranges of one file as `multipart/byteranges` (RFC 9110 14.6): each part's head
/// (delimiter, Content-Type, Content-Range), then its bytes of the file; the closing delimiter
/// after the last. Kept per connection, so its buffers are reused.
#[derive(Debug, Default)]
pub struct Multipart {
    /// Set by the caller: the file can be sent in pieces (else several ranges get a 200).
    pub allowed: bool,
    /// The ranges asked for, sorted and merged (scratch for the parser).
    pub ranges: Vec<(u64, u64)>,
    /// Every part's head, then the closing delimiter.
    pub framing: Vec<u8>,
    /// Per part: where its head ends in `framing`, and its bytes of the file (first, last).
    pub parts: Vec<(usize, u64, u64)>,
}

impl Multipart {
    /// Lays out the parts of `m`'s ranges in `self.ranges`; the body's length in bytes.
    fn build(&mut self, m: &Meta, boundary: &str) -> u64 {
        use std::io::Write;
        self.framing.clear();
        self.parts.clear();
        let mut len = 0;
        for &(a, b) in &self.ranges {
            let _ = write!(
                self.framing,
                "\r\n--{boundary}\r\nContent-Type: {}\r\nContent-Range: bytes {a}-{b}/{}\r\n\r\n",
                m.mime, m.size
            );
            self.parts.push((self.framing.len(), a, b));
            len += b - a + 1;
        }
        let _ = write!(self.framing, "\r\n--{boundary}--\r\n");
        len + self.framing.len() as u64
    }
}

/// A boundary that names the file's version and the ranges (FNV-1a), so the same request gets
/// the same bytes; 28 characters no file is likely to hold at a line's start.
fn boundary(m: &Meta, ranges: &[(u64, u64)]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |b: &[u8]| {
        for &c in b {
            h = (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3);
        }
    };
    mix(m.etag.as_bytes());
    for (a, b) in ranges {
        mix(&a.to_le_bytes());
        mix(&b.to_le_bytes());
    }
    format!("iolab-byteranges-{h:016x}")
}

/// A reply whose head has been written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: Body,
    pub keep_alive: bool,
}

/// Whether an If-None-Match or If-Match list names `etag`: weakly (a `W/` tag matches its
/// strong twin, for If-None-Match) or strongly (a weak tag never matches, for If-Match).
fn etag_matches(list: &[u8], etag: &[u8], weak: bool) -> bool {
    if list.trim_ascii() == b"*" {
        return true;
    }
    list.split(|&c| c == b',').any(|t| {
        let t = t.trim_ascii();
        match t.strip_prefix(b"W/") {
            Some(w) => weak && w == etag,
            None => t == etag,
        }
    })
}

/// RFC 9110 13.2.2 steps 1 and 2: If-Match (strong), or else If-Unmodified-Since (ignored when
/// not a valid date), fails the request with 412.
fn precondition_failed(req: &Request<'_>, m: &Meta) -> bool {
    if let Some(im) = req.if_match {
        return !etag_matches(im, m.etag.as_bytes(), false);
    }
    req.if_unmodified_since
        .and_then(date::parse_http_date)
        .is_some_and(|since| m.mtime > since)
}

/// RFC 9110 13.2.2: If-None-Match wins over If-Modified-Since; an invalid date is ignored.
fn not_modified(req: &Request<'_>, m: &Meta) -> bool {
    if let Some(inm) = req.if_none_match {
        return etag_matches(inm, m.etag.as_bytes(), true);
    }
    req.if_modified_since
        .and_then(date::parse_http_date)
        .is_some_and(|since| m.mtime <= since)
}

/// If-Range: the range applies only to the version the client names (strong comparison).
fn range_applies(req: &Request<'_>, m: &Meta) -> bool {
    match req.if_range {
        None => true,
        Some(v) if v.starts_with(b"\"") => v == m.etag.as_bytes(),
        Some(v) => date::parse_http_date(v) == Some(m.mtime),
    }
}

/// An error reply (or 405) with its short text body.
pub fn error(out: &mut Vec<u8>, date: &[u8], status: u16, version: u8, keep: bool) -> Reply {
    let keep = keep && !matches!(status, 400 | 414 | 431 | 500 | 503);
    let body = http::error_body(status);
    http::write_head(
        out,
        &Head {
            status,
            date,
            content_type: Some(http::ERROR_TYPE),
            content_length: Some(body.len() as u64),
            allow: status == 405,
            connection: connection(version, keep),
            ..Head::default()
        },
    );
    Reply {
        status,
        body: Body::Static(body),
        keep_alive: keep,
    }
}

fn connection(version: u8, keep: bool) -> Option<bool> {
    match (keep, version) {
        (false, _) => Some(false),
        (true, 0) => Some(true),
        (true, _) => None,
    }
}

/// Writes the head of the reply to `req` into `out`. `keep` is whether the server is willing
/// to keep the connection (false while shutting down). Several ranges get a 200 (see
/// [`reply_with`]).
pub fn reply(
    out: &mut Vec<u8>,
    date: &[u8],
    req: &Request<'_>,
    found: Lookup<'_>,
    keep: bool,
) -> Reply {
    reply_with(out, date, req, found, keep, &mut Multipart::default())
}

/// [`reply`], with several ranges answered as `multipart/byteranges` laid out in `mp` when
/// `mp.allowed`.
pub fn reply_with(
    out: &mut Vec<u8>,
    date: &[u8],
    req: &Request<'_>,
    found: Lookup<'_>,
    keep: bool,
    mp: &mut Multipart,
) -> Reply {
    let keep = keep && req.keep_alive;
    if req.method == Method::Other {
        return error(out, date, 405, req.version, keep);
    }
    match found {
        Lookup::Status(s) => error(out, date, s, req.version, keep),
        Lookup::Redirect(j) => redirect(out, date, req, j, keep),
        Lookup::Listing(len) => listing(out, date, req, len, keep),
        Lookup::File(m) => file(out, date, req, m, keep, mp),
    }
}

/// 301 to the directory's name with a slash (and the query kept).
fn redirect(out: &mut Vec<u8>, date: &[u8], req: &Request<'_>, j: Jailed, keep: bool) -> Reply {
    let mut path = &req.target[j.path.0..j.path.1];
    // "//host/dir" would be a protocol-relative Location: an open redirect.
    while path.starts_with(b"//") {
        path = &path[1..];
    }
    let loc = (path, &req.target[j.query.0..j.query.1]);
    let body = http::error_body(301);
    http::write_head(
        out,
        &Head {
            status: 301,
            date,
            content_type: Some(http::ERROR_TYPE),
            content_length: Some(body.len() as u64),
            location: Some(loc),
            connection: connection(req.version, keep),
            ..Head::default()
        },
    );
    Reply {
        status: 301,
        body: Body::Static(body),
        keep_alive: keep,
    }
}

/// A directory's generated index of `len` bytes (the caller holds the page).
fn listing(out: &mut Vec<u8>, date: &[u8], req: &Request<'_>, len: u64, keep: bool) -> Reply {
    http::write_head(
        out,
        &Head {
            status: 200,
            date,
            content_type: Some("text/html; charset=utf-8"),
            content_length: Some(len),
            connection: connection(req.version, keep),
            ..Head::default()
        },
    );
    let body = if req.method == Method::Head || len == 0 {
        Body::None
    } else {
        Body::Owned
    };
    Reply {
        status: 200,
        body,
        keep_alive: keep,
    }
}

/// `head` as an error page with `status` (412, 416), keeping the file's validators.
fn file_error(out: &mut Vec<u8>, mut head: Head<'_>, status: u16, keep: bool) -> Reply {
    let body = http::error_body(status);
    head.status = status;
    head.content_type = Some(http::ERROR_TYPE);
    head.content_length = Some(body.len() as u64);
    http::write_head(out, &head);
    Reply {
        status,
        body: Body::Static(body),
        keep_alive: keep,
    }
}

/// A file: preconditions, then conditionals, then ranges.
fn file(
    out: &mut Vec<u8>,
    date: &[u8],
    req: &Request<'_>,
    m: &Meta,
    keep: bool,
    mp: &mut Multipart,
) -> Reply {
    let mut head = Head {
        date,
        last_modified: Some(&m.last_modified),
        etag: Some(m.etag.as_bytes()),
        connection: connection(req.version, keep),
        content_encoding: m.encoding,
        vary: m.vary,
        ..Head::default()
    };
    if precondition_failed(req, m) {
        return file_error(out, head, 412, keep);
    }
    if not_modified(req, m) {
        head.status = 304;
        http::write_head(out, &head);
        return Reply {
            status: 304,
            body: Body::None,
            keep_alive: keep,
        };
    }
    let range = match req.range {
        Some(r) if range_applies(req, m) => range::parse_set(r, m.size, &mut mp.ranges),
        _ => Ranges::Full,
    };
    let (status, offset, len) = match range {
        Ranges::Many if mp.allowed => return multipart(out, head, req, m, mp, keep),
        Ranges::Full | Ranges::Many => (200, 0, m.size),
        Ranges::One(a, b) => (206, a, b - a + 1),
        Ranges::Unsatisfiable => {
            head.unsatisfied_size = Some(m.size);
            return file_error(out, head, 416, keep);
        }
    };
    head.status = status;
    head.content_type = Some(m.mime);
    head.content_length = Some(len);
    head.accept_ranges = true;
    if status == 206 {
        head.content_range = Some((offset, offset + len - 1, m.size));
    }
    http::write_head(out, &head);
    let body = if req.method == Method::Head || len == 0 {
        Body::None
    } else {
        Body::File { offset, len }
    };
    Reply {
        status,
        body,
        keep_alive: keep,
    }
}

/// The 206 of several ranges: a multipart head, the parts laid out in `mp`.
fn multipart<'a>(
    out: &mut Vec<u8>,
    head: Head<'a>,
    req: &Request<'_>,
    m: &Meta,
    mp: &mut Multipart,
    keep: bool,
) -> Reply {
    let b = boundary(m, &mp.ranges);
    let len = mp.build(m, &b);
    let ct = format!("multipart/byteranges; boundary={b}");
    http::write_head(
        out,
        &Head {
            status: 206,
            content_type: Some(&ct),
            content_length: Some(len),
            accept_ranges: true,
            ..head
        },
    );
    Reply {
        status: 206,
        body: if req.method == Method::Head {
            Body::None
        } else {
            Body::Multi
        },
        keep_alive: keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{parse, Parsed};

    fn meta() -> Meta {
        Meta::new(
            Ident {
                dev: 1,
                ino: 0xab,
                size: 100,
                mtime_ns: 784_111_777_000_000_000,
                ctime_ns: 0,
            },
            b"a.txt",
        )
    }

    fn run(raw: &str) -> (Reply, String) {
        let m = meta();
        let Parsed::Request(r) = parse(raw.as_bytes(), 16384) else {
            panic!("parse {raw}");
        };
        let mut out = Vec::new();
        let rep = reply(&mut out, b"DATE", &r, Lookup::File(&m), true);
        (rep, String::from_utf8(out).unwrap())
    }

    #[test]
    fn conditionals_give_304_and_mismatches_the_body() {
        let et = meta().etag;
        let (r, h) = run(&format!(
            "GET /a HTTP/1.1\r\nHost: x\r\nIf-None-Match: {et}\r\n\r\n"
        ));
        assert_eq!(r.status, 304);
        assert!(!h.contains("Content-Length"));
        let (r, _) = run("GET /a HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"x\", W/\"y\"\r\n\r\n");
        assert_eq!(r.status, 200);
        let ims = "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT";
        let (r, _) = run(&format!("GET /a HTTP/1.1\r\nHost: x\r\n{ims}\r\n\r\n"));
        assert_eq!(r.status, 304);
        let old = "If-Modified-Since: Sun, 06 Nov 1994 08:49:36 GMT";
        let (r, _) = run(&format!("GET /a HTTP/1.1\r\nHost: x\r\n{old}\r\n\r\n"));
        assert_eq!(r.status, 200);
        // If-None-Match that does not match overrides a matching If-Modified-Since.
        let both = format!("If-None-Match: \"zz\"\r\n{ims}");
        let (r, _) = run(&format!("GET /a HTTP/1.1\r\nHost: x\r\n{both}\r\n\r\n"));
        assert_eq!(r.status, 200);
    }

    #[test]
    fn if_match_and_if_unmodified_since_give_412() {
        let et = meta().etag;
        let get = |h: &str| run(&format!("GET /a HTTP/1.1\r\nHost: x\r\n{h}\r\n\r\n")).0;
        assert_eq!(get(&format!("If-Match: \"x\", {et}")).status, 200);
        assert_eq!(get("If-Match: *").status, 200);
        assert_eq!(get("If-Match: \"other\"").status, 412);
        // If-Match compares strongly: a weak tag never matches.
        assert_eq!(get(&format!("If-Match: W/{et}")).status, 412);
        // The file is from 08:49:37; the three date forms each say so.
        assert_eq!(
            get("If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT").status,
            200
        );
        assert_eq!(
            get("If-Unmodified-Since: Sunday, 06-Nov-94 08:49:36 GMT").status,
            412
        );
        assert_eq!(
            get("If-Unmodified-Since: Sun Nov  6 08:49:36 1994").status,
            412
        );
        assert_eq!(get("If-Unmodified-Since: yesterday").status, 200);
        // If-Match present: If-Unmodified-Since is not looked at.
        let both = format!("If-Match: {et}\r\nIf-Unmodified-Since: Sun Nov  6 08:49:36 1994");
        assert_eq!(get(&both).status, 200);
        // 412 wins over a Range and over If-None-Match.
        let r = format!("If-Match: \"o\"\r\nIf-None-Match: {et}\r\nRange: bytes=0-1");
        assert_eq!(get(&r).status, 412);
        assert_eq!(
            get("If-Modified-Since: Sunday, 06-Nov-94 08:49:37 GMT").status,
            304
        );
    }

    #[test]
    fn ranges_and_if_range() {
        let (r, h) = run("GET /a HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\n\r\n");
        assert_eq!(r.status, 206);
        assert_eq!(
            r.body,
            Body::File {
                offset: 10,
                len: 10
            }
        );
        assert!(h.contains("Content-Range: bytes 10-19/100\r\n"), "{h}");
        let (r, h) = run("GET /a HTTP/1.1\r\nHost: x\r\nRange: bytes=100-\r\n\r\n");
        assert_eq!(r.status, 416);
        assert!(h.contains("Content-Range: bytes */100\r\n"));
        let (r, _) =
            run("GET /a HTTP/1.1\r\nHost: x\r\nRange: bytes=1-2\r\nIf-Range: \"old\"\r\n\r\n");
        assert_eq!(r.status, 200);
        let (r, _) = run("HEAD /a HTTP/1.1\r\nHost: x\r\nRange: bytes=1-2\r\n\r\n");
        assert_eq!((r.status, r.body), (206, Body::None));
    }

    #[test]
    fn http10_keep_alive_is_announced_and_other_methods_get_405() {
        let (r, h) = run("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert!(r.keep_alive && h.contains("Connection: keep-alive\r\n"));
        let (r, h) = run("DELETE /a HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(r.status, 405);
        assert!(h.contains("Allow: GET, HEAD\r\n"));
    }
}
