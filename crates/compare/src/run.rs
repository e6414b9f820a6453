//! The comparison run: one fio job (a built-in default, a job file's first job, or fio options)
//! run once per variant and depth, changed only in engine, engine options and depth, through
//! the same runner as `iolab run`. An engine whose capabilities say it completes every request
//! inside `queue` reaches depth N with N jobs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iolab_engine::Caps;
use iolab_job::value::RwMode;
use iolab_job::JobSpec;
use iolab_report::build::{job_report, JobMeta};
use iolab_report::compare::{CompareRow, Comparison, HostShare, Source, CLAT_PCT};
use iolab_runner::{run_with, RunOutcome, StatusLine};
use iolab_stats::JobStats;
use iolab_sys::process_usage;
use iolab_workload::{plan_jobs, JobPlan, PlanEnv};

use crate::diagnose::{diagnose, Workload};
use crate::row::{derive, RunFacts};
use crate::series::{mean_by_interval, sum_by_interval};
use crate::Variant;

/// What to compare.
pub struct CompareOpts {
    pub variants: Vec<Variant>,
    pub depths: Vec<u32>,
    /// Runs of each variant at each depth, in rotation (A B C A B C ...).
    pub trials: u32,
    /// The workload every run copies.
    pub base: JobSpec,
    /// The test file (removed afterwards when the run made it) and its directory.
    pub file: PathBuf,
    pub dir: PathBuf,
    /// `--qos`: after the closed-loop runs, each row's sweep of offered load.
    pub qos: Option<crate::qos::QosOpts>,
}

/// The name of the test file compare lays out in the directory it is given.
pub const TEST_FILE: &str = "iolab-compare.dat";

/// Each default run's length: 6 engines x 3 trials x 4 s = 72 s, with the layout of the file
/// under 90 s.
pub const DEFAULT_RUNTIME: &str = "--runtime=4";

/// Trials of each variant when `--trials` is not given.
pub const DEFAULT_TRIALS: u32 = 3;

/// The base job: compare's defaults (4 KiB random O_DIRECT reads of a 512 MiB file for 4 s),
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
                    .chain([DEFAULT_RUNTIME, "--time_based"])
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

/// What one run of a variant gave, on this process or on every rank of an MPI run together:
/// the row is made from this alone.
#[derive(Debug, Default)]
pub struct Ran {
    /// Every job's statistics added up (on many ranks, every rank's jobs).
    pub stats: JobStats,
    /// System calls counted by the engine layer, and those that submit.
    pub syscalls: u64,
    pub submits: u64,
    /// CPU of the whole process(es) over the run, µs: user, system.
    pub cpu_us: Option<(f64, f64)>,
    /// IOPS and mean completion latency over time, summed (IOPS) or averaged (latency) over
    /// the jobs by interval, the jobs having started together.
    pub iops_series: Vec<(u64, f64)>,
    pub lat_series: Vec<(u64, f64)>,
    /// The device under the test file (the first rank's).
    pub disk: Option<iolab_stats::DiskUtil>,
    /// The first job error (on many ranks, named by host and rank).
    pub error: Option<String>,
    /// Each rank's part, on many ranks; empty for one process.
    pub hosts: Vec<HostRun>,
}

/// One rank's part of a [`Ran`].
#[derive(Debug, Default)]
pub struct HostRun {
    pub hostname: String,
    pub rank: u32,
    pub stats: JobStats,
    pub cpu_us: Option<(f64, f64)>,
    pub error: Option<String>,
}

impl Ran {
    /// The figures of a run in this process.
    pub fn of(out: &RunOutcome, cpu_us: Option<(f64, f64)>) -> Ran {
        let mut r = Ran {
            cpu_us,
            iops_series: sum_by_interval(out.jobs.iter().map(|j| j.iops_series.as_slice())),
            lat_series: mean_by_interval(out.jobs.iter().map(|j| j.lat_series.as_slice())),
            disk: out.disks.first().map(|d| iolab_stats::DiskUtil {
                name: d.name.clone(),
                stats: d.delta,
                msec: d.elapsed_ms,
            }),
            error: (out.jobs.iter()).find_map(|j| j.error.as_ref().map(|e| e.1.clone())),
            ..Ran::default()
        };
        for j in &out.jobs {
            r.stats += &j.stats;
            r.syscalls += j.syscalls.total();
            r.submits += j.syscalls.submit;
        }
        r
    }
}

