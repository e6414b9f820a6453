//! A job's passes over its files (fio's do_io loops): when one ends, what a new one resets
//! (offsets, maps, seeds), and when the job's bytes or loops are spent.

use super::*;

/// fio 3.33's passes over a job's files (a do_io each, under keep_running): a pass ends when
/// no file can give another I/O (a sequential position whose next block does not fit, a
/// full random map), or, on a queueing engine, once it issued `pass_bytes`; the job ends
/// once it issued io_size × loops, whatever the pass. A block is never cut to fit the
/// budget: the last I/O of a job of 2 MiB in blocks of 2300 bytes is the 911th, whole.
#[derive(Clone, Debug)]
pub(super) struct Passes {
    /// The pass the last I/O belongs to, from 1.
    pub(super) number: u32,
    /// Passes still to make whatever the bytes (fio's loops, counted down).
    pub(super) loops_left: u32,
    /// Bytes issued in this pass.
    pub(super) issued: u64,
    /// Files done in this pass.
    pub(super) files_done: usize,
    /// How the last pass ended: its files done (true) or its bytes.
    pub(super) by_files: bool,
    /// The last call ended a pass (true: by its files): the next starts one or ends the job.
    pub(super) ended: Option<bool>,
    /// The largest block of any direction, done or not (fio's td_max_bs).
    pub(super) max_bs: u64,
    /// Where the last try that found its file done had put the I/O (a sequential block
    /// that does not fit); `None` when it had put it nowhere (fio's request then keeps the
    /// last I/O's offset).
    pub(super) stale: Option<u64>,
    /// The files found done, in the order found, not yet taken by [`IoGen::take_done`]; kept
    /// only once asked for (a write_iolog shows fio's close of each there).
    pub(super) done_order: Option<Vec<usize>>,
}

impl Passes {
    /// fio's passes for `p`, where they decide where its loops end (not time_based, nor
    /// under zonemode=zbd, openfiles or trimwrite, whose loops are counted in bytes).
    pub(super) fn of(p: &Pattern) -> Option<Passes> {
        let open_set = p.open_files > 0 && p.open_files < p.files.len();
        let kept = p.bytes.is_some() && p.zbd.is_none() && !p.trimwrite && !open_set;
        kept.then(|| Passes {
            number: 1,
            loops_left: p.loops.max(1) - 1,
            issued: 0,
            files_done: 0,
            by_files: false,
            ended: None,
            stale: None,
            done_order: None,
            // fio's td_max_bs: every direction's, whether the job does it or not.
            max_bs: p.bs.iter().map(|b| b.max()).max().unwrap_or(1),
        })
    }
}

impl IoGen {
    /// At the end of everything (`true`) or of this pass (`false`), before any draw: the
    /// budget of the job, then that of the pass on a queueing engine.
    #[inline]
    pub(super) fn at_end(&mut self) -> bool {
        if let Some(b) = self.p.bytes {
            if self.issued >= b {
                if let Some(ps) = &mut self.passes {
                    ps.by_files = false;
                }
                return true;
            }
        }
        match &mut self.passes {
            Some(ps) => {
                if self.p.pass_bytes.is_some_and(|c| ps.issued >= c) {
                    ps.ended = Some(false);
                    return true;
                }
            }
            None => {
                if self.open_set.as_ref().is_some_and(|s| s.finished) {
                    return true;
                }
                self.loop_start()
            }
        }
        false
    }

    /// After a call that gave no I/O: whether it ended a pass and fio's keep_running starts
    /// another (the loops first, then, with io_size, while fewer than io_size bytes were
    /// issued and a largest block still fits in what is left). The files start over, and
    /// fio's streams from their seeds (as at each loop, see [`Refill`]).
    #[cold]
    pub(super) fn new_pass(&mut self) -> bool {
        let Some(ps) = &mut self.passes else {
            return false;
        };
        let Some(by_files) = ps.ended.take() else {
            return false;
        };
        ps.by_files = by_files;
        // fio ends a job whose pass did no I/O.
        if ps.issued == 0 {
            return false;
        }
        let more = if ps.loops_left > 0 {
            ps.loops_left -= 1;
            true
        } else {
            let limit = self.p.loop_bytes;
            self.issued < limit
                && limit - self.issued >= ps.max_bs
                && (self.p.io_size_set || !by_files)
        };
        if !more {
            return false;
        }
        ps.number += 1;
        ps.issued = 0;
        ps.files_done = 0;
        self.reset_files();
        for f in &mut self.files {
            f.zone_at = 0;
            f.done = false;
        }
        self.cur_file = 0;
        self.file_left = 0;
        self.file_bytes = 0;
        self.next_file = 0;
        self.zone_bytes = 0;
        self.run_left = 0;
        if let Refill::Reseed(f) = self.refill {
            self.seed_fio(f);
        }
        true
    }

    /// fio's fio_file_reset of every file at a new pass: positions back to the start, the
    /// random map emptied, the lfsr from its seed again (reseeded or not).
    pub(super) fn reset_files(&mut self) {
        for f in &mut self.files {
            f.pos = [backward_start(&self.p, f.span); 3];
            if let Some(m) = &mut f.map {
                m.reset();
            }
            if let Some(l) = &mut f.lfsr {
                l.reset();
            }
            f.last = [0; 3];
        }
    }

    /// At a loop's first I/O under [`Refill::Reseed`], fio's streams start again from their
    /// seeds (fio's clear_io_state: td_fill_rand_seeds). One comparison per I/O otherwise.
    #[inline]
    pub(super) fn loop_start(&mut self) {
        if let Refill::Reseed(f) = self.refill {
            if self.issued >= self.next_loop {
                self.next_loop = self.issued + self.p.loop_bytes.max(1);
                self.seed_fio(f);
            }
        }
    }
}
