//! Rank 0's part: every rank's results into one report in fio's client/server shape. Each
//! rank's jobs are reported as a run on that host alone would report them; the "All clients"
//! entries add the ranks' statistics with `+=` (counts and histogram buckets summed, so the
//! percentiles are those of every I/O of every rank, not an average of percentiles).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_job::JobSpec;
use iolab_report::clients::{Client, ClientsReport};
use iolab_report::run::{run_report, Measured};
use iolab_stats::{DiskUtil, JobStats};
use iolab_workload::JobPlan;

use crate::wire::RankResult;

/// The run's report. `specs` and `plans` are rank 0's (every rank ran the same job file);
/// `ranks` are in rank order, each with one result per plan.
pub fn clients_report(specs: &[JobSpec], plans: &[JobPlan], ranks: &[RankResult]) -> ClientsReport {
    let start = ranks
        .iter()
        .map(|r| UNIX_EPOCH + Duration::from_nanos(r.start_ns))
        .min()
        .unwrap_or_else(SystemTime::now);
    let clients = ranks
        .iter()
        .map(|r| Client {
            hostname: r.hostname.clone(),
            rank: r.rank,
            job_start_ms: r.start_ns / 1_000_000,
            report: run_report(specs, &measured(plans, r), &r.disks, start),
        })
        .collect();
    let sums = all_clients(specs, plans, ranks);
    let all_measured: Vec<Measured<'_>> = sums
        .iter()
        .map(|(plan, stats, errno)| Measured {
            plan,
            stats,
            errno: *errno,
            verror: None,
        })
        .collect();
    let mut all = run_report(specs, &all_measured, &host_disks(ranks), start);
    for j in &mut all.jobs {
        j.jobname = "All clients".to_string();
        j.job_options.clear();
        j.pid = 0;
        j.header = None;
    }
    ClientsReport { all, clients }
}

fn measured<'a>(plans: &'a [JobPlan], r: &'a RankResult) -> Vec<Measured<'a>> {
    (plans.iter().zip(&r.jobs))
        .map(|(plan, j)| Measured {
            plan,
            stats: &j.stats,
            errno: j.errno,
            verror: j.verror.clone(),
        })
        .collect()
}

/// What an "All clients" entry sums: one job section (all its clones on every rank), or one
/// group where group_reporting folds its jobs.
fn key(specs: &[JobSpec], p: &JobPlan) -> (u32, Option<usize>) {
    let folds = specs.get(p.spec_index).is_some_and(|s| s.group_reporting);
    (p.group, (!folds).then_some(p.spec_index))
}

/// The sums, in the order their jobs first appear, each with the first plan of its jobs (for
/// names and reporting options) and the worst errno.
fn all_clients<'a>(
    specs: &[JobSpec],
    plans: &'a [JobPlan],
    ranks: &[RankResult],
) -> Vec<(&'a JobPlan, JobStats, i32)> {
    let mut keys: Vec<(u32, Option<usize>)> = Vec::new();
    let mut sums: Vec<(&JobPlan, JobStats, i32)> = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let k = key(specs, plan);
        let at = match keys.iter().position(|x| *x == k) {
            Some(at) => at,
            None => {
                keys.push(k);
                sums.push((plan, JobStats::default(), 0));
                sums.len() - 1
            }
        };
        let (_, sum, errno) = &mut sums[at];
        for j in ranks.iter().filter_map(|r| r.jobs.get(i)) {
            *sum += &j.stats;
            if *errno == 0 {
                *errno = j.errno;
            }
        }
    }
    sums
}

/// Every host's devices once (ranks on one host see the same disks), named `HOST:DEV` when
/// the run spans several hosts.
fn host_disks(ranks: &[RankResult]) -> Vec<DiskUtil> {
    let many = ranks.iter().any(|r| r.hostname != ranks[0].hostname);
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for r in ranks {
        for d in &r.disks {
            if seen.contains(&(r.hostname.as_str(), d.name.as_str())) {
                continue;
            }
            seen.push((&r.hostname, &d.name));
            let mut d = d.clone();
            if many {
                d.name = format!("{}:{}", r.hostname, d.name);
            }
            out.push(d);
        }
    }
    out
}

/// The ranks that failed, one line each naming host and rank; `None` when none did.
pub fn failures(ranks: &[RankResult]) -> Option<String> {
    let lines: Vec<String> = ranks
        .iter()
        .filter_map(|r| {
            let why = r.failure.clone().or_else(|| {
                (r.jobs.iter()).find(|j| j.errno != 0).map(|j| {
                    j.verror
                        .clone()
                        .unwrap_or_else(|| format!("error {}", j.errno))
                })
            })?;
            Some(format!("host {} rank {}: {why}", r.hostname, r.rank))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}
