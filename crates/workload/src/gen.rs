//! The stream of I/Os one job issues: direction, file, offset and length, from a seeded
//! generator. What to do comes from a [`Pattern`]; when to stop (bytes or time) is partly here
//! (a byte budget) and partly the runner's (runtime).

use crate::dist::{OffsetRng, Picker, Seeding};
use crate::pattern::SizeRng;
use crate::randmap::RandomMap;
use crate::rng::{FioSeeds, Taus88};
use crate::zbd::ZbdRun;

mod files;
mod map;
mod mix;
mod offset;
mod openset;
mod passes;
mod simple;
mod zoned;

pub use map::MapAllocError;
use map::{dist_seeding, keeps_map, map_unit};
use mix::Mix;
use offset::{
    backward_start, holed_next, random_offset, random_offset_own_blocks, random_offset_unmarked,
    sequential_offset, strided,
};
use openset::{OpenSet, NOT_IN_USE};
use passes::Passes;
use simple::Simple;

pub use crate::pattern::{BlockSizes, FilePick, FileSpan, IoUnit, Pattern};
/// Direction of an I/O, indexed as fio does (read, write, trim): the job's type.
pub use iolab_job::value::Dir;

struct FileState {
    span: FileSpan,
    /// Next sequential position per direction, relative to span.offset.
    pos: [u64; 3],
    map: Option<RandomMap>,
    picker: Picker,
    /// random_generator=lfsr with a uniform distribution: picks the blocks instead of the
    /// picker.
    lfsr: Option<crate::lfsr::Lfsr>,
    /// Blocks of the smallest block size in the span (the random map's unit).
    unit: u64,
    /// Offset of the last random I/O per direction (rw_sequencer=identical repeats it).
    last: [u64; 3],
    /// zonemode=strided: the zone's start in the span.
    zone_at: u64,
    /// This pass can give the file no further I/O (fio closes it and marks it done).
    done: bool,
    /// Per direction, the blocks a random offset is drawn among (fio's last_block: the
    /// span in the direction's alignment, less what its block needs past it).
    dir_blocks: [u64; 3],
}

/// Generates a job's I/Os. Allocation-free per I/O after construction.
pub struct IoGen {
    p: Pattern,
    files: Vec<FileState>,
    rng_off: OffsetRng,
    /// What a full random map does to the offset stream (see [`Refill`]).
    refill: Refill,
    /// Bytes issued at which the next loop starts (see [`IoGen::loop_start`]).
    next_loop: u64,
    rng_mix: Taus88,
    /// Where the read/write mix stands (fio's rwmix_ddir and rwmix_issues).
    mix: Mix,
    /// Block sizes' draws, one stream per direction as fio's bsrange_state.
    rng_bs: [SizeRng; 3],
    /// percentage_random's draws, one stream per direction as fio's seq_rand_state.
    rng_seq: [Taus88; 3],
    next_file: usize,
    issued: u64,
    /// I/Os left before the next random jump (rw=randX:N).
    run_left: u64,
    pending_write: Option<IoUnit>,
    /// Per direction: blockalign divides the random map's unit.
    unit_aligned: [bool; 3],
    /// The file in use, the I/Os left on it before the next pick, the bytes issued to it
    /// (file_service_type=sequential), and the pickers of the random kinds.
    cur_file: usize,
    file_left: u32,
    file_bytes: u64,
    rng_file: Taus88,
    file_dist: Option<Picker>,
    open_set: Option<OpenSet>,
    /// The common job (one file, one direction, one block size, plain random or sequential):
    /// decided once, so that each of its I/Os skips the checks the general path makes.
    simple: Option<Simple>,
    /// zonemode=zbd: where the zones move each I/O (gen/zoned.rs).
    zbd: Option<Box<ZbdRun>>,
    /// Per direction: its random offsets are drawn among its own blocks and looked up in the
    /// map of the smallest (see [`random_offset_own_blocks`]).
    own_blocks: [bool; 3],
    /// fio's passes over the files (see [`Passes`]); `None` where the budget alone counts
    /// (time_based, openfiles, trimwrite), whose loops end by bytes.
    passes: Option<Passes>,
    /// zonemode=strided: the bytes the job issued in its current zone (fio's zone_bytes,
    /// the job's, whichever file each I/O went to).
    zone_bytes: u64,
}

