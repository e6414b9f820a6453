//! What one job does, resolved from its options ([`Pattern`]), and the I/O units the
//! generator ([`crate::gen::IoGen`]) makes of it.

use crate::dist::Dist;
use crate::rng::Taus88;
use iolab_job::value::Dir;

/// Block sizes for one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSizes {
    Fixed(u64),
    /// Uniform in `min..=max`, in multiples of `min` alignment (fio's bsrange).
    Range {
        min: u64,
        max: u64,
    },
    /// Any size in `min..=max` (fio's bs_unaligned).
    Unaligned {
        min: u64,
        max: u64,
    },
    /// (size, percent) pairs whose percentages sum to 100 (fio's bssplit, remainder resolved).
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { min, .. } | BlockSizes::Unaligned { min, .. } => *min,
            BlockSizes::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(4096),
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { max, .. } | BlockSizes::Unaligned { max, .. } => *max,
            BlockSizes::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(4096),
        }
    }

    /// Whether the size is drawn (bsrange, with or without bs_unaligned, or bssplit): fio
    /// draws it once the offset is known, among the sizes that fit there.
    pub(crate) fn is_drawn(&self) -> bool {
        !matches!(self, BlockSizes::Fixed(_))
    }

    /// A size no larger than `room`, drawn as fio 3.33's get_next_buflen draws it: a range
    /// gives `min + max * r/2^32` (in double), rounded down to a multiple of `min` (unless
    /// bs_unaligned), then at most `max`, and a size that does not fit before the region's end is drawn again; a split
    /// takes the first size whose cumulative share covers the draw (`r / perc <=
    /// 2^32/100`) and fits. When not even the smallest fits, the smallest (the caller then
    /// wraps or moves back as for a fixed size).
    pub(crate) fn pick_within(&self, rng: &mut SizeRng, room: u64) -> u64 {
        // The smallest size a draw can give: a split's parts with no share never come up
        // (bssplit=4k/0:64k/100 near the end would otherwise redraw for nothing).
        let smallest = match self {
            BlockSizes::Split(v) => v.iter().filter(|x| x.1 > 0).map(|x| x.0).min(),
            _ => None,
        }
        .unwrap_or_else(|| self.min())
        .max(1);
        if smallest > room {
            return smallest;
        }
        // Each draw fits with a chance of at least smallest/(min+max): a bound on the loop
        // that no real draw reaches, so that a bad generator state cannot hang the job.
        for _ in 0..1_000_000 {
            let (r, frand_max) = rng.draw();
            let len = match self {
                BlockSizes::Fixed(b) => return *b,
                BlockSizes::Range { min, max } | BlockSizes::Unaligned { min, max } => {
                    let len = min + (*max as f64 * (r as f64 / (frand_max as f64 + 1.0))) as u64;
                    let len = match self {
                        // fio: a minimum that is no power of two rounds down to its multiple
                        // (t0023's bsrange, read as 25-1k, draws 25, 50, ... 1000 and 1024).
                        BlockSizes::Range { .. } => align_down(len, *min),
                        _ => len,
                    };
                    // Aligned first, then held to the maximum (bsrange=4k-10k: 4k, 8k, 10k).
                    len.min(*max)
                }
                BlockSizes::Split(v) => {
                    let mut perc = 0u64;
                    let mut pick = None;
                    for &(bs, pct) in v.iter().filter(|x| x.1 > 0) {
                        perc += u64::from(pct);
                        if r / perc <= frand_max / 100 && bs <= room {
                            pick = Some(bs);
                            break;
                        }
                    }
                    // fio aligns a split's size to the smallest as it aligns a range's
                    // (bssplit=3k/50:5k/50 writes 3k blocks only).
                    match pick {
                        Some(bs) => align_down(bs, self.min()).min(self.max()),
                        None => continue,
                    }
                }
            };
            if len <= room {
                return len.max(1);
            }
        }
        smallest
    }

    pub(crate) fn pick(&self, rng: &mut SizeRng) -> u64 {
        self.pick_within(rng, u64::MAX)
    }
}

