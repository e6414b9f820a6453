//! One fio log file as it is written: lines formatted into a fixed buffer (no allocation per
//! line), a buffered writer flushed by the caller at least once a second, and the first write
//! error reported once (the run goes on; what was written stays).
//!
//! With `log_store_compressed`, entries go out in fio's `.fz` format: fio's binary sample
//! records (`struct io_sample`, 32 bytes, 40 with an offset), cut into chunks of
//! `log_compression` bytes, each chunk its own zlib stream made by the job's compression
//! thread (job/log/zip.rs); `--inflate-log` (fio's or iolab's) prints them as the text lines.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use super::zip::{Chunks, Zipper};

/// Bytes a log buffers before a write reaches the file.
const BUF_BYTES: usize = 64 << 10;

/// "00" to "99", for writing two digits at a time.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[i * 2] = b'0' + (i / 10) as u8;
        t[i * 2 + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// One log line, built in place. Long enough for the widest line fio writes (seven numbers
/// of at most 20 digits and their separators); histogram lines use [`LogFile::raw_line`].
pub(super) struct Line {
    buf: [u8; 192],
    len: usize,
}

impl Line {
    pub(super) fn new() -> Line {
        Line {
            buf: [0; 192],
            len: 0,
        }
    }

    /// A number, after a separator unless it is the first: digits written in place, two at
    /// a time (a line per I/O formats a few of these per I/O).
    #[inline]
    pub(super) fn num(&mut self, v: u64) -> &mut Line {
        self.sep();
        let n = v.checked_ilog10().map_or(1, |l| l as usize + 1);
        let end = self.len + n;
        if end > self.buf.len() {
            return self;
        }
        let (mut i, mut v) = (end, v);
        while v >= 100 {
            let r = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            self.buf[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
        }
        if v >= 10 {
            let r = v as usize * 2;
            self.buf[i - 2..i].copy_from_slice(&PAIRS[r..r + 2]);
        } else {
            self.buf[i - 1] = b'0' + v as u8;
        }
        self.len = end;
        self
    }

    /// fio's `0x%04x` (the priority column under log_prio).
    pub(super) fn hex4(&mut self, v: u16) -> &mut Line {
        self.sep();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let d = [
            b'0',
            b'x',
            HEX[usize::from(v >> 12)],
            HEX[usize::from((v >> 8) & 15)],
            HEX[usize::from((v >> 4) & 15)],
            HEX[usize::from(v & 15)],
        ];
        self.put(&d);
        self
    }

    #[inline]
    fn sep(&mut self) {
        if self.len > 0 && self.len + 2 <= self.buf.len() {
            self.buf[self.len..self.len + 2].copy_from_slice(b", ");
            self.len += 2;
        }
    }

    fn put(&mut self, b: &[u8]) {
        let end = (self.len + b.len()).min(self.buf.len());
        self.buf[self.len..end].copy_from_slice(&b[..end - self.len]);
        self.len = end;
    }

    /// The line with its newline; the buffer is ready for the next one.
    #[inline]
    pub(super) fn take(&mut self) -> &[u8] {
        if self.len < self.buf.len() {
            self.buf[self.len] = b'\n';
            self.len += 1;
        }
        let n = self.len;
        self.len = 0;
        &self.buf[..n]
    }
}

/// One log entry: fio's columns, the optional ones `None` when not logged.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Entry {
    /// ms (since the job's start, or an epoch).
    pub(super) time: u64,
    pub(super) val: u64,
    /// log_window_value=both: the window's max after its mean.
    pub(super) val1: Option<u64>,
    pub(super) ddir: u32,
    pub(super) bs: u64,
    pub(super) offset: Option<u64>,
    /// The I/O's priority: printed `0x%04x` under log_prio, else whether it is real-time.
    pub(super) prio: u16,
    pub(super) log_prio: bool,
    /// log_issue_time: ns.
    pub(super) issue: Option<u64>,
}

/// fio's flag bits in a binary record's direction word.
const OFFSET_BIT: u32 = 1 << 31;
const PRIO_BIT: u32 = 1 << 30;
/// fio's IOPRIO_CLASS_RT in the top 3 bits of a priority value.
const CLASS_RT: u16 = 1;

impl Entry {
    /// The text line, as fio's `flush_samples` prints it.
    fn text<'a>(&self, l: &'a mut Line) -> &'a [u8] {
        l.num(self.time).num(self.val);
        if let Some(v) = self.val1 {
            l.num(v);
        }
        l.num(u64::from(self.ddir)).num(self.bs);
        if let Some(o) = self.offset {
            l.num(o);
        }
        if self.log_prio {
            l.hex4(self.prio);
        } else {
            l.num(u64::from(self.prio >> 13 == CLASS_RT));
        }
        if let Some(t) = self.issue {
            l.num(t);
        }
        l.take()
    }

    /// fio 3.33's `struct io_sample` (and `io_sample_offset`) in native byte order.
    fn record(&self) -> ([u8; 40], usize) {
        let mut r = [0u8; 40];
        let mut ddir = self.ddir;
        if self.offset.is_some() {
            ddir |= OFFSET_BIT;
        }
        if self.log_prio {
            ddir |= PRIO_BIT;
        }
        r[0..8].copy_from_slice(&self.time.to_ne_bytes());
        r[8..16].copy_from_slice(&self.val.to_ne_bytes());
        r[16..20].copy_from_slice(&ddir.to_ne_bytes());
        r[20..22].copy_from_slice(&self.prio.to_ne_bytes());
        r[24..32].copy_from_slice(&self.bs.to_ne_bytes());
        match self.offset {
            Some(o) => {
                r[32..40].copy_from_slice(&o.to_ne_bytes());
                (r, 40)
            }
            None => (r, 32),
        }
    }
}

