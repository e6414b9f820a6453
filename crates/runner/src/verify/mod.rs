//! fio's data verification: what each written block carries and how a block read back is
//! judged. Pure functions over byte slices; the job loop (`job/verify.rs`) decides which
//! blocks are written and read.
//!
//! A block holds, every `verify_interval` bytes, fio 3.33's 40-byte header (magic 0xacca,
//! type, length, the write's seed, its offset, time, thread, its number `numberio`, and a
//! crc32c of those fields), the sum's field, then data. The layout is fio's, so either tool
//! verifies what the other wrote. A block that fails is told apart as fio cannot:
//! - corrupt: the header or the data does not match its own checksum;
//! - misplaced: an intact block whose header names another offset;
//! - stale: an intact block for this offset from another write (another pass or another
//!   seed): a lost write, which fio's own check lets through in `verify_only`.

pub mod fault;
pub mod pool;
pub mod seed;
pub mod state;
pub mod sum;

use std::fmt::Write as _;

pub use seed::SeedStream;
pub use sum::{crctest, crctest_text, fio_crc32c, CrcRate, Sum};

/// fio's header magic.
pub const MAGIC: u16 = 0xacca;
/// Bytes of fio's `struct verify_header`.
pub const HEADER: usize = 40;
/// Where the header's own crc32c sits (it covers the bytes before it).
const HDR_CRC_AT: usize = 36;
/// fio's errno for a failed verify (EILSEQ).
pub const EILSEQ: i32 = 84;

/// What `verify=` puts in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `meta`: the header alone (fio's VERIFY_HDR_ONLY).
    Meta,
    /// A header and a checksum of the data.
    Sum(Sum),
    /// `pattern`: no header, the block is `verify_pattern` throughout.
    Pattern,
    /// A verify_pattern without `verify` (fio's VERIFY_PATTERN): fio's header, then the
    /// pattern, both checked.
    PatternHeader,
    /// `null`: nothing is checked.
    Null,
}

impl Kind {
    /// `verify=` as fio spells it; `None` for "0"/"none" (and for names fio lacks).
    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "meta" => Kind::Meta,
            "pattern" => Kind::Pattern,
            iolab_job::options::PATTERN_WITH_HEADER => Kind::PatternHeader,
            "null" => Kind::Null,
            // fio maps crc32c-intel to crc32c (it picks the instruction itself).
            "crc32c-intel" => Kind::Sum(Sum::Crc32c),
            n => Kind::Sum(*Sum::ALL.iter().find(|s| s.name() == n)?),
        })
    }

    fn code(self) -> u16 {
        match self {
            Kind::Meta => 1,
            Kind::Sum(s) => s.code(),
            Kind::PatternHeader => 17,
            Kind::Pattern => 18,
            Kind::Null => 19,
        }
    }

    /// Whether blocks carry fio's header.
    pub fn has_header(self) -> bool {
        matches!(self, Kind::Meta | Kind::PatternHeader | Kind::Sum(_))
    }

    /// The header and the sum's field: where the data starts.
    pub fn header_size(self) -> usize {
        match self {
            Kind::Sum(s) => HEADER + s.field(),
            _ => HEADER,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Sum(s) => s.name(),
            Kind::Pattern | Kind::PatternHeader => "pattern",
            Kind::Null => "null",
        }
    }
}

/// How a job verifies: fixed for the job.
#[derive(Clone, Debug)]
pub struct Config {
    pub kind: Kind,
    /// Bytes per header; divides every write size.
    pub interval: u64,
    /// verify_offset: the header is swapped with the bytes at this offset of each interval.
    pub hdr_offset: usize,
    /// verify_pattern, decoded (empty: random data from each write's seed).
    pub pattern: Pattern,
    /// fio's thread_number, written into each header.
    pub thread: u16,
    /// verify_fatal: stop at the first bad header of a block.
    pub fatal: bool,
}