/// Where compare's runs happen: in this process ([`Local`]), or on every rank of an MPI run
/// at once (`iolab_dist`, feature `mpi`). Every call is made in the same order on every rank.
pub trait Runs {
    /// Lays the test file out before anything is measured.
    fn prepare(&mut self, plans: &[JobPlan]) -> Result<(), String>;
    /// Whether to run no more: a stop here (or, on many ranks, on any rank).
    fn stopped(&mut self, stop: &AtomicBool) -> bool;
    /// Runs one variant's plans.
    fn run(&mut self, plans: &[JobPlan], stop: &AtomicBool) -> Result<Ran, String>;
}

/// The runs in this process.
pub struct Local;

impl Runs for Local {
    fn prepare(&mut self, plans: &[JobPlan]) -> Result<(), String> {
        iolab_runner::prepare(plans).map_err(|e| e.to_string())
    }

    fn stopped(&mut self, stop: &AtomicBool) -> bool {
        stop.load(Ordering::Relaxed)
    }

    fn run(&mut self, plans: &[JobPlan], stop: &AtomicBool) -> Result<Ran, String> {
        let cpu0 = process_cpu_us();
        let out = run_with(plans, stop, StatusLine::default()).map_err(|e| e.to_string())?;
        let cpu = process_cpu_us()
            .zip(cpu0)
            .map(|(b, a)| ((b.0 - a.0).max(0.0), (b.1 - a.1).max(0.0)));
        Ok(Ran::of(&out, cpu))
    }
}

/// CPU of the whole process so far, µs: user, system. Taken around a run in place of the job
/// threads' own: kernel threads working for the process (io_uring's SQPOLL poller, io-wq
/// workers, glibc's AIO threads) are part of an engine's cost, and a per-thread figure would
/// leave them out.
pub fn process_cpu_us() -> Option<(f64, f64)> {
    let u = process_usage().ok()?;
    let us = |t: (u64, u64)| (t.0 * 1_000_000 + t.1) as f64;
    Some((us(u.utime), us(u.stime)))
}

/// Whether the test file is laid out: not when every variant makes its own files or needs
/// none (a 512 MiB file written for filecreate against dircreate is time and disk for nothing).
fn lays_out(variants: &[crate::variant::Variant]) -> bool {
    variants.iter().any(|v| v.opts.kind.needs_files())
}

/// The test file, removed when dropped unless it was there before compare started (a file
/// the job names, or the user's own).
struct Scratch<'a> {
    path: &'a Path,
    existed: bool,
}

