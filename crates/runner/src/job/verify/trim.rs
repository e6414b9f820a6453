//! fio's trims of verified blocks: `trim_percentage` of the writes a verifying job remembers
//! are chosen (as fio chooses them, from its trim random stream), and each time the job's
//! history holds a multiple of `trim_backlog` blocks, `trim_backlog_batch` of the chosen ones
//! (default: trim_backlog) are trimmed, oldest first. With `trim_verify_zero` (default on) a
//! trimmed block stays to be verified and must then read back as zeroes; without it the
//! block is forgotten.
//!
//! The state machine is fio 3.33's `check_get_trim`: the batch left over when the chosen
//! blocks run out carries on with the next ones chosen, and a batch starts only after a
//! write or a trim completed (not a read).
//!
//! fio 3.33 issues these trims in a job whose `rw` has no trim only to abort on an assertion,
//! so iolab refuses that job (`refusal`). Where a trim lands on a regular file iolab punches
//! a hole, as its trim does for any job; fio 3.33's trim is BLKDISCARD, which a regular file
//! refuses (ENOTTY), so only block devices compare.

use std::collections::VecDeque;

use iolab_workload::JobPlan;

use crate::verify::seed::{stream_seed, Taus32, TRIM_STREAM};
use crate::verify::Written;

mod hooks;

pub(super) struct Trims {
    /// A write is chosen when fio's draw is at most this.
    limit: u32,
    start: u32,
    rng: Taus32,
    backlog: u64,
    batch_size: u64,
    /// fio's trim_batch: trims still to issue from the current batch.
    batch: u64,
    /// Chosen blocks, oldest first: (file, offset, numberio), the last naming the write
    /// chosen (a later write to the block replaces it, and the entry is then skipped).
    chosen: VecDeque<(u32, u64, u64)>,
    /// trim_verify_zero.
    pub(super) zero: bool,
}

impl Trims {
    /// The trims of a verifying job, None when it trims nothing.
    pub(super) fn of(plan: &JobPlan, randseed: u64) -> Option<Trims> {
        let s = &plan.spec;
        if s.trim_percentage == 0 || s.trim_backlog == 0 {
            return None;
        }
        let start = stream_seed(randseed, plan.thread_number(), TRIM_STREAM);
        Some(Trims {
            limit: (u32::MAX / 100) * s.trim_percentage.min(100),
            start,
            rng: Taus32::new(start),
            backlog: s.trim_backlog,
            batch_size: s.trim_backlog_batch,
            batch: 0,
            chosen: VecDeque::new(),
            zero: s.trim_verify_zero,
        })
    }

    /// A write the job remembers: drawn for, and kept if chosen.
    pub(super) fn remembered(&mut self, w: &Written) {
        if self.rng.draw() <= self.limit {
            self.chosen.push_back((w.file, w.offset, w.numberio));
        }
    }

    /// fio reseeds its streams at the start of every loop.
    pub(super) fn restart(&mut self) {
        self.rng = Taus32::new(self.start);
    }

    /// The next block to trim, if one is due: `held` is how many blocks the history holds,
    /// `after_read` whether the last I/O completed was a read, `live` whether a chosen
    /// entry still names the block's last write.
    pub(super) fn next(
        &mut self,
        held: u64,
        after_read: bool,
        live: impl Fn(&(u32, u64, u64)) -> bool,
    ) -> Option<(u32, u64)> {
        while self.chosen.front().is_some_and(|c| !live(c)) {
            self.chosen.pop_front();
        }
        if self.chosen.is_empty() {
            return None;
        }
        if self.batch > 0 {
            self.batch -= 1;
        } else if held.is_multiple_of(self.backlog) && !after_read {
            self.batch = if self.batch_size > 0 {
                self.batch_size
            } else {
                self.backlog
            };
        } else {
            return None;
        }
        let (file, offset, _) = self.chosen.pop_front()?;
        Some((file, offset))
    }
}

