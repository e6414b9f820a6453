//! fio's steady-state detection (`steadystate`, `steadystate_duration`,
//! `steadystate_ramp_time`, `steadystate_check_interval`): every interval the job's IOPS and
//! bandwidth over that interval are sampled into a rolling window of `duration / interval`
//! samples (after the ramp and one more interval, as fio); once the window is full, the
//! criterion (the largest deviation from the window's mean, or the least-squares slope, in
//! percent of the mean where the limit is) is compared with the limit each interval, and the
//! job ends when it falls below.
//!
//! A job is judged on its own figures, except in a group_reporting group, which fio judges
//! as a whole: there each job publishes its counts, the group's last job (fio's holder of
//! the group's data) samples their sum, and when it is steady every job of the group ends.

use std::sync::atomic::{AtomicBool, AtomicU64};

use iolab_job::control::Steady;
use iolab_stats::SteadyStats;
use iolab_workload::JobPlan;

mod hooks;

/// The steady-state detection a group_reporting group shares.
#[derive(Debug)]
pub(crate) struct SteadyGroup {
    group: u32,
    /// Each member's I/Os and bytes so far, as it last published them.
    counts: Vec<[AtomicU64; 2]>,
    attained: AtomicBool,
}

/// The shared detections of the jobs started together (a phase).
#[derive(Debug, Default)]
pub(crate) struct SteadyGroups(Vec<SteadyGroup>);

/// A job's place in its group's detection.
pub(crate) struct Link<'a> {
    group: &'a SteadyGroup,
    me: usize,
    pub(super) sampler: bool,
}

fn grouped(p: &JobPlan) -> bool {
    p.spec.group_reporting && !p.spec.steadystate_duration.is_zero()
}

impl SteadyGroups {
    pub(crate) fn of(phase: &[JobPlan]) -> SteadyGroups {
        let mut gs = SteadyGroups::default();
        for p in phase.iter().filter(|p| grouped(p)) {
            match gs.0.iter_mut().find(|g| g.group == p.group) {
                Some(g) => g.counts.push(Default::default()),
                None => gs.0.push(SteadyGroup {
                    group: p.group,
                    counts: vec![Default::default()],
                    attained: AtomicBool::new(false),
                }),
            }
        }
        gs
    }

    /// The place of the job at `index` of `phase` in its group's detection, if it shares one.
    pub(crate) fn link<'a>(&'a self, phase: &[JobPlan], index: usize) -> Option<Link<'a>> {
        let p = phase.get(index).filter(|p| grouped(p))?;
        let group = self.0.iter().find(|g| g.group == p.group)?;
        let me = phase[..index]
            .iter()
            .filter(|q| grouped(q) && q.group == p.group)
            .count();
        Some(Link {
            group,
            me,
            sampler: me + 1 == group.counts.len(),
        })
    }
}

pub(super) struct SteadyCtl {
    crit: Steady,
    /// When the next sample is due (u64::MAX: detection off).
    next: u64,
    interval_ns: u64,
    /// Samples start once this is passed.
    ramp_end: u64,
    prev_at: u64,
    prev: (u64, u64),
    /// Rings of the window: (IOPS, bytes/s), oldest at `head` once full.
    iops: Vec<u64>,
    bw: Vec<u64>,
    filled: usize,
    head: usize,
    out: SteadyStats,
}

impl SteadyCtl {
    pub(super) fn of(plan: &JobPlan, now: u64) -> SteadyCtl {
        let s = &plan.spec;
        let interval = s.steadystate_check_interval.as_nanos().max(1) as u64;
        let on = !s.steadystate_duration.is_zero();
        let n = if on {
            (s.steadystate_duration.as_nanos() as u64 / interval).max(1) as usize
        } else {
            0
        };
        let ramp = s.steadystate_ramp_time.as_nanos() as u64;
        SteadyCtl {
            crit: s.steadystate,
            next: if on { now + interval } else { u64::MAX },
            interval_ns: interval,
            // fio starts collecting one interval after the ramp.
            ramp_end: if ramp > 0 { now + ramp + interval } else { now },
            prev_at: now,
            prev: (0, 0),
            iops: vec![0; n],
            bw: vec![0; n],
            filled: 0,
            head: 0,
            out: SteadyStats::default(),
        }
    }

