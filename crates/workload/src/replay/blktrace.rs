//! blktrace's binary format (`struct blk_io_trace`, what `blktrace` writes per CPU and
//! `blkparse -d` writes merged): the queue events as replay entries, as fio reads them; and
//! fio's merge of several traces into one (`merge_blktrace_file`).

use std::io::{Read, Write};

use super::{Entry, Kind, Opts};
use iolab_job::options::replay_skip as skip;

/// Size of one record before its payload.
pub const RECORD: usize = 48;
/// The magic's upper 24 bits; the low byte is the version.
pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;

// Categories (shifted into the action's upper 16 bits) and the queue action.
const TC_SHIFT: u32 = 16;
const TC_READ: u32 = 1 << (TC_SHIFT);
const TC_WRITE: u32 = 1 << (1 + TC_SHIFT);
const TC_FLUSH: u32 = 1 << (2 + TC_SHIFT);
const TC_NOTIFY: u32 = 1 << (10 + TC_SHIFT);
const TC_DISCARD: u32 = 1 << (13 + TC_SHIFT);
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;

/// One record's fields that replay reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub magic: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub device: u32,
    pub pdu_len: u16,
}

/// Whether `head` (the first bytes of a file) starts with a blktrace record, and whether its
/// byte order is the other one (fio's need_swap).
pub fn detect(head: &[u8]) -> Option<bool> {
    let b: [u8; 4] = head.get(..4)?.try_into().ok()?;
    if head.len() < RECORD {
        return None;
    }
    if u32::from_ne_bytes(b) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if u32::from_ne_bytes(b).swap_bytes() & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

impl Trace {
    /// Decodes a record (native byte order, or swapped).
    pub fn decode(b: &[u8; RECORD], swap: bool) -> Trace {
        let u32_at = |o: usize| {
            let v = u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            let v = u64::from_ne_bytes(a);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let pdu = u16::from_ne_bytes([b[46], b[47]]);
        Trace {
            magic: u32_at(0),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            pdu_len: if swap { pdu.swap_bytes() } else { pdu },
        }
    }

    /// The record in native byte order, with no payload (what a merge writes). The fields
    /// replay does not read are zero.
    pub fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[8..16].copy_from_slice(&self.time.to_ne_bytes());
        b[16..24].copy_from_slice(&self.sector.to_ne_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_ne_bytes());
        b[28..32].copy_from_slice(&self.action.to_ne_bytes());
        b[36..40].copy_from_slice(&self.device.to_ne_bytes());
        b
    }

    fn is_queue(&self) -> bool {
        self.action & 0xffff == TA_QUEUE
    }

    /// Read, write or discard (what a merge keeps).
    fn has_dir(&self) -> bool {
        self.action & (TC_READ | TC_WRITE | TC_DISCARD) != 0
    }

    /// The device as (major, minor), in the kernel's 12:20 split of `dev_t`.
    pub fn dev(&self) -> (u32, u32) {
        (self.device >> 20, self.device & 0xf_ffff)
    }
}

/// Reads the next record and skips its payload; None at the end. A record cut short is an
/// error, as is a record whose magic or version is wrong.
pub fn read_record(r: &mut dyn Read, swap: bool, n: u64) -> Result<Option<Trace>, String> {
    let mut b = [0u8; RECORD];
    let mut got = 0;
    while got < RECORD {
        match r.read(&mut b[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(format!("record {n}: cut short ({got} of {RECORD} bytes)")),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("record {n}: read: {e}")),
        }
    }
    let t = Trace::decode(&b, swap);
    if t.magic & 0xffff_ff00 != MAGIC {
        return Err(format!("record {n}: bad magic {:#x}", t.magic));
    }
    if t.magic & 0xff != VERSION {
        return Err(format!(
            "record {n}: blktrace version {} (iolab reads version {VERSION})",
            t.magic & 0xff
        ));
    }
    let pdu = u64::from(t.pdu_len);
    let skipped = std::io::copy(&mut r.take(pdu), &mut std::io::sink())
        .map_err(|e| format!("record {n}: read: {e}"))?;
    if skipped != pdu {
        return Err(format!(
            "record {n}: payload cut short ({skipped} of {pdu} bytes)"
        ));
    }
    Ok(Some(t))
}

/// The queue events of a trace as entries: the state fio keeps while reading one.
pub struct BlkParser {
    opts: Opts,
    last_time: u64,
    /// (device, file index) of the devices met so far.
    devices: Vec<(u32, u32)>,
    /// Open entries owed for devices met for the first time.
    pub(crate) pending_open: Option<u32>,
    /// fio's probe of the trace's queue depth, per direction: queued since the last
    /// completion (merges taken off), and the most seen.
    this_depth: [i64; 3],
    depth: [i64; 3],
}

impl BlkParser {
    pub fn new(opts: Opts) -> BlkParser {
        BlkParser {
            opts,
            last_time: 0,
            devices: Vec::new(),
            pending_open: None,
            this_depth: [0; 3],
            depth: [0; 3],
        }
    }

    /// The depth fio gives a blktrace replay whose job sets no iodepth: the most I/O of one
    /// direction queued between completions, at most 1024, at least 1.
    pub fn depth(&self, ios: &[u64; 4]) -> u32 {
        (0..3)
            .map(|d| match self.depth[d] {
                x if x > 1024 => 1024,
                0 if ios[d] > 0 => 1,
                x => x.max(0),
            })
            .max()
            .unwrap_or(1)
            .max(1) as u32
    }

    /// Counts a record into the depth probe, as fio's load_blktrace does for every record
    /// that is not a note.
    fn probe(&mut self, t: &Trace) {
        let d = if t.action & TC_READ != 0 {
            0
        } else if t.action & TC_WRITE != 0 {
            1
        } else if t.action & TC_DISCARD != 0 {
            2
        } else {
            return;
        };
        match t.action & 0xffff {
            TA_QUEUE => self.this_depth[d] += 1,
            TA_BACKMERGE | TA_FRONTMERGE => self.this_depth[d] -= 1,
            TA_COMPLETE => {
                self.depth[d] = self.depth[d].max(self.this_depth[d]);
                self.this_depth[d] = 0;
            }
            _ => {}
        }
    }

    /// The entry of a record, if it is one fio replays; `file_of` names a device met for the
    /// first time (it returns the new file's index).
    pub fn entry(
        &mut self,
        t: &mut Trace,
        file_of: &mut dyn FnMut(u32) -> Result<u32, String>,
    ) -> Result<Option<Entry>, String> {
        if t.action & TC_NOTIFY != 0 {
            return Ok(None);
        }
        self.probe(t);
        if !t.is_queue() {
            return Ok(None);
        }
        // fio: the delay is measured between queue events, in ns, and kept in µs.
        let delay_us = self.opts.delay(self.last_time, t.time) / 1000;
        self.last_time = t.time;
        if self.opts.align > 0 {
            let a = self.opts.align;
            t.bytes = (u64::from(t.bytes).div_ceil(a) * a).min(u64::from(u32::MAX)) as u32;
        }
        let kind = if t.action & TC_DISCARD != 0 {
            Kind::Trim
        } else if t.action & TC_FLUSH != 0 {
            Kind::Sync
        } else if t.action & TC_WRITE != 0 {
            Kind::Write
        } else {
            Kind::Read
        };
        let skipped = match kind {
            Kind::Read => skip::READ,
            Kind::Write => skip::WRITE,
            Kind::Trim => skip::TRIM,
            _ => skip::SYNC,
        };
        // fio leaves out reads and writes of no bytes (it warns once).
        if self.opts.skip & skipped != 0 || (t.bytes == 0 && kind != Kind::Sync) {
            return Ok(None);
        }
        let file = self.file(t.device, file_of)?;
        let offset = self.opts.offset(t.sector.saturating_mul(512));
        let len = if kind == Kind::Sync {
            0
        } else {
            u64::from(t.bytes)
        };
        Ok(Some(Entry {
            kind,
            file,
            offset,
            len,
            delay_us,
        }))
    }

    fn file(
        &mut self,
        device: u32,
        file_of: &mut dyn FnMut(u32) -> Result<u32, String>,
    ) -> Result<u32, String> {
        if let Some((_, f)) = self.devices.iter().find(|(d, _)| *d == device) {
            return Ok(*f);
        }
        let f = file_of(device)?;
        self.devices.push((device, f));
        self.pending_open = Some(f);
        Ok(f)
    }
}

/// One input of a merge: its records, time-scaled and repeated as fio's merge does.
struct MergeInput<'a> {
    src: Box<dyn FnMut() -> Result<Box<dyn Read + 'a>, String> + 'a>,
    r: Box<dyn Read + 'a>,
    swap: bool,
    scalar: u64,
    iter: u64,
    iters: u64,
    /// The time of the trace's last event, scaled (fio's `length`), once known.
    length: u64,
    cur: Trace,
    n: u64,
}

