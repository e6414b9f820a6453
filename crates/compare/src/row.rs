//! The one way a table row is made: from a fio-shaped job report plus the facts fio's output
//! does not carry (system calls, the whole process's CPU, series, the device). `iolab
//! compare` calls it on the report of each run; `iolab report` on each job of a fio JSON file
//! and on each run of compare's own JSON, so the same file gives the same row either way.

use iolab_report::compare::{CompareRow, CLAT_PCT};
use iolab_report::{DirReport, JobReport, Report};

/// What a run knows beside its report. `None`: not known (fio's output has none of these).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFacts {
    pub label: String,
    pub engine: String,
    pub depth: u32,
    pub jobs: u32,
    /// System calls counted by the engine layer: all, and those that submit.
    pub syscalls: Option<u64>,
    pub submit_calls: Option<u64>,
    /// CPU time of the whole process over the run, µs: user, system.
    pub process_cpu_us: Option<(f64, f64)>,
    pub iops_series: Vec<(u64, f64)>,
    pub lat_series: Vec<(u64, f64)>,
    pub disk_util: Option<f64>,
    pub disk_ios: Option<u64>,
    pub error: Option<String>,
}

fn dirs(j: &JobReport) -> impl Iterator<Item = &DirReport> {
    [&j.read, &j.write, &j.trim]
        .into_iter()
        .filter(|d| d.total_ios > 0 || d.clat_ns.n > 0)
}

