//! HTTP/1.x requests in, response heads out: parsing with httparse into the few facts the
//! server acts on, status codes, Content-Type by extension, and the head writer.

/// Most header fields in one request; more is 431.
pub const MAX_HEADERS: usize = 64;
/// Longest request line accepted; longer is 414 (as long as the header block limit allows).
pub const MAX_REQUEST_LINE: usize = 8192;

/// The request methods the server distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    /// Anything else: answered 405 with `Allow: GET, HEAD`.
    Other,
}

/// What the server needs from one request head; slices borrow the connection's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub method: Method,
    pub method_raw: &'a str,
    pub target: &'a [u8],
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub version: u8,
    /// The client wants the connection kept after this response.
    pub keep_alive: bool,
    /// The request carries a body (Content-Length > 0 or Transfer-Encoding): the server does
    /// not read bodies, so it answers and closes rather than guess where the next request starts.
    pub has_body: bool,
    pub if_match: Option<&'a [u8]>,
    pub if_unmodified_since: Option<&'a [u8]>,
    pub if_none_match: Option<&'a [u8]>,
    pub if_modified_since: Option<&'a [u8]>,
    pub range: Option<&'a [u8]>,
    pub if_range: Option<&'a [u8]>,
    pub accept_encoding: Option<&'a [u8]>,
    /// For the combined access log.
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
    /// Bytes of the buffer the head took.
    pub len: usize,
}

/// The outcome of parsing the start of a buffer.
#[derive(Debug)]
pub enum Parsed<'a> {
    /// More bytes are needed.
    Partial,
    Request(Request<'a>),
    /// A request that cannot be answered normally: 400, 414 or 431; the connection closes.
    Error(u16),
}

fn eq_ci(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether a comma-separated header value holds `token` (case-insensitive).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&c| c == b',')
        .any(|t| eq_ci(t.trim_ascii(), token))
}

/// Parses one request head at the start of `buf`. `max_header` bounds the whole head: a buffer
/// that full without a complete head is 414 when not even the request line ended, else 431.
pub fn parse(buf: &[u8], max_header: usize) -> Parsed<'_> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return partial(buf, max_header),
        Err(httparse::Error::TooManyHeaders) => return Parsed::Error(431),
        Err(_) => return Parsed::Error(400),
    };
    if n > max_header {
        return Parsed::Error(431);
    }
    let (Some(method_raw), Some(target), Some(version)) = (req.method, req.path, req.version)
    else {
        return Parsed::Error(400);
    };
    if target.len() > MAX_REQUEST_LINE {
        return Parsed::Error(414);
    }
    let method = match method_raw {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        _ => Method::Other,
    };
    let mut r = Request {
        method,
        method_raw,
        target: target.as_bytes(),
        version,
        keep_alive: version >= 1,
        has_body: false,
        if_match: None,
        if_unmodified_since: None,
        if_none_match: None,
        if_modified_since: None,
        range: None,
        if_range: None,
        referer: None,
        user_agent: None,
        accept_encoding: None,
        len: n,
    };
    match fields(&mut r, req.headers) {
        Ok(()) => Parsed::Request(r),
        Err(s) => Parsed::Error(s),
    }
}

/// An incomplete head: wait for more, or 414/431 when the buffer is already full.
fn partial(buf: &[u8], max_header: usize) -> Parsed<'_> {
    let line_ended = buf.iter().take(MAX_REQUEST_LINE).any(|&c| c == b'\n');
    if !line_ended && buf.len() >= MAX_REQUEST_LINE.min(max_header) {
        return Parsed::Error(414);
    }
    if buf.len() >= max_header {
        return Parsed::Error(431);
    }
    Parsed::Partial
}

