//! The files in use under `openfiles` (fio's open file limit): which files the generator
//! draws from, where each stands, which left the set for the runner to close, and when a
//! pass over them ends.

use super::map::keeps_map;
use crate::pattern::Pattern;
use iolab_job::value::Dir;

/// The files in use under `openfiles`, and the bytes each has been given.
pub(super) struct OpenSet {
    pub(super) in_use: Vec<usize>,
    /// Per file, where it stands in `in_use` ([`NOT_IN_USE`] when it does not): a file that
    /// is done leaves without a search of the set, which may hold thousands.
    pub(super) at: Vec<u32>,
    /// The files that left `in_use` since the runner last took them (it closes those).
    pub(super) left: Vec<usize>,
    pub(super) next_new: usize,
    pub(super) done: Vec<u64>,
    pub(super) rr: usize,
    /// The smallest block of the job's directions: a file with less than that left is done
    /// for the pass (fio finds its next block does not fit and closes it, rather than
    /// starting it over).
    pub(super) min_bs: u64,
    /// Random offsets without a map (norandommap, a non-uniform distribution) never find a
    /// file done: fio keeps the first files open for the whole job.
    pub(super) endless: bool,
    /// Passes over all the files made; with fio's passes (see [`OpenSet::ends_passes`]) the
    /// job ends after `loops` of them.
    pub(super) passes_done: u32,
    /// Every file was done in the last of the job's passes: nothing more is issued.
    pub(super) finished: bool,
}

pub(super) const NOT_IN_USE: u32 = u32::MAX;

impl OpenSet {
    /// The set for `p` where it opens fewer files at once than it has (`openfiles`).
    pub(super) fn of(p: &Pattern) -> Option<OpenSet> {
        (p.open_files > 0 && p.open_files < p.files.len()).then(|| OpenSet {
            in_use: (0..p.open_files).collect(),
            at: (0..p.files.len())
                .map(|i| match i < p.open_files {
                    true => i as u32,
                    false => NOT_IN_USE,
                })
                .collect(),
            left: Vec::new(),
            next_new: p.open_files,
            done: vec![0; p.files.len()],
            rr: 0,
            min_bs: [Dir::Read, Dir::Write, Dir::Trim]
                .iter()
                .filter(|d| p.has(**d))
                .map(|d| p.bs[*d as usize].min())
                .min()
                .unwrap_or(1)
                .max(1),
            endless: p.random && !p.lfsr && !keeps_map(p),
            passes_done: 0,
            finished: false,
        })
    }

    /// The first `k` files in use, in order.
    pub(super) fn start_over(&mut self, k: usize) {
        self.in_use = (0..k).collect();
        for (i, f) in self.in_use.iter().enumerate() {
            self.at[*f] = i as u32;
        }
        self.next_new = k;
    }

    /// Whether the job ends when its files are done (fio's keep_running without io_size: a
    /// pass per loop, however many bytes are left); with io_size or time_based the bytes
    /// decide and the files start again.
    pub(super) fn ends_passes(p: &Pattern) -> bool {
        p.bytes.is_some() && !p.io_size_set && p.zbd.is_none() && !p.trimwrite
    }
}
