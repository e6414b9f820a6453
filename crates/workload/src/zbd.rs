//! zonemode=zbd: zones with write pointers, as fio 3.33 emulates them on a regular file or a
//! block device that is not zoned. Every zone is sequential-write-required and starts empty:
//! a write goes to its zone's write pointer, a full zone is reset before it is written again,
//! at most `max_open_zones` zones (per file, all jobs) and `job_max_open_zones` (per job) are
//! written at once, and reads stay below the write pointer unless `read_beyond_wp`.
//!
//! The zones of a file are shared by every job of the run that uses it (fio shares them by file
//! name), so a job reading after a writer finds what it wrote. The generator asks [`ZbdRun`] to
//! move each I/O it makes ([`ZbdRun::adjust`]); nothing else of the run sees zones.
//!
//! One difference with fio, on purpose: a write's zone is closed when the write is generated
//! (fio closes it when the write completes and first waits for the writes in flight). With one
//! I/O in flight the two are the same; deeper, iolab may open the next zone a little earlier.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::gen::{Dir, IoUnit};

mod plan;
#[cfg(test)]
mod tests;

pub(crate) use plan::plan;

/// A job's zone options (fio's `zonesize`, `zonecapacity`, ...), checked at planning.
#[derive(Clone, Debug, PartialEq)]
pub struct ZbdConfig {
    pub zone_size: u64,
    /// Bytes of each zone that can be written (at most `zone_size`).
    pub capacity: u64,
    /// zoneskip: bytes skipped after each zone of a sequential job (whole zones).
    pub zone_skip: u64,
    pub job_max_open: u32,
    pub read_beyond_wp: bool,
    pub reset_threshold: f64,
    pub reset_frequency: f64,
}

/// One file's zones: their write pointers and which are open.
#[derive(Debug)]
pub struct Zones {
    size: u64,
    capacity: u64,
    /// Per zone, the write pointer (absolute); zone `i` starts at `i * size`.
    wp: Vec<u64>,
    /// The open zones, in the order they were opened, with the job that opened each.
    open: Vec<(u32, u64)>,
    /// Zones open at once on this file (0: not tracked, no limit).
    max_open: u32,
    /// Bytes below the write pointers (fio's sectors_with_data).
    data: u64,
    /// Writes left before zone_reset_frequency resets a zone.
    write_cnt: u32,
}

/// A file's zones as the jobs using it share them. Two plans are equal when they share them.
#[derive(Clone, Debug)]
pub struct SharedZones(Arc<Mutex<Zones>>);

impl PartialEq for SharedZones {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl SharedZones {
    fn new(z: Zones) -> SharedZones {
        SharedZones(Arc::new(Mutex::new(z)))
    }

    /// The zones; a job that panicked holding them leaves them as they were.
    pub fn lock(&self) -> MutexGuard<'_, Zones> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What one job needs of zbd: its options, the zones of each of its files, and its range.
#[derive(Clone, Debug, PartialEq)]
pub struct ZbdJob {
    pub cfg: ZbdConfig,
    /// Per file of the job (the pattern's order): its zones and the job's span in it.
    pub files: Vec<(SharedZones, u64, u64)>,
    /// Who opens zones (the plan's number): job_max_open_zones counts per job.
    pub owner: u64,
    /// fio's lines about the job's range rounded to whole zones, printed when the job starts.
    pub notes: Vec<String>,
}

/// The job's side while it runs: the zones resets it made and whether zones ended it.
#[derive(Debug)]
pub struct ZbdRun {
    job: ZbdJob,
    resets: u64,
    ended: bool,
}

impl Zones {
    /// `nr` empty zones of `size` bytes, `capacity` writable, at most `max_open` open.
    pub fn new(nr: u64, size: u64, capacity: u64, max_open: u32, reset_frequency: f64) -> Zones {
        let mut z = Zones {
            size,
            capacity,
            wp: (0..nr).map(|i| i * size).collect(),
            open: Vec::new(),
            max_open,
            data: 0,
            write_cnt: 0,
        };
        z.rearm(reset_frequency);
        z
    }

    fn idx(&self, off: u64) -> usize {
        ((off / self.size) as usize).min(self.wp.len())
    }

    fn start(&self, z: usize) -> u64 {
        z as u64 * self.size
    }

    fn cap_end(&self, z: usize) -> u64 {
        self.start(z) + self.capacity
    }

    /// Write pointer of zone `z`; the sentinel past the last zone holds no data.
    fn wp(&self, z: usize) -> u64 {
        self.wp.get(z).copied().unwrap_or(self.start(z))
    }

    fn is_open(&self, z: usize) -> bool {
        self.open.iter().any(|o| o.0 as usize == z)
    }