impl MergeInput<'_> {
    /// Moves to the next queue event with a direction; false at the end of the last round.
    fn advance(&mut self) -> Result<bool, String> {
        loop {
            self.n += 1;
            match read_record(&mut self.r, self.swap, self.n)? {
                None => {
                    // A trace with no queue event gives none in any round: without this
                    // merge_blktrace_iters=4000000000 re-read it that often, writing nothing.
                    if self.cur.magic == 0 {
                        return Ok(false);
                    }
                    if self.length == 0 {
                        self.length = self.cur.time;
                    }
                    self.iter += 1;
                    if self.iter >= self.iters {
                        return Ok(false);
                    }
                    self.r = (self.src)()?;
                    self.n = 0;
                }
                Some(t) if !t.is_queue() || !t.has_dir() => {}
                Some(mut t) => {
                    let raw = t.time.saturating_add(self.iter.saturating_mul(self.length));
                    t.time = (u128::from(raw) * u128::from(self.scalar) / 100) as u64;
                    self.cur = t;
                    return Ok(true);
                }
            }
        }
    }
}

/// A trace to merge: how to open it (again, for each iteration), its byte order, its time
/// scale in percent and how many times it runs.
pub struct MergeSource<'a> {
    pub open: Box<dyn FnMut() -> Result<Box<dyn Read + 'a>, String> + 'a>,
    pub swap: bool,
    pub scalar: u32,
    pub iters: u32,
}