enum Sink {
    Plain(BufWriter<File>),
    Zlib(Chunks),
}

/// An open log file.
pub(super) struct LogFile {
    path: PathBuf,
    sink: Sink,
    dirty: bool,
    failed: bool,
}

impl LogFile {
    /// A text log, emptied.
    pub(super) fn open(path: PathBuf) -> io::Result<LogFile> {
        let f = File::create(&path)?;
        Ok(LogFile::with(
            path,
            Sink::Plain(BufWriter::with_capacity(BUF_BYTES, f)),
        ))
    }

    /// A log stored compressed (log_store_compressed), in chunks of `chunk` bytes that `zip`'s
    /// thread compresses and writes.
    pub(super) fn zipped(path: PathBuf, zip: &mut Zipper, chunk: usize) -> io::Result<LogFile> {
        let f = File::create(&path)?;
        let chunks = zip.attach(f, path.clone(), chunk);
        Ok(LogFile::with(path, Sink::Zlib(chunks)))
    }

    fn with(path: PathBuf, sink: Sink) -> LogFile {
        LogFile {
            path,
            sink,
            dirty: false,
            failed: false,
        }
    }

    /// One entry: a text line, or a binary record in a compressed log.
    #[inline]
    pub(super) fn entry(&mut self, e: &Entry, line: &mut Line) {
        if self.failed {
            return;
        }
        let r = match &mut self.sink {
            Sink::Plain(w) => w.write_all(e.text(line)),
            Sink::Zlib(c) => {
                let (r, n) = e.record();
                c.write(&r[..n])
            }
        };
        self.dirty = true;
        self.check(r);
    }

    /// One whole text line (with its newline): histogram lines.
    pub(super) fn raw_line(&mut self, line: &[u8]) {
        if self.failed {
            return;
        }
        let r = match &mut self.sink {
            Sink::Plain(w) => w.write_all(line),
            Sink::Zlib(c) => c.write(line),
        };
        self.dirty = true;
        self.check(r);
    }

    /// Everything written so far reaches the file (a compressed log: what makes whole chunks;
    /// the rest at [`LogFile::close`]).
    pub(super) fn flush(&mut self) {
        if !self.dirty || self.failed {
            return;
        }
        self.dirty = false;
        let r = match &mut self.sink {
            Sink::Plain(w) => w.flush(),
            Sink::Zlib(_) => Ok(()),
        };
        self.check(r);
    }

    /// The end: the last chunk of a compressed log is written too.
    pub(super) fn close(&mut self) {
        self.flush();
        if let (Sink::Zlib(c), false) = (&mut self.sink, self.failed) {
            let r = c.finish();
            self.check(r);
        }
    }

    fn check(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.failed = true;
            eprintln!(
                "fio: {}: cannot write log: {e}; the log stops here",
                self.path.display()
            );
        }
    }
}