/// fio 3.33 aborts (an assertion) when trim_backlog trims in a job that does not trim.
pub(super) fn refusal(plan: &JobPlan) -> Option<String> {
    let s = &plan.spec;
    let trims = s.trim_percentage > 0 && s.trim_backlog > 0 && (s.do_verify || s.verify_only);
    (trims && !plan.pattern.trim).then(|| {
        "trim_backlog trims verified blocks, which needs rw= with trims (trimwrite, \
         randtrimwrite); fio 3.33 aborts on an assertion otherwise"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trims(pct: u32, backlog: u64, batch: u64) -> Trims {
        let start = stream_seed(0x89, 1, TRIM_STREAM);
        Trims {
            limit: (u32::MAX / 100) * pct,
            start,
            rng: Taus32::new(start),
            backlog,
            batch_size: batch,
            batch: 0,
            chosen: VecDeque::new(),
            zero: true,
        }
    }

    impl Trims {
        /// The same settings, nothing drawn or chosen yet.
        fn clone_fresh(&self) -> Trims {
            Trims {
                rng: Taus32::new(self.start),
                chosen: VecDeque::new(),
                batch: 0,
                ..*self
            }
        }
    }

    fn write(n: u64) -> Written {
        Written {
            offset: n * 4096,
            len: 4096,
            numberio: n,
            ..Written::default()
        }
    }

    /// Drives the machine as a depth-1 trimwrite job does: each write completes, then the
    /// job asks for a trim before its next I/O, as long as one is due. Without
    /// trim_verify_zero a trimmed block leaves the history.
    fn trimmed_blocks(t: &mut Trims, writes: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut held = 0;
        for n in 0..writes {
            t.remembered(&write(n));
            held += 1;
            while let Some((_, off)) = t.next(held, false, |_| true) {
                out.push(off / 4096);
                if !t.zero {
                    held -= 1;
                }
            }
        }
        out
    }

    #[test]
    fn chooses_and_trims_the_blocks_fio_3_33_trims() {
        // fio 3.33, --rw=trimwrite --size=128k --bs=4k --verify=crc32c --trim_percentage=50
        // --trim_backlog=4 (randseed 0x89, job 1), its --debug=io: the trims it issued after
        // writes, in order (blocks 0, 1, 3 when the 4th write completed, then 4, then 7).
        let got = trimmed_blocks(&mut trims(50, 4, 0), 8);
        assert_eq!(got, [0, 1, 3, 4, 7]);
    }

    #[test]
    fn no_percentage_no_trims_and_all_of_them_at_100() {
        assert!(trimmed_blocks(&mut trims(0, 4, 0), 16).is_empty());
        let all = trimmed_blocks(&mut trims(100, 4, 0), 8);
        assert_eq!(all, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn batches_run_as_fio_3_33_runs_them() {
        // fio 3.33, --rw=trimwrite --size=64k --trim_percentage=100 --trim_backlog=4
        // --trim_backlog_batch=2, its --debug=io. A batch of 2 is 3 trims there (the trim
        // that starts it is not counted). With trim_verify_zero=0 a trimmed block leaves
        // the history, so a round ends when the history is no longer a multiple of 4:
        let mut t = trims(100, 4, 2);
        t.zero = false;
        let got = trimmed_blocks(&mut t, 16);
        assert_eq!(got, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        // ... after writes 4, 7, 10, 13 and 16: blocks 0-2, 3-5, 6-8, 9-11, 12-14.
        let mut t = trims(100, 4, 2);
        t.zero = false;
        let rounds: Vec<usize> = (1..=16)
            .map(|n| trimmed_blocks(&mut t.clone_fresh(), n).len())
            .collect();
        assert_eq!(rounds, [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 9, 12, 12, 12, 15]);
        // With it (the default) the blocks stay, the rounds follow one another while blocks
        // are chosen, and what a batch has left trims the next blocks at once.
        let mut t = trims(100, 4, 2);
        let rounds: Vec<usize> = (1..=16)
            .map(|n| trimmed_blocks(&mut t.clone_fresh(), n).len())
            .collect();
        assert_eq!(
            rounds,
            [0, 0, 0, 4, 5, 6, 6, 8, 9, 9, 9, 12, 12, 12, 12, 16]
        );
        // No round starts right after a read.
        t.remembered(&write(0));
        assert_eq!(t.next(8, true, |_| true), None);
    }

    #[test]
    fn a_block_written_again_is_not_trimmed_for_its_old_write() {
        let mut t = trims(100, 1, 0);
        t.remembered(&write(0));
        assert_eq!(t.next(1, false, |c| c.2 != 0), None);
    }
}
