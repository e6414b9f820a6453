//! Which file the next I/O goes to, and when a file or the job's bytes are done: fio's
//! file_service_type turns, openfiles' set, the file a sync takes, and what a file can still
//! give a pass.

use super::*;

impl IoGen {
    /// The file a sync due goes to: fio gives the sync the next file's turn (its
    /// get_next_file, then a sync instead of an I/O), so the I/O after it goes to the file
    /// after that.
    pub fn pick_for_sync(&mut self) -> usize {
        if self.files.iter().all(|f| f.done) {
            return self.cur_file;
        }
        self.pick_file()
    }

    /// Whether the job's bytes (or, on a queueing engine, the pass's) are issued: fio's loop
    /// asks for no further request then, a sync due or not.
    pub fn out_of_bytes(&self) -> bool {
        if self.p.bytes.is_some_and(|b| self.issued >= b) {
            return true;
        }
        let pass = self.passes.as_ref().map_or(0, |ps| ps.issued);
        self.p
            .pass_bytes
            .is_some_and(|c| self.passes.is_some() && pass >= c)
    }

    /// From now on, keep the files found done (fio closes each there, mid-pass) for
    /// [`IoGen::take_done`]. Without fio's passes no file is ever found done.
    pub fn keep_done(&mut self) {
        if let Some(ps) = &mut self.passes {
            ps.done_order.get_or_insert_with(Vec::new);
        }
    }

    /// The files found done since the last call, in the order found (see
    /// [`IoGen::keep_done`]).
    pub fn take_done(&mut self) -> Vec<usize> {
        match self.passes.as_mut().and_then(|ps| ps.done_order.as_mut()) {
            Some(order) if !order.is_empty() => std::mem::take(order),
            _ => Vec::new(),
        }
    }

    /// Whether the last pass ended with every file done (fio has closed them by then) rather
    /// than at the budget.
    pub fn ended_by_files(&self) -> bool {
        self.passes.as_ref().is_some_and(|p| p.by_files)
    }

    /// Whether file `fi` can give no further I/O of `need` bytes in direction `d` this pass
    /// (fio's get_next_offset failing): the next sequential block does not fit, or the random
    /// map is full (for the sequential part of a random job, both). Only with passes kept.
    #[inline]
    pub(super) fn cannot_give(&self, fi: usize, d: usize, random: bool, need: u64) -> bool {
        let p = &self.p;
        let f = &self.files[fi];
        // Under zonemode=strided the offset decides (gen/offset.rs, strided).
        if self.passes.is_none() || p.backward > 0 || p.zones.is_some() {
            return false;
        }
        let seq_fits = f.pos[d] + need <= f.span.len;
        // A file chosen by zipf, pareto or normal starts over instead (fio's non-uniform file
        // service resets it).
        let dist = matches!(p.file_pick, FilePick::Dist(_));
        if !p.random {
            if p.modifier > 0 && !dist {
                // rw=write:N (holes): fio's own test of where the next block goes.
                return holed_next(f.pos[d], p.modifier, need, f.span).is_none();
            }
            return p.modifier == 0 && !seq_fits && !dist;
        }
        // A sequential I/O of a random job that starts inside the file but does not fit
        // fails (fio's fill_io_u): the file is done, map or not.
        if !random && !p.identical && f.pos[d] < f.span.len && !seq_fits {
            return true;
        }
        // A full map, or an lfsr that has given every block this pass (fio's lfsr_next fails).
        let full = (f.map.as_ref().is_some_and(|m| m.is_done())
            || f.lfsr.as_ref().is_some_and(|l| l.exhausted()))
            && !dist;
        // rw_sequencer=identical repeats the last offset, which never fails.
        full && (random || (!seq_fits && !p.identical))
    }

    /// File `fi` is done for this pass (its try in direction `d`); true when every file is
    /// (the pass is over).
    #[cold]
    pub(super) fn file_done(&mut self, fi: usize, d: usize, seq: bool) -> bool {
        let Some(ps) = &mut self.passes else {
            return false;
        };
        let f = &self.files[fi];
        // fio sets the offset when the position is inside the file, then finds the block
        // does not fit.
        ps.stale = (seq && f.pos[d] < f.span.len).then(|| f.span.offset + f.pos[d]);
        if seq && self.p.modifier > 0 && !self.p.random && f.pos[d] > 0 {
            // Holes: the offset fio set is past the hole, where it is still inside the span.
            let at = f.pos[d].saturating_add(self.p.modifier);
            ps.stale = (f.pos[d] < f.span.len && at < f.span.len).then(|| f.span.offset + at);
        }
        if !self.files[fi].done {
            self.files[fi].done = true;
            ps.files_done += 1;
            if let Some(order) = &mut ps.done_order {
                order.push(fi);
            }
        }
        if ps.files_done >= self.files.len() {
            ps.ended = Some(true);
            return true;
        }
        false
    }