/// Takes the fields the server acts on into `r`; the status when the head is malformed.
fn fields<'a>(r: &mut Request<'a>, headers: &[httparse::Header<'a>]) -> Result<(), u16> {
    let mut hosts = 0;
    let mut content_length: Option<&[u8]> = None;
    for h in headers {
        let name = h.name.as_bytes();
        let v = h.value.trim_ascii();
        if eq_ci(name, b"host") {
            hosts += 1;
        } else if eq_ci(name, b"connection") {
            if has_token(v, b"close") {
                r.keep_alive = false;
            } else if has_token(v, b"keep-alive") {
                r.keep_alive = true;
            }
        } else if eq_ci(name, b"content-length") {
            let differs = content_length.is_some_and(|c| c != v);
            if differs || v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
                return Err(400);
            }
            content_length = Some(v);
            r.has_body |= v.iter().any(|&c| c != b'0');
        } else if eq_ci(name, b"transfer-encoding") {
            r.has_body = true;
        } else if let Some(slot) = optional_field(r, name) {
            *slot = Some(v);
        }
    }
    // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without exactly one Host.
    if hosts > 1 || (r.version >= 1 && hosts == 0) {
        return Err(400);
    }
    if r.has_body {
        r.keep_alive = false;
    }
    Ok(())
}

/// Where the value of a field the server only records goes (the last one given wins).
fn optional_field<'r, 'a>(r: &'r mut Request<'a>, name: &[u8]) -> Option<&'r mut Option<&'a [u8]>> {
    const NAMES: [&[u8]; 9] = [
        b"if-match",
        b"if-unmodified-since",
        b"if-none-match",
        b"if-modified-since",
        b"range",
        b"if-range",
        b"accept-encoding",
        b"referer",
        b"user-agent",
    ];
    let k = NAMES.iter().position(|n| eq_ci(name, n))?;
    Some(match k {
        0 => &mut r.if_match,
        1 => &mut r.if_unmodified_since,
        2 => &mut r.if_none_match,
        3 => &mut r.if_modified_since,
        4 => &mut r.range,
        5 => &mut r.if_range,
        6 => &mut r.accept_encoding,
        7 => &mut r.referer,
        _ => &mut r.user_agent,
    })
}

/// The content codings a file may have a precompressed sibling in, in the server's order of
/// preference when the client likes several equally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Br,
    Zstd,
    Gzip,
}

impl Encoding {
    pub const ALL: [Encoding; 3] = [Encoding::Br, Encoding::Zstd, Encoding::Gzip];

    /// The token in Accept-Encoding and Content-Encoding.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Br => "br",
            Encoding::Zstd => "zstd",
            Encoding::Gzip => "gzip",
        }
    }

    /// The sibling's suffix: `file.txt` → `file.txt.br`.
    pub fn suffix(self) -> &'static [u8] {
        match self {
            Encoding::Br => b".br",
            Encoding::Zstd => b".zst",
            Encoding::Gzip => b".gz",
        }
    }
}

/// The q-value of `;q=...` parameters in thousandths; `None` when malformed (RFC 9110 12.4.2:
/// at most three decimals, 0 to 1).
fn qvalue(params: &[u8]) -> Option<u16> {
    let mut q = 1000;
    for p in params.split(|&c| c == b';').map(<[u8]>::trim_ascii) {
        let Some(v) = p.strip_prefix(b"q=").or_else(|| p.strip_prefix(b"Q=")) else {
            continue;
        };
        let (int, frac) = match v.iter().position(|&c| c == b'.') {
            Some(d) => (&v[..d], &v[d + 1..]),
            None => (v, &b""[..]),
        };
        let digits = frac.iter().all(u8::is_ascii_digit);
        if !matches!(int, b"0" | b"1") || frac.len() > 3 || !digits {
            return None;
        }
        let mut t = u16::from(int[0] - b'0') * 1000;
        for (k, &c) in frac.iter().enumerate() {
            t += u16::from(c - b'0') * [100, 10, 1][k];
        }
        if t > 1000 {
            return None;
        }
        q = t;
    }
    Some(q)
}