/// `--inflate-log`: the text lines of a compressed log (zlib streams of fio's records), read
/// and printed a piece at a time: memory stays small whatever the file's size.
pub fn inflate(input: impl io::Read, out: &mut impl Write) -> io::Result<()> {
    let mut r = io::BufReader::with_capacity(BUF_BYTES, input);
    let mut printer = Records {
        out,
        carry: Vec::with_capacity(BUF_BYTES),
        line: Line::new(),
    };
    while !io::BufRead::fill_buf(&mut r)?.is_empty() {
        let mut z = flate2::bufread::ZlibDecoder::new(&mut r);
        io::copy(&mut z, &mut printer)?;
        if z.total_in() == 0 {
            return Err(bad_data("not a zlib stream"));
        }
    }
    if !printer.carry.is_empty() {
        return Err(bad_data("a sample record is cut short"));
    }
    Ok(())
}

fn bad_data(m: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, m.to_string())
}

/// Turns inflated bytes into text lines, keeping a record cut between writes for the next.
struct Records<'a, W: Write> {
    out: &'a mut W,
    carry: Vec<u8>,
    line: Line,
}

impl<W: Write> Write for Records<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.carry.extend_from_slice(buf);
        let mut at = 0;
        while let Some((e, size)) = record(&self.carry[at..]) {
            self.out.write_all(e.text(&mut self.line))?;
            at += size;
        }
        self.carry.drain(..at);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The first record of `b` and its size, if `b` holds a whole one.
fn record(b: &[u8]) -> Option<(Entry, usize)> {
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    if b.len() < 32 {
        return None;
    }
    let ddir = u32::from_ne_bytes([b[16], b[17], b[18], b[19]]);
    let size = if ddir & OFFSET_BIT != 0 { 40 } else { 32 };
    if b.len() < size {
        return None;
    }
    let e = Entry {
        time: word(0),
        val: word(8),
        ddir: ddir & !(OFFSET_BIT | PRIO_BIT),
        prio: u16::from_ne_bytes([b[20], b[21]]),
        bs: word(24),
        offset: (size == 40).then(|| word(32)),
        log_prio: ddir & PRIO_BIT != 0,
        ..Entry::default()
    };
    Some((e, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_fios_comma_space_separated_numbers() {
        let mut l = Line::new();
        l.num(0).num(18446744073709551615).num(1);
        assert_eq!(l.take(), b"0, 18446744073709551615, 1\n");
        for v in [9, 10, 99, 100, 101, 999, 1000, 12345, 1 << 40, u64::MAX / 7] {
            assert_eq!(l.num(v).take(), format!("{v}\n").as_bytes());
        }
        l.num(5).hex4(0x2004);
        assert_eq!(l.take(), b"5, 0x2004\n");
    }

    #[test]
    fn a_write_error_stops_the_log_once_without_failing_the_run() {
        let full = PathBuf::from("/dev/full");
        if !full.exists() {
            iolab_testkit::skip("log write error", &"no /dev/full here");
            return;
        }
        let mut f = LogFile::open(full).unwrap();
        let mut l = Line::new();
        for i in 0..10_000u64 {
            f.entry(
                &Entry {
                    time: i,
                    ..Entry::default()
                },
                &mut l,
            );
        }
        f.flush();
        assert!(f.failed, "ENOSPC went unnoticed");
        // Later lines are dropped, not retried or buffered without bound.
        f.entry(&Entry::default(), &mut l);
        f.close();
    }

    #[test]
    fn compressed_records_inflate_to_the_text_lines() {
        let dir = std::env::temp_dir().join(format!("iolab-logfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x_clat.1.log.fz");
        let mut zip = Zipper::start(None).unwrap();
        let mut f = LogFile::zipped(path.clone(), &mut zip, 1024).unwrap();
        let (mut want, mut l) = (Vec::new(), Line::new());
        for i in 0..500u64 {
            let e = Entry {
                time: i,
                val: i * 7,
                ddir: (i % 2) as u32,
                bs: 4096,
                offset: (i % 3 == 0).then_some(i * 4096),
                log_prio: i % 5 == 0,
                ..Entry::default()
            };
            want.extend_from_slice(e.text(&mut l));
            f.entry(&e, &mut l);
        }
        f.close();
        zip.finish();
        let data = std::fs::read(&path).unwrap();
        let mut got = Vec::new();
        inflate(data.as_slice(), &mut got).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
        assert!(inflate(&b"not zlib"[..], &mut Vec::new()).is_err());
        // A stream cut in the middle is an error, not a hang or a panic.
        assert!(inflate(&data[..data.len() / 2], &mut Vec::new()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