/// A decoded `verify_pattern`: bytes, and where `%o` puts the block's offset (decoded as
/// the option is read, by the job crate).
pub use iolab_job::value::DataPattern as Pattern;

/// Data from a seed: fio 3.33's random data of a verify write (its `__fill_random_buf` over
/// the whole write, headers written over it after), so that a block iolab wrote holds fio's
/// bytes after each header and the other way round.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    iolab_workload::bufdata::fio_fill(buf, buf.len(), seed);
}

/// What one write put in its block: what a read of it must find.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// fio's numberio: the job's write count when it was issued.
    pub numberio: u64,
    pub seed: u64,
    /// Trimmed since (trim_backlog with trim_verify_zero): the block must read as zeroes.
    pub trimmed: bool,
    /// A read of a job that does not write: whatever write the block holds passes, as fio
    /// 3.33 checks neither the seed nor the write's number there (it cannot know them).
    pub any_write: bool,
}

impl Config {
    /// Fills a write's buffer: data (the pattern, or random from the seed), then a header
    /// per interval. `time_ns` is the time written into the headers.
    pub fn fill(&self, buf: &mut [u8], w: &Written, time_ns: u64) {
        match self.kind {
            Kind::Null => return,
            _ if !self.pattern.bytes.is_empty() => self.pattern.fill(buf, w.offset),
            _ => fill_random(buf, w.seed),
        }
        if !self.kind.has_header() {
            return;
        }
        let step = self.interval as usize;
        for (i, chunk) in buf.chunks_mut(step).enumerate() {
            let at = w.offset + (i * step) as u64;
            self.write_header(chunk, w, at, time_ns);
            if self.hdr_offset > 0 && self.hdr_offset + self.kind.header_size() <= chunk.len() {
                swap(chunk, self.hdr_offset, self.kind.header_size());
            }
        }
    }

    fn write_header(&self, chunk: &mut [u8], w: &Written, at: u64, time_ns: u64) {
        let hs = self.kind.header_size();
        if chunk.len() < hs {
            return;
        }
        let seed = if self.pattern.bytes.is_empty() {
            w.seed
        } else {
            0
        };
        let len = chunk.len() as u32;
        let h = &mut chunk[..HEADER];
        h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
        h[2..4].copy_from_slice(&self.kind.code().to_le_bytes());
        h[4..8].copy_from_slice(&len.to_le_bytes());
        h[8..16].copy_from_slice(&seed.to_le_bytes());
        h[16..24].copy_from_slice(&at.to_le_bytes());
        h[24..28].copy_from_slice(&((time_ns / 1_000_000_000) as u32).to_le_bytes());
        h[28..32].copy_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
        h[32..34].copy_from_slice(&self.thread.to_le_bytes());
        h[34..36].copy_from_slice(&(w.numberio as u16).to_le_bytes());
        let crc = fio_crc32c(&h[..HDR_CRC_AT]);
        h[HDR_CRC_AT..HEADER].copy_from_slice(&crc.to_le_bytes());
        if let Kind::Sum(s) = self.kind {
            let (head, data) = chunk.split_at_mut(hs);
            s.compute(data, &mut head[HEADER..]);
        }
    }

    /// Checks a block read back (`buf`, which is changed: a moved header is put back)
    /// against the write it should hold. `seed_known`: whether the expected seed is known.
    pub fn check(&self, buf: &mut [u8], w: &Written, seed_known: bool) -> Vec<Bad> {
        let mut bad = Vec::new();
        match self.kind {
            Kind::Null => {}
            Kind::Pattern => {
                let mut want = vec![0u8; buf.len()];
                self.pattern.fill(&mut want, w.offset);
                if let Some(i) = buf.iter().zip(&want).position(|(a, b)| a != b) {
                    bad.push(Bad::pattern(w, i, i, buf[i], want[i]));
                }
            }
            _ => {
                let step = self.interval as usize;
                for (i, chunk) in buf.chunks_mut(step).enumerate() {
                    let hs = self.kind.header_size();
                    if self.hdr_offset > 0 && self.hdr_offset + hs <= chunk.len() {
                        swap(chunk, self.hdr_offset, hs);
                    }
                    if let Some(b) = self.check_one(chunk, w, i, seed_known) {
                        // fio gives up on a block at its first bad header; a bad sum it
                        // reports and goes on to the next interval, unless verify_fatal.
                        let stop = self.fatal || b.header_failed();
                        bad.push(b);
                        if stop {
                            break;
                        }
                    }
                }
            }
        }
        bad
    }

