//! The comparison run: one fio job (a built-in default, a job file's first job, or fio options)
//! run once per variant and depth, changed only in engine, engine options and depth, through
//! the same runner as `iolab run`. An engine whose capabilities say it completes every request
//! inside `queue` reaches depth N with N jobs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iolab_bench::{run_with, RunOutcome, StatusLine};
use iolab_engine::sys::{process_usage, ThreadUsage};
use iolab_engine::Caps;
use iolab_job::value::RwMode;
use iolab_job::JobSpec;
use iolab_report::build::{job_report, JobMeta};
use iolab_report::compare::{CompareRow, Comparison, Source, CLAT_PCT};
use iolab_stats::JobStats;
use iolab_workload::{plan_jobs, PlanEnv};

use crate::diagnose::{diagnose, Workload};
use crate::row::{derive, RunFacts};
use crate::Variant;

/// What to compare.
pub struct CompareOpts {
    pub variants: Vec<Variant>,
    pub depths: Vec<u32>,
    /// The workload every run copies.
    pub base: JobSpec,
    /// The test file (removed afterwards when the run made it) and its directory.
    pub file: PathBuf,
    pub dir: PathBuf,
}

/// The name of the test file compare lays out in the directory it is given.
pub const TEST_FILE: &str = "iolab-compare.dat";

/// The base job: compare's defaults (4 KiB random O_DIRECT reads of a 512 MiB file for 8 s),
/// then the job file's first job or the fio options of the command line (`--name=value`).
pub fn base_spec(job_file: Option<&str>, fio: &[String], file: &Path) -> Result<JobSpec, String> {
    let mut argv: Vec<String> = Vec::new();
    match job_file {
        Some(f) => {
            argv.extend(fio.iter().cloned());
            argv.push(f.to_string());
        }
        None => {
            argv.push("--name=compare".into());
            argv.extend(
                ["--rw=randread", "--bs=4k", "--direct=1", "--size=512m"]
                    .into_iter()
                    .chain(["--runtime=8", "--time_based"])
                    .map(String::from),
            );
            argv.push(format!("--filename={}", file.display()));
            argv.extend(fio.iter().cloned());
        }
    }
    // The argument numbers of our argv (defaults first) are not the user's: an error on the
    // command line names the option alone.
    let say = |mut e: iolab_job::JobError| {
        if e.loc
            .as_ref()
            .is_some_and(|l| &*l.file == iolab_job::error::CMDLINE)
        {
            e.loc = None;
        }
        e.to_string()
    };
    let inv = iolab_job::parse_cmdline(&argv).map_err(say)?;
    let loaded = inv.load().map_err(say)?;
    let mut resolved = loaded.resolve().map_err(say)?;
    let mut spec = resolved
        .jobs
        .drain(..)
        .next()
        .ok_or("the job file has no job")?;
    if spec.filename.is_empty() && spec.directory.is_none() {
        spec.filename = vec![file.display().to_string()];
    }
    if spec.size.is_none() && spec.filesize.is_none() {
        spec.size = Some(iolab_job::value::SizeOrPct::Bytes(512 << 20));
    }
    Ok(spec)
}

/// Whether the test file is laid out: not when every variant makes its own files or needs
/// none (a 512 MiB file written for filecreate against dircreate is time and disk for nothing).
fn lays_out(variants: &[crate::variant::Variant]) -> bool {
    variants.iter().any(|v| v.opts.kind.needs_files())
}

