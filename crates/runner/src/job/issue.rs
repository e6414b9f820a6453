//! Making the next request: the generator's next I/O (or a sync due, a backlogged verify
//! read, the next loop), its slot and buffer, its due time under a rate limit, and taking
//! back a request that never reached the engine.

use iolab_engine::{Op, Req};
use iolab_stats::Dir;
use iolab_workload::{Dir as WDir, IoUnit};

use super::{stat_dir, Runner, SyncAcct};
use crate::fill::fill;

impl Runner<'_> {
    /// The next request, every per-I/O hook called (see [`Runner::next_req_as`]).
    #[inline]
    pub(super) fn next_req(&mut self) -> Option<Req> {
        self.next_req_as::<true>()
    }

    /// The next request. `H` false (no hook group active, job/hot.rs) leaves out what only
    /// an option turns on: syncs, verify, buffer refills, priorities, rate schedules.
    #[inline(always)]
    pub(super) fn next_req_as<const H: bool>(&mut self) -> Option<Req> {
        let plan = self.plan;
        if self.free.is_empty() {
            return None;
        }
        if H && (self.fops.full || self.finishes && self.eng.finished()) {
            return None;
        }
        if H && self.verify.is_some() {
            if let Some(r) = self.verify_backlog_req() {
                return Some(r);
            }
            if self.done {
                return None; // a loop's read back failed: no more writes
            }
        }
        if plan.number_ios > 0 && self.stats.total_rw_ios() >= plan.number_ios {
            return None;
        }
        if H && self.held.is_none()
            && self.plan.files.len() > 1
            && self.fsync_due()
            && !self.gen.out_of_bytes()
        {
            return self.fsync_next_file();
        }
        let io = match if H { self.held.take() } else { None } {
            Some(io) => Some(io),
            None if H && self.rate_limited => self.next_io_rated(),
            None => self.gen.next_io(),
        };
        let Some(io) = io else {
            // The files are done before the budget: fio asks for one more I/O, and a sync
            // due after the last write comes first (the etcd check's 911th fdatasync).
            if H && self.fsync_due() && self.gen.ended_by_files() {
                return self.fsync_last();
            }
            return None;
        };
        // A sync due where a loop ended at its bytes comes in the next loop (fio's do_io left
        // before asking for it); where the files ended the loop, before its end (fio's
        // get_io_u decides on the sync before it finds the files done).
        let looped = self.each_loop.due(self.gen.pass());
        let after_loop = looped && !self.gen.ended_by_files();
        if H && self.fsync_due() && !after_loop {
            return self.fsync_before(io);
        }
        if looped && !self.next_loop() {
            return None;
        }
        if H && after_loop && self.fsync_due() {
            return self.fsync_before(io);
        }
        if H && self.sync_range.due() && !self.sync_ranges() {
            return None;
        }
        if H && self.iolog.on() {
            self.iolog_done_closes();
        }
        if H && !self.open_for(io.file) {
            return None;
        }
        self.each_loop.issued(io.len);
        let dir = stat_dir(io.dir);
        let slot = self.take_slot(Some(dir))?;
        let op = self.op_of::<H>(&io);
        self.stats.issued(dir);
        if H {
            // Without a hook group due_ns stays 0, as every slot starts.
            self.slots[slot as usize].due_ns = if self.rate_limited {
                self.schedule(io.dir as usize, io.len)
            } else {
                0
            };
        }
        self.req_of::<H>(&io, op, dir, slot)
    }

    /// The request's operation for `io`, noting what a sync after it depends on.
    #[inline(always)]
    fn op_of<const H: bool>(&mut self, io: &IoUnit) -> Op {
        match io.dir {
            WDir::Read => {
                self.sync_may_follow = true;
                Op::Read
            }
            WDir::Write => {
                if H {
                    self.writes_issued += 1;
                    self.sync_may_follow = true;
                    self.last_write_file = io.file;
                    self.sync_range.wrote(io.file, io.offset, io.len);
                }
                Op::Write
            }
            WDir::Trim => {
                self.sync_may_follow = true;
                Op::Trim
            }
        }
    }

    /// The request for `io` in `slot`: a buffer (filled for a write), its verify role and
    /// priority where a hook group is active.
    #[inline(always)]
    fn req_of<const H: bool>(&mut self, io: &IoUnit, op: Op, dir: Dir, slot: u32) -> Option<Req> {
        let file = self.files[io.file];
        if op == Op::Trim {
            return Some(Req::trim(file, io.offset, io.len as usize).with_tag(slot as u64));
        }
        let mut buf = self.free.pop()?;
        if !H {
            return Some(
                Req::data(op, file, io.offset, io.len as usize, buf).with_tag(slot as u64),
            );
        }
        if op == Op::Write {
            self.prepare_write(buf.as_mut_slice(), slot, io);
        } else if self.verify.is_some() {
            self.verify_read_issued(slot, io);
        }
        let prio = self.pick_prio(dir, io.len);
        Some(
            Req::data(op, file, io.offset, io.len as usize, buf)
                .with_tag(slot as u64)
                .with_ioprio(prio),
        )
    }

    /// The generator's next I/O under a rate limit, turned as fio's rate_ddir turns it: the
    /// direction drawn is ahead of its schedule and the other's next I/O is due sooner: the
    /// other goes (a read/write mix then keeps each direction's rate, not the slower one's).
    #[inline(always)]
    fn next_io_rated(&mut self) -> Option<IoUnit> {
        let (due, now) = (&self.next_due, self.now.saturating_sub(self.t0));
        self.gen.next_io_turned(|d| {
            let (i, o, other) = match d {
                WDir::Read => (0, 1, WDir::Write),
                WDir::Write => (1, 0, WDir::Read),
                WDir::Trim => return d,
            };
            match due[i] > now && due[o] < due[i] {
                true => other,
                false => d,
            }
        })
    }

    /// A write's buffer as the job's options make it: deduplicated, refilled or scrambled
    /// (as far as the write reaches: fio 3.33 fills the whole buffer, 1 GiB per write under
    /// bsrange=4k-1g, bench/bigbs.py), then given its verify headers.
    #[inline(always)]
    fn prepare_write(&mut self, buf: &mut [u8], slot: u32, io: &IoUnit) {
        let plan = self.plan;
        let data = &mut buf[..io.len as usize];
        if plan.buffers.dedupe_percentage > 0 {
            self.dedupe_fill(data);
        } else if plan.buffers.refill {
            fill(data, plan, &mut self.buf_rng);
        } else if plan.buffers.scramble {
            crate::fill::scramble(data, io.offset, self.now);
        }
        if self.verify.is_some() {
            self.verify_write(buf, slot, io);
        }
    }

    /// Takes back a request that was generated but never reached the engine.
    pub(super) fn unissue(&mut self, r: Req) {
        let slot = r.tag as u32;
        self.uncount(slot);
        self.free_slots.push(slot);
        if r.op.is_data() {
            self.free.push(r.buf);
        }
    }

    /// A slot for a sync, counted as fio counts it (see [`SyncAcct`]).
    pub(super) fn take_sync_slot(&mut self, acct: SyncAcct) -> Option<u32> {
        let slot = self.take_slot(None)?;
        self.slots[slot as usize].sync = acct;
        if acct == SyncAcct::Counted {
            self.stats.issued_sync();
        }
        Some(slot)
    }

    /// The request in `slot` was counted as issued but never was (refused, cancelled).
    pub(super) fn uncount(&mut self, slot: u32) {
        let s = &self.slots[slot as usize];
        match s.dir {
            Some(d) => self.stats.dir_mut(d).total_ios -= 1,
            None if s.sync == SyncAcct::Counted => self.stats.sync.total_ios -= 1,
            None => {}
        }
    }

    pub(super) fn take_slot(&mut self, dir: Option<Dir>) -> Option<u32> {
        let slot = self.free_slots.pop()?;
        let s = &mut self.slots[slot as usize];
        s.issue_ns = self.now;
        s.dir = dir;
        Some(slot)
    }

    /// Under a rate limit, the time the next I/O of direction `d` and `len` bytes is due:
    /// evenly spaced (linear) or with exponential gaps of the same mean (poisson), from the
    /// start of the measured period.
    pub(super) fn schedule(&mut self, d: usize, len: u64) -> u64 {
        let r = &self.plan.rate;
        let mut gap = 0u64;
        if r.bytes_per_sec[d] > 0 {
            gap =
                gap.max((u128::from(len) * 1_000_000_000 / u128::from(r.bytes_per_sec[d])) as u64);
        }
        if let Some(g) = 1_000_000_000u64.checked_div(r.iops[d]) {
            gap = gap.max(g);
        }
        if r.poisson && gap > 0 {
            let u = self.rng.unit();
            gap = (gap as f64 * -(1.0 - u).ln()) as u64;
        }
        let due = self.t0 + self.next_due[d];
        self.next_due[d] += gap;
        due
    }
}