/// The stream a direction's block sizes are drawn from (fio's bsrange_state): 32-bit, or
/// 64-bit under random_generator=tausworthe64, as fio 3.33 seeds it.
#[derive(Clone, Debug)]
pub(crate) enum SizeRng {
    W32(Taus88),
    W64(crate::rng::Taus258),
}

impl SizeRng {
    /// One draw and the stream's largest value (fio's rand_max).
    #[inline]
    fn draw(&mut self) -> (u64, u64) {
        match self {
            SizeRng::W32(t) => (u64::from(t.next_u32()), u64::from(u32::MAX)),
            SizeRng::W64(t) => (t.next_u64(), u64::MAX),
        }
    }
}

/// `len` down to a multiple of `min`, as fio's get_next_buflen aligns a drawn size (a mask
/// for a power of two, a remainder otherwise: bsrange=3k-5k draws 3k or 5k, never 4k).
fn align_down(len: u64, min: u64) -> u64 {
    match min {
        0 => len,
        m if m.is_power_of_two() => len & !(m - 1),
        m => len - len % m,
    }
}

/// The part of a file a job works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSpan {
    pub offset: u64,
    pub len: u64,
}

/// What one job does, resolved from its options.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub random: bool,
    /// fio's trimwrite: trim a block, then write it.
    pub trimwrite: bool,
    /// Percent of reads when a job both reads and writes (rwmixread).
    pub rwmix_read: u32,
    pub bs: [BlockSizes; 3],
    /// Offset alignment per direction (blockalign; defaults to the minimum block size).
    pub ba: [u64; 3],
    /// rw=MODE:N — sequential: bytes skipped after each I/O; random: I/Os per new random offset.
    pub modifier: u64,
    /// rw_sequencer=identical: with rw=randX:N, the N-1 I/Os after a random one repeat its
    /// offset (else they follow it).
    pub identical: bool,
    /// fio's bs_is_seq_rand: a random I/O's length is drawn from the write block sizes, a
    /// sequential one's from the read sizes, whatever its direction.
    pub bs_seq_rand: bool,
    /// rw=MODE:-N (sequential only): bytes stepped back from the end of each I/O, 0 = forwards.
    pub backward: u64,
    pub dist: Dist,
    pub random_map: bool,
    /// random_generator=lfsr: uniform random offsets visit each block once a pass with no
    /// map ([`crate::lfsr`]).
    pub lfsr: bool,
    /// random_generator=tausworthe64: the offsets (and the zones' blocks) come from fio's
    /// 64-bit tausworthe.
    pub taus64: bool,
    /// Per file, the seed of its zipf, pareto or normal offsets, as fio seeds them (the jhash
    /// of the file's name times the thread number); empty: derived from `seed`.
    pub dist_seeds: Vec<u32>,
    /// For random modes, percent of I/Os that are random (the rest continue sequentially).
    pub percentage_random: u32,
    pub files: Vec<FileSpan>,
    pub seed: u64,
    /// fio's own random streams where fio's are repeatable (randrepeat=1 with the
    /// tausworthe generator), so that offsets, the read/write mix, percentage_random and
    /// random file choices are fio's, I/O for I/O. `None`: iolab's streams from `seed`.
    pub fio_seeds: Option<crate::rng::FioSeeds>,
    /// fio's streams start again from their seeds at each loop (its clear_io_state under
    /// randrepeat); false once randseed was given, which turns fio's randrepeat off after
    /// the first seeding, so a loop goes on with the streams where the last one left them.
    pub reseed: bool,
    /// The job verifies: fio 3.33 seeds its writes' block sizes with the reads' seed
    /// (td_fill_rand_seeds, so that a read back draws the sizes written).
    pub verify: bool,
    /// Bytes to issue in all (io_size × loops); `None` is unbounded (time_based).
    pub bytes: Option<u64>,
    /// Bytes of one loop (io_size): fio closes and opens its files again at each loop's end
    /// (and a time_based job's each pass), dropping their cache again (invalidate).
    pub loop_bytes: u64,
    /// fio's loops: the passes over the files made whatever the bytes (fio's keep_running
    /// then adds passes while fewer than io_size bytes were issued, when io_size is set).
    pub loops: u32,
    /// io_size was given (fio's extra passes after the loops are made only then).
    pub io_size_set: bool,
    /// The most one pass issues, where the engine queues its I/O (fio's do_io stops at its
    /// `size` there); `None` on a synchronous engine, whose passes end only when the files
    /// are done or the budget is spent (fio counts a pass's bytes only for queued I/O).
    pub pass_bytes: Option<u64>,
    /// How the next file is chosen (fio's file_service_type) and after how many I/Os.
    pub file_pick: FilePick,
    pub file_every: u32,
    /// fio's openfiles: at most this many files in use at once (0: all); a file leaves the
    /// set when its span is done and the next one comes in.
    pub open_files: usize,
    /// zonemode=strided: (zonerange, zonesize, zoneskip) in bytes.
    pub zones: Option<(u64, u64, u64)>,
    /// zonemode=zbd: the zones of the job's files (set when the run's jobs are planned).
    pub zbd: Option<crate::zbd::ZbdJob>,
}

