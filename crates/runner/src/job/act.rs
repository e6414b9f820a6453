//! fio's act profile (`--profile=act`): every job counts its I/Os' total latencies in
//! hour-long slices, each I/O in the highest of three buckets it exceeds (1, 8 and 64 ms).
//! When a slice's hour is up its shares are checked against act's limits (5%, 1%, 0.1%): one
//! over fails the job, as fio's hook fails the I/O. At the end of the run the slices of all
//! jobs are added up and printed as fio's table with act's verdict ([`table`]).

use iolab_stats::JobStats;
use iolab_workload::JobPlan;

mod hooks;

/// act's limits: latency in µs and the share of I/Os above it allowed, per mille.
const CRIT: [(u64, u64); 3] = [(1000, 50), (8000, 10), (64000, 1)];
/// A slice: one hour.
const SLICE_NS: u64 = 3600 * 1_000_000_000;

pub(super) struct Act {
    /// Per slice: the I/Os above each limit, then all I/Os.
    slices: Vec<[u64; 4]>,
    cur: usize,
    slice_start: u64,
}

impl Act {
    pub(super) fn of(plan: &JobPlan, now: u64) -> Option<Box<Act>> {
        let secs = plan.spec.act_duration?;
        let n = secs.div_ceil(3600).max(1) as usize;
        Some(Box::new(Act {
            slices: vec![[0; 4]; n],
            cur: 0,
            slice_start: now,
        }))
    }

    /// Counts one I/O of `lat_ns`; the message of a slice that failed act's limits.
    fn count(&mut self, lat_ns: u64, now: u64) -> Option<String> {
        let s = self.slices.get_mut(self.cur)?;
        s[3] += 1;
        let us = lat_ns / 1000;
        if let Some(i) = (0..CRIT.len()).rev().find(|i| us > CRIT[*i].0) {
            s[i] += 1;
        }
        if now.saturating_sub(self.slice_start) < SLICE_NS {
            return None;
        }
        let over = (0..CRIT.len()).find_map(|i| {
            let perm = 1000.0 * s[i] as f64 / s[3] as f64;
            (perm >= CRIT[i].1 as f64).then(|| {
                let limit = CRIT[i].1 as f64 / 10.0;
                format!(
                    "act: {:.6}% exceeds pass criteria of {limit:.6}%",
                    perm / 10.0
                )
            })
        });
        self.slice_start = now;
        self.cur += 1;
        over
    }
}

/// fio's act table over every job's slices and its verdict; None without act.
pub(crate) fn table<'a>(jobs: impl Iterator<Item = &'a JobStats>) -> Option<String> {
    let mut all: Vec<[u64; 4]> = Vec::new();
    for j in jobs {
        if all.len() < j.act_slices.len() {
            all.resize(j.act_slices.len(), [0; 4]);
        }
        for (a, s) in all.iter_mut().zip(&j.act_slices) {
            for k in 0..4 {
                a[k] += s[k];
            }
        }
    }
    if all.is_empty() {
        return None;
    }
    let mut t = String::from(
        "        trans                   device\n        %>(ms)                  %>(ms)\n slice",
    );
    for _ in 0..2 {
        for (us, _) in CRIT {
            t.push_str(&format!("\t {:2}", us / 1000));
        }
    }
    t.push_str("\n -----  -----   -----  ------   -----   -----  ------\n");
    let mut fails = 0;
    for (n, s) in all.iter().enumerate() {
        t.push_str(&format!("   {:2}", n + 1));
        let pct = |i: usize| {
            if s[3] > 0 {
                100.0 * s[i] as f64 / s[3] as f64
            } else {
                0.0
            }
        };
        for (i, (_, perm)) in CRIT.iter().enumerate() {
            if pct(i) * 10.0 >= *perm as f64 {
                fails += 1;
            }
            t.push_str(&format!("\t{:2.2}", pct(i)));
        }
        // fio prints the same figures again under "device".
        for i in 0..CRIT.len() {
            t.push_str(&format!("\t{:2.2}", pct(i)));
        }
        t.push('\n');
    }
    let verdict = if fails > 0 { "FAILED" } else { "PASSED" };
    t.push_str(&format!("\nact: test complete, device(s): {verdict}"));
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_adds_the_jobs_slices_and_judges_them_as_fio() {
        let mut a = JobStats::new();
        a.act_slices = vec![[79, 5, 0, 10_000]];
        let mut b = JobStats::new();
        b.act_slices = vec![[0, 0, 0, 0]];
        let t = table([&a, &b].into_iter()).unwrap_or_default();
        assert_eq!(
            t,
            "        trans                   device\n        %>(ms)                  %>(ms)\n \
             slice\t  1\t  8\t 64\t  1\t  8\t 64\n -----  -----   -----  ------   -----   -----  ------\n    \
             1\t0.79\t0.05\t0.00\t0.79\t0.05\t0.00\n\nact: test complete, device(s): PASSED"
        );
        a.act_slices = vec![[600, 0, 0, 10_000]];
        assert!(table([&a].into_iter())
            .unwrap_or_default()
            .ends_with("FAILED"));
        assert_eq!(table([&JobStats::new()].into_iter()), None);
    }

    #[test]
    fn an_io_counts_in_the_highest_bucket_it_exceeds() {
        let mut a = Act {
            slices: vec![[0; 4]; 2],
            cur: 0,
            slice_start: 0,
        };
        for lat_us in [500, 2000, 9000, 70_000] {
            assert_eq!(a.count(lat_us * 1000, 1), None);
        }
        assert_eq!(a.slices[0], [1, 1, 1, 4]);
        // The hour is up: 1 in 5 over 64 ms fails the slice.
        let msg = a.count(1000, SLICE_NS + 1).unwrap_or_default();
        assert!(
            msg.starts_with("act: 20.000000% exceeds pass criteria of 5.000000%"),
            "{msg}"
        );
        assert_eq!(a.cur, 1);
    }
}