    fn check_one(&self, chunk: &[u8], w: &Written, i: usize, seed_known: bool) -> Option<Bad> {
        let at = w.offset + (i as u64) * self.interval;
        let h = Header::read(chunk)?;
        let crc = fio_crc32c(&chunk[..HDR_CRC_AT]);
        let want_seed = if self.pattern.bytes.is_empty() {
            w.seed
        } else {
            0
        };
        let seed_bad = seed_known && !w.any_write && h.seed != want_seed;
        let len = chunk.len();
        let intact = h.magic == MAGIC && h.len as usize == len && h.crc == crc;
        let mut fio = fio_header_line(&h, len, at, w, crc, seed_bad.then_some(want_seed));
        if !fio.is_empty() {
            let _ = write!(
                fio,
                " at file {{file}} offset {at}, length {len} (requested block: offset={}, length={})",
                w.offset, w.len
            );
        }
        let data_bad = self.data_bad(chunk, h.kind);
        let (kind, detail) = if !intact || data_bad.is_some() {
            if let (Some((want, got)), true, true) = (&data_bad, intact, fio.is_empty()) {
                fio = format!(
                    "{:.8}: verify failed at file {{file}} offset {at}, length {len} (requested block: offset={}, length={}, flags={{flags}})\n       Expected CRC: {want}\n       Received CRC: {got}",
                    self.kind.name(), w.offset, w.len
                );
                let given = self.kind.code();
                if h.kind != given {
                    let _ = write!(
                        fio,
                        "\nfio: verify type mismatch ({} media, {given} given)",
                        h.kind
                    );
                }
            }
            (
                Damage::Corrupt,
                self.corrupt_detail(&h, len, crc, intact, data_bad),
            )
        } else if h.offset != at {
            let detail = format!("holds the block written for offset {}", h.offset);
            (Damage::Misplaced { found: h.offset }, detail)
        } else if (h.numberio != w.numberio as u16 && !w.any_write) || seed_bad {
            // A later write number: the block was written again after this write (what
            // experimental_verify's replay meets), not a write that was lost.
            let why = if h.numberio > w.numberio as u16 {
                "overwritten by a later write"
            } else {
                "a lost write"
            };
            let detail = format!(
                "holds write #{} (seed {:#x}), expected write #{} (seed {want_seed:#x}): {why}",
                h.numberio, h.seed, w.numberio as u16
            );
            let found = h.numberio;
            (
                Damage::Stale {
                    found,
                    found_seed: h.seed,
                },
                detail,
            )
        } else if let Some((k, got, want)) = self.pattern_bad(chunk, i, w.offset) {
            let hs = self.kind.header_size();
            let at = i * self.interval as usize + k;
            return Some(Bad::pattern(w, at, k.saturating_sub(hs), got, want));
        } else {
            return None;
        };
        Some(Bad {
            file: w.file,
            at,
            len: len as u32,
            block: (w.offset, w.len),
            kind,
            fio,
            detail,
        })
    }

    /// iolab's words for a corrupt block: the sums, or what is wrong with the header.
    fn corrupt_detail(
        &self,
        h: &Header,
        len: usize,
        crc: u32,
        intact: bool,
        data_bad: Option<(String, String)>,
    ) -> String {
        match (data_bad, intact) {
            (Some((want, got)), true) => {
                format!("{} expected {want}, received {got}", self.kind.name())
            }
            _ if h.magic != MAGIC => format!(
                "no verify header (magic {:x}, wanted {MAGIC:x}): never written, or written by something else",
                h.magic
            ),
            _ if h.len as usize != len => {
                format!("the header's length is {}, the block's {len}", h.len)
            }
            _ => format!(
                "the header's own crc32c does not match (stored {:x}, calculated {crc:x})",
                h.crc
            ),
        }
    }