/// Which of the `available` codings to send for an Accept-Encoding value: the one with the
/// highest q-value above 0 (ties in [`Encoding::ALL`]'s order); `None` for the plain file.
/// `*` stands for codings not named; `x-gzip` is gzip (RFC 9110 12.5.3). Malformed entries
/// are skipped. No header: the plain file (a client that says nothing may not decode).
pub fn choose_encoding(accept: Option<&[u8]>, available: &[Encoding]) -> Option<Encoding> {
    let accept = accept?;
    let mut q = [None::<u16>; 3];
    let mut star = None;
    for item in accept.split(|&c| c == b',') {
        let item = item.trim_ascii();
        let (name, params) = match item.iter().position(|&c| c == b';') {
            Some(s) => (item[..s].trim_ascii(), &item[s..]),
            None => (item, &b""[..]),
        };
        let Some(v) = qvalue(params) else { continue };
        if name == b"*" {
            star = Some(v);
            continue;
        }
        for (k, e) in Encoding::ALL.iter().enumerate() {
            if eq_ci(name, e.token().as_bytes()) || (*e == Encoding::Gzip && eq_ci(name, b"x-gzip"))
            {
                q[k] = Some(q[k].map_or(v, |o: u16| o.max(v)));
            }
        }
    }
    let mut best: Option<(u16, Encoding)> = None;
    for (k, e) in Encoding::ALL.iter().enumerate() {
        let v = q[k].or(star).unwrap_or(0);
        if v > 0 && available.contains(e) && best.is_none_or(|(b, _)| v > b) {
            best = Some((v, *e));
        }
    }
    best.map(|(_, e)| e)
}

/// The reason phrase of the status codes the server sends.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        301 => "Moved Permanently",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        412 => "Precondition Failed",
        414 => "URI Too Long",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// The Content-Type of error bodies.
pub const ERROR_TYPE: &str = "text/html; charset=utf-8";

/// A small HTML page whose title and heading are the status line.
macro_rules! page {
    ($s:literal) => {
        concat!(
            "<!DOCTYPE html>\n<html><head><title>",
            $s,
            "</title></head>\n<body><h1>",
            $s,
            "</h1></body></html>\n"
        )
        .as_bytes()
    };
}

/// The body of an error response (and of 301): a small HTML page.
pub fn error_body(status: u16) -> &'static [u8] {
    match status {
        301 => page!("301 Moved Permanently"),
        400 => page!("400 Bad Request"),
        403 => page!("403 Forbidden"),
        404 => page!("404 Not Found"),
        405 => page!("405 Method Not Allowed"),
        412 => page!("412 Precondition Failed"),
        414 => page!("414 URI Too Long"),
        416 => page!("416 Range Not Satisfiable"),
        431 => page!("431 Request Header Fields Too Large"),
        503 => page!("503 Service Unavailable"),
        _ => page!("500 Internal Server Error"),
    }
}

/// Content-Type by file extension (case-insensitive); `application/octet-stream` otherwise.
pub fn content_type(path: &[u8]) -> &'static str {
    let name = path.rsplit(|&c| c == b'/').next().unwrap_or(path);
    let Some(dot) = name.iter().rposition(|&c| c == b'.') else {
        return "application/octet-stream";
    };
    let mut ext = [0u8; 8];
    let e = &name[dot + 1..];
    if e.len() > ext.len() {
        return "application/octet-stream";
    }
    for (d, s) in ext.iter_mut().zip(e) {
        *d = s.to_ascii_lowercase();
    }
    match &ext[..e.len()] {
        b"html" | b"htm" => "text/html; charset=utf-8",
        b"css" => "text/css; charset=utf-8",
        b"js" | b"mjs" => "text/javascript; charset=utf-8",
        b"json" => "application/json",
        b"txt" | b"log" => "text/plain; charset=utf-8",
        b"md" => "text/markdown; charset=utf-8",
        b"csv" => "text/csv; charset=utf-8",
        b"xml" => "application/xml",
        b"svg" => "image/svg+xml",
        b"png" => "image/png",
        b"jpg" | b"jpeg" => "image/jpeg",
        b"gif" => "image/gif",
        b"webp" => "image/webp",
        b"avif" => "image/avif",
        b"ico" => "image/x-icon",
        b"pdf" => "application/pdf",
        b"wasm" => "application/wasm",
        b"woff" => "font/woff",
        b"woff2" => "font/woff2",
        b"ttf" => "font/ttf",
        b"otf" => "font/otf",
        b"mp4" => "video/mp4",
        b"webm" => "video/webm",
        b"mp3" => "audio/mpeg",
        b"ogg" => "audio/ogg",
        b"wav" => "audio/wav",
        b"zip" => "application/zip",
        b"gz" => "application/gzip",
        b"tar" => "application/x-tar",
        _ => "application/octet-stream",
    }
}