/// What the job's seed is mixed with for each stream: offsets, the mix, block sizes, random
/// or sequential, files.
const SEED_XOR: [u64; 5] = [
    0,
    0x5851_f42d_4c95_7f2d,
    0x1405_7b7e_f767_814f,
    0x2545_f491_4f6c_dd1d,
    0x9e37_79b9_7f4a_7c15,
];

/// What happens to fio's streams at a new loop, as in fio 3.33 (checked with its write_iolog
/// and --debug=random): with loops, each loop draws the same offsets, sizes and directions
/// again from the seeds, except random I/O without a map (norandommap), whose streams go
/// on; a time_based run goes on with the streams, after the one draw that found the map
/// full. Without fio's seeds (randrepeat=0), iolab's own streams go on.
#[derive(Clone, Copy, Debug)]
enum Refill {
    Reseed(FioSeeds),
    SpendDraw,
    Plain,
}

impl IoGen {
    /// The seeds of the generator's streams (what `--debug=random` prints as fio's
    /// `rand_seeds[i]`).
    pub fn seeds(&self) -> [u64; 5] {
        match self.p.fio_seeds {
            // fio's own rand_seeds[0..5], which the streams are drawn from.
            Some(f) => [0, 1, 2, 3, 4].map(|i| f.seed(i)),
            None => SEED_XOR.map(|x| self.p.seed ^ x),
        }
    }

    /// Bytes of random map the pattern needs per file (0 without one), so that a caller
    /// can refuse a map larger than the machine before trying to allocate it.
    pub fn map_bytes(p: &Pattern) -> Vec<u64> {
        let unit = map_unit(p);
        p.files
            .iter()
            .map(|s| {
                if keeps_map(p) {
                    RandomMap::bytes_for((s.len / unit).max(1))
                } else {
                    0
                }
            })
            .collect()
    }

    /// The generator of `p`; fails only when a random map cannot be allocated.
    pub fn try_new(p: Pattern) -> Result<IoGen, MapAllocError> {
        let unit = map_unit(&p);
        let mut files = Vec::with_capacity(p.files.len());
        for (i, &span) in p.files.iter().enumerate() {
            // Under zonemode=strided fio draws among a zone's blocks (its last_block is the
            // zonerange), the map's index counted from the zone's start.
            let drawn = p
                .zones
                .map_or(span.len, |(range, _, _)| range.min(span.len));
            let blocks = (drawn / unit).max(1);
            let map = match keeps_map(&p) {
                false => None,
                true => Some(RandomMap::try_new(blocks).map_err(|_| MapAllocError {
                    file: i,
                    bytes: RandomMap::bytes_for(blocks),
                })?),
            };
            files.push(FileState {
                span,
                pos: [backward_start(&p, span); 3],
                map,
                picker: Picker::new(&p.dist, blocks, unit, dist_seeding(&p, i), p.taus64),
                lfsr: (p.random && p.lfsr && p.dist == crate::Dist::Uniform).then(|| {
                    let seed = p.fio_seeds.map_or(p.seed ^ i as u64, |f| f.offsets64());
                    crate::lfsr::Lfsr::new(blocks, seed)
                }),
                unit,
                last: [0; 3],
                zone_at: 0,
                done: false,
                dir_blocks: [0, 1, 2].map(|d| {
                    let (bs, ba) = (p.bs[d].min(), p.ba[d].max(1));
                    span.len.saturating_sub(bs.saturating_sub(ba)) / ba
                }),
            });
        }
        // Separate streams, as fio keeps them, so that changing the block size does not change
        // the offsets and changing the mix does not change either.
        let own_blocks = [0, 1, 2].map(|d| {
            let bs = &p.bs[d];
            p.dist == crate::Dist::Uniform
                && !p.lfsr
                && !p.bs_seq_rand
                && p.zones.is_none()
                && matches!(bs, BlockSizes::Fixed(_))
                && bs.min() != unit
                && p.ba[d] == bs.min()
        });
        let s = p.seed;
        let fio = p.fio_seeds;
        let mut g = IoGen {
            files,
            rng_off: OffsetRng::new(s ^ SEED_XOR[0]),
            refill: match (fio, p.bytes, p.random, p.random_map) {
                // fio seeds its streams again at each loop, but for random I/O without a map,
                // and not once randseed was given (p.reseed false).
                (Some(f), Some(_), false, _) | (Some(f), Some(_), true, true) if p.reseed => {
                    Refill::Reseed(f)
                }
                (Some(_), None, true, true) => Refill::SpendDraw,
                _ => Refill::Plain,
            },
            next_loop: p.loop_bytes.max(1),
            zone_bytes: 0,
            mix: Mix::default(),
            rng_mix: Taus88::new(s ^ SEED_XOR[1]),
            rng_bs: [0, 1, 2].map(|d| SizeRng::W32(Taus88::new(s ^ SEED_XOR[2] ^ d))),
            rng_seq: [0, 1, 2].map(|d| Taus88::new(s ^ SEED_XOR[3] ^ d)),
            next_file: 0,
            issued: 0,
            // As fio 3.33: a job with rw=randX:N starts with a random I/O, then N-1 that follow
            // it (checked with its write_iolog).
            run_left: 0,
            pending_write: None,
            unit_aligned: [0, 1, 2].map(|d| unit.is_multiple_of(p.ba[d].max(1))),
            cur_file: 0,
            file_left: 0,
            file_bytes: 0,
            rng_file: Taus88::new(s ^ SEED_XOR[4]),
            open_set: OpenSet::of(&p),
            file_dist: match &p.file_pick {
                FilePick::Dist(d) => {
                    let seed = fio.map_or(s ^ SEED_XOR[4], |f| f.seed(FioSeeds::FILE));
                    Some(Picker::files(d, p.files.len() as u64, seed as u32))
                }
                _ => None,
            },
            // A direction drawn among its own blocks takes the general path.
            simple: Simple::of(&p).filter(|s| !own_blocks[s.dir as usize]),
            zbd: p.zbd.clone().map(|z| Box::new(ZbdRun::new(z))),
            passes: Passes::of(&p),
            own_blocks,
            p,
        };
        if let Some(f) = fio {
            g.seed_fio(f);
        }
        Ok(g)
    }