impl<'a> Scratch<'a> {
    fn new(path: &'a Path) -> Scratch<'a> {
        Scratch {
            path,
            existed: path.exists(),
        }
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if !self.existed {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

/// Runs every variant at every depth in this process; see [`run_on`].
pub fn run(
    o: &CompareOpts,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Comparison, String> {
    run_on(&mut Local, o, stop, progress)
}

/// Runs every variant at every depth (stopping early when `stop` is set) on `runs` and puts
/// the rows, findings, workload and machine together. `progress` hears what starts.
pub fn run_on(
    runs: &mut dyn Runs,
    o: &CompareOpts,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Comparison, String> {
    // Removed when this returns, on an error too; a Ctrl-C stops the runs and comes here.
    let _file = Scratch::new(&o.file);
    let env = PlanEnv {
        size_of: &|p: &Path| std::fs::metadata(p).ok().map(|m| m.len()),
        is_block_device: &|_| false,
        entropy: 1,
    };
    // Lay the file out once, before anything is measured; not at all when every engine
    // compared makes its own files (filecreate, dircreate...) or needs none.
    let lay_out = lays_out(&o.variants);
    if let (true, Ok(plans)) = (lay_out, plan_jobs(std::slice::from_ref(&o.base), &env)) {
        runs.prepare(&plans)?;
    }
    let t0 = std::time::Instant::now();
    // One slot per depth and variant; each slot's runs in the order they ran.
    let slots: Vec<(u32, &Variant)> = (o.depths.iter())
        .flat_map(|&d| o.variants.iter().map(move |v| (d, v)))
        .collect();
    let caps: Vec<Option<Caps>> = slots.iter().map(|(d, v)| v.caps(*d)).collect();
    let (ran, done, interrupted) = rotate(runs, o, &slots, &caps, &env, stop, t0, progress);
    let interrupted = interrupted.then(|| interrupt_note(&slots, &caps, &ran, done, o.trials, t0));
    let rows: Vec<CompareRow> = (ran.into_iter().enumerate())
        .map(|(slot, trials)| {
            let (depth, v) = slots[slot];
            crate::trials::combine(
                trials,
                &v.label,
                v.opts.kind.name(),
                depth,
                jobs_at(caps[slot].as_ref(), depth),
            )
        })
        .collect();
    // The sweep before the file goes: its steps read the same file.
    let mut interrupted = interrupted;
    let qos = match (&o.qos, &interrupted) {
        (Some(q), None) => {
            let (qos, cut) =
                crate::qos::sweep(runs, o, q, &slots, &caps, &rows, &env, stop, progress);
            if cut {
                interrupted = Some(format!(
                    "interrupted during the QoS sweep ({:.1} s); its curves stop where it was",
                    t0.elapsed().as_secs_f64()
                ));
            }
            Some(qos)
        }
        _ => None,
    };
    let w = Workload {
        direct: o.base.direct,
        reads: !matches!(o.base.rw, RwMode::Write | RwMode::RandWrite),
    };
    Ok(Comparison {
        source: Source::Compare,
        workload: workload_of(o),
        findings: {
            // Where the test file is: a folder in memory makes every figure memory's.
            let at = (o.file.parent()).filter(|p| p.is_dir()).unwrap_or(&o.dir);
            let mut f = diagnose(&rows, &caps, w);
            f.extend(crate::trust::findings(&rows, crate::trust::memory_fs(at)));
            f
        },
        rows,
        machine: crate::machine::machine(&o.file, &o.dir),
        time: String::new(),
        interrupted,
        qos,
    })
}

/// The runs in rotation, A B C A B C ... (a drift over time, the device warming or other
/// load, falls on every variant alike), each slot's rows in the order they ran; how many ran,
/// and whether a stop cut them short.
#[allow(clippy::too_many_arguments)]
fn rotate(
    runs: &mut dyn Runs,
    o: &CompareOpts,
    slots: &[(u32, &Variant)],
    caps: &[Option<Caps>],
    env: &PlanEnv<'_>,
    stop: &AtomicBool,
    t0: std::time::Instant,
    progress: &mut dyn FnMut(&str),
) -> (Vec<Vec<CompareRow>>, usize, bool) {
    let mut ran: Vec<Vec<CompareRow>> = vec![Vec::new(); slots.len()];
    let mut done = 0;
    let mut interrupted = false;
    'outer: for (at, chunk) in slots.chunks(o.variants.len().max(1)).enumerate() {
        // In rotation, A B C A B C ...: a drift over time (the device warming, other load)
        // falls on every variant alike instead of on the ones that ran last. Each run starts
        // with the file's cached pages dropped (fio's invalidate=1, compare's default).
        for trial in 1..=o.trials.max(1) {
            for (i, &(depth, v)) in chunk.iter().enumerate() {
                if runs.stopped(stop) {
                    interrupted = true;
                    break 'outer;
                }
                let slot = at * o.variants.len() + i;
                let c = caps[slot].as_ref();
                let which = match o.trials {
                    0 | 1 => String::new(),
                    n => format!(", trial {trial} of {n}"),
                };
                let started = t0.elapsed().as_millis() as u64;
                let mut row = run_one(runs, o, v, depth, c, env, stop, &mut |m: &str| {
                    progress(&format!("{m}{which}"))
                });
                row.started_ms = Some(started);
                if runs.stopped(stop) {
                    // Cut short: its figures are of a shorter run than the others'.
                    interrupted = true;
                    row.error = Some(CUT.into());
                    ran[slot].push(row);
                    break 'outer;
                }
                ran[slot].push(row);
                done += 1;
            }
        }
    }
    (ran, done, interrupted)
}

/// What an interrupted run says: how many runs of how many, and the variants (or trials)
/// that did not run.
fn interrupt_note(
    slots: &[(u32, &Variant)],
    caps: &[Option<Caps>],
    ran: &[Vec<CompareRow>],
    done: usize,
    trials: u32,
    t0: std::time::Instant,
) -> String {
    let title = |slot: usize| {
        let (depth, v) = slots[slot];
        CompareRow {
            label: v.label.clone(),
            depth,
            jobs: jobs_at(caps[slot].as_ref(), depth),
            ..CompareRow::default()
        }
        .title()
    };
    let trials = trials.max(1) as usize;
    let missing: Vec<String> = (ran.iter().enumerate())
        .filter_map(|(slot, r)| match r.iter().filter(|r| !is_cut(r)).count() {
            n if n >= trials => None,
            0 => Some(title(slot)),
            n => Some(format!("{} ({n} of {trials} trials)", title(slot))),
        })
        .collect();
    format!(
        "interrupted after {done} of {} runs ({:.1} s); did not run: {}",
        slots.len() * trials,
        t0.elapsed().as_secs_f64(),
        missing.join(", ")
    )
}

/// Jobs at `depth`: an engine that completes every request inside `queue` reaches depth N
/// with N jobs at depth 1.
fn jobs_at(caps: Option<&Caps>, depth: u32) -> u32 {
    match caps.is_some_and(|c| c.sync_only) {
        true => depth,
        false => 1,
    }
}

/// A run the interrupt cut short (kept in the trials, not counted).
pub(crate) fn is_cut(r: &CompareRow) -> bool {
    r.error.as_deref() == Some(CUT)
}

pub(crate) const CUT: &str = "cut short by the interrupt; not counted";

/// The job of one run of `v` at `depth`, and its number of jobs: an engine that completes
/// every request inside `queue` reaches depth N with N jobs at depth 1.
pub(crate) fn spec_of(
    o: &CompareOpts,
    v: &Variant,
    depth: u32,
    caps: Option<&Caps>,
) -> (JobSpec, u32) {
    let sync = caps.is_some_and(|c| c.sync_only);
    let (d, jobs) = if sync { (1, depth) } else { (depth, 1) };
    let mut spec = o.base.clone();
    spec.engine = v.opts.clone();
    spec.engine.depth = d;
    spec.iodepth_low = d;
    spec.numjobs = jobs;
    spec.group_reporting = true;
    (spec, jobs)
}

/// What a row of `v` at `depth` with `jobs` is, before its figures.
pub(crate) fn row_facts(v: &Variant, depth: u32, jobs: u32) -> RunFacts {
    RunFacts {
        label: v.label.clone(),
        engine: v.opts.kind.name().to_string(),
        depth,
        jobs,
        ..RunFacts::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    runs: &mut dyn Runs,
    o: &CompareOpts,
    v: &Variant,
    depth: u32,
    caps: Option<&Caps>,
    env: &PlanEnv<'_>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> CompareRow {
    let (spec, jobs) = spec_of(o, v, depth, caps);
    let as_jobs = if caps.is_some_and(|c| c.sync_only) {
        format!(" ({jobs} jobs)")
    } else {
        String::new()
    };
    progress(&format!("{} at depth {depth}{as_jobs}", v.label));
    let facts = row_facts(v, depth, jobs);
    // Every rank plans the same job, so a plan that fails fails on all, before any run.
    let out = plan_jobs(std::slice::from_ref(&spec), env)
        .map_err(|e| e.to_string())
        .and_then(|plans| runs.run(&plans, stop));
    match out {
        Ok(ran) => row_of(ran, facts),
        Err(e) => CompareRow {
            error: Some(e),
            ..derive(&Default::default(), facts)
        },
    }
}

/// The row of one run: its jobs merged into one fio-shaped job, and what fio would not know.
pub(crate) fn row_of(ran: Ran, mut facts: RunFacts) -> CompareRow {
    let meta = |name: &str| JobMeta {
        name: name.to_string(),
        percentiles: CLAT_PCT.to_vec(),
        clat_percentiles: true,
        ..JobMeta::default()
    };
    let job = job_report(&ran.stats, &meta(&facts.label));
    facts.syscalls = Some(ran.syscalls);
    facts.submit_calls = Some(ran.submits);
    facts.process_cpu_us = ran.cpu_us;
    facts.iops_series = ran.iops_series;
    facts.lat_series = ran.lat_series;
    if let Some(d) = &ran.disk {
        facts.disk_util = Some(d.util());
        facts.disk_ios = Some(d.stats.read_ios + d.stats.write_ios);
    }
    facts.error = ran.error;
    let hosts = (ran.hosts.iter())
        .map(|h| {
            let r = derive(
                &job_report(&h.stats, &meta(&facts.label)),
                RunFacts {
                    jobs: facts.jobs,
                    process_cpu_us: h.cpu_us,
                    ..RunFacts::default()
                },
            );
            HostShare {
                hostname: h.hostname.clone(),
                rank: h.rank,
                iops: r.iops,
                ios: r.clat_samples,
                bw_bytes: r.bw_bytes,
                clat_mean: r.clat_mean,
                clat_p99: r.clat_pct[CLAT_PCT.iter().position(|&p| p == 99.0).unwrap_or(0)],
                usr_cpu: r.usr_cpu,
                sys_cpu: r.sys_cpu,
                error: h.error.clone(),
            }
        })
        .collect();
    CompareRow {
        hosts,
        ..derive(&job, facts)
    }
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
