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
        .map(|r| {
            let mut report = run_report(specs, &measured(plans, r), &r.disks, start);
            report.jobs.iter_mut().for_each(|j| j.pid = r.pid);
            Client {
                hostname: r.hostname.clone(),
                rank: r.rank,
                job_start_ms: r.start_ns / 1_000_000,
                report,
            }
        })
        .collect();
    let sums = all_clients(specs, plans, ranks);
    let all_measured: Vec<Measured<'_>> = sums
        .iter()
        .map(|(plan, stats, first)| Measured {
            plan,
            stats,
            errno: first.as_ref().map_or(0, |f| f.0),
            verror: first.as_ref().and_then(|f| f.1.clone()),
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

/// The first error of a sum's jobs: errno and fio's detail.
type FirstError = Option<(i32, Option<String>)>;

/// The sums, in the order their jobs first appear, each with the first plan of its jobs (for
/// names and reporting options) and the first error.
fn all_clients<'a>(
    specs: &[JobSpec],
    plans: &'a [JobPlan],
    ranks: &[RankResult],
) -> Vec<(&'a JobPlan, JobStats, FirstError)> {
    let mut keys: Vec<(u32, Option<usize>)> = Vec::new();
    let mut sums: Vec<(&JobPlan, JobStats, FirstError)> = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let k = key(specs, plan);
        let at = match keys.iter().position(|x| *x == k) {
            Some(at) => at,
            None => {
                keys.push(k);
                sums.push((plan, JobStats::default(), None));
                sums.len() - 1
            }
        };
        let (_, sum, first) = &mut sums[at];
        for j in ranks.iter().filter_map(|r| r.jobs.get(i)) {
            *sum += &j.stats;
            if first.is_none() && j.errno != 0 {
                *first = Some((j.errno, j.verror.clone()));
            }
        }
    }
    for (at, k) in keys.iter().enumerate() {
        let members = || {
            (plans.iter().enumerate())
                .filter(|(_, p)| key(specs, p) == *k)
                .flat_map(|(i, _)| ranks.iter().filter_map(move |r| r.jobs.get(i)))
        };
        let stats = &mut sums[at].1;
        if let Some(bw) = rates_together(members().map(|j| j.bw_rates.as_slice())) {
            for (d, m) in bw.into_iter().enumerate() {
                stats.dirs[d].bw = m;
            }
        }
        if let Some(iops) = rates_together(members().map(|j| j.iops_rates.as_slice())) {
            for (d, m) in iops.into_iter().enumerate() {
                stats.dirs[d].iops = m;
            }
        }
    }
    sums
}