    pub fn pattern(&self) -> &Pattern {
        &self.p
    }

    /// Under `openfiles`, the files in use now (the others wait their turn or are done).
    pub fn in_use(&self) -> Option<&[usize]> {
        self.open_set.as_ref().map(|s| s.in_use.as_slice())
    }

    /// Under `openfiles`, whether file `fi` is in use now.
    pub fn is_in_use(&self, fi: usize) -> bool {
        self.open_set
            .as_ref()
            .is_some_and(|s| s.at.get(fi).is_some_and(|a| *a != NOT_IN_USE))
    }

    /// Under `openfiles`, the files that left the set in use since the last call, into
    /// `into` (cleared first): the runner closes those that are open and not back in use.
    pub fn take_left(&mut self, into: &mut Vec<usize>) {
        into.clear();
        if let Some(s) = &mut self.open_set {
            std::mem::swap(into, &mut s.left);
        }
    }

    /// Bytes issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// The next I/O, or `None` when the byte budget is spent (or there is nothing to do).
    #[inline]
    pub fn next_io(&mut self) -> Option<IoUnit> {
        loop {
            let io = if let Some(s) = self.simple {
                self.next_simple(s)
            } else if self.zbd.is_some() {
                self.next_zoned()
            } else {
                self.next_general(&mut |d| d)
            };
            if io.is_some() || !self.new_pass() {
                return io;
            }
        }
    }

    /// [`IoGen::next_io`] with a read/write mix's drawn direction passed through `turn`
    /// first (fio's rate_ddir: under a rate limit, a direction ahead of its schedule gives
    /// way to the other). Jobs that are not such a mix ignore `turn`.
    pub fn next_io_turned(&mut self, mut turn: impl FnMut(Dir) -> Dir) -> Option<IoUnit> {
        if self.simple.is_some() || self.zbd.is_some() {
            return self.next_io();
        }
        loop {
            let io = self.next_general(&mut turn);
            if io.is_some() || !self.new_pass() {
                return io;
            }
        }
    }

