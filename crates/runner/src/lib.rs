//! Running plans: a thread per job, the per-I/O loop, phases separated by stonewalls, ramp and
//! runtime, Ctrl-C. What comes out is statistics; formats are the report crate's business.
#![forbid(unsafe_code)]

pub mod clamp;
mod devcheck;
mod env;
mod error;
mod exits;
mod fill;
mod gate;
mod gtod;
pub mod idle;
mod job;
mod joberr;
mod layout;
mod mem;
mod open;
pub mod opendir;
mod place;
pub mod plan;
mod setup;
mod status;
pub mod trigger;
pub mod verify;

pub use env::{host_env, status_line};
pub use error::RunError;
pub use status::{Progress, StatusLine, StatusMode};

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use iolab_stats::DiskStats;
use iolab_sys as sys;
use iolab_sys::interrupt::Thread;
use iolab_workload::{BufStream, JobPlan};

pub use job::{inflate_log, keep_rate_series, Clock, JobOutcome, Rates, Stops};
pub use joberr::{strerror, JobError};

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

/// Installs SIGINT/SIGTERM/SIGHUP handlers that set `stop` (and, on a second signal, exit as
/// the shell expects), so that a run stops and still reports what it measured.
///
/// SIGHUP is a deliberate difference: fio 3.33 leaves it at the default action and dies
/// without a report (exit 129, an empty --output file). A run whose terminal went away still
/// has results worth keeping, so here it stops the run like SIGINT.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // A second signal while stopping ends the process at once (exit code 130).
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Lays out every file the plans need (as `run` does first), so a caller can keep that work
/// out of what it measures around `run`.
pub fn prepare(plans: &[JobPlan]) -> Result<(), RunError> {
    let never = AtomicBool::new(false);
    layout::prepare_all(plans, &never).map(drop)
}

/// Runs `plans` with the status line when standard error is a terminal.
pub fn run(plans: &[JobPlan], stop: &AtomicBool) -> Result<RunOutcome, RunError> {
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
) -> Result<RunOutcome, RunError> {
    run_reporting(plans, stop, status, None)
}

/// [`run_with`], with periodic reports.
pub fn run_reporting(
    plans: &[JobPlan],
    stop: &AtomicBool,
    status: StatusLine,
    periodic: Option<Periodic<'_>>,
) -> Result<RunOutcome, RunError> {
    run_all(plans, stop, status, periodic, &|| {})
}

/// [`run_with`], calling `gate` on this thread after the layout and before each phase
/// starts (also when a stop was asked for), so that a caller can hold every phase to a start
/// shared with other processes: the ranks of an MPI run meet there.
pub fn run_gated(
    plans: &[JobPlan],
    stop: &AtomicBool,
    status: StatusLine,
    gate: &dyn Fn(),
) -> Result<RunOutcome, RunError> {
    run_all(plans, stop, status, None, gate)
}

