//! What the job loop does with record.rs, as methods of `Runner`: kept apart so that
//! record.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::{Op, Req};
use iolab_job::debug;
use iolab_stats::Dir;
use iolab_sys as sys;
use iolab_workload::BufStream;

use super::{CLOCK_EVERY, DEDUPE_SEED};
use crate::fill::fill;
use crate::job::Runner;

impl Runner<'_> {
    /// fio's `--debug=io` line for a request (the slot stands for fio's io_u address).
    pub(in crate::job) fn debug_req(&self, what: &str, r: &Req) {
        let file = self.files.iter().position(|f| *f == r.file);
        let name = file
            .and_then(|i| self.plan.files.get(i))
            .map(|f| f.path.display());
        let ddir = match r.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            _ => 3,
        };
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!(
                "{what}: io_u 0x{:x}: off=0x{:x},len=0x{:x},ddir={ddir},file={}",
                r.tag,
                r.offset,
                r.len,
                name.map(|n| n.to_string()).unwrap_or_default()
            ),
        );
    }

    /// fio's three `--debug=io` lines for a new request: filled from the generator, prepared
    /// for the engine, queued.
    pub(in crate::job) fn debug_new_req(&self, r: &Req) {
        for what in ["fill", "prep", "queue"] {
            self.debug_req(what, r);
        }
    }

    /// fio's dedupe_percentage: that share of writes repeat an earlier buffer, the rest are
    /// the job's next unique buffer (each job has its own sequence unless dedupe_global). As
    /// fio, a repeat is the last unique buffer (before any, the first), and under
    /// dedupe_mode=working_set one of the job's first unique buffers, as many as
    /// dedupe_working_set_percentage of its blocks: fio seeds its working set from the state
    /// its unique buffers start from, so the set is the data written first.
    pub(in crate::job) fn dedupe_fill(&mut self, buf: &mut [u8]) {
        let (plan, spec) = (self.plan, &self.plan.spec);
        let salt = if spec.dedupe_global {
            0
        } else {
            plan.pattern.seed
        };
        let n = if (self.rng.below(100) as u32) >= plan.buffers.dedupe_percentage {
            self.unique_bufs += 1;
            self.unique_bufs - 1
        } else if spec.dedupe_working_set {
            let blocks: u64 =
                plan.pattern.files.iter().map(|f| f.len).sum::<u64>() / (buf.len() as u64).max(1);
            let set = (blocks * u64::from(spec.dedupe_working_set_percentage) / 100).max(1);
            self.rng.below(set)
        } else {
            self.unique_bufs.saturating_sub(1)
        };
        let seed = DEDUPE_SEED ^ (n + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        fill(buf, plan, &mut BufStream::new(seed ^ salt, false));
    }

    /// A completion when some latency is not measured: only what is asked for is recorded.
    pub(in crate::job) fn record_some(&mut self, dir: Dir, bytes: u64, submit: u64, issue: u64) {
        let rec = self.rec;
        self.stats.record_done(dir, bytes);
        if rec.clat {
            self.stats.record_clat(dir, self.now - submit);
        }
        if rec.lat && rec.lat_hist {
            self.stats.dir_mut(dir).lat.record(self.now - issue);
        } else if rec.lat {
            self.stats.dir_mut(dir).lat.record_moments(self.now - issue);
        }
    }

    /// The clock after a synchronous completion: read every time when latencies are measured,
    /// else every [`CLOCK_EVERY`] completions (the runtime and samples need no more).
    #[inline(always)]
    pub(in crate::job) fn stamp_done(&mut self) {
        if self.rec.timed {
            self.now = self.clock.now();
            return;
        }
        self.unclocked += 1;
        if self.unclocked >= CLOCK_EVERY {
            self.unclocked = 0;
            self.now = self.clock.now();
        }
    }
}