    /// For a header with the pattern after it (fio checks the pattern of VERIFY_PATTERN and of
    /// meta): the first byte of the `i`th interval's data that is not the pattern, as (its
    /// index in the interval, got, wanted).
    fn pattern_bad(&self, chunk: &[u8], i: usize, offset: u64) -> Option<(usize, u8, u8)> {
        if !matches!(self.kind, Kind::Meta | Kind::PatternHeader) {
            return None;
        }
        let hs = self.kind.header_size().min(chunk.len());
        let from = i * self.interval as usize + hs;
        let (k, got, want) = self.pattern.mismatch(&chunk[hs..], from, offset)?;
        Some((hs + k, got, want))
    }

    /// For the sum types: (expected, received) as hex when the data's sum is wrong. As fio,
    /// the data starts where the header found (`media`, its type) ends, which is not where
    /// this job's would end when the block was written with another type.
    fn data_bad(&self, chunk: &[u8], media: u16) -> Option<(String, String)> {
        let media = match Sum::ALL.iter().find(|s| s.code() == media) {
            Some(s) => Kind::Sum(*s),
            None if media == Kind::Meta.code() => Kind::Meta,
            None => self.kind,
        };
        let hs = media.header_size().min(chunk.len());
        match self.kind {
            Kind::Sum(s) => {
                let mut got = [0u8; 64];
                s.compute(&chunk[hs..], &mut got);
                let stored = &chunk[HEADER..HEADER + s.sum_len()];
                (stored != &got[..s.sum_len()]).then(|| (hex(stored), hex(&got[..s.sum_len()])))
            }
            _ => None,
        }
    }
}

/// fio's first complaint about a header, in fio's order of checks; empty when it has none.
/// `bad_seed` is the seed wanted when the one found differs (fio 3.33 itself checks the
/// seed only for jobs that read and write; iolab always knows it).
fn fio_header_line(
    h: &Header,
    len: usize,
    at: u64,
    w: &Written,
    crc: u32,
    bad_seed: Option<u64>,
) -> String {
    if h.magic != MAGIC {
        format!("verify: bad magic header {:x}, wanted {MAGIC:x}", h.magic)
    } else if h.len as usize != len {
        format!("verify: bad header length {}, wanted {len}", h.len)
    } else if h.offset != at {
        format!("verify: bad header offset {}, wanted {at}", h.offset)
    } else if h.numberio != w.numberio as u16 && !w.any_write {
        let want = w.numberio as u16;
        format!("verify: bad header numberio {}, wanted {want}", h.numberio)
    } else if let Some(want) = bad_seed {
        format!("verify: bad header rand_seed {}, wanted {want}", h.seed)
    } else if h.crc != crc {
        format!("verify: bad header crc {:x}, calculated {crc:x}", h.crc)
    } else {
        String::new()
    }
}

fn swap(chunk: &mut [u8], at: usize, n: usize) {
    let (a, b) = chunk.split_at_mut(at);
    a[..n].swap_with_slice(&mut b[..n]);
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// A header as read.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub magic: u16,
    pub kind: u16,
    pub len: u32,
    pub seed: u64,
    pub offset: u64,
    pub thread: u16,
    pub numberio: u16,
    pub crc: u32,
}

impl Header {
    pub fn read(b: &[u8]) -> Option<Header> {
        let u16_at = |i: usize| Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?));
        let u32_at = |i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
        let u64_at = |i: usize| Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
        Some(Header {
            magic: u16_at(0)?,
            kind: u16_at(2)?,
            len: u32_at(4)?,
            seed: u64_at(8)?,
            offset: u64_at(16)?,
            thread: u16_at(32)?,
            numberio: u16_at(34)?,
            crc: u32_at(36)?,
        })
    }
}