/// The bw or IOPS samples of jobs that ran together, added window by window (the n-th sample
/// of each: the ranks start together and sample at the same interval), then the moments of
/// those sums per direction: "All clients" reports the rate all ranks reached together, not
/// the spread of single jobs' rates. Past the shortest job's samples there is no sum (a job
/// that ended would show as a drop). `None` when the jobs kept no samples.
fn rates_together<'a>(
    jobs: impl Iterator<Item = &'a [iolab_stats::Sample]> + Clone,
) -> Option<[iolab_stats::Moments; 3]> {
    let len = jobs.clone().map(<[_]>::len).min()?;
    if len == 0 {
        return None;
    }
    let mut out = [iolab_stats::Moments::default(); 3];
    for i in 0..len {
        for (d, m) in out.iter_mut().enumerate() {
            let mut any = false;
            let mut sum = 0u64;
            for s in jobs.clone().filter_map(|j| j[i].rate[d]) {
                any = true;
                sum = sum.saturating_add(s);
            }
            if any {
                m.add(sum);
            }
        }
    }
    Some(out)
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
            let j = r.jobs.iter().find(|j| j.errno != 0)?;
            let why = (j.verror.clone()).unwrap_or_else(|| format!("error {}", j.errno));
            Some(format!("host {} rank {}: {why}", r.hostname, r.rank))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tests::job;
    use crate::wire::JobResult;
    use serde_json::Value;

    fn planned(text: &str) -> (Vec<JobSpec>, Vec<JobPlan>) {
        let specs = iolab_job::parse_str(text, "t.fio")
            .and_then(|f| f.resolve())
            .map(|r| r.jobs)
            .expect("job file");
        let env = iolab_workload::PlanEnv {
            size_of: &|_| None,
            is_block_device: &|_| false,
            entropy: 1,
        };
        let plans = iolab_workload::plan_jobs(&specs, &env).expect("plans");
        (specs, plans)
    }

    fn ranks(n: u32, jobs: usize) -> Vec<RankResult> {
        (0..n)
            .map(|r| {
                let mut rr = crate::wire::tests::rank(r, &format!("host{}", r / 2));
                rr.jobs = (0..jobs)
                    .map(|j| JobResult {
                        stats: job(u64::from(r) * 31 + j as u64 + 1, 1500 + 100 * j as u64),
                        ..JobResult::default()
                    })
                    .collect();
                rr
            })
            .collect()
    }

    fn json_plus(r: &ClientsReport) -> Value {
        let mut out = Vec::new();
        iolab_report::clients::write_clients_json(r, true, &mut out).expect("written");
        serde_json::from_slice(&out).expect("valid JSON")
    }

    /// fio's percentile walk over json+ bins (value -> count), done here from the JSON alone.
    fn percentile_from_bins(bins: &serde_json::Map<String, Value>, p: f64) -> u64 {
        let mut v: Vec<(u64, u64)> = bins
            .iter()
            .map(|(k, c)| (k.parse().expect("bin"), c.as_u64().expect("count")))
            .collect();
        v.sort();
        let total: u64 = v.iter().map(|x| x.1).sum();
        let want = iolab_stats::hist::threshold(p, total);
        let mut seen = 0;
        for (val, c) in v {
            seen += c;
            if seen >= want {
                return val;
            }
        }
        0
    }

    #[test]
    fn all_clients_totals_are_sums_and_percentiles_come_from_the_summed_bins() {
        let (specs, plans) = planned("[a]\nrw=randrw\nsize=1m\n[b]\nrw=randrw\nsize=1m\n");
        let ranks = ranks(4, plans.len());
        let d = json_plus(&clients_report(&specs, &plans, &ranks));
        let entries = d["client_stats"].as_array().expect("client_stats");
        // 4 ranks x 2 jobs, then one "All clients" per job section.
        assert_eq!(entries.len(), 10);
        let all: Vec<&Value> = entries[8..].iter().collect();
        assert!(all.iter().all(|e| e["jobname"] == "All clients"));
        for (i, name) in ["a", "b"].iter().enumerate() {
            let mine: Vec<&Value> = entries[..8]
                .iter()
                .filter(|e| e["jobname"] == *name)
                .collect();
            assert_eq!(mine.len(), 4);
            for dir in ["read", "write"] {
                for key in ["io_bytes", "total_ios"] {
                    let sum: u64 = mine.iter().map(|e| e[dir][key].as_u64().unwrap_or(0)).sum();
                    assert_eq!(all[i][dir][key].as_u64(), Some(sum), "{name} {dir} {key}");
                }
                // The bins add up, bucket by bucket...
                let mut summed = serde_json::Map::new();
                for e in &mine {
                    for (k, c) in e[dir]["clat_ns"]["bins"].as_object().expect("bins") {
                        let prev = summed.get(k).and_then(Value::as_u64).unwrap_or(0);
                        summed.insert(k.clone(), (prev + c.as_u64().unwrap_or(0)).into());
                    }
                }
                let got = all[i][dir]["clat_ns"]["bins"].as_object().expect("bins");
                assert_eq!(got, &summed, "{name} {dir}");
                // ...and every percentile is the one those bins give.
                let pct = all[i][dir]["clat_ns"]["percentile"]
                    .as_object()
                    .expect("pct");
                assert!(pct.len() >= 17);
                for (p, v) in pct {
                    let p: f64 = p.parse().expect("percentile key");
                    assert_eq!(v.as_u64(), Some(percentile_from_bins(&summed, p)), "p{p}");
                }
            }
        }
    }

    #[test]
    fn all_clients_bandwidth_is_the_ranks_samples_summed_window_by_window() {
        let (specs, plans) = planned("[a]\nrw=read\nsize=1m\n");
        let mut ranks = ranks(2, 1);
        let sample = |ms, kib| iolab_stats::Sample {
            elapsed_ms: ms,
            spent_ms: 500,
            rate: [Some(kib), None, None],
        };
        ranks[0].jobs[0].bw_rates = vec![sample(500, 100), sample(1000, 200)];
        // Rank 1 took one sample more as it ended: no sum past the shortest.
        ranks[1].jobs[0].bw_rates = vec![sample(500, 300), sample(1000, 400), sample(1500, 9)];
        let r = clients_report(&specs, &plans, &ranks);
        let all = &r.all.jobs[0].read;
        assert_eq!((all.bw_min, all.bw_max, all.bw_samples), (400, 600, 2));
        assert!((all.bw_mean - 500.0).abs() < 1e-9);
        // Each rank's own entry keeps its own samples.
        assert_eq!(r.clients[0].report.jobs[0].read.bw_samples, 1);
    }

    #[test]
    fn group_reporting_gives_one_all_clients_entry_per_group() {
        let text = "[global]\ngroup_reporting\nsize=1m\n[a]\nrw=read\nnumjobs=2\n\
                    [b]\nrw=read\n[c]\nrw=write\nnew_group\n";
        let (specs, plans) = planned(text);
        let ranks = ranks(3, plans.len());
        let r = clients_report(&specs, &plans, &ranks);
        let groups: Vec<u32> = r.all.jobs.iter().map(|j| j.groupid).collect();
        assert_eq!(groups, [0, 1]);
        // Group 0: 3 jobs on each of 3 ranks.
        assert_eq!(r.all.jobs[0].members, 9);
        assert_eq!(r.clients.len(), 3);
        assert_eq!(r.clients[2].report.jobs.len(), 2);
    }

    #[test]
    fn global_options_are_the_global_sections_as_written() {
        let text = "[global]\nioengine=psync\ntime_based\n[a]\nrw=read\n[global]\nbs=8k\n[b]\n";
        let file = iolab_job::parse_str(text, "t.fio").expect("parsed");
        let g = file.global_options();
        // fio 3.33 leaves out an option written without a value (time_based).
        let want = [("ioengine", "psync"), ("bs", "8k")];
        let got: Vec<(&str, &str)> = g.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn failed_ranks_are_named_by_host_and_rank() {
        let mut ranks = ranks(3, 1);
        ranks[1].jobs[0].errno = 13;
        ranks[1].jobs[0].verror = Some("file:job.rs:1, func=open, error=Permission denied".into());
        ranks[2].jobs[0].errno = 5;
        let f = failures(&ranks).expect("failures");
        assert_eq!(
            f,
            "host host0 rank 1: file:job.rs:1, func=open, error=Permission denied\n\
             host host1 rank 2: error 5"
        );
    }

    #[test]
    fn each_hosts_disks_once_and_named_by_host() {
        let ranks = ranks(4, 1);
        let d = host_disks(&ranks);
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["host0:vda", "host1:vda"]);
    }
}
