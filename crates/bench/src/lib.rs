//! Running plans: a thread per job, the per-I/O loop, phases separated by stonewalls, ramp and
//! runtime, Ctrl-C. What comes out is statistics; formats are the report crate's business.
#![forbid(unsafe_code)]

pub mod clamp;
mod env;
mod job;
mod layout;
mod status;

pub use env::{host_env, status_line};
pub use status::Progress;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use iolab_engine::EngineError;
use iolab_stats::{disk, DiskStats};
use iolab_workload::JobPlan;

pub use job::{Clock, JobOutcome, Stops};

/// Why a run could not start or go on.
#[derive(Debug)]
pub enum BenchError {
    /// A file operation failed: (path, what we were doing, error).
    File(PathBuf, &'static str, std::io::Error),
    /// The engine refused: (job name, error).
    Engine(String, Box<EngineError>),
    /// A safety rule or an unavailable feature refused the job.
    Refused(String),
}

impl BenchError {
    pub(crate) fn file(path: &Path, what: &'static str, e: std::io::Error) -> BenchError {
        BenchError::File(path.to_path_buf(), what, e)
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::File(p, what, e) => write!(f, "{}: {what}: {e}", p.display()),
            BenchError::Engine(job, e) => write!(f, "{job}: {e}"),
            BenchError::Refused(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for BenchError {}

/// Disk counters of one device over the run.
#[derive(Clone, Debug)]
pub struct DiskOutcome {
    pub name: String,
    pub delta: DiskStats,
    pub elapsed_ms: u64,
}

/// Everything a run measured.
#[derive(Debug)]
pub struct RunOutcome {
    pub jobs: Vec<JobOutcome>,
    pub disks: Vec<DiskOutcome>,
    /// A stop (Ctrl-C, SIGTERM) ended the run early.
    pub interrupted: bool,
}

/// Installs SIGINT/SIGTERM handlers that set `stop` (and, on a second signal, exit as the
/// shell expects), so that a run stops and still reports what it measured.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping ends the process at once (exit code 130).
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// When the status line is shown (fio's `--eta=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusMode {
    /// When standard error is a terminal.
    #[default]
    Auto,
    Always,
    Never,
}

/// How a run reports while it runs (fio's `--eta`, `--eta-interval`, `--eta-newline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusLine {
    pub mode: StatusMode,
    /// How often the line is refreshed.
    pub interval: std::time::Duration,
    /// Start a new line this often instead of overwriting (for logs).
    pub newline_every: Option<std::time::Duration>,
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine {
            mode: StatusMode::Auto,
            interval: std::time::Duration::from_secs(1),
            newline_every: None,
        }
    }
}

/// Lays out every file the plans need (as `run` does first), so a caller can keep that work
/// out of what it measures around `run`.
pub fn prepare(plans: &[JobPlan]) -> Result<(), BenchError> {
    plans.iter().try_for_each(layout::prepare)
}

/// Runs `plans` with the status line when standard error is a terminal.
pub fn run(plans: &[JobPlan], stop: &AtomicBool) -> Result<RunOutcome, BenchError> {
    run_with(plans, stop, StatusLine::default())
}

/// Periodic reports while a run goes on (fio's --status-interval): every `every`, `sink` gets
/// each job's statistics so far (`None` for jobs that have not started).
pub struct Periodic<'a> {
    pub every: std::time::Duration,
    pub sink: &'a (dyn Fn(&[Option<iolab_stats::JobStats>]) + Sync),
}

/// Runs `plans`: phases split at every stonewall, the jobs of a phase started together.
pub fn run_with(
    plans: &[JobPlan],
    stop: &AtomicBool,
    status: StatusLine,
) -> Result<RunOutcome, BenchError> {
    run_reporting(plans, stop, status, None)
}

/// [`run_with`], with periodic reports.
pub fn run_reporting(
    plans: &[JobPlan],
    stop: &AtomicBool,
    status: StatusLine,
    periodic: Option<Periodic<'_>>,
) -> Result<RunOutcome, BenchError> {
    use std::io::IsTerminal;
    let show = match status.mode {
        StatusMode::Always => true,
        StatusMode::Never => false,
        StatusMode::Auto => std::io::stderr().is_terminal(),
    };
    let progress: Vec<Progress> = plans.iter().map(|_| Progress::default()).collect();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        if show {
            s.spawn(|| status::run(plans, &progress, &done, status));
        }
        if let Some(p) = &periodic {
            s.spawn(|| periodic_reports(p, &progress, &done));
        }
        let r = run_phases(plans, stop, &progress);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    })
}

