//! `mpirun -np N iolab compare` (feature `mpi`): every variant runs on every rank at once,
//! from a common start, and each row is every rank's I/O together, with each rank's share.
//!
//! Every rank gets every rank's results (an all-gather, not a gather), so all of them build
//! the same rows and make the same decisions about what runs next; rank 0 prints.

use iolab_compare::{HostRun, Ran};

use crate::wire::RankResult;

#[cfg(feature = "mpi")]
pub use ranks::MpiRuns;

#[cfg(feature = "mpi")]
mod ranks {
    use std::sync::atomic::{AtomicBool, Ordering};

    use iolab_compare::{Ran, Runs};
    use iolab_runner::StatusLine;
    use iolab_workload::JobPlan;

    use super::together;
    use crate::wire::RankResult;
    use crate::world::World;

    /// Compare's runs on the ranks of `world`.
    pub struct MpiRuns<'a> {
        pub world: &'a World,
    }

    impl Runs for MpiRuns<'_> {
        fn prepare(&mut self, plans: &[JobPlan]) -> Result<(), String> {
            self.world
                .agree(iolab_runner::prepare(plans).map_err(|e| e.to_string()))
        }

        fn stopped(&mut self, stop: &AtomicBool) -> bool {
            let mine = [u8::from(stop.load(Ordering::Relaxed))];
            let all = self.world.all_gather_bytes(&mine);
            all.iter().any(|b| b.first() == Some(&1))
        }

        fn run(&mut self, plans: &[JobPlan], stop: &AtomicBool) -> Result<Ran, String> {
            let w = self.world;
            let cpu0 = iolab_compare::process_cpu_us();
            let gate = || {
                w.start_together();
            };
            let out = iolab_runner::run_gated(plans, stop, StatusLine::default(), &gate);
            let cpu = iolab_compare::process_cpu_us()
                .zip(cpu0)
                .map_or((0, 0), |(b, a)| {
                    ((b.0 - a.0).max(0.0) as u64, (b.1 - a.1).max(0.0) as u64)
                });
            let place = w.placement();
            let mine = match out {
                Ok(o) => w.result(0, o, cpu),
                Err(e) => RankResult {
                    rank: place.rank,
                    hostname: place.hostname.clone(),
                    pid: std::process::id(),
                    cpu_us: cpu,
                    error: Some(e.to_string()),
                    ..RankResult::default()
                },
            };
            let ranks = (w.all_gather_bytes(&mine.encode()).iter())
                .map(|b| RankResult::decode(b))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            Ok(together(&ranks))
        }
    }
}

/// One row's figures from every rank's: counts and histograms added, series summed by
/// interval (the ranks started together), the first error named by host and rank.
pub fn together(ranks: &[RankResult]) -> Ran {
    let jobs = || ranks.iter().flat_map(|r| &r.jobs);
    let mut ran = Ran {
        iops_series: iolab_compare::sum_by_interval(jobs().map(|j| j.iops_series.as_slice())),
        lat_series: iolab_compare::mean_by_interval(jobs().map(|j| j.lat_series.as_slice())),
        disk: ranks.first().and_then(|r| r.disks.first().cloned()),
        ..Ran::default()
    };
    let (mut user, mut sys) = (0.0, 0.0);
    for r in ranks {
        let mut host = HostRun {
            hostname: r.hostname.clone(),
            rank: r.rank,
            cpu_us: Some((r.cpu_us.0 as f64, r.cpu_us.1 as f64)),
            error: r.error.clone(),
            ..HostRun::default()
        };
        for j in &r.jobs {
            host.stats += &j.stats;
            ran.syscalls += j.syscalls;
            ran.submits += j.submits;
            if host.error.is_none() {
                host.error = j.verror.clone();
            }
        }
        ran.stats += &host.stats;
        user += r.cpu_us.0 as f64;
        sys += r.cpu_us.1 as f64;
        if let (None, Some(e)) = (&ran.error, &host.error) {
            ran.error = Some(format!("host {} rank {}: {e}", r.hostname, r.rank));
        }
        ran.hosts.push(host);
    }
    ran.cpu_us = Some((user, sys));
    ran
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tests::rank;

    #[test]
    fn a_row_on_many_ranks_adds_their_io_and_keeps_each_share() {
        let ranks: Vec<RankResult> = (0..3).map(|r| rank(r, "h")).collect();
        let ran = together(&ranks);
        let ios = |s: &iolab_stats::JobStats| s.total_rw_ios();
        assert_eq!(
            ios(&ran.stats),
            ranks.iter().map(|r| ios(&r.jobs[0].stats)).sum::<u64>()
        );
        assert_eq!(ran.syscalls, 9000 * 3 + 3);
        assert_eq!(ran.cpu_us, Some((3.0 * 1234.0, 3.0 * 5678.0)));
        assert_eq!(
            ran.iops_series,
            vec![(500, 3.0 * 1000.5), (1000, 3.0 * 999.0)]
        );
        assert_eq!(ran.hosts.len(), 3);
        // Rank 2 of the fixture failed: the row says so, naming it.
        assert_eq!(ran.error.as_deref(), Some("host h rank 2: cannot open"));
    }
}
