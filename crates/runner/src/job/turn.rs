//! The per-I/O loop itself: each turn fills the queue (generate, pace, queue), commits, and
//! waits for completions, until the byte budget, the runtime, a stop, an error or a control
//! option (latency target found, steady state) ends it; then what is in flight is collected.

use std::time::Duration;

use iolab_engine::{Done, Queued, Req};

use super::{Runner, Stops, STOP_GRACE};

/// What the loop carries from one turn to the next.
pub(super) struct Turn {
    ramp_end: u64,
    deadline: Option<u64>,
    /// iodepth_batch_submit: queued requests that make a commit.
    batch: usize,
    /// The engine completes every request inside `queue`.
    sync: bool,
    /// The engine refuses new requests while completions wait to be reaped
    /// (Caps::busy_until_reaped).
    busy_until_reaped: bool,
    /// The generator has nothing more.
    gen_done: bool,
    /// Under a rate limit, when the pending request is due (the reap waits no longer).
    wait_until: Option<u64>,
}

impl Turn {
    /// Whether the runtime is over at `now`.
    #[inline]
    fn past(&self, now: u64) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }
}

impl Runner<'_> {
    pub(super) fn run(&mut self, stop: &Stops<'_>) -> std::io::Result<()> {
        let plan = self.plan;
        let ramp_end = self.t0 + plan.ramp_time.as_nanos() as u64;
        let mut t = Turn {
            ramp_end,
            deadline: plan.runtime.map(|r| ramp_end + r.as_nanos() as u64),
            batch: plan.iodepth_batch_submit.max(1) as usize,
            sync: self.eng.caps().sync_only,
            busy_until_reaped: self.eng.caps().busy_until_reaped,
            gen_done: false,
            wait_until: None,
        };
        self.sample_until = t.deadline.unwrap_or(u64::MAX);
        self.iolog_start()?;
        self.hooks = self.hooks_wanted();
        if self.verify_only(stop)? {
            return Ok(());
        }
        loop {
            if stop.is_set() || t.past(self.now) || self.error.is_some() || self.done {
                break;
            }
            if self.ramping && self.now >= t.ramp_end {
                self.end_ramp();
            }
            if self.hooks {
                self.fill::<true>(&mut t, stop)?;
            } else {
                self.fill::<false>(&mut t, stop)?;
            }
            self.commit()?;
            if t.gen_done && self.in_flight() == 0 && self.pending.is_none() {
                break;
            }
            self.await_completions(&mut t)?;
            self.tick();
        }
        self.wind_down(&mut t, stop)
    }

    /// Queues until the depth is reached, the engine is busy, a batch is ready, a request
    /// must wait (rate, lock, flow) or the generator is done. `H`: the per-I/O hooks are
    /// called (see job/hot.rs); without them this is the plain loop.
    #[inline]
    fn fill<const H: bool>(&mut self, t: &mut Turn, stop: &Stops<'_>) -> std::io::Result<()> {
        while self.in_flight() < self.qd() || self.pending.is_some() {
            if t.sync && self.rec.lat {
                // fio's start_time: read before the request is made, so lat covers making it
                // and clat does not (fio reads the clock here too).
                self.now = self.clock.now();
            }
            if H && self.pending.is_none() && self.flow_held(stop) {
                break;
            }
            // Tested before it is taken: taking an empty pending still moves the whole
            // Option<Req> out and back, per I/O.
            let next = if self.pending.is_some() {
                self.pending.take()
            } else if H {
                self.next_logged()
            } else {
                self.next_req_as::<false>()
            };
            let Some(req) = next else {
                t.gen_done = true;
                break;
            };
            if H && (self.fops.must_wait(&req) || self.trim_order.must_wait(&req)) {
                self.pending = Some(req);
                break;
            }
            if H && !self.pace(t, req.tag as usize) {
                self.pending = Some(req);
                break;
            }
            if H {
                self.trim_order.issuing(&req);
            }
            if !self.issue::<H>(t, req, stop) {
                break;
            }
            // A synchronous engine completes the request inside issue: its error ends the
            // job here, as fio's does, not after the rest of the queue's worth of I/O.
            if t.sync && self.error.is_some() {
                break;
            }
            if H && self.thinks() && self.think_due() {
                // Out to the loop's head, where the end of the run is noticed.
                self.think_now(stop)?;
                break;
            }
        }
        Ok(())
    }

    /// Under a rate limit, whether the request in `slot` is due (false: the caller holds it),
    /// sleeping in slices of at most 50 ms when nothing else is in flight, so that a stop or
    /// the end of the runtime is noticed during a slow rate, and each up to the loop's next
    /// periodic duty (a bandwidth or IOPS sample, a log window), done on time. The request stays where it is:
    /// moving it in and out of here cost a copy per I/O.
    #[inline(always)]
    fn pace(&mut self, t: &mut Turn, slot: usize) -> bool {
        if !self.rate_limited {
            return true;
        }
        let due = self.slots[slot].due_ns;
        if due > self.now {
            self.now = self.clock.now();
        }
        if due > self.now {
            if self.in_flight() > 1 {
                // Others are in flight: collect completions until it is due.
                t.wait_until = Some(due);
                return false;
            }
            // Up to the next sample too, taken on time as fio's helper thread does.
            let wake = due.min(self.next_tick.max(self.now + 1));
            let slice = (wake - self.now).min(50_000_000);
            std::thread::sleep(Duration::from_nanos(slice));
            self.now = self.clock.now();
            self.paced = Some(slot as u32);
            self.tick();
            self.paced = None;
            if due > self.now {
                return false;
            }
        }
        self.slots[slot].issue_ns = self.now;
        true
    }

    /// Hands one request to the engine; false when the fill should stop (a batch is ready,
    /// the engine is busy, or a synchronous completion ended the run).
    #[inline(always)]
    fn issue<const H: bool>(&mut self, t: &mut Turn, mut req: Req, stop: &Stops<'_>) -> bool {
        let slot = req.tag as u32;
        if t.sync && self.rec.timed {
            // Each I/O is timed alone: clat is the call itself; lat counts from the slot's
            // issue_ns, read before the request was made.
            self.now = self.clock.now();
            self.slots[slot as usize].submit_ns = self.now;
        }
        if H && self.debug_io {
            self.debug_new_req(&req);
        }
        if H {
            self.fops.before_queue(&req);
        }
        // The engine would refuse it (busy): everything in flight but this request and the
        // queued ones is committed and not yet reaped. Held without the call (with hooks, the
        // call is made: they see every attempt, as before).
        if !H && t.busy_until_reaped && self.in_flight() > self.queued.len() + 1 {
            self.pending = Some(req);
            return false;
        }
        if t.sync {
            // Done in place: the request stays here, only its outcome comes back.
            if let Some(result) = self.eng.queue_in_place(&mut req) {
                if H {
                    self.fops.after_queue();
                }
                return self.done_in_queue::<H>(t, Done { req, result }, stop);
            }
        }
        let queued = self.eng.queue(req);
        if H {
            self.fops.after_queue();
        }
        match queued {
            Queued::Done(d) => self.done_in_queue::<H>(t, d, stop),
            Queued::Queued => {
                self.queued.push(slot);
                self.queued.len() < t.batch
            }
            Queued::Busy(r) => {
                self.pending = Some(r);
                false
            }
        }
    }

    /// A request the engine completed inside `queue`: recorded at once, as fio's sync engines
    /// do; false when the fill should stop.
    #[inline(always)]
    fn done_in_queue<const H: bool>(&mut self, t: &mut Turn, d: Done, stop: &Stops<'_>) -> bool {
        self.stamp_done();
        let depth = self.in_flight() as u32;
        self.stats.depth.mark_depth(depth, 1);
        self.stats.depth.mark_submit(1);
        self.stats.depth.mark_complete(1);
        self.complete_as::<H>(d);
        // A synchronous engine never fills the queue: the end of the ramp and of the run, and
        // a fatal error (fio's sync engines stop at the failed I/O), have to be noticed here.
        if self.ramping && self.now >= t.ramp_end {
            self.end_ramp();
        }
        self.tick();
        !(stop.is_set() || t.past(self.now) || self.done || self.error.is_some())
    }

    /// Reaps when the queue is as full as it gets (or a request waits for its due time).
    fn await_completions(&mut self, t: &mut Turn) -> std::io::Result<()> {
        let full = self.in_flight() >= self.qd() || self.pending.is_some() || t.gen_done;
        if !full {
            // Nothing is held back (that makes the queue full), so every slot in use is a
            // request in the engine: no need to ask it (a virtual call per turn).
            if self.in_flight() == 0 {
                // A rate limit made us wait with nothing in flight.
                self.now = self.clock.now();
            }
            return Ok(());
        }
        // The engine's own count: a request held back (busy, or not yet due under a rate
        // limit) holds a slot here but is not in the engine, and nothing would complete.
        let engine_has = self.eng.in_flight();
        if engine_has > 0 {
            let min = (self.plan.iodepth_batch_complete_min as usize).clamp(1, engine_has);
            // Waiting for a rate-limited I/O's due time bounds the reap too.
            let until = match (t.deadline, t.wait_until.take()) {
                (Some(d), Some(w)) => Some(d.min(w)),
                (d, w) => d.or(w),
            };
            self.reap(min, until)?;
        } else {
            // A rate limit made us wait with nothing in flight.
            self.now = self.clock.now();
        }
        Ok(())
    }

    /// The loop is over: what is in flight is collected (within STOP_GRACE after a stop),
    /// then the end-of-job syncs and the verify phase.
    fn wind_down(&mut self, t: &mut Turn, stop: &Stops<'_>) -> std::io::Result<()> {
        // A request the engine refused (busy) when the run ended was never issued: its slot
        // and buffer go back, or the drain below would wait for it for ever.
        if let Some(r) = self.pending.take() {
            self.unissue(r);
        }
        // Stopped: what is in flight still completes and is counted, except what the engine
        // has not started, which it drops as fio's cleanup_pending_aio has it cancelled.
        self.commit()?;
        if !t.gen_done {
            self.cancelled = true;
            self.eng.cancel();
        }
        if stop.is_set() {
            // What is in flight gets STOP_GRACE: a stalled device must not hold the results
            // back. What is still out after it is left to the kernel (see `job::run`).
            let end = self.now + STOP_GRACE.as_nanos() as u64;
            while self.eng.in_flight() > 0 && self.now < end {
                let n = self.eng.in_flight();
                self.reap(n, Some(end))?;
            }
            return Ok(());
        }
        self.drain()?;
        if self.plan.end_fsync || self.plan.fsync_on_close {
            self.sync_all_files()?;
        }
        self.verify_phase(stop)
    }
}
