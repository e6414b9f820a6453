//! What the job loop does with latency.rs, as methods of `Runner`: kept apart so that
//! latency.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::Req;
use iolab_stats::Dir;

use crate::job::Runner;

impl Runner<'_> {
    /// When the latency target's window closes, or now when a miss asks for a step down
    /// (`u64::MAX` without a target).
    pub(in crate::job) fn latency_due(&self) -> u64 {
        match (self.lat.target_ns, self.lat.step_down) {
            (0, _) => u64::MAX,
            (_, true) => 0,
            _ => self.lat.window_start.saturating_add(self.lat.window_ns),
        }
    }

    /// The depth the fill loop may reach.
    #[inline]
    pub(in crate::job) fn qd(&self) -> usize {
        (self.lat.qd as usize).min(self.depth())
    }

    /// A completed I/O's total latency against max_latency and latency_target.
    #[inline]
    pub(in crate::job) fn check_latency(&mut self, req: &Req, dir: Dir, issue: u64) {
        if !self.lat.on {
            return;
        }
        let lat = self.now.saturating_sub(issue);
        let max = self.lat.max_ns[dir as usize];
        if max > 0 && lat > max {
            self.over_max_latency(req, dir, lat, max);
        }
        let c = &mut self.lat;
        c.ios += 1;
        if c.target_ns > 0 && lat > c.target_ns {
            if c.percentile >= 100.0 {
                if c.qd == 1 {
                    let t = c.target_ns;
                    self.over_max_latency(req, dir, lat, t);
                } else {
                    c.step_down = true;
                    // Acted on at the next tick, not at the next periodic duty.
                    self.next_tick = 0;
                }
            } else {
                c.missed += 1;
            }
        }
    }

    /// fio's lat_target_check, after each round of completions: a miss steps down at once;
    /// a whole window judges the percentile.
    pub(in crate::job) fn latency_step(&mut self) {
        if self.lat.target_ns == 0 || self.ramping {
            return;
        }
        let now = self.now;
        if self.lat.step_down {
            self.quiesce();
            self.lat.failed(now);
            return;
        }
        if now.saturating_sub(self.lat.window_start) < self.lat.window_ns {
            return;
        }
        let c = &mut self.lat;
        let ios = c.ios - c.ios_at_start;
        let ok = if ios == 0 {
            100.0
        } else {
            (ios - c.missed) as f64 * 100.0 / ios as f64
        };
        c.say(format_args!(
            "Success rate: {ok:.2}% (target {:.2}%)",
            c.percentile
        ));
        if ok >= c.percentile {
            let (done, reset) = c.success(now);
            if reset {
                // The final run: only the chosen depth's figures are kept.
                self.quiesce();
                self.end_ramp();
            }
            self.done |= done;
        } else {
            self.quiesce();
            self.lat.failed(now);
        }
    }
}