    /// The pass (fio's loop) the last I/O belongs to, from 1; 0 for a job whose loops end
    /// by bytes alone (see [`IoGen::passes_kept`]).
    pub fn pass(&self) -> u32 {
        self.passes.as_ref().map_or(0, |p| p.number)
    }

    /// Whether the passes are fio's (ended by the files or the budget) rather than counted
    /// in bytes.
    pub fn passes_kept(&self) -> bool {
        self.passes.is_some()
    }

    /// The offset stream's state as it stands (fio's `random_state`, which its verify state
    /// file saves).
    pub fn offset_words(&self) -> crate::dist::OffsetWords {
        self.rng_off.words(self.p.taus64)
    }

    /// Where the try that ended the last pass by its files had put its I/O, if anywhere:
    /// the offset fio's write_iolog gives the end_fsync after it.
    pub fn stale_offset(&self) -> Option<u64> {
        self.passes.as_ref().and_then(|p| p.stale)
    }

    /// [`IoGen::next_io`] for every job but the simple ones.
    #[inline]
    fn next_general<F: FnMut(Dir) -> Dir>(&mut self, turn: &mut F) -> Option<IoUnit> {
        // trimwrite: the trim and the write of a block count once, as the write (fio counts a
        // trimwrite job's writes against size, so size=64k trims 64k and writes 64k).
        if let Some(w) = self.pending_write.take() {
            return Some(w);
        }
        if self.files.is_empty() || self.at_end() {
            return None;
        }
        loop {
            if let Some(io) = self.attempt(turn) {
                return io;
            }
        }
    }