/// Runs every variant at every depth (stopping early when `stop` is set) and puts the rows,
/// findings, workload and machine together. `progress` hears what starts.
pub fn run(
    o: &CompareOpts,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Comparison, String> {
    let existed = o.file.exists();
    let env = PlanEnv {
        size_of: &|p: &Path| std::fs::metadata(p).ok().map(|m| m.len()),
        is_block_device: &|_| false,
        entropy: 1,
    };
    // Lay the file out once, before anything is measured; not at all when every engine
    // compared makes its own files (filecreate, dircreate...) or needs none.
    let lay_out = lays_out(&o.variants);
    if let (true, Ok(plans)) = (lay_out, plan_jobs(std::slice::from_ref(&o.base), &env)) {
        iolab_bench::prepare(&plans).map_err(|e| e.to_string())?;
    }
    let mut rows = Vec::new();
    let mut caps = Vec::new();
    'outer: for &depth in &o.depths {
        for v in &o.variants {
            if stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            let c = v.caps(depth);
            let (row, c) = run_one(o, v, depth, c, &env, stop, progress);
            rows.push(row);
            caps.push(c);
        }
    }
    if !existed {
        let _ = std::fs::remove_file(&o.file);
    }
    let w = Workload {
        direct: o.base.direct,
        reads: !matches!(o.base.rw, RwMode::Write | RwMode::RandWrite),
    };
    Ok(Comparison {
        source: Source::Compare,
        workload: workload_of(o),
        findings: diagnose(&rows, &caps, w),
        rows,
        machine: crate::machine::machine(&o.file, &o.dir),
        time: String::new(),
    })
}

fn run_one(
    o: &CompareOpts,
    v: &Variant,
    depth: u32,
    caps: Option<Caps>,
    env: &PlanEnv<'_>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> (CompareRow, Option<Caps>) {
    let sync = caps.as_ref().is_some_and(|c| c.sync_only);
    let (d, jobs) = if sync { (1, depth) } else { (depth, 1) };
    let mut spec = o.base.clone();
    spec.engine = v.opts.clone();
    spec.engine.depth = d;
    spec.iodepth_low = d;
    spec.numjobs = jobs;
    spec.group_reporting = true;
    let as_jobs = if sync {
        format!(" ({jobs} jobs)")
    } else {
        String::new()
    };
    progress(&format!("{} at depth {depth}{as_jobs}", v.label));
    let facts = RunFacts {
        label: v.label.clone(),
        engine: v.opts.kind.name().to_string(),
        depth,
        jobs,
        ..RunFacts::default()
    };
    let cpu0 = process_usage().ok();
    let out = plan_jobs(std::slice::from_ref(&spec), env)
        .map_err(|e| e.to_string())
        .and_then(|plans| run_with(&plans, stop, StatusLine::default()).map_err(|e| e.to_string()));
    let cpu1 = process_usage().ok();
    let row = match out {
        Ok(out) => row_of(&out, facts, cpu0.zip(cpu1)),
        Err(e) => CompareRow {
            error: Some(e),
            ..derive(&Default::default(), facts)
        },
    };
    (row, caps)
}

/// The row of one run: its jobs merged into one fio-shaped job, and what fio would not know.
fn row_of(
    out: &RunOutcome,
    mut facts: RunFacts,
    cpu: Option<(ThreadUsage, ThreadUsage)>,
) -> CompareRow {
    let mut s = JobStats::default();
    let (mut calls, mut submits) = (0, 0);
    for j in &out.jobs {
        s += &j.stats;
        calls += j.syscalls.total();
        submits += j.syscalls.submit;
    }
    let job = job_report(
        &s,
        &JobMeta {
            name: facts.label.clone(),
            percentiles: CLAT_PCT.to_vec(),
            clat_percentiles: true,
            ..JobMeta::default()
        },
    );
    facts.syscalls = Some(calls);
    facts.submit_calls = Some(submits);
    facts.process_cpu_us = cpu.map(|(a, b)| process_cpu(&a, &b));
    facts.iops_series = iops_series(out);
    facts.lat_series = lat_series(out);
    if let Some(d) = out.disks.first() {
        let util = iolab_stats::DiskUtil {
            name: d.name.clone(),
            stats: d.delta,
            msec: d.elapsed_ms,
        };
        facts.disk_util = Some(util.util());
        facts.disk_ios = Some(d.delta.read_ios + d.delta.write_ios);
    }
    facts.error = out
        .jobs
        .iter()
        .find_map(|j| j.error.as_ref().map(|e| e.1.clone()));
    derive(&job, facts)
}