/// Which of the three a bad block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    Corrupt,
    Misplaced {
        found: u64,
    },
    Stale {
        found: u16,
        found_seed: u64,
    },
    /// A trimmed block that does not read back as zeroes (trim_verify_zero).
    NotZero,
}

impl Damage {
    pub fn word(self) -> &'static str {
        match self {
            Damage::Corrupt => "corrupt",
            Damage::Misplaced { .. } => "misplaced",
            Damage::Stale { .. } => "stale",
            Damage::NotZero => "trimmed",
        }
    }
}

/// One bad header (or pattern) in a block read back.
#[derive(Clone, Debug)]
pub struct Bad {
    pub file: u32,
    /// Offset and length of the interval that failed.
    pub at: u64,
    pub len: u32,
    /// The block as requested (offset, length).
    pub block: (u64, u32),
    pub kind: Damage,
    /// fio's message, `{file}` standing for the file's name.
    pub fio: String,
    /// iolab's words after the kind.
    pub detail: String,
}

/// The flags fio 3.33 prints in its "verify failed" line: those of the read's io_u when it
/// is checked. It counts in the depth (0x8) unless a verify_async thread checks it, which
/// keeps its file reference instead (0x4); it came from the list of written blocks (0x80)
/// unless experimental_verify replayed it.
pub fn fio_flags(from_list: bool, in_async_thread: bool) -> u32 {
    let depth = if in_async_thread { 0x4 } else { 0x8 };
    if from_list {
        depth | 0x80
    } else {
        depth
    }
}

impl Bad {
    /// A byte not the pattern: `i` in the block, `fio_at` as fio counts it (from the end of
    /// the header, where there is one).
    fn pattern(w: &Written, i: usize, fio_at: usize, got: u8, want: u8) -> Bad {
        let bits = (got ^ want).count_ones();
        Bad {
            file: w.file,
            at: w.offset,
            len: w.len,
            block: (w.offset, w.len),
            kind: Damage::Corrupt,
            fio: format!(
                "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {bits}\nfio: bad pattern block offset {fio_at}\npattern: verify failed at file {{file}} offset {}, length {} (requested block: offset={}, length={}, flags={{flags}})",
                w.offset, w.len, w.offset, w.len
            ),
            detail: format!("byte {i} of the block is {got:02x}, the pattern has {want:02x}"),
        }
    }

    /// A trimmed block read back: fio's complaint when a byte is not zero (the first one).
    pub fn not_zero(w: &Written, got: &[u8]) -> Option<Bad> {
        let i = got.iter().position(|&b| b != 0)?;
        Some(Bad {
            file: w.file,
            at: w.offset,
            len: w.len,
            block: (w.offset, w.len),
            kind: Damage::NotZero,
            fio: format!(
                "trim: verify failed at file {{file}} offset {}, length {}, block offset {i}",
                w.offset, w.len
            ),
            detail: format!(
                "byte {i} reads {:02x} after the block was trimmed (trim_verify_zero wants zeroes)",
                got[i]
            ),
        })
    }

    /// Whether fio found the interval's header bad (magic, length, offset, seed, number or
    /// its crc), as opposed to the data after it.
    pub fn header_failed(&self) -> bool {
        self.fio.starts_with("verify: ")
    }

    /// fio's lines then iolab's one line, for the file named `file`.
    /// The failure's lines for the block of `file`; `flags` is what fio shows of its I/O's
    /// flags in a checksum or pattern failure line (see [`fio_flags`]).
    pub fn message(&self, file: &str, flags: u32) -> String {
        format!(
            "{}\niolab: verify: {} block: file {file} offset {} length {}: {}",
            self.fio
                .replace("{file}", file)
                .replace("{flags}", &format!("{flags:x}")),
            self.kind.word(),
            self.at,
            self.len,
            self.detail
        )
    }
}

#[cfg(test)]
mod tests;