    fn rearm(&mut self, freq: f64) {
        self.write_cnt = if freq > 0.0 {
            (1.0 / freq).min(f64::from(u32::MAX)) as u32
        } else {
            u32::MAX
        };
    }

    fn close(&mut self, z: usize) {
        self.open.retain(|o| o.0 as usize != z);
    }

    /// fio's zbd_reset_zone: the write pointer back to the zone's start, counted only when the
    /// zone held data.
    fn reset(&mut self, z: usize) -> bool {
        let held = self.wp(z) - self.start(z);
        if held == 0 {
            return false;
        }
        self.data -= held;
        self.wp[z] = self.start(z);
        true
    }

    /// fio's zbd_open_zone: whether zone `z` may be written (open, or openable within the
    /// limits); an open zone that is full counts as not writable.
    fn try_open(&mut self, z: usize, owner: u64, job_max: u32) -> bool {
        if self.max_open == 0 {
            return true;
        }
        if self.is_open(z) {
            return self.wp(z) < self.cap_end(z);
        }
        let mine = self.open.iter().filter(|o| o.1 == owner).count() as u32;
        if (job_max > 0 && mine >= job_max) || self.open.len() as u32 >= self.max_open {
            return false;
        }
        self.open.push((z as u32, owner));
        true
    }
}

/// The part of a file a job works on, in zones: `[min, max)`, and the bytes of it.
#[derive(Clone, Copy)]
struct Range {
    offset: u64,
    len: u64,
    min: usize,
    max: usize,
}

impl Range {
    fn of(z: &Zones, offset: u64, len: u64) -> Range {
        Range {
            offset,
            len,
            min: z.idx(offset),
            max: z.idx(offset + len),
        }
    }

    fn holds(&self, off: u64) -> bool {
        off.wrapping_sub(self.offset) < self.len
    }
}

impl ZbdRun {
    pub fn new(job: ZbdJob) -> ZbdRun {
        ZbdRun {
            job,
            resets: 0,
            ended: false,
        }
    }

    /// Zone resets this job made (fio's nr_zone_resets).
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// The zones ended the job (nothing left to read, no zone to write).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// fio's zbd_adjust_ddir: a job that reads and writes writes first while its file holds
    /// no data (there would be nothing to read).
    pub fn direction(&self, file: usize, d: Dir) -> Dir {
        match self.job.files.get(file) {
            Some(f) if d == Dir::Read && !self.job.cfg.read_beyond_wp && f.0.lock().data == 0 => {
                Dir::Write
            }
            _ => d,
        }
    }

    /// Moves `io` where fio's zbd_adjust_block puts it: a write to its zone's write pointer
    /// (opening, or changing to, a zone within the limits, resetting a full one), a read below
    /// a write pointer. False (and the job ends) where fio's job would reach its end.
    pub fn adjust(&mut self, io: &mut IoUnit, random: bool, min_bs: u64) -> bool {
        let ZbdRun { job, resets, ended } = self;
        let Some((zones, off, len)) = job.files.get(io.file) else {
            return true;
        };
        let mut z = zones.lock();
        let r = Range::of(&z, *off, *len);
        let min_bs = min_bs.max(1);
        let ok = match io.dir {
            Dir::Write => write(job, &mut z, r, io, min_bs, resets),
            Dir::Read if job.cfg.read_beyond_wp => true,
            Dir::Read => read(&mut z, r, io, random, min_bs),
            Dir::Trim => true,
        };
        drop(z);
        *ended |= !ok;
        ok
    }