/// CPU of the whole process over the run (user, system µs), in place of the job threads' own:
/// kernel threads working for the process (io_uring's SQPOLL poller, io-wq workers, glibc's
/// AIO threads) are part of an engine's cost, and a per-thread figure would leave them out.
fn process_cpu(a: &ThreadUsage, b: &ThreadUsage) -> (f64, f64) {
    let us = |t: (u64, u64)| t.0 * 1_000_000 + t.1;
    (
        us(b.utime).saturating_sub(us(a.utime)) as f64,
        us(b.stime).saturating_sub(us(a.stime)) as f64,
    )
}

/// The jobs' IOPS samples summed by interval.
fn iops_series(out: &RunOutcome) -> Vec<(u64, f64)> {
    let mut series: Vec<(u64, f64)> = Vec::new();
    for j in &out.jobs {
        for (i, &(ms, iops)) in j.iops_series.iter().enumerate() {
            match series.get_mut(i) {
                Some(e) => e.1 += iops,
                None => series.push((ms, iops)),
            }
        }
    }
    // Jobs end a few milliseconds apart and some take one sample more: summing by index past
    // the shortest series would show a false drop at the end.
    let shortest = out.jobs.iter().map(|j| j.iops_series.len()).min();
    series.truncate(shortest.unwrap_or(0));
    series
}

/// Mean latency over time: the jobs' interval means averaged (they run the same workload).
fn lat_series(out: &RunOutcome) -> Vec<(u64, f64)> {
    let len = out
        .jobs
        .iter()
        .map(|j| j.lat_series.len())
        .min()
        .unwrap_or(0);
    (0..len)
        .map(|i| {
            let ms = out.jobs[0].lat_series[i].0;
            let sum: f64 = out.jobs.iter().map(|j| j.lat_series[i].1).sum();
            (ms, sum / out.jobs.len() as f64)
        })
        .collect()
}

/// The workload as fio options, with what compare varies: engines, depths and jobs.
fn workload_of(o: &CompareOpts) -> Vec<(String, String)> {
    let s = &o.base;
    let mut w = vec![
        ("rw".to_string(), s.rw.name().to_string()),
        ("bs".into(), bytes(s.bs.read)),
        ("direct".into(), u8::from(s.direct).to_string()),
    ];
    use iolab_job::value::SizeOrPct;
    let size = match s.size.or(s.filesize.map(|f| SizeOrPct::Bytes(f.0))) {
        Some(SizeOrPct::Bytes(b)) => bytes(b),
        Some(SizeOrPct::Percent(p)) => format!("{p}%"),
        Some(SizeOrPct::Zones(z)) => format!("{z}z"),
        None => "–".into(),
    };
    w.push(("size".into(), size));
    if let Some(r) = s.runtime {
        w.push(("runtime".into(), format!("{}s", r.as_secs_f64())));
    }
    let names: Vec<&str> = o.variants.iter().map(|v| v.label.as_str()).collect();
    w.push(("engines".into(), names.join(", ")));
    let depths: Vec<String> = o.depths.iter().map(u32::to_string).collect();
    w.push(("iodepth".into(), depths.join(", ")));
    w.push((
        "numjobs".into(),
        "1; a synchronous engine runs one job per unit of depth".into(),
    ));
    if let Some(f) = s.filename.first() {
        w.push(("filename".into(), f.clone()));
    }
    w
}

/// `512m`, `1g`, `12345`: the largest fio unit that divides the size.
fn bytes(b: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    /// Regression: compare laid out its 512 MiB file for engines that never read it.
    #[test]
    fn no_file_is_laid_out_when_every_engine_makes_its_own() {
        let list = |l| crate::variant::parse_list(l).unwrap();
        assert!(!lays_out(&list("filecreate,dircreate")));
        assert!(lays_out(&list("splice,psync")));
        assert!(
            lays_out(&list("filestat")),
            "filestat looks up laid-out files"
        );
    }

    use super::*;

    #[test]
    fn sizes_read_as_fio_writes_them() {
        assert_eq!(bytes(512 << 20), "512m");
        assert_eq!(bytes(4096), "4k");
        assert_eq!(bytes(3 << 30), "3g");
        assert_eq!(bytes(1000), "1000");
    }
}