fn run_all(
    plans: &[JobPlan],
    stop: &AtomicBool,
    status: StatusLine,
    periodic: Option<Periodic<'_>>,
    gate: &dyn Fn(),
) -> Result<RunOutcome, RunError> {
    use std::io::IsTerminal;
    let show = match status.mode {
        StatusMode::Always => true,
        StatusMode::Never => false,
        StatusMode::Auto => std::io::stderr().is_terminal(),
    };
    let progress: Vec<Progress> = plans.iter().map(|_| Progress::default()).collect();
    let done = AtomicBool::new(false);
    let agg = status
        .bandwidth_log
        .then(|| job::AggLog::open(plans))
        .transpose()?;
    let t0 = Instant::now();
    std::thread::scope(|s| {
        if let Some(a) = agg {
            s.spawn(|| a.run(&progress, &done, t0));
        }
        if show {
            s.spawn(|| status::run(plans, &progress, &done, status));
        }
        if let Some(p) = &periodic {
            s.spawn(|| periodic_reports(p, &progress, &done));
        }
        let r = run_phases(plans, stop, &progress, gate);
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

/// The run's one clock: fio's `clocksource` (a process-wide setting in fio too: the last job
/// that gives it wins), else the best this machine offers.
fn clock_for(plans: &[JobPlan]) -> Clock {
    use iolab_job::spec::ClockSource;
    let chosen = plans
        .iter()
        .map(|p| p.spec.clocksource)
        .rfind(|c| *c != ClockSource::Auto);
    match chosen {
        Some(ClockSource::Gettimeofday) => Clock::gettimeofday(),
        Some(ClockSource::ClockGettime) => Clock::monotonic(),
        Some(ClockSource::Cpu) => Clock::cpu().unwrap_or_else(|| {
            eprintln!("fio: clocksource=cpu: the TSC is not invariant here; using clock_gettime");
            Clock::monotonic()
        }),
        _ => Clock::start(),
    }
}

/// What each disk did since `before` was taken at `since`; a disk that cannot be read again
/// is left out.
fn disks_since(before: Vec<(String, DiskStats)>, since: Instant) -> Vec<DiskOutcome> {
    let elapsed_ms = since.elapsed().as_millis() as u64;
    before
        .into_iter()
        .filter_map(|(name, before)| {
            let after = DiskStats::read(&name).ok()?;
            Some(DiskOutcome {
                name,
                delta: after - before,
                elapsed_ms,
            })
        })
        .collect()
}

fn run_phases(
    plans: &[JobPlan],
    stop: &AtomicBool,
    progress: &[Progress],
    gate: &dyn Fn(),
) -> Result<RunOutcome, RunError> {
    plans.iter().try_for_each(job::verify_check)?;
    let streams = layout::prepare_all(plans, stop)?;
    job::prepare_shared_logs(plans)?;
    let disks_before = disk_snapshot(plans);
    let t_disk = Instant::now();
    // fio's gtod_cpu: the thread runs, and the jobs read its time, until the run ends.
    let keeper = gtod::Keeper::start(gtod::cpus(plans)?)?;
    let clock = match keeper {
        Some(_) => Clock::kept(),
        None => clock_for(plans),
    };
    let mut jobs = Vec::with_capacity(plans.len());
    let mut first_error = None;
    let mut first = 0;
    let exit_all = AtomicBool::new(false);
    let stops = &Stops {
        signal: stop,
        exit_all: &exit_all,
        phase: &[],
        run: &exit_all,
        io_done: &exits::NEVER,
    };
    for phase in phases(plans) {
        let prog = &progress[first..first + phase.len()];
        let bufs = &streams[first..first + phase.len()];
        first += phase.len();
        gate();
        // exit_what=all: a job's exitall ended the run.
        if stop.load(Ordering::Relaxed) || exit_all.load(Ordering::Relaxed) {
            break;
        }
        // Undone when the phase ends, fails or is stopped.
        let surroundings = place::Surroundings::enter(phase);
        let results = match surroundings {
            Ok(_) => run_phase(phase, first - phase.len(), prog, bufs, stops, clock),
            Err(e) => vec![Err(e)],
        };
        for r in results {
            match r {
                Ok(j) => jobs.push(j),
                Err(RunError::NotStarted) => {}
                Err(e) if first_error.is_none() => first_error = Some(e),
                Err(_) => {}
            }
        }
        if first_error.is_some() {
            break;
        }
    }
    job::join_shared_logs(plans);
    if let Some(e) = first_error {
        return Err(e);
    }
    // fio prints act's table when its last job ends, before the report.
    if let Some(t) = job::act_table(jobs.iter().map(|j| &j.stats)) {
        layout::info(format_args!("{t}"));
    }
    Ok(RunOutcome {
        jobs,
        disks: disks_since(disks_before, t_disk),
        interrupted: stop.load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// Runs the jobs of one phase, a thread each, started together. A thread that cannot be
/// created, or a job whose setup fails, calls the start off: the others return
/// [`RunError::NotStarted`] instead of waiting for a thread that does not exist.
fn run_phase(
    phase: &[JobPlan],
    base: usize,
    prog: &[Progress],
    bufs: &[BufStream],
    stops: &Stops<'_>,
    clock: Clock,
) -> Vec<Result<JobOutcome, RunError>> {
    if let Err(e) = mem::check_threads(
        mem::phase_threads(phase),
        phase.first().map_or("", |p| &p.name),
    ) {
        return vec![Err(e)];
    }
    let gate = gate::StartGate::new(phase.len());
    let flows = job::flow::Flows::of(phase);
    let steadies = job::steady::SteadyGroups::of(phase);
    let flags = exits::group_flags(phase);
    let io = exits::IoJobs::of(phase);
    // Each job thread's id, 0 until it has started: what a stop wakes.
    let tids: Vec<AtomicI32> = phase.iter().map(|_| AtomicI32::new(0)).collect();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(phase.len());
        let mut spawn_error = None;
        for (i, (((p, pr), tid), b)) in phase.iter().zip(prog).zip(&tids).zip(bufs).enumerate() {
            let (g, flow, io) = (&gate, flows.get(p), &io);
            let stops = stops.for_job(p, &flags, io);
            let ss = steadies.link(phase, i);
            let spawned = std::thread::Builder::new()
                .name(thread_name(&p.name, p.clone))
                .spawn_scoped(s, move || {
                    tid.store(Thread::current().id(), Ordering::Relaxed);
                    // --debug=job:N counts the run's jobs from 0, clones included.
                    iolab_job::debug::set_job(base + i);
                    let shared = job::Shared {
                        flow,
                        steady: ss,
                        bufs: b.clone(),
                    };
                    let r = job::run(p, &stops, g, clock, pr, &wait_on(p, phase, prog), shared);
                    io.ended(p);
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    gate.call_off();
                    spawn_error = Some(RunError::Refused(format!(
                        "{}: cannot start a job thread ({} jobs in this phase): {e}",
                        p.name,
                        phase.len()
                    )));
                    break;
                }
            }
        }
        let mut results: Vec<_> = spawn_error.into_iter().map(Err).collect();
        if let Some(first) = phase.first() {
            await_jobs(&handles, &tids, &stops.for_job(first, &flags, &io));
        }
        results.extend(handles.into_iter().map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(RunError::Refused("a job thread panicked".into())))
        }));
        results
    })
}

/// Waits until every job thread of a phase has ended. After a stop, a thread still running
/// may be blocked in a system call on a source that never answers (a FIFO whose writer is
/// silent): it is woken every [`job::STOP_POLL`] until it ends, since a wake-up that comes
/// just before it enters the call is lost. Only threads not yet joined are woken.
fn await_jobs<T>(handles: &[ScopedJoinHandle<'_, T>], tids: &[AtomicI32], stops: &Stops<'_>) {
    let mut next_wake = None;
    let mut can_wake = false;
    while !handles.iter().all(ScopedJoinHandle::is_finished) {
        let now = Instant::now();
        if stops.any_set() && next_wake.is_none_or(|t| now >= t) {
            if next_wake.is_none() {
                // Without the handler the signal is ignored and would wake nothing.
                can_wake = sys::interrupt::install().is_ok();
            }
            let running = handles.iter().zip(tids).filter(|(h, _)| !h.is_finished());
            for t in running.filter_map(|(_, tid)| Thread::from_id(tid.load(Ordering::Relaxed))) {
                if can_wake {
                    // ESRCH (the thread has just ended) needs nothing done.
                    let _ = t.wake();
                }
            }
            next_wake = Some(now + job::STOP_POLL);
        }
        std::thread::sleep(JOIN_POLL);
    }
}

/// How often the end of a phase's jobs is looked for: what a phase's end may be late by.
const JOIN_POLL: Duration = Duration::from_millis(5);

/// A thread name the OS accepts: no NUL (std panics on one) and at most 15 bytes (Linux's
/// limit), cut on a character boundary.
fn thread_name(job: &str, clone: u32) -> String {
    let full = format!("{job}.{clone}").replace('\0', "_");
    let mut end = full.len().min(15);
    while !full.is_char_boundary(end) {
        end -= 1;
    }
    full[..end].to_string()
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
        .filter_map(|f| {
            iolab_sys::dev::DevInfo::of_path(&f.path)
                .ok()
                .flatten()
                .map(|d| d.name)
        })
        .collect();
    names
        .into_iter()
        .filter_map(|n| DiskStats::read(&n).ok().map(|s| (n, s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::thread_name;

    #[test]
    fn thread_name_with_nul_or_long_name_is_sanitized() {
        // Regression: a NUL in a job name panicked in thread naming and hung the run.
        assert_eq!(thread_name("a\0b", 0), "a_b.0");
        assert_eq!(thread_name("a-very-long-job-name", 12), "a-very-long-job");
        // 15 bytes would cut 'é' in half: the name stops before it.
        assert_eq!(thread_name("abcdefghijklmné", 0), "abcdefghijklmn");
    }
}