    /// The file of the next I/O, as fio's file_service_type says; round robin with one I/O
    /// per file costs what it did before (a counter).
    pub(super) fn pick_file(&mut self) -> usize {
        let n = self.files.len();
        if n == 1 {
            return 0;
        }
        if let Some(set) = &mut self.open_set {
            // Round robin (or random) among the files in use, the others wait their turn.
            let k = set.in_use.len();
            let i = match self.p.file_pick {
                FilePick::Random => self.rng_file.below(k as u64) as usize,
                _ => {
                    let i = set.rr % k;
                    set.rr = (i + 1) % k;
                    i
                }
            };
            return set.in_use[i];
        }
        let kept = self.passes.is_some();
        if self.p.file_pick == FilePick::Sequential {
            // fio stays on a file until it is done; where passes are not kept, until its
            // span's bytes are.
            let over = match kept {
                true => self.files[self.cur_file].done,
                false => self.file_bytes >= self.files[self.cur_file].span.len,
            };
            if over {
                self.file_bytes = 0;
                self.cur_file = (self.cur_file + 1) % n;
                // With every file done (the pass is ending: what is asked now is refused
                // by the file), the next one in turn.
                let all_done = self.files.iter().all(|f| f.done);
                while self.files[self.cur_file].done && !all_done {
                    self.cur_file = (self.cur_file + 1) % n;
                }
            }
            return self.cur_file;
        }
        if self.file_left > 0 && !self.files[self.cur_file].done {
            self.file_left -= 1;
            return self.cur_file;
        }
        self.file_left = self.p.file_every.max(1) - 1;
        // A done file is passed over: drawn again (random kinds) or skipped (round robin), as
        // fio's get_next_file does; one file at least is not done here.
        let fi = loop {
            let fi = match (&self.p.file_pick, &mut self.file_dist) {
                (FilePick::Random, _) => self.rng_file.below(n as u64) as usize,
                (_, Some(d)) => (d.pick_file(&mut self.rng_off) as usize).min(n - 1),
                _ => {
                    let fi = self.next_file;
                    self.next_file = (fi + 1) % n;
                    fi
                }
            };
            // Every file done (the pass is ending): the pick stands, and its file refuses.
            if !self.files[fi].done || self.files.iter().all(|f| f.done) {
                break fi;
            }
        };
        self.cur_file = fi;
        fi
    }

    /// Counts `len` bytes to file `fi` under openfiles; a file whose span cannot take another
    /// smallest block is closed and the next one opened (after the last, all of them again).
    pub(super) fn account_open(&mut self, fi: usize, len: u64) {
        let Some(set) = &mut self.open_set else {
            return;
        };
        set.done[fi] += len;
        if set.endless || set.done[fi] + set.min_bs <= self.files[fi].span.len {
            return;
        }
        set.done[fi] = 0;
        let at = set.at[fi];
        if at != NOT_IN_USE {
            let at = at as usize;
            set.at[fi] = NOT_IN_USE;
            set.left.push(fi);
            if set.next_new < self.files.len() {
                set.in_use[at] = set.next_new;
                set.at[set.next_new] = at as u32;
                set.next_new += 1;
            } else {
                // The last files: each removal moves those after it (at most the set).
                set.in_use.remove(at);
                for (i, f) in set.in_use.iter().enumerate().skip(at) {
                    set.at[*f] = i as u32;
                }
            }
        }
        // fio spends an offset draw on the try that finds the random map full.
        if keeps_map(&self.p) {
            self.spend_offset_draw();
        }
        let Some(set) = &mut self.open_set else {
            return;
        };
        if set.in_use.is_empty() {
            set.start_over(self.p.open_files);
            set.passes_done += 1;
            if OpenSet::ends_passes(&self.p) {
                set.finished = set.passes_done >= self.p.loops.max(1);
                self.open_pass_over();
            }
        }
    }

    /// Every file was done under openfiles and another pass follows: as at fio's new loop,
    /// the files start over and, under [`Refill::Reseed`], fio's streams from their seeds.
    #[cold]
    fn open_pass_over(&mut self) {
        self.reset_files();
        self.run_left = 0;
        if let Refill::Reseed(f) = self.refill {
            self.next_loop = self.issued + self.p.loop_bytes.max(1);
            self.seed_fio(f);
        }
    }
}