/// Percentiles of several directions together, from their json+ bins: fio's rule (the first
/// bin whose running count reaches p% of all). `None` where a direction has no bins.
fn merged_percentiles(ds: &[&DirReport]) -> Option<[Option<u64>; 6]> {
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for d in ds {
        bins.extend(d.clat_ns.bins.as_deref()?);
    }
    bins.sort_unstable();
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let mut out = [None; 6];
    for (slot, p) in CLAT_PCT.iter().enumerate() {
        let want = (p / 100.0 * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        out[slot] = bins.iter().find_map(|&(v, n)| {
            seen += n;
            (seen >= want).then_some(v)
        });
    }
    Some(out)
}

/// The percentiles a report lists for [`CLAT_PCT`]; a percentile it lacks stays `None`.
fn listed_percentiles(d: &DirReport) -> [Option<u64>; 6] {
    let mut out = [None; 6];
    if let Some(list) = &d.clat_ns.percentiles {
        for (slot, p) in CLAT_PCT.iter().enumerate() {
            out[slot] = list.iter().find(|(q, _)| (q - p).abs() < 1e-9).map(|x| x.1);
        }
    }
    out
}

/// A mean over directions weighted by their sample counts; `None` without samples.
fn mean_of(ds: &[&DirReport], f: impl Fn(&DirReport) -> (f64, u64)) -> Option<(f64, u64)> {
    let (sum, n) = ds
        .iter()
        .map(|d| f(d))
        .fold((0.0, 0u64), |(s, n), (m, k)| (s + m * k as f64, n + k));
    (n > 0).then(|| (sum / n as f64, n))
}

/// The completion latency's (mean, samples) and percentiles. Several directions merge through
/// their json+ bins; without bins the direction with the most I/O speaks for the row (its mean
/// and percentiles alike).
fn completion_latency(ds: &[&DirReport]) -> (Option<(f64, u64)>, [Option<u64>; 6]) {
    let merged = match ds {
        [one] => Some(listed_percentiles(one)),
        several => merged_percentiles(several),
    };
    let main = ds.iter().copied().max_by_key(|d| d.total_ios);
    let (clat_dirs, clat_pct) = match (merged, main) {
        (Some(p), _) => (ds.to_vec(), p),
        (None, Some(m)) => (vec![m], listed_percentiles(m)),
        (None, None) => (Vec::new(), [None; 6]),
    };
    (
        mean_of(&clat_dirs, |d| (d.clat_ns.mean, d.clat_ns.n)),
        clat_pct,
    )
}

/// User and system CPU in percent of the run, and CPU time in ns: the process's own figures
/// (`process_cpu_us`: user, system µs) where the run measured them, else the job's.
fn cpu(job: &JobReport, process_cpu_us: Option<(f64, f64)>, runtime_ms: u64) -> (f64, f64, f64) {
    match process_cpu_us {
        Some((user, sys)) if runtime_ms > 0 => {
            let run_us = runtime_ms as f64 * 1000.0;
            (
                user / run_us * 100.0,
                sys / run_us * 100.0,
                (user + sys) * 1000.0,
            )
        }
        _ => (
            job.usr_cpu,
            job.sys_cpu,
            (job.usr_cpu + job.sys_cpu) / 100.0 * job.job_runtime as f64 * 1e6,
        ),
    }
}

/// The row for one job's report and what the run knew besides.
pub fn derive(job: &JobReport, facts: RunFacts) -> CompareRow {
    let ds: Vec<&DirReport> = dirs(job).collect();
    let ios: u64 = ds.iter().map(|d| d.total_ios).sum();
    let iops: f64 = ds.iter().map(|d| d.iops).sum();
    let runtime_ms = ds
        .iter()
        .map(|d| d.runtime)
        .max()
        .filter(|&r| r > 0)
        .unwrap_or(job.job_runtime);
    let per = |x: f64| (ios > 0).then(|| x / ios as f64);
    let (clat, clat_pct) = completion_latency(&ds);
    let slat = mean_of(&ds, |d| (d.slat_ns.mean, d.slat_ns.n));
    let lat = mean_of(&ds, |d| (d.lat_ns.mean, d.lat_ns.n));
    let jobs = facts.jobs.max(1);
    let thread_ns = runtime_ms as f64 * 1e6 * f64::from(jobs);
    // Each I/O's slat runs from its issue to the end of the submit call that took it, so a
    // call that took k I/Os counts k times: scaled by calls per I/O, the sum is the time
    // spent inside submission (exact when each call takes one, fio's default).
    let submit_share = slat.filter(|_| thread_ns > 0.0).map(|(mean, n)| {
        let calls = facts
            .submit_calls
            .map_or(1.0, |c| (c as f64 / n as f64).min(1.0));
        mean * n as f64 * calls / thread_ns
    });
    let (usr_cpu, sys_cpu, cpu_ns) = cpu(job, facts.process_cpu_us, runtime_ms);
    let depth_ns = lat
        .map(|l| l.0)
        .or_else(|| clat.map(|c| c.0 + slat.map_or(0.0, |s| s.0)));
    CompareRow {
        label: facts.label,
        engine: facts.engine,
        depth: facts.depth,
        jobs,
        iops,
        bw_bytes: ds.iter().map(|d| d.bw_bytes as f64).sum(),
        clat_mean: clat.map(|c| c.0),
        clat_pct,
        clat_samples: clat.map_or(0, |c| c.1),
        slat_mean: slat.map(|s| s.0),
        submit_share,
        usr_cpu: Some(usr_cpu),
        sys_cpu: Some(sys_cpu),
        cpu_ns_per_io: per(cpu_ns),
        syscalls_per_io: facts.syscalls.and_then(|c| per(c as f64)),
        ctx_per_io: per(job.ctx as f64),
        achieved_depth: depth_ns.map(|ns| iops * ns / 1e9),
        disk_util: facts.disk_util,
        disk_ios: facts.disk_ios,
        report: Report {
            jobs: vec![job.clone()],
            ..Report::default()
        },
        iops_series: facts.iops_series,
        lat_series: facts.lat_series,
        error: facts.error,
        hosts: Vec::new(),
        trials: Vec::new(),
        started_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::LatReport;

    fn dir(ios: u64, clat_ns: f64, slat_ns: Option<f64>, pct: Vec<(f64, u64)>) -> DirReport {
        DirReport {
            total_ios: ios,
            iops: ios as f64,
            runtime: 1000,
            clat_ns: LatReport {
                mean: clat_ns,
                n: ios,
                percentiles: Some(pct),
                bins: Some(vec![(clat_ns as u64, ios)]),
                ..LatReport::default()
            },
            slat_ns: LatReport {
                mean: slat_ns.unwrap_or(0.0),
                n: if slat_ns.is_some() { ios } else { 0 },
                ..LatReport::default()
            },
            ..DirReport::default()
        }
    }

    #[test]
    fn a_percentile_the_report_lacks_is_none_not_zero() {
        // fio's default percentile list stops at 99.99.
        let job = JobReport {
            read: dir(
                4000,
                900.0,
                None,
                vec![(50.0, 800), (99.0, 2000), (99.99, 9000)],
            ),
            ..JobReport::default()
        };
        let r = derive(&job, RunFacts::default());
        assert_eq!(r.clat_pct[0], Some(800));
        assert_eq!(r.clat_pct[1], None);
        assert_eq!(r.clat_pct[5], None);
        assert_eq!(r.clat_samples, 4000);
        assert_eq!(
            r.syscalls_per_io, None,
            "fio's output has no system call counts"
        );
        assert_eq!(r.slat_mean, None, "a synchronous engine has no slat");
    }

    #[test]
    fn submit_share_is_slat_time_over_thread_time() {
        // 1000 I/Os in 1 s, 600 us each inside submission, one call each: 60% of the thread.
        let job = JobReport {
            read: dir(1000, 400_000.0, Some(600_000.0), vec![]),
            ..JobReport::default()
        };
        let facts = RunFacts {
            jobs: 1,
            syscalls: Some(2000),
            submit_calls: Some(1000),
            ..RunFacts::default()
        };
        let r = derive(&job, facts.clone());
        assert!((r.submit_share.unwrap_or(0.0) - 0.6).abs() < 1e-9, "{r:?}");
        assert_eq!(r.syscalls_per_io, Some(2.0));
        // Batches of four: each call counted four times in the slat sum.
        let r = derive(
            &job,
            RunFacts {
                submit_calls: Some(250),
                ..facts
            },
        );
        assert!((r.submit_share.unwrap_or(0.0) - 0.15).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn mixed_directions_merge_their_bins() {
        let job = JobReport {
            read: dir(900, 100.0, None, vec![]),
            write: dir(100, 1000.0, None, vec![]),
            ..JobReport::default()
        };
        let r = derive(&job, RunFacts::default());
        assert_eq!(r.clat_pct[0], Some(100));
        assert_eq!(r.clat_pct[1], Some(100));
        assert_eq!(r.clat_pct[2], Some(1000));
        assert_eq!(r.clat_mean, Some(190.0));
        assert_eq!(r.iops, 1000.0);
    }
}