    /// The window's samples, oldest first.
    fn ordered(v: &[u64], head: usize) -> Vec<u64> {
        v[head..].iter().chain(&v[..head]).copied().collect()
    }

    /// What the report shows; None where detection was off.
    pub(super) fn result(&self) -> Option<SteadyStats> {
        if self.iops.is_empty() {
            return None;
        }
        Some(SteadyStats {
            iops: Self::ordered(&self.iops, self.head),
            bw: Self::ordered(&self.bw, self.head),
            ..self.out.clone()
        })
    }

    /// Adds a sample; true when the window is full and within the limit.
    fn sample(&mut self, iops: u64, bw: u64) -> bool {
        let n = self.iops.len();
        let slot = (self.head + self.filled) % n;
        self.iops[slot] = iops;
        self.bw[slot] = bw;
        if self.filled < n {
            self.filled += 1;
        } else {
            self.head = (self.head + 1) % n;
        }
        if self.filled < n {
            return false;
        }
        let ys = Self::ordered(
            if self.crit.kind.iops() {
                &self.iops
            } else {
                &self.bw
            },
            self.head,
        );
        let nf = n as f64;
        let mean = ys.iter().map(|&y| y as f64).sum::<f64>() / nf;
        let value = if self.crit.kind.slope() {
            let sum_x = nf * (nf - 1.0) / 2.0;
            let sum_x2 = (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0;
            let sum_y = mean * nf;
            let sum_xy: f64 = ys
                .iter()
                .enumerate()
                .map(|(i, &y)| i as f64 * y as f64)
                .sum();
            self.out.slope = (sum_xy - sum_x * sum_y / nf) / (sum_x2 - sum_x * sum_x / nf);
            self.out.slope
        } else {
            self.out.max_deviation = ys
                .iter()
                .map(|&y| (y as f64 - mean).abs())
                .fold(0.0, f64::max);
            self.out.max_deviation
        };
        self.out.criterion = if self.crit.pct {
            100.0 * value / mean
        } else {
            value
        };
        let reached = self.out.criterion.abs() < self.crit.limit;
        self.out.attained |= reached;
        reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_job::control::parse_steadystate;

    fn ctl(crit: &str, n: usize) -> SteadyCtl {
        SteadyCtl {
            crit: parse_steadystate(crit, 1024).unwrap(),
            next: 0,
            interval_ns: 1,
            ramp_end: 0,
            prev_at: 0,
            prev: (0, 0),
            iops: vec![0; n],
            bw: vec![0; n],
            filled: 0,
            head: 0,
            out: SteadyStats::default(),
        }
    }

    #[test]
    fn deviation_is_judged_once_the_window_is_full() {
        let mut c = ctl("iops:10%", 3);
        assert!(!c.sample(100, 0));
        assert!(!c.sample(200, 0));
        // 100, 200, 100: mean 133, deviation 67 (50%).
        assert!(!c.sample(100, 0));
        // 200, 100, 105: mean 135, deviation 65; then 100, 105, 100: 3.3%.
        assert!(!c.sample(105, 0));
        assert!(c.sample(100, 0));
        let r = c.result().unwrap();
        assert_eq!(r.iops, vec![100, 105, 100]);
        assert!(r.attained);
    }

    #[test]
    fn slope_of_a_rising_series_is_its_step() {
        let mut c = ctl("bw_slope:5", 4);
        for v in [10, 20, 30] {
            assert!(!c.sample(0, v));
        }
        assert!(!c.sample(0, 40));
        assert!((c.out.slope - 10.0).abs() < 1e-9);
        for v in [40, 41, 42, 43] {
            c.sample(0, v);
        }
        assert!(c.out.attained);
    }
}
