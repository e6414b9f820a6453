//! The access log, in the common log format: `host - - [date] "request line" status bytes`.
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

    /// Adds one line. `request` is the request line as received (method, target, version).
    pub fn line(
        &mut self,
        peer: Option<IpAddr>,
        now: i64,
        request: &[u8],
        status: u16,
        bytes: u64,
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
        // The request line passed httparse (no CR, LF or other controls); quotes are escaped
        // so the line stays parseable.
        for &c in request {
            if c == b'"' || c == b'\\' {
                self.buf.push(b'\\');
            }
            self.buf.push(c);
        }
        let _ = if bytes == 0 {
            writeln!(self.buf, "\" {status} -")
        } else {
            writeln!(self.buf, "\" {status} {bytes}")
        };
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

impl Drop for LogBuf {
    fn drop(&mut self) {
        self.tick(0, true);
    }
}
