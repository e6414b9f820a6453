//! The access log, in the common log format (`host - - [date] "request line" status bytes`) or
//! the combined one (the same, then `"referer" "user-agent"`). What the client sent is escaped
//! as Apache does (`"` and `\` with a backslash, other bytes outside printable ASCII as `\xHH`),
//! so no request can end a field or a line early and forge one.
//! Each thread collects lines in its own buffer and appends whole buffers to the file
//! (O_APPEND), so threads never interleave inside a line and no lock is taken per request.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use crate::date;

/// Flush when a thread's buffer holds this much, and at least once a second.
const FLUSH_BYTES: usize = 32 * 1024;

pub fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// The combined format's Referer and User-Agent (each `None` when not sent).
pub type Combined<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// One thread's buffer of log lines.
pub struct LogBuf {
    file: Arc<File>,
    buf: Vec<u8>,
    last_flush: i64,
}

impl LogBuf {
    pub fn new(file: Arc<File>) -> LogBuf {
        LogBuf {
            file,
            buf: Vec::with_capacity(FLUSH_BYTES * 2),
            last_flush: 0,
        }
    }

    /// Adds one line. `request` is the request line as received (method, target, version);
    /// `combined` the Referer and User-Agent fields for the combined format (`None`: common).
    pub fn line(
        &mut self,
        peer: Option<IpAddr>,
        now: i64,
        request: &[u8],
        status: u16,
        bytes: u64,
        combined: Option<Combined<'_>>,
    ) {
        match peer {
            Some(ip) => {
                let _ = write!(self.buf, "{ip}");
            }
            None => self.buf.push(b'-'),
        }
        self.buf.extend_from_slice(b" - - ");
        date::clf_date(now, &mut self.buf);
        self.buf.extend_from_slice(b" \"");
        escape(request, &mut self.buf);
        let _ = if bytes == 0 {
            write!(self.buf, "\" {status} -")
        } else {
            write!(self.buf, "\" {status} {bytes}")
        };
        if let Some((referer, agent)) = combined {
            for f in [referer, agent] {
                self.buf.extend_from_slice(b" \"");
                match f {
                    Some(v) => escape(v, &mut self.buf),
                    None => self.buf.push(b'-'),
                }
                self.buf.push(b'"');
            }
        }
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_BYTES {
            self.flush(now);
        }
    }

    /// Writes what is buffered if a second has passed since the last write (or `force`).
    pub fn tick(&mut self, now: i64, force: bool) {
        if !self.buf.is_empty() && (force || now != self.last_flush) {
            self.flush(now);
        }
    }

    fn flush(&mut self, now: i64) {
        // A failing log must not stop the server; the lines are dropped.
        let _ = (&*self.file).write_all(&self.buf);
        self.buf.clear();
        self.last_flush = now;
    }
}

/// Appends `raw` with `"` and `\` escaped by a backslash and every byte that is not printable
/// ASCII as `\xHH`.
pub fn escape(raw: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &c in raw {
        match c {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', c]),
            0x20..=0x7e => out.push(c),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 15)],
            ]),
        }
    }
}

impl Drop for LogBuf {
    fn drop(&mut self) {
        self.tick(0, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_quote_newline_or_control_to_forge_a_field_or_line() {
        let mut v = Vec::new();
        escape(b"GET /a\"b\\c\r\n1.2.3.4 - - \x1b[31m\xff ok", &mut v);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            r#"GET /a\"b\\c\x0d\x0a1.2.3.4 - - \x1b[31m\xff ok"#
        );
    }
}