/// Asks every job for a copy of its statistics every `p.every` and hands them to the sink.
fn periodic_reports(p: &Periodic<'_>, progress: &[Progress], done: &AtomicBool) {
    use std::sync::atomic::Ordering::Relaxed;
    let every = p.every.max(std::time::Duration::from_millis(100));
    let mut next = Instant::now() + every;
    while !done.load(Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if Instant::now() < next {
            continue;
        }
        next += every;
        for pr in progress.iter().filter(|pr| !pr.finished.load(Relaxed)) {
            pr.want_snapshot.store(true, Relaxed);
        }
        // Running jobs answer at their next loop iteration: give them a moment.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let snaps: Vec<Option<iolab_stats::JobStats>> = progress
            .iter()
            .map(|pr| pr.snapshot.lock().ok().and_then(|g| g.clone()))
            .collect();
        if !done.load(Relaxed) {
            (p.sink)(&snaps);
        }
    }
}

fn run_phases(
    plans: &[JobPlan],
    stop: &AtomicBool,
    progress: &[Progress],
) -> Result<RunOutcome, BenchError> {
    for p in plans {
        layout::prepare(p)?;
    }
    let disks_before = disk_snapshot(plans);
    let t_disk = Instant::now();
    let clock = Clock::start();
    let mut jobs = Vec::with_capacity(plans.len());
    let mut first_error = None;
    let mut first = 0;
    let exit_all = AtomicBool::new(false);
    let stops = &Stops {
        signal: stop,
        exit_all: &exit_all,
    };
    for phase in phases(plans) {
        let prog = &progress[first..first + phase.len()];
        first += phase.len();
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let barrier = Barrier::new(phase.len());
        let results: Vec<Result<JobOutcome, BenchError>> = std::thread::scope(|s| {
            let handles: Vec<_> = phase
                .iter()
                .zip(prog)
                .map(|(p, pr)| {
                    let b = &barrier;
                    std::thread::Builder::new()
                        .name(format!("{}.{}", p.name, p.clone))
                        .spawn_scoped(s, move || {
                            job::run(p, stops, b, clock, pr, &wait_on(p, phase, prog))
                        })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().unwrap_or_else(|_| {
                        Err(BenchError::Refused("a job thread panicked".into()))
                    }),
                    Err(e) => Err(BenchError::Refused(format!(
                        "cannot start a job thread: {e}"
                    ))),
                })
                .collect()
        });
        for r in results {
            match r {
                Ok(j) => jobs.push(j),
                Err(e) if first_error.is_none() => first_error = Some(e),
                Err(_) => {}
            }
        }
        if first_error.is_some() {
            break;
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let elapsed_ms = t_disk.elapsed().as_millis() as u64;
    let disks = disks_before
        .into_iter()
        .filter_map(|(name, before)| {
            let after = DiskStats::read(&name).ok()?;
            Some(DiskOutcome {
                name,
                delta: after - before,
                elapsed_ms,
            })
        })
        .collect();
    Ok(RunOutcome {
        jobs,
        disks,
        interrupted: stop.load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// Plans split into phases: a job with `stonewall` waits for everything before it.
/// The progress of the jobs `p` waits for (wait_for): earlier jobs of its phase with that name;
/// jobs of earlier phases have finished already.
fn wait_on<'a>(p: &JobPlan, phase: &[JobPlan], prog: &'a [Progress]) -> Vec<&'a Progress> {
    match &p.wait_for {
        Some(name) => phase
            .iter()
            .zip(prog)
            .filter(|(q, _)| &q.name == name)
            .map(|(_, pr)| pr)
            .collect(),
        None => Vec::new(),
    }
}

fn phases(plans: &[JobPlan]) -> Vec<&[JobPlan]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, p) in plans.iter().enumerate() {
        // Clones of one stonewalled job start together: only the first clone opens a phase.
        if i > start && p.stonewall && p.clone == 0 {
            out.push(&plans[start..i]);
            start = i;
        }
    }
    if start < plans.len() {
        out.push(&plans[start..]);
    }
    out
}

fn disk_snapshot(plans: &[JobPlan]) -> Vec<(String, DiskStats)> {
    let names: BTreeSet<String> = plans
        .iter()
        .flat_map(|p| p.files.iter())
        .filter_map(|f| disk::disk_of(&f.path).ok().flatten())
        .collect();
    names
        .into_iter()
        .filter_map(|n| DiskStats::read(&n).ok().map(|s| (n, s)))
        .collect()
}