    /// One try at the next I/O: `None` when the file picked was done (the caller tries
    /// again, with new draws, as fio's get_io_u does), `Some(None)` when the pass is over.
    #[inline]
    fn attempt<F: FnMut(Dir) -> Dir>(&mut self, turn: &mut F) -> Option<Option<IoUnit>> {
        let mut dir = self.pick_dir();
        let p = &self.p;
        if p.read && p.write && !p.trim && p.rwmix_read > 0 && p.rwmix_read < 100 {
            dir = turn(dir);
        }
        let d = dir as usize;
        // Whether this I/O jumps is its own draw (rng_seq), so deciding it first changes no
        // other draw; fio knows it before the length, which bs_is_seq_rand needs.
        let random = self.p.random && self.take_random(d);
        let sizes = match (self.p.bs_seq_rand, random) {
            (false, _) => d,
            (true, true) => Dir::Write as usize,
            (true, false) => Dir::Read as usize,
        };
        // fio never cuts a block to the budget; where passes are not kept, the budget cuts.
        let cap = match self.passes {
            Some(_) => u64::MAX,
            None => self.p.bytes.map_or(u64::MAX, |b| b - self.issued),
        };
        // A range's size is drawn once the offset is known, to fit before the span's end
        // (fio's get_next_buflen); other sizes are drawn first and cut to fit.
        let fit = self.p.bs[sizes].is_drawn();
        let zoned = self.p.zones.is_some();
        // Nor does fio issue one smaller than the range's minimum: where that does not fit,
        // the job is done (an 8 MiB job of sizes 1k-4k, bs_unaligned, ends some bytes short).
        if fit && cap < self.p.bs[sizes].min() {
            return Some(None);
        }
        let mut len = if fit {
            0
        } else {
            self.p.bs[sizes].pick(&mut self.rng_bs[sizes]).min(cap)
        };
        let fi = self.pick_file();
        let need = if fit { self.p.bs[sizes].min() } else { len };
        if self.cannot_give(fi, d, random, need) {
            // fio draws the offset before it finds the map full: the draw is spent. Not so
            // for a sequential I/O that starts inside the file and does not fit: fio found
            // its offset without a draw.
            let f = &self.files[fi];
            let seq_inside = !random && f.pos[d] < f.span.len;
            if self.p.random && !seq_inside {
                self.spend_offset_draw();
            }
            return match self.file_done(fi, d, !random) {
                true => Some(None),
                false => None,
            };
        }
        let f = &mut self.files[fi];
        let span_len = f.span.len;
        let bs = &self.p.bs[sizes];
        let rng_bs = &mut self.rng_bs[sizes];
        let mut fitted = |room: u64| bs.pick_within(rng_bs, room).min(cap).min(span_len).max(1);
        if fit && !random && !zoned {
            // Sequential I/O draws among the sizes that fit before the span's end (where not
            // even the smallest fits, sequential_offset starts over); backward and identical
            // I/O are cut to fit, as a fixed size is.
            let from = f.pos[d];
            let cut = self.p.backward > 0 || (self.p.random && self.p.identical);
            len = match cut || from + bs.min() > span_len {
                true => fitted(span_len),
                false => fitted(span_len - from),
            };
        }
        if !zoned {
            len = len.min(span_len).max(1);
        }
        let ba = self.p.ba[d].max(1);
        let rel = if let Some(z) = self.p.zones {
            // fio's last_block under strided zones: the range's blocks, none where the
            // smallest block does not fit the range.
            let min = bs.min();
            let no_blocks = z.0.saturating_sub(min.saturating_sub(ba)) / ba == 0;
            let fit_len = fit.then_some(&mut fitted as &mut dyn FnMut(u64) -> u64);
            let rng = random.then_some(&mut self.rng_off);
            let zb = &mut self.zone_bytes;
            match strided(f, zb, z, d, (&mut len, min, fit_len), no_blocks, rng) {
                Some(off) => off,
                None => {
                    return match self.file_done(fi, d, !random) {
                        true => Some(None),
                        false => None,
                    }
                }
            }
        } else if random && self.own_blocks[d] {
            match random_offset_own_blocks(f, &mut self.rng_off.taus, d, len) {
                Some(off) => off,
                None => {
                    return match self.file_done(fi, d, !random) {
                        true => Some(None),
                        false => None,
                    }
                }
            }
        } else if random {
            let fit_len = fit.then_some(&mut fitted as &mut dyn FnMut(u64) -> u64);
            random_offset(
                f,
                (&mut self.rng_off, self.refill),
                d,
                &mut len,
                ba,
                self.unit_aligned[d],
                fit_len,
            )
        } else if self.p.random && self.p.identical {
            // rw_sequencer=identical: the I/Os between random jumps repeat the last offset.
            let off = f.last[d].min(f.span.len - len);
            f.pos[d] = off + len;
            off
        } else if self.p.backward > 0 {
            // fio's backwards sequential I/O: each I/O starts `backward` bytes before the end
            // of the previous one; past the start it wraps to that far before the end.
            let back = self.p.backward;
            let end = f.pos[d];
            let off = match end {
                0 => 0,
                e => e
                    .checked_sub(back)
                    .unwrap_or_else(|| f.span.len.saturating_sub(back)),
            };
            let off = off.min(f.span.len - len);
            f.pos[d] = off + len;
            off
        } else if self.p.random {
            // percentage_random's sequential I/O, as fio's get_next_block: past the end of
            // the file a random block instead (a time_based job starts over). fio leaves its
            // blocks out of the random map (the I/O may land on done blocks).
            if f.pos[d] + len > f.span.len && self.p.bytes.is_some() {
                random_offset_unmarked(f, &mut self.rng_off, d, len, ba)
            } else {
                sequential_offset(f, d, len, 0)
            }
        } else if self.p.modifier > 0 {
            // fio's holes as its get_next_seq_offset makes them; where fio would find the
            // file done but passes are not kept (time_based), the file's start again.
            let at = holed_next(f.pos[d], self.p.modifier, len, f.span).unwrap_or(0);
            f.pos[d] = at + len;
            at
        } else {
            sequential_offset(f, d, len, 0)
        };
        let io = IoUnit {
            dir,
            file: fi,
            offset: f.span.offset + rel,
            len,
        };
        self.issued += len;
        self.file_bytes += len;
        if let Some(ps) = &mut self.passes {
            ps.issued += len;
        }
        if self.p.read && self.p.write && !self.p.trim {
            // Counted once issued: a try on a done file draws again (fio's rwmix_issues).
            self.mix.issue();
        }
        if self.open_set.is_some() {
            self.account_open(fi, len);
        }
        if self.p.trimwrite && dir == Dir::Trim {
            self.pending_write = Some(IoUnit {
                dir: Dir::Write,
                ..io
            });
        }
        Some(Some(io))
    }