/// The parts of a response head.
#[derive(Clone, Copy, Debug, Default)]
pub struct Head<'a> {
    pub status: u16,
    /// IMF-fixdate of now.
    pub date: &'a [u8],
    pub content_type: Option<&'a str>,
    /// Omitted for 304.
    pub content_length: Option<u64>,
    pub last_modified: Option<&'a [u8]>,
    pub etag: Option<&'a [u8]>,
    /// 206: (first, last, size) of the part.
    pub content_range: Option<(u64, u64, u64)>,
    /// 416: the size the range did not fit.
    pub unsatisfied_size: Option<u64>,
    pub location: Option<(&'a [u8], &'a [u8])>,
    /// Sent for files, so clients know ranges work.
    pub accept_ranges: bool,
    /// A precompressed sibling is sent: its coding.
    pub content_encoding: Option<&'a str>,
    /// The file has precompressed siblings: `Vary: Accept-Encoding`.
    pub vary: bool,
    pub allow: bool,
    /// `Some(false)`: `Connection: close`; `Some(true)`: `Connection: keep-alive` (HTTP/1.0).
    pub connection: Option<bool>,
}

/// Appends `n` in decimal. The head's numbers are written with this rather than `write!`:
/// the formatting machinery was a fifth of the user-space instructions of a 4 KiB response
/// (callgrind: about 840 of 4,800 a request, for the status and Content-Length).
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut d = [0u8; 20];
    let mut k = d.len();
    loop {
        k -= 1;
        d[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&d[k..]);
}