/// fio's `file_service_type`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum FilePick {
    #[default]
    RoundRobin,
    Random,
    /// Stay on a file until its span is done.
    Sequential,
    /// zipf, pareto or normal over the file indexes.
    Dist(Dist),
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoUnit {
    pub dir: Dir,
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

impl Pattern {
    pub fn has(&self, d: Dir) -> bool {
        match d {
            Dir::Read => self.read,
            Dir::Write => self.write || self.trimwrite,
            Dir::Trim => self.trim,
        }
    }

    /// A plain pattern for tests and simple callers: one file of `size` bytes, fixed `bs`.
    pub fn simple(read: bool, write: bool, random: bool, bs: u64, size: u64) -> Pattern {
        Pattern {
            read,
            write,
            trim: false,
            random,
            trimwrite: false,
            rwmix_read: 50,
            bs: [
                BlockSizes::Fixed(bs),
                BlockSizes::Fixed(bs),
                BlockSizes::Fixed(bs),
            ],
            ba: [bs; 3],
            modifier: 0,
            backward: 0,
            identical: false,
            bs_seq_rand: false,
            file_pick: FilePick::RoundRobin,
            file_every: 1,
            open_files: 0,
            zones: None,
            zbd: None,
            dist: Dist::Uniform,
            random_map: true,
            lfsr: false,
            taus64: false,
            dist_seeds: Vec::new(),
            percentage_random: 100,
            files: vec![FileSpan {
                offset: 0,
                len: size,
            }],
            seed: 0x89,
            fio_seeds: None,
            reseed: true,
            verify: false,
            bytes: Some(size),
            loop_bytes: size,
            loops: 1,
            io_size_set: false,
            pass_bytes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_part_with_no_share_is_never_what_fits() {
        // Near the end (8 KiB left) only the 0% part would fit: no draw can give it, so the
        // drawable smallest comes back at once (it used to redraw a million times, then
        // return the 4 KiB that fio never draws).
        let split = BlockSizes::Split(vec![(4096, 0), (65536, 100)]);
        let mut r = SizeRng::W32(Taus88::fio(1));
        assert_eq!(split.pick_within(&mut r, 8192), 65536);
        assert_eq!(split.pick_within(&mut r, u64::MAX), 65536);
    }

    #[test]
    fn a_range_whose_minimum_is_no_power_of_two_draws_its_multiples_as_fio() {
        // fio 3.33, bsrange=25-1k (t0023's bssplit-like bsrange): 25, 50, ... 1000, 1024.
        let range = BlockSizes::Range { min: 25, max: 1024 };
        let mut r = SizeRng::W32(Taus88::fio(1));
        for _ in 0..1000 {
            let len = range.pick_within(&mut r, u64::MAX);
            assert!(
                len == 1024 || (len.is_multiple_of(25) && (25..=1000).contains(&len)),
                "{len}"
            );
        }
    }
}