    /// One offset draw spent, from the stream the job draws its offsets from.
    fn spend_offset_draw(&mut self) {
        match self.p.taus64 {
            true => {
                self.rng_off.taus64.next_u64();
            }
            false => {
                self.rng_off.taus.next_u32();
            }
        }
    }

    /// fio's streams from their seeds: at the start, and again at each loop.
    fn seed_fio(&mut self, f: FioSeeds) {
        self.rng_off = OffsetRng::fio(f);
        // fio's fio_file_reset: each file's lfsr starts its pass again.
        self.files
            .iter_mut()
            .filter_map(|f| f.lfsr.as_mut())
            .for_each(|l| l.reset());
        self.rng_mix = f.rng(FioSeeds::MIX);
        // Under verify fio seeds the writes' sizes with the reads' seed.
        let write = u64::from(!self.p.verify);
        // fio's 64-bit size streams under tausworthe64 take the seed whole.
        self.rng_bs = [0, write, 2].map(|d| match self.p.taus64 {
            true => SizeRng::W64(crate::rng::Taus258::fio(f.seed(FioSeeds::BS + d))),
            false => SizeRng::W32(f.rng(FioSeeds::BS + d)),
        });
        // fio 3.33 seeds each direction's stream from the read one's seed.
        self.rng_seq = [0, 1, 2].map(|_| f.rng(FioSeeds::SEQ_RAND));
        self.rng_file = f.rng(FioSeeds::FILE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;

    fn all(p: Pattern) -> Vec<IoUnit> {
        let mut g = IoGen::try_new(p).unwrap();
        std::iter::from_fn(|| g.next_io()).collect()
    }

    #[test]
    fn the_simple_path_makes_the_same_ios_as_the_general_one() {
        let mut cases = Vec::new();
        for (read, write, random) in [
            (true, false, true),
            (false, true, false),
            (true, false, false),
        ] {
            cases.push(Pattern::simple(read, write, random, 4096, 4096 * 300 + 512));
        }
        let mut p = Pattern::simple(true, false, true, 4096, 1 << 24);
        p.random_map = false;
        p.bytes = Some(4096 * 5000 + 100);
        cases.push(p.clone());
        p.dist = Dist::Zipf(1.2);
        cases.push(p);
        // (Holes, rw=write:N, take the general path: fio ends their pass by its own test.)
        let mut p = Pattern::simple(false, true, false, 8192, 1 << 20);
        p.bytes = Some(3 << 20);
        p.files[0].offset = 1 << 16;
        cases.push(p);
        let mut p = Pattern::simple(false, false, true, 4096, 1 << 20);
        p.trim = true;
        cases.push(p);
        for p in cases {
            let mut fast = IoGen::try_new(p.clone()).unwrap();
            let mut general = IoGen::try_new(p.clone()).unwrap();
            assert!(fast.simple.is_some(), "{p:?}");
            general.simple = None;
            for i in 0..10_000 {
                let (a, b) = (fast.next_io(), general.next_io());
                assert_eq!(a, b, "I/O {i} of {p:?}");
                if a.is_none() {
                    break;
                }
            }
        }
        // What the simple path does not do is left to the general one.
        let mut p = Pattern::simple(true, true, true, 4096, 1 << 20);
        assert!(Simple::of(&p).is_none());
        p.write = false;
        p.percentage_random = 50;
        assert!(Simple::of(&p).is_none());
    }

    #[test]
    fn random_read_covers_every_block_exactly_once() {
        let ios = all(Pattern::simple(true, false, true, 4096, 4096 * 1000));
        assert_eq!(ios.len(), 1000);
        let mut seen = vec![0u8; 1000];
        for io in &ios {
            assert_eq!(io.offset % 4096, 0);
            seen[(io.offset / 4096) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1));
        // Not sequential: a random pass that came out in order would be a broken generator.
        assert!(
            ios.windows(2)
                .filter(|w| w[1].offset == w[0].offset + 4096)
                .count()
                < 50
        );
    }

    #[test]
    fn same_seed_same_offsets_other_seed_other_offsets() {
        let p = Pattern::simple(true, false, true, 4096, 4096 * 100);
        let a = all(p.clone());
        assert_eq!(a, all(p.clone()));
        assert_ne!(a, all(Pattern { seed: 1, ..p }));
    }

    /// random_generator=lfsr without a random map: each pass still reads every block once
    /// (tausworthe without the map repeats some and misses others).
    #[test]
    fn lfsr_visits_every_block_once_a_pass_without_a_map() {
        let distinct = |lfsr: bool| {
            let p = Pattern {
                lfsr,
                random_map: false,
                // io_size twice the file: a second pass once the lfsr has given every block.
                bytes: Some(4096 * 200),
                loop_bytes: 4096 * 200,
                io_size_set: true,
                ..Pattern::simple(true, false, true, 4096, 4096 * 100)
            };
            let ios = all(p);
            assert_eq!(ios.len(), 200);
            let pass = |r: std::ops::Range<usize>| {
                let mut o: Vec<u64> = ios[r].iter().map(|i| i.offset).collect();
                o.sort_unstable();
                o.dedup();
                o.len()
            };
            (pass(0..100), pass(100..200))
        };
        assert_eq!(distinct(true), (100, 100));
        assert!(distinct(false).0 < 90);
    }

    /// fio's bs_is_seq_rand: block sizes are (sequential, random), not (read, write).
    #[test]
    fn bs_is_seq_rand_sizes_by_randomness_not_direction() {
        for (random, pct, want) in [
            (true, 100, vec![65536]),
            (false, 100, vec![4096]),
            (true, 50, vec![4096, 65536]),
        ] {
            let p = Pattern {
                bs: [
                    BlockSizes::Fixed(4096),
                    BlockSizes::Fixed(65536),
                    BlockSizes::Fixed(4096),
                ],
                bs_seq_rand: true,
                percentage_random: pct,
                // Without the random map, which cuts a random I/O to the free blocks it finds
                // (fio's mark_random_map), every I/O keeps the size drawn.
                random_map: false,
                ..Pattern::simple(true, true, random, 4096, 4096 * 1000)
            };
            let ios = all(p);
            let mut lens: Vec<u64> = ios.iter().map(|i| i.len).collect();
            let full = lens.iter().filter(|l| want.contains(l)).count();
            assert!(
                full * 10 > ios.len() * 9,
                "random={random} {pct}%: {lens:?}"
            );
            lens.sort_unstable();
            lens.dedup();
            assert!(
                want.iter().all(|w| lens.contains(w)),
                "random={random} {pct}%: {lens:?}"
            );
            assert!(
                ios.iter().any(|i| i.dir == Dir::Read) && ios.iter().any(|i| i.dir == Dir::Write)
            );
        }
    }

    #[test]
    fn rwmix_ratio_within_one_percent() {
        let p = Pattern {
            rwmix_read: 70,
            // io_size of 100 passes over the file: fio makes passes until it is issued.
            bytes: Some(4096 * 100_000),
            loop_bytes: 4096 * 100_000,
            io_size_set: true,
            ..Pattern::simple(true, true, true, 4096, 4096 * 1000)
        };
        let ios = all(p);
        assert_eq!(ios.len(), 100_000);
        let reads = ios.iter().filter(|i| i.dir == Dir::Read).count() as f64 / ios.len() as f64;
        assert!((0.69..0.71).contains(&reads), "{reads}");
    }

    #[test]
    fn backwards_sequential_steps_back_and_wraps_as_fio_3_33() {
        // Offsets fio 3.33 issues (write_iolog) for rw=read:-8k, bs=4k.
        let offsets = |offset: u64, len: u64| {
            let mut p = Pattern::simple(true, false, false, 4096, len);
            p.backward = 8192;
            p.files[0].offset = offset;
            let mut g = IoGen::try_new(p).unwrap();
            std::iter::from_fn(|| g.next_io().map(|io| io.offset / 1024)).collect::<Vec<_>>()
        };
        assert_eq!(
            offsets(0, 64 << 10),
            [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0]
        );
        assert_eq!(
            offsets(16 << 10, 32 << 10),
            [24, 20, 16, 40, 36, 32, 28, 24]
        );
    }

    #[test]
    fn sequential_with_holes_skips_n_bytes() {
        let p = Pattern {
            modifier: 4096,
            ..Pattern::simple(false, true, false, 4096, 4096 * 8)
        };
        let offs: Vec<u64> = all(p).iter().map(|i| i.offset).collect();
        assert_eq!(&offs[..4], &[0, 8192, 16384, 24576]);
    }

    #[test]
    fn a_random_pass_with_a_range_of_sizes_touches_each_block_once() {
        // fio's mark_random_map: an I/O is cut short at the first block already taken.
        let p = Pattern {
            bs: std::array::from_fn(|_| BlockSizes::Range {
                min: 4096,
                max: 16384,
            }),
            ba: [4096; 3],
            ..Pattern::simple(false, true, true, 4096, 256 << 10)
        };
        let mut g = IoGen::try_new(p).unwrap();
        let mut seen = vec![0u32; 64];
        let mut ios = 0;
        while let Some(io) = g.next_io() {
            ios += 1;
            assert!(
                io.len % 4096 == 0 && io.offset + io.len <= 256 << 10,
                "{io:?}"
            );
            for b in io.offset / 4096..(io.offset + io.len) / 4096 {
                seen[b as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
        assert!(ios > 16, "{ios} I/Os: some were cut");
    }

    #[test]
    fn bssplit_distribution_follows_percentages() {
        let split = BlockSizes::Split(vec![(4096, 10), (65536, 50), (32768, 40)]);
        let p = Pattern {
            bs: [split.clone(), split.clone(), split],
            ba: [4096; 3],
            bytes: None,
            // With the map, an I/O is cut where the next block was taken (fio too).
            random_map: false,
            ..Pattern::simple(true, false, true, 4096, 1 << 30)
        };
        let mut g = IoGen::try_new(p).unwrap();
        let mut n = [0u32; 3];
        for _ in 0..100_000 {
            match g.next_io().map(|i| i.len) {
                Some(4096) => n[0] += 1,
                Some(65536) => n[1] += 1,
                Some(32768) => n[2] += 1,
                other => panic!("{other:?}"),
            }
        }
        for (got, want) in n.iter().zip([10_000, 50_000, 40_000]) {
            assert!((*got as i64 - want).abs() < 1_000, "{n:?}");
        }
    }

    #[test]
    fn byte_budget_ends_the_stream_and_files_alternate() {
        let mut p = Pattern::simple(true, false, false, 4096, 4096 * 4);
        p.files.push(FileSpan {
            offset: 0,
            len: 4096 * 4,
        });
        p.bytes = Some(4096 * 6);
        let ios = all(p);
        assert_eq!(ios.len(), 6);
        assert_eq!(
            ios.iter().map(|i| i.file).collect::<Vec<_>>(),
            vec![0, 1, 0, 1, 0, 1]
        );
    }

    #[test]
    fn trimwrite_trims_then_writes_the_same_block() {
        let p = Pattern {
            trim: true,
            trimwrite: true,
            ..Pattern::simple(false, false, false, 4096, 4096 * 4)
        };
        let ios = all(p);
        assert_eq!(ios[0].dir, Dir::Trim);
        assert_eq!(
            ios[1],
            IoUnit {
                dir: Dir::Write,
                ..ios[0]
            }
        );
    }

    /// Regression: trimwrite counted its trims in size, so size=16k wrote only 8k (fio 3.33
    /// --rw=trimwrite --size=64k --bs=4k on a loop device trims 64k and writes 64k).
    #[test]
    fn trimwrite_size_counts_the_writes_only() {
        let p = Pattern {
            trim: true,
            trimwrite: true,
            ..Pattern::simple(false, false, false, 4096, 4096 * 4)
        };
        let ios = all(p);
        let sum = |d| {
            ios.iter()
                .filter(|i| i.dir == d)
                .map(|i| i.len)
                .sum::<u64>()
        };
        assert_eq!((sum(Dir::Trim), sum(Dir::Write)), (4096 * 4, 4096 * 4));
        let offs: Vec<_> = ios.iter().map(|i| (i.dir, i.offset)).collect();
        assert_eq!(
            offs[..4],
            [
                (Dir::Trim, 0),
                (Dir::Write, 0),
                (Dir::Trim, 4096),
                (Dir::Write, 4096)
            ]
        );
    }
}
