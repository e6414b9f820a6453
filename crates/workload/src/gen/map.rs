//! The random map a job keeps (fio's axmap, one bit a block of its unit), what it costs,
//! and the seeding of the offset draw.

use super::*;

/// The random map of a file cannot be allocated (fio: "failed allocating random map").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapAllocError {
    /// Index of the file in the pattern.
    pub file: usize,
    /// Bytes the map needed.
    pub bytes: u64,
}

impl std::fmt::Display for MapAllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot allocate the random map ({} MiB) of file {}: use norandommap=1 \
             (or a smaller size)",
            self.bytes.div_ceil(1 << 20),
            self.file
        )
    }
}

impl std::error::Error for MapAllocError {}

/// Whether fio keeps a random map: for uniform random offsets of the tausworthe
/// generators (the lfsr visits each block once without one; the other distributions may
/// pick a block again).
pub(super) fn keeps_map(p: &Pattern) -> bool {
    p.random && p.random_map && !p.lfsr && p.dist == crate::Dist::Uniform
}

/// How file `i`'s zipf, pareto or normal offsets are seeded (see [`Pattern::dist_seeds`]).
pub(super) fn dist_seeding(p: &Pattern, i: usize) -> Seeding {
    let seed = match p.dist_seeds.get(i) {
        Some(&s) => s,
        None => (p.seed ^ (i as u64).wrapping_mul(0x9e37_79b9)) as u32,
    };
    Seeding { seed, hash: true }
}

/// The random map's unit: the smallest block size of any direction, used or not (fio's
/// rw_min_bs: rw=randread with bs=16k,4k maps 4 KiB blocks).
pub(super) fn map_unit(p: &Pattern) -> u64 {
    p.bs.iter().map(|b| b.min()).min().unwrap_or(4096).max(1)
}