/// fio's merge: the queue events of every source, earliest first, written to `out` as one
/// trace (records without payload). Returns the records written.
pub fn merge(sources: Vec<MergeSource<'_>>, out: &mut dyn Write) -> Result<u64, String> {
    let mut live = Vec::new();
    for (i, mut s) in sources.into_iter().enumerate() {
        let r = (s.open)().map_err(|e| format!("input {}: {e}", i + 1))?;
        let mut m = MergeInput {
            src: s.open,
            r,
            swap: s.swap,
            scalar: u64::from(s.scalar),
            iter: 0,
            iters: u64::from(s.iters.max(1)),
            length: 0,
            cur: Trace::default(),
            n: 0,
        };
        if m.advance().map_err(|e| format!("input {}: {e}", i + 1))? {
            live.push((i, m));
        }
    }
    let mut written = 0u64;
    while let Some(k) = (0..live.len()).min_by_key(|&k| live[k].1.cur.time) {
        let rec = live[k].1.cur.encode();
        out.write_all(&rec).map_err(|e| format!("write: {e}"))?;
        written += 1;
        let (i, m) = &mut live[k];
        if !m.advance().map_err(|e| format!("input {}: {e}", *i + 1))? {
            live.swap_remove(k);
        }
    }
    Ok(written)
}
