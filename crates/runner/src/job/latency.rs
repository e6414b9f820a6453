//! fio's latency options: `max_latency` (an I/O slower than it ends the job with ETIMEDOUT)
//! and `latency_target` with `latency_window`, `latency_percentile`, `latency_run`: the search
//! for the highest queue depth whose I/O meets the target. It starts at depth 1 and doubles
//! while each window meets the target; after the first miss it bisects between the last depth
//! that met it and the first that did not. When a step leaves the depth where it was, the
//! measurements are reset and one more window runs at that depth (fio's final run); then the
//! job ends, or with latency_run goes on adjusting.
//!
//! One difference in mechanics: fio steps down at the completion that missed, and other misses
//! of the same batch step it down again; here the misses of one batch of completions count
//! as one step down, taken after the batch.

use iolab_job::debug;
use iolab_sys as sys;
use iolab_workload::JobPlan;

mod hooks;

/// The search's state (fio's latency_qd, latency_qd_low, latency_qd_high, ...).
pub(super) struct LatencyCtl {
    /// Either option is set: completions are looked at.
    pub(super) on: bool,
    max_ns: [u64; 3],
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_running: bool,
    iodepth: u32,
    /// The depth the job may use now.
    pub(super) qd: u32,
    low: u32,
    high: u32,
    end_run: bool,
    window_start: u64,
    ios_at_start: u64,
    ios: u64,
    missed: u64,
    /// With percentile 100, one miss steps down: it is taken after the batch.
    step_down: bool,
    /// `--debug=rate`: fio's lines for each step.
    debug: bool,
}

impl LatencyCtl {
    pub(super) fn of(plan: &JobPlan, now: u64) -> LatencyCtl {
        let s = &plan.spec;
        let iodepth = plan.engine.depth.max(1);
        let target_ns = s.latency_target.map_or(0, |d| d.as_nanos() as u64);
        let max_ns = [s.max_latency.read, s.max_latency.write, s.max_latency.trim];
        LatencyCtl {
            on: target_ns > 0 || max_ns.iter().any(|&m| m > 0),
            max_ns,
            target_ns,
            window_ns: s.latency_window.as_nanos() as u64,
            percentile: s.latency_percentile,
            keep_running: s.latency_run,
            iodepth,
            qd: if target_ns > 0 { 1 } else { iodepth },
            low: 1,
            high: iodepth,
            end_run: false,
            window_start: now,
            ios_at_start: 0,
            ios: 0,
            missed: 0,
            step_down: false,
            debug: debug::on(debug::RATE),
        }
    }

    fn say(&self, what: std::fmt::Arguments<'_>) {
        if self.debug {
            debug::line(debug::RATE, sys::gettid(), what);
        }
    }

    /// The depth the search settled on, for the report (0: no search).
    pub(super) fn chosen(&self) -> u32 {
        if self.target_ns > 0 {
            self.qd
        } else {
            0
        }
    }

    fn new_cycle(&mut self, now: u64) {
        self.window_start = now;
        self.ios_at_start = self.ios;
        self.missed = 0;
        self.step_down = false;
    }

    /// A window met the target: go up (double, or bisect towards the known miss). True when
    /// the job is done.
    fn success(&mut self, now: u64) -> (bool, bool) {
        let qd = self.qd;
        self.low = self.qd;
        self.qd = if self.high != self.iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(self.iodepth);
        self.say(format_args!(
            "Ramped up: {} {} {}",
            self.low, self.qd, self.high
        ));
        let mut done = false;
        let mut reset = false;
        if self.qd == qd {
            if self.end_run {
                self.say(format_args!("We are done"));
                done = !self.keep_running;
            } else {
                self.say(format_args!("Quiesce and final run"));
                self.end_run = true;
                reset = true;
            }
        }
        self.new_cycle(now);
        (done, reset)
    }

    /// A window (or, at percentile 100, one I/O) missed: bisect down. False at depth 1,
    /// where there is nowhere to go.
    fn failed(&mut self, now: u64) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.say(format_args!(
            "Ramped down: {} {} {}",
            self.low, self.qd, self.high
        ));
        self.new_cycle(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl(iodepth: u32) -> LatencyCtl {
        LatencyCtl {
            on: true,
            max_ns: [0; 3],
            target_ns: 1,
            window_ns: 1,
            percentile: 100.0,
            keep_running: false,
            iodepth,
            qd: 1,
            low: 1,
            high: iodepth,
            end_run: false,
            window_start: 0,
            ios_at_start: 0,
            ios: 0,
            missed: 0,
            step_down: false,
            debug: false,
        }
    }

    /// Runs the search against a device that meets the target up to depth `fits`.
    fn search(iodepth: u32, fits: u32) -> u32 {
        let mut c = ctl(iodepth);
        for _ in 0..100 {
            if c.qd <= fits {
                if c.success(0).0 {
                    return c.qd;
                }
            } else if !c.failed(0) {
                return 0;
            }
        }
        panic!("no end");
    }

    #[test]
    fn search_finds_the_highest_depth_that_meets_the_target() {
        assert_eq!(search(16, 4), 4);
        assert_eq!(search(16, 5), 5);
        assert_eq!(search(16, 16), 16);
        assert_eq!(search(16, 1), 1);
        assert_eq!(search(32, 11), 11);
    }
}