/// Appends the head (status line, fields, blank line) to `out`.
pub fn write_head(out: &mut Vec<u8>, h: &Head<'_>) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, u64::from(h.status));
    out.push(b' ');
    out.extend_from_slice(reason(h.status).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(b"Server: iolab\r\nDate: ");
    out.extend_from_slice(h.date);
    out.extend_from_slice(b"\r\n");
    if let Some(t) = h.content_type {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(n) = h.content_length {
        out.extend_from_slice(b"Content-Length: ");
        push_decimal(out, n);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(lm) = h.last_modified {
        out.extend_from_slice(b"Last-Modified: ");
        out.extend_from_slice(lm);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(e) = h.etag {
        out.extend_from_slice(b"ETag: ");
        out.extend_from_slice(e);
        out.extend_from_slice(b"\r\n");
    }
    if let Some((a, b, size)) = h.content_range {
        out.extend_from_slice(b"Content-Range: bytes ");
        push_decimal(out, a);
        out.push(b'-');
        push_decimal(out, b);
        out.push(b'/');
        push_decimal(out, size);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(size) = h.unsatisfied_size {
        out.extend_from_slice(b"Content-Range: bytes */");
        push_decimal(out, size);
        out.extend_from_slice(b"\r\n");
    }
    if let Some((path, query)) = h.location {
        out.extend_from_slice(b"Location: ");
        out.extend_from_slice(path);
        out.push(b'/');
        out.extend_from_slice(query);
        out.extend_from_slice(b"\r\n");
    }
    if h.accept_ranges {
        out.extend_from_slice(b"Accept-Ranges: bytes\r\n");
    }
    if let Some(e) = h.content_encoding {
        out.extend_from_slice(b"Content-Encoding: ");
        out.extend_from_slice(e.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if h.vary {
        out.extend_from_slice(b"Vary: Accept-Encoding\r\n");
    }
    if h.allow {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    match h.connection {
        Some(false) => out.extend_from_slice(b"Connection: close\r\n"),
        Some(true) => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        None => {}
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(b: &[u8]) -> Request<'_> {
        match parse(b, 16384) {
            Parsed::Request(r) => r,
            other => panic!("{other:?}"),
        }
    }

    fn err(b: &[u8], max: usize) -> u16 {
        match parse(b, max) {
            Parsed::Error(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keep_alive_follows_version_and_connection() {
        assert!(req(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive);
        assert!(!req(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").keep_alive);
        assert!(!req(b"GET / HTTP/1.0\r\n\r\n").keep_alive);
        let r = req(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(r.keep_alive);
        assert_eq!(r.version, 0);
        let raw = b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
        let r = req(raw);
        assert!(r.has_body && !r.keep_alive);
        assert_eq!(r.len, raw.len() - 3);
    }

    #[test]
    fn malformed_long_and_large_heads_have_their_codes() {
        assert_eq!(err(b"GET / HTTP/1.1\r\n\r\n", 16384), 400); // no Host
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 16384),
            400
        );
        assert_eq!(err(b"G\x01T / HTTP/1.1\r\n\r\n", 16384), 400);
        let cl = b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n";
        assert_eq!(err(cl, 16384), 400);
        let long = [b"GET /".as_slice(), &[b'a'; 9000]].concat();
        assert_eq!(err(&long, 16384), 414);
        let mut big = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        while big.len() < 2000 {
            big.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert_eq!(err(&big, 2000), 431);
        let mut many = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        for _ in 0..MAX_HEADERS {
            many.extend_from_slice(b"X: y\r\n");
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(err(&many, 16384), 431);
        assert!(matches!(parse(b"GET / HT", 16384), Parsed::Partial));
    }

    #[test]
    fn accept_encoding_picks_the_highest_q_among_the_siblings() {
        use Encoding::{Br, Gzip, Zstd};
        let all = [Br, Zstd, Gzip];
        let c = |h: &str, av: &[Encoding]| choose_encoding(Some(h.as_bytes()), av);
        assert_eq!(choose_encoding(None, &all), None);
        assert_eq!(c("gzip, deflate, br, zstd", &all), Some(Br));
        assert_eq!(c("gzip, deflate, br", &[Gzip, Zstd]), Some(Gzip));
        assert_eq!(c("br;q=0.5, gzip;q=0.8", &all), Some(Gzip));
        assert_eq!(c("br;q=0, gzip;q=0", &all), None);
        assert_eq!(c("*", &[Zstd]), Some(Zstd));
        assert_eq!(c("*;q=0.1, zstd;q=0", &[Zstd, Gzip]), Some(Gzip));
        assert_eq!(c("identity", &all), None);
        assert_eq!(c("X-GZIP", &all), Some(Gzip));
        assert_eq!(c("GZip ; Q=1.000", &all), Some(Gzip));
        // Malformed q-values: the entry is skipped.
        assert_eq!(c("br;q=2, gzip;q=0.0001, zstd;q=x", &all), None);
        assert_eq!(c("br;q=1.5, gzip;q=.5", &all), None);
        assert_eq!(c("br;q=0.999, gzip", &all), Some(Gzip));
        assert_eq!(c("", &all), None);
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type(b"a/index.HTML"), "text/html; charset=utf-8");
        assert_eq!(content_type(b"x.png"), "image/png");
        assert_eq!(content_type(b"noext"), "application/octet-stream");
        assert_eq!(content_type(b"dir.d/noext"), "application/octet-stream");
        assert_eq!(
            content_type(b"a.verylongextension"),
            "application/octet-stream"
        );
    }

    #[test]
    fn head_has_the_fields_asked_for() {
        let mut v = Vec::new();
        write_head(
            &mut v,
            &Head {
                status: 206,
                date: b"D",
                content_length: Some(10),
                content_range: Some((0, 9, 100)),
                connection: Some(false),
                ..Head::default()
            },
        );
        let s = String::from_utf8(v).unwrap();
        assert!(s.starts_with("HTTP/1.1 206 Partial Content\r\nServer: iolab\r\nDate: D\r\n"));
        assert!(s.contains("Content-Range: bytes 0-9/100\r\n"));
        assert!(s.ends_with("Connection: close\r\n\r\n"));
    }

    /// The head's numbers, written without `fmt`, read as `fmt` would write them.
    #[test]
    fn decimals_are_written_as_display_writes_them() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            4096,
            65536,
            1 << 20,
            999_999_999_999,
            u64::MAX,
        ] {
            let mut v = b"x".to_vec();
            push_decimal(&mut v, n);
            assert_eq!(v, format!("x{n}").into_bytes());
        }
        let mut v = Vec::new();
        write_head(
            &mut v,
            &Head {
                status: 416,
                date: b"D",
                unsatisfied_size: Some(18_446_744_073_709_551_615),
                content_length: Some(0),
                ..Head::default()
            },
        );
        let s = String::from_utf8(v).unwrap();
        assert!(
            s.starts_with("HTTP/1.1 416 Range Not Satisfiable\r\n"),
            "{s}"
        );
        assert!(s.contains("\r\nContent-Length: 0\r\n"), "{s}");
        assert!(
            s.contains("\r\nContent-Range: bytes */18446744073709551615\r\n"),
            "{s}"
        );
    }
}
