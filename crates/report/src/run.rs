//! A run's report, built the way fio builds it: group_reporting folds a group's jobs into one
//! entry, bw_agg is each job's share of its group, and disk_util=0 on every job leaves the disk
//! section out. The runner hands over what each job measured; this module decides the shape.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_job::spec::UnifiedRw;
use iolab_job::{JobSpec, OutputFormat};
use iolab_stats::JobStats;
use iolab_workload::JobPlan;

use crate::build::{disk_util, job_report, set_bw_agg, JobMeta};
use crate::model::{JobHeader, JobReport, Report, Unified, Units};

/// The version string scripts see: fio's form first, so `fio-3.NN` parsers keep working.
pub const FIO_VERSION: &str = concat!("fio-3.33 (iolab ", env!("CARGO_PKG_VERSION"), ")");

/// What one job (one plan: a clone of a numjobs expansion is a job) measured.
pub struct Measured<'a> {
    pub plan: &'a JobPlan,
    pub stats: &'a JobStats,
    /// errno of the error that stopped the job, 0 for none.
    pub errno: i32,
    /// fio's detail of that error for the job line (`file:..., func=..., error=...`).
    pub verror: Option<String>,
}

/// The whole report of a run that started at `start`. `specs` are the jobs the plans were made
/// from (`JobPlan::spec` indexes them); `jobs` are in plan order.
pub fn run_report(
    specs: &[JobSpec],
    jobs: &[Measured<'_>],
    disks: &[iolab_stats::DiskUtil],
    start: SystemTime,
) -> Report {
    let date = fio_date(start);
    let elapsed_s = start.elapsed().map(|d| d.as_secs() as i64).unwrap_or(0);
    let meta = |m: &Measured<'_>| job_meta(m, specs.get(m.plan.spec_index), &date, elapsed_s);
    // fio's `latency ... depth=` is the job's iodepth, whatever the engine (its latency_qd).
    let report = |s: &JobStats, m: &Measured<'_>, meta: &JobMeta| {
        let mut r = job_report(s, meta);
        r.latency_depth = m.plan.engine.depth.max(1);
        crate::control::apply(&mut r, s, &m.plan.spec);
        crate::blocks::apply(&mut r, s, &meta.percentiles);
        r
    };
    let mut reports = Vec::new();
    // Whether each report's job does I/O (fio leaves cpuio and exec jobs out of its groups).
    let mut does_io = Vec::new();
    // A group's folded stats, its meta, its first job, and the error detail its line shows.
    let mut merged: Option<(JobStats, JobMeta, &Measured<'_>, Option<String>)> = None;
    // stats=0: the job ran, but fio leaves it out of every figure; create_only did no I/O.
    for m in jobs.iter().filter(|m| {
        specs
            .get(m.plan.spec_index)
            .is_none_or(|s| s.stats && !s.create_only)
    }) {
        let folds = specs
            .get(m.plan.spec_index)
            .is_some_and(|s| s.group_reporting);
        match &mut merged {
            Some((stats, open, _, verror)) if folds && open.groupid == m.plan.group => {
                *stats += m.stats;
                // The folded line names the error as a job of the group gave it (fio's
                // verror), not an empty detail.
                if i64::from(m.errno) > open.error {
                    verror.clone_from(&m.verror);
                }
                open.error = open.error.max(i64::from(m.errno));
                // fio 3.33 shows the group's last job's options under the first one's name.
                open.options = m.plan.options.clone();
                continue;
            }
            _ => {}
        }
        if let Some((s, open, first, verror)) = merged.take() {
            reports.push(with_verror(report(&s, first, &open), verror));
            does_io.push(first.plan.engine.kind.does_io());
        }
        if folds {
            merged = Some((m.stats.clone(), meta(m), m, m.verror.clone()));
        } else {
            reports.push(with_verror(report(m.stats, m, &meta(m)), m.verror.clone()));
            does_io.push(m.plan.engine.kind.does_io());
        }
    }
    if let Some((s, open, first, verror)) = merged.take() {
        reports.push(with_verror(report(&s, first, &open), verror));
        does_io.push(first.plan.engine.kind.does_io());
    }
    let groups = run_groups(&reports, &does_io, jobs);
    set_bw_agg(&mut reports, &groups);
    let now = start.duration_since(UNIX_EPOCH).unwrap_or_default();
    let with_disks = specs.iter().any(|s| s.disk_util);
    Report {
        fio_version: FIO_VERSION.to_string(),
        timestamp: now.as_secs(),
        timestamp_ms: now.as_millis() as u64,
        time: date,
        jobs: reports,
        groups,
        disk_util: disks.iter().filter(|_| with_disks).map(disk_util).collect(),
        global_options: (jobs.first()).map_or_else(Vec::new, |m| m.plan.global_options.to_vec()),
        ..Report::default()
    }
}

/// `r` with the job's error detail (fio's verror) where it has one.
fn with_verror(mut r: JobReport, verror: Option<String>) -> JobReport {
    r.verror = verror.or(r.verror.take());
    r
}

/// The run's groups, from the reports of jobs that do I/O (`does_io`, report by report): fio
/// prints every group's "Run status group" header, with no lines under it when no job of the
/// group is reported (stats=0, create_only).
fn run_groups(
    reports: &[JobReport],
    does_io: &[bool],
    jobs: &[Measured<'_>],
) -> Vec<crate::model::GroupReport> {
    let counted: Vec<JobReport> = (reports.iter().zip(does_io))
        .filter(|(_, io)| **io)
        .map(|(r, _)| r.clone())
        .collect();
    let mut groups = crate::groups_from_jobs(&counted);
    for m in jobs {
        if !groups.iter().any(|g| g.groupid == m.plan.group) {
            groups.push(crate::model::GroupReport {
                groupid: m.plan.group,
                ..Default::default()
            });
        }
    }
    groups.sort_by_key(|g| g.groupid);
    groups
}

/// The report of a finished run: `ended` gives, in plan order, each job's counters, the errno
/// that stopped it (0 for none) and fio's detail of that error.
pub fn final_report<'a>(
    specs: &[JobSpec],
    plans: &'a [JobPlan],
    ended: impl IntoIterator<Item = (&'a JobStats, i32, Option<String>)>,
    disks: &[iolab_stats::DiskUtil],
    start: SystemTime,
) -> Report {
    let jobs: Vec<Measured<'_>> = (ended.into_iter().zip(plans))
        .map(|((stats, errno, verror), plan)| Measured {
            plan,
            stats,
            errno,
            verror,
        })
        .collect();
    run_report(specs, &jobs, disks, start)
}

/// fio's --status-interval report: the jobs that have a snapshot so far (`snaps` in plan
/// order); `None` while none has.
pub fn status_report(
    specs: &[JobSpec],
    plans: &[JobPlan],
    snaps: &[Option<JobStats>],
    start: SystemTime,
) -> Option<Report> {
    let jobs: Vec<Measured<'_>> = (snaps.iter().zip(plans))
        .filter_map(|(s, plan)| {
            s.as_ref().map(|stats| Measured {
                plan,
                stats,
                errno: 0,
                verror: None,
            })
        })
        .collect();
    (!jobs.is_empty()).then(|| run_report(specs, &jobs, &[], start))
}

fn job_meta(m: &Measured<'_>, spec: Option<&JobSpec>, date: &str, elapsed_s: i64) -> JobMeta {
    JobMeta {
        name: m.plan.name.clone(),
        groupid: m.plan.group,
        error: i64::from(m.errno),
        pid: std::process::id(),
        date: Some(date.to_string()),
        options: m.plan.options.clone(),
        header: None,
        percentiles: m.plan.percentiles.clone(),
        percentile_precision: spec.map(|s| s.percentile_precision),
        clat_percentiles: spec.is_none_or(|s| s.clat_percentiles),
        lat_percentiles: spec.is_some_and(|s| s.lat_percentiles),
        slat_percentiles: spec.is_some_and(|s| s.slat_percentiles),
        units: units(spec),
        desc: spec.and_then(|s| s.description.clone()),
        elapsed_s,
        unified: match spec.map(|s| s.unified_rw_reporting) {
            Some(UnifiedRw::Mixed) => Unified::Mixed,
            Some(UnifiedRw::Both) => Unified::Both,
            _ => Unified::None,
        },
    }
}

fn units(spec: Option<&JobSpec>) -> Units {
    Units {
        kb_base: spec.map(|s| s.kb_base as u32).unwrap_or(1024),
        sig_figs: spec.map_or(4, |s| s.significant_figures as usize),
        // fio's unit_base: 1 bits, 8 bytes, 0 the engine's choice (bits for net).
        bits: spec
            .is_some_and(|s| s.unit_base == 1 || s.unit_base == 0 && s.engine.kind.bit_based()),
    }
}

/// fio's lines before a run, as a report for [`crate::write_preamble`]: one header per job
/// (clones folded into "..."), the version, the process count.
pub fn preamble(specs: &[JobSpec], plans: &[JobPlan]) -> Report {
    let jobs = plans
        .iter()
        .filter(|p| p.clone == 0)
        .map(|p| {
            let clones = plans
                .iter()
                .filter(|q| q.spec_index == p.spec_index)
                .count() as u32;
            JobReport {
                jobname: p.name.clone(),
                groupid: p.group,
                header: Some(header(p, clones.saturating_sub(1))),
                units: units(specs.get(p.spec_index)),
                ..Default::default()
            }
        })
        .collect();
    let threads = specs.iter().any(|s| s.thread);
    let n = plans.len() as u32;
    Report {
        fio_version: FIO_VERSION.to_string(),
        jobs,
        nr_processes: if threads { 0 } else { n },
        nr_threads: if threads { n } else { 0 },
        ..Report::default()
    }
}

fn header(p: &JobPlan, clones: u32) -> JobHeader {
    let bs = |d: usize| (p.pattern.bs[d].min(), p.pattern.bs[d].max());
    JobHeader {
        rw: p.rw.name().to_string(),
        bs: [bs(0), bs(1), bs(2)],
        ioengine: p.engine.kind.name().to_string(),
        iodepth: p.engine.depth,
        clones,
        no_io: !p.engine.kind.does_io(),
    }
}

/// `Sun Nov 22 21:38:59 2026`, as fio prints a job's start (in UTC: no time zone data is
/// read, which is what these machines use).
pub fn fio_date(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let c = iolab_sys::date::Civil::from_unix(secs);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        c.weekday_name(),
        c.month_name(),
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.year
    )
}

/// fio writes its formats in one fixed order, whatever order `--output-format` names them in:
/// terse, then JSON (json or json+), then normal (stat.c, `__show_run_stats`).
pub fn output_order(asked: &[OutputFormat]) -> Vec<OutputFormat> {
    if asked.is_empty() {
        return vec![OutputFormat::Normal];
    }
    let rank = |f: &OutputFormat| match f {
        OutputFormat::Terse => 0,
        OutputFormat::Json | OutputFormat::JsonPlus => 1,
        OutputFormat::Normal => 2,
    };
    let mut v: Vec<OutputFormat> = Vec::new();
    for f in asked {
        if !v.contains(f) {
            v.push(*f);
        }
    }
    // json+ is json with bins: fio prints one JSON document when both are asked for.
    if v.contains(&OutputFormat::JsonPlus) {
        v.retain(|f| *f != OutputFormat::Json);
    }
    v.sort_by_key(rank);
    v
}

/// Writes `report` in each of `formats` (in the order given: see [`output_order`]), flushing
/// after each.
pub fn write_formats(
    report: &Report,
    formats: &[OutputFormat],
    out: &mut dyn Write,
) -> io::Result<()> {
    each_format(formats, out, |f, out| match f {
        OutputFormat::Normal => crate::write_normal(report, out),
        OutputFormat::Json => crate::write_json(report, false, out),
        OutputFormat::JsonPlus => crate::write_json(report, true, out),
        OutputFormat::Terse => crate::write_terse(report, out),
    })
}

/// [`write_formats`] for a report while the run goes on (`--status-interval`): JSON and json+
/// as one object on one line, so that each interval's report is a line a reader can parse
/// alone; the other formats as always.
pub fn write_formats_live(
    report: &Report,
    formats: &[OutputFormat],
    out: &mut dyn Write,
) -> io::Result<()> {
    each_format(formats, out, |f, out| match f {
        OutputFormat::Json => crate::write_json_line(report, false, out),
        OutputFormat::JsonPlus => crate::write_json_line(report, true, out),
        _ => write_formats(report, &[f], *out),
    })
}

/// Calls `one` for each format in turn and flushes after each, so a reader of a pipe sees
/// every document whole as soon as it is written (one run's report, or the clients' report).
pub(crate) fn each_format(
    formats: &[OutputFormat],
    mut out: &mut dyn Write,
    mut one: impl FnMut(OutputFormat, &mut &mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    formats.iter().try_for_each(|f| {
        one(*f, &mut out)?;
        out.flush()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plans(specs: &[JobSpec]) -> Vec<JobPlan> {
        let env = iolab_workload::PlanEnv {
            size_of: &|_| None,
            is_block_device: &|_| false,
            entropy: 1,
        };
        iolab_workload::plan_jobs(specs, &env).expect("plans")
    }

    /// Regression: a job's settings were found by its name, so the second of two jobs named
    /// alike got the first one's (here kb_base and the header's clone count).
    #[test]
    fn two_jobs_with_one_name_keep_their_own_settings() {
        let loc = iolab_job::Loc {
            file: "x.fio".into(),
            line: 1,
        };
        let mut a = JobSpec::new("same", loc.clone());
        a.size = Some(iolab_job::value::SizeOrPct::Bytes(1 << 20));
        let mut b = a.clone();
        b.kb_base = 1000;
        b.numjobs = 3;
        b.new_group = true;
        let specs = [a, b];
        let plans = plans(&specs);
        let pre = preamble(&specs, &plans);
        assert_eq!(pre.jobs.len(), 2);
        assert_eq!(pre.jobs[0].units.kb_base, 1024);
        assert_eq!(pre.jobs[1].units.kb_base, 1000);
        let clones: Vec<u32> = pre
            .jobs
            .iter()
            .filter_map(|j| j.header.as_ref())
            .map(|h| h.clones)
            .collect();
        assert_eq!(clones, [0, 2]);
        let stats = JobStats::default();
        let measured: Vec<Measured<'_>> = plans
            .iter()
            .map(|plan| Measured {
                plan,
                stats: &stats,
                errno: 0,
                verror: None,
            })
            .collect();
        let r = run_report(&specs, &measured, &[], SystemTime::now());
        let bases: Vec<u32> = r.jobs.iter().map(|j| j.units.kb_base).collect();
        assert_eq!(bases, [1024, 1000, 1000, 1000]);
    }

    #[test]
    fn fio_date_prints_as_fio_does() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_383_539);
        assert_eq!(fio_date(t), "Sun Nov 22 21:38:59 2026");
        assert_eq!(fio_date(UNIX_EPOCH), "Thu Jan  1 00:00:00 1970");
    }

    #[test]
    fn formats_come_in_fios_order_and_json_plus_replaces_json() {
        use OutputFormat::*;
        assert_eq!(output_order(&[]), vec![Normal]);
        assert_eq!(
            output_order(&[Normal, Json, Terse, JsonPlus, Normal]),
            vec![Terse, JsonPlus, Normal]
        );
    }
}
