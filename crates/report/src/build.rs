//! From measured statistics to the report model. The only place where the report crate looks
//! at statistics: percentiles, rates and distributions are computed here, once, and the
//! writers only format.

use iolab_stats::{hist::DEFAULT_PERCENTILES, DirStats, JobStats, LatStats};

use crate::model::{
    DirReport, DiskUtil, JobHeader, JobReport, LatReport, PrioReport, SyncReport, Units,
};

/// What a job report needs beside its statistics.
#[derive(Debug, Clone, Default)]
pub struct JobMeta {
    pub name: String,
    pub groupid: u32,
    /// errno of the error that stopped the job, 0 for none.
    pub error: i64,
    pub pid: u32,
    /// The job's start, as fio prints it (`Sun Nov 22 21:38:59 2026`).
    pub date: Option<String>,
    pub options: Vec<(String, String)>,
    pub header: Option<JobHeader>,
    /// fio's percentile_list (empty: fio's default list).
    pub percentiles: Vec<f64>,
    /// Decimals of the percentile labels in normal output: the most any entry of
    /// percentile_list was written with (`None`: fio's default list's, 2).
    pub percentile_precision: Option<usize>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub units: Units,
    pub desc: Option<String>,
    /// Seconds from the start of the run to the end of this job.
    pub elapsed_s: i64,
    /// fio's unified_rw_reporting.
    pub unified: crate::model::Unified,
}

fn lat(l: &LatStats, pct: Option<&[f64]>, plus: bool) -> LatReport {
    let s = l.moments.summary_or_zero();
    let has = s.samples > 0;
    LatReport {
        min: s.min,
        max: s.max,
        mean: s.mean,
        stddev: s.stddev,
        n: s.samples,
        percentiles: pct.filter(|_| has).map(|p| l.hist.percentiles(p)),
        bins: (plus && has).then(|| l.hist.nonzero_bins().collect()),
    }
}

fn dir(d: &DirStats, m: &JobMeta, list: &[f64]) -> DirReport {
    let bw = d.bw.summary_or_zero();
    let iops = d.iops.summary_or_zero();
    let pick = |on: bool| on.then_some(list);
    DirReport {
        io_bytes: d.io_bytes,
        io_kbytes: d.io_bytes >> 10,
        bw_bytes: d.bw_bytes(),
        bw: d.bw_kib(),
        iops: d.iops(),
        runtime: d.runtime_ms,
        total_ios: d.total_ios,
        short_ios: d.short_ios,
        drop_ios: d.drop_ios,
        slat_ns: lat(&d.slat, pick(m.slat_percentiles), m.slat_percentiles),
        clat_ns: lat(&d.clat, pick(m.clat_percentiles), true),
        lat_ns: lat(&d.lat, pick(m.lat_percentiles), m.lat_percentiles),
        prios: prios(d, m, list),
        bw_min: bw.min,
        bw_max: bw.max,
        bw_agg: 0.0,
        bw_mean: bw.mean,
        bw_dev: bw.stddev,
        bw_samples: bw.samples,
        iops_min: iops.min,
        iops_max: iops.max,
        iops_mean: iops.mean,
        iops_stddev: iops.stddev,
        iops_samples: iops.samples,
        cachehit: None,
        lat_due_ns: (d.due_lat.samples() > 0).then(|| lat(&d.due_lat, Some(list), true)),
    }
}

/// fio's per-priority latencies: printed only where two or more priorities have samples,
/// and then those that have, in the job's order (its own priority first).
fn prios(d: &DirStats, m: &JobMeta, list: &[f64]) -> Vec<PrioReport> {
    let with: Vec<_> = d.prios.iter().filter(|p| p.lat.samples() > 0).collect();
    if with.len() < 2 {
        return Vec::new();
    }
    let total = m.lat_percentiles;
    let pct = (m.clat_percentiles || total).then_some(list);
    with.into_iter()
        .map(|p| PrioReport {
            prioclass: u32::from(p.ioprio >> 13),
            prio: u32::from(p.ioprio & 0x7),
            total,
            lat: lat(&p.lat, pct, true),
        })
        .collect()
}