    /// Where a sequential job goes on after an I/O that ended at `end`: from a zone's
    /// capacity to its end (writes), and past `zoneskip` after each zone (fio's
    /// setup_zbd_zone_mode; a reader also skips at the write pointer).
    pub fn next_sequential(&self, file: usize, dir: Dir, end: u64) -> u64 {
        let Some((zones, ..)) = self.job.files.get(file) else {
            return end;
        };
        let z = zones.lock();
        let zi = z.idx(end);
        let mut end = end;
        if dir == Dir::Write && z.capacity < z.size && end >= z.cap_end(zi) {
            end = z.start(zi + 1);
        }
        let skip = self.job.cfg.zone_skip;
        if skip > 0 {
            let at_wp = dir == Dir::Read && !self.job.cfg.read_beyond_wp && end >= z.wp(zi);
            if end.is_multiple_of(z.size) {
                end += skip;
            } else if at_wp {
                end = z.start(zi + 1) + skip;
            }
        }
        end
    }
}

/// fio's read side of zbd_adjust_block: a read lands below a write pointer, in its zone or
/// the nearest zone with data (sequential: the next one).
fn read(z: &mut Zones, r: Range, io: &mut IoUnit, random: bool, min_bs: u64) -> bool {
    let first = z.idx(io.offset);
    let orig_start = z.start(first);
    let mut zi = first;
    let mut range = z.wp(zi) - z.start(zi);
    if range < min_bs || (!random && io.offset + min_bs > z.wp(zi)) {
        match find_zone(z, r, zi, min_bs, random) {
            Some(n) => zi = n,
            None => return false,
        }
        range = z.wp(zi) - z.start(zi);
        if !random {
            io.offset = z.start(zi);
        }
    }
    if range <= io.len {
        io.offset = z.start(zi);
    } else if random {
        io.offset = z.start(zi) + (io.offset - orig_start) % (range - io.len) / min_bs * min_bs;
    }
    let len = io.len.min(z.wp(zi).saturating_sub(io.offset)) / min_bs * min_bs;
    if len < min_bs {
        return false;
    }
    io.len = len;
    true
}

/// fio's zbd_find_zone: the nearest zone holding `min_bytes` of data, after `from` (and, for
/// random I/O, before it too, alternately).
fn find_zone(z: &Zones, r: Range, from: usize, min_bytes: u64, random: bool) -> Option<usize> {
    let has = |i: usize| z.start(i) + min_bytes <= z.wp(i);
    let mut up = from + 1;
    let mut down = from.checked_sub(1).filter(|d| *d >= r.min);
    while up < r.max || down.is_some() {
        if up < r.max {
            if has(up) {
                return Some(up);
            }
        } else if !random {
            return None;
        }
        if let Some(d) = down.filter(|_| random) {
            if has(d) {
                return Some(d);
            }
        }
        up += 1;
        down = down.and_then(|d| d.checked_sub(1)).filter(|d| *d >= r.min);
        if !random && up >= r.max {
            return None;
        }
    }
    None
}

/// fio's write side of zbd_adjust_block: the write goes to the write pointer of an open zone,
/// reset first when full (or when zone_reset_frequency says so); false where fio's job ends.
fn write(
    job: &ZbdJob,
    z: &mut Zones,
    r: Range,
    io: &mut IoUnit,
    min_bs: u64,
    resets: &mut u64,
) -> bool {
    let cfg = &job.cfg;
    if io.len > z.size {
        return false;
    }
    let mut zi = z.idx(io.offset);
    if !z.try_open(zi, job.owner, cfg.job_max_open) {
        match to_open_zone(job, z, r, io.offset, min_bs) {
            Some(n) => zi = n,
            None => return false,
        }
    }
    let mut reset = false;
    if cfg.reset_frequency > 0.0 && z.data as f64 >= r.len as f64 * cfg.reset_threshold {
        z.write_cnt = z.write_cnt.saturating_sub(1);
        if z.write_cnt == 0 {
            z.rearm(cfg.reset_frequency);
            reset = true;
        }
    }
    if (reset || z.wp(zi) + min_bs > z.cap_end(zi)) && z.reset(zi) {
        *resets += 1;
    }
    let off = z.wp(zi);
    let len = io.len.min(z.cap_end(zi).saturating_sub(off)) / min_bs * min_bs;
    if !r.holds(off) || len < min_bs {
        return false;
    }
    io.offset = off;
    io.len = len;
    z.data += len;
    z.wp[zi] = off + len;
    if off + len >= z.cap_end(zi) {
        z.close(zi);
    }
    true
}

/// fio's zbd_convert_to_open_zone: an open zone of the job's range with room for
/// `min_bs`, chosen from the offset; else the next zone that can be opened; else any open
/// zone with room.
fn to_open_zone(job: &ZbdJob, z: &mut Zones, r: Range, off: u64, min_bs: u64) -> Option<usize> {
    let n = z.open.len();
    let mut zi = z.idx(off).min(r.max.saturating_sub(1)).max(r.min);
    if n > 0 {
        let pick =
            (off.saturating_sub(r.offset) as u128 * n as u128 / r.len.max(1) as u128) as usize;
        let found = (0..n)
            .map(|i| z.open[(pick + i) % n].0 as usize)
            .find(|c| (r.min..r.max).contains(c))?;
        zi = found;
        if z.wp(zi) + min_bs <= z.cap_end(zi) {
            return Some(zi);
        }
    }
    for _ in 0..r.len / z.size {
        zi += 1;
        if !r.holds(z.start(zi)) {
            zi = r.min;
        }
        if !z.is_open(zi) && z.try_open(zi, job.owner, job.cfg.job_max_open) {
            return Some(zi);
        }
    }
    let open: Vec<usize> = z.open.iter().map(|o| o.0 as usize).collect();
    open.into_iter()
        .filter(|c| (r.min..r.max).contains(c))
        .find(|&c| z.wp(c) + min_bs <= z.cap_end(c))
}