/// One job's (or one reporting group's, merged) report. `bins` are always carried; the JSON
/// writer prints them only for json+.
pub fn job_report(s: &JobStats, m: &JobMeta) -> JobReport {
    let list: &[f64] = if m.percentiles.is_empty() {
        &DEFAULT_PERCENTILES
    } else {
        &m.percentiles
    };
    let runtime = s.total_run_time_ms / u64::from(s.members.max(1));
    // unified_rw_reporting: read, write and trim as one direction (only when asked: the
    // merge copies three histograms).
    let mixed = (m.unified != crate::model::Unified::None).then(|| {
        let mut merged = s.dirs[0].clone();
        merged += &s.dirs[1];
        merged += &s.dirs[2];
        dir(&merged, m, list)
    });
    let only_mixed = m.unified == crate::model::Unified::Mixed;
    let per_dir = |i: usize| {
        if only_mixed {
            DirReport::default()
        } else {
            dir(&s.dirs[i], m, list)
        }
    };
    JobReport {
        steadystate: None,
        block_lifetime: None,
        jobname: m.name.clone(),
        groupid: m.groupid,
        error: m.error,
        eta: 0,
        elapsed: m.elapsed_s,
        job_options: m.options.clone(),
        read: match (&mixed, only_mixed) {
            (Some(mx), true) => mx.clone(),
            _ => per_dir(0),
        },
        write: per_dir(1),
        trim: per_dir(2),
        unified: m.unified,
        mixed: mixed.filter(|_| m.unified == crate::model::Unified::Both),
        sync: SyncReport {
            total_ios: s.sync.total_ios,
            lat_ns: lat(&s.sync.lat, Some(list), true),
        },
        job_runtime: s.total_run_time_ms,
        usr_cpu: s.cpu.usr_percent(runtime),
        sys_cpu: s.cpu.sys_percent(runtime),
        ctx: s.cpu.ctx,
        majf: s.cpu.majf,
        minf: s.cpu.minf,
        iodepth_level: s.iodepth_level_percents(),
        iodepth_submit: s.depth.submit_percents(),
        iodepth_complete: s.depth.complete_percents(),
        latency_ns: s.latency_ns_percents(),
        latency_us: s.latency_us_percents(),
        latency_ms: s.latency_ms_percents(),
        desc: m.desc.clone(),
        members: s.members,
        zone_resets: Some(s.zone_resets),
        pid: m.pid,
        date: m.date.clone(),
        header: m.header.clone(),
        units: m.units,
        percentile_precision: m.percentile_precision.unwrap_or(2),
        percentile_list: list.to_vec(),
        ..JobReport::default()
    }
}

/// Disk counters over a run as fio's disk_util entry.
pub fn disk_util(u: &iolab_stats::DiskUtil) -> DiskUtil {
    let d = &u.stats;
    DiskUtil {
        name: u.name.clone(),
        read_ios: d.read_ios,
        write_ios: d.write_ios,
        read_merges: d.read_merges,
        write_merges: d.write_merges,
        read_ticks: d.read_ticks,
        write_ticks: d.write_ticks,
        in_queue: d.time_in_queue,
        util: u.util(),
        aggr: None,
    }
}

/// fio's bw_agg: each job's mean bandwidth as a share of its group's aggregate.
pub fn set_bw_agg(jobs: &mut [JobReport], groups: &[crate::model::GroupReport]) {
    for j in jobs {
        let Some(g) = groups.iter().find(|g| g.groupid == j.groupid) else {
            continue;
        };
        for (i, d) in [&mut j.read, &mut j.write, &mut j.trim]
            .into_iter()
            .enumerate()
        {
            let agg = g.dirs[i].agg_bw as f64 / 1024.0;
            d.bw_agg = if agg > 0.0 && d.bw_samples > 0 {
                (d.bw_mean / agg * 100.0).min(100.0)
            } else {
                0.0
            };
        }
    }
}
