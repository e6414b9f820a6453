//! `iolab run` (and `fio`): fio's command line and job files in, fio's output out.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use iolab_job::{options, parse_cmdline, IdleProf, Invocation, JobSpec, OutputFormat, TopLevel};
use iolab_report::run::{
    output_order, preamble, status_report, write_formats, write_formats_live, FIO_VERSION,
};
use iolab_runner::plan::Say;
use iolab_runner::{stop_on_signals, RunOutcome};
use iolab_stats::JobStats;
use iolab_workload::JobPlan;

/// How the binary was called: its messages speak as the program the user typed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Called {
    /// `iolab run`.
    Iolab,
    /// A symlink named `fio`: fio's own words, for the scripts that read them.
    Fio,
}

impl Called {
    /// What messages on standard error start with.
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            Called::Iolab => "iolab run",
            Called::Fio => "fio",
        }
    }
}

/// `--help`: the usage line and the options, in fio's `-h` shape.
fn help_text(called: Called) -> String {
    iolab_job::tophelp::text(FIO_VERSION, &usage_line(called))
}

fn usage_line(called: Called) -> String {
    format!(
        "usage: {} [options] [job options] [job file(s)]",
        called.prefix()
    )
}

/// Runs `iolab run ARGS` (or `fio ARGS`), printing any failure as one line on standard error.
pub fn main(args: &[std::ffi::OsString], called: Called) -> ExitCode {
    match run(args, called) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("{}: {msg}", called.prefix());
            ExitCode::from(1)
        }
    }
}

fn run(args: &[std::ffi::OsString], called: Called) -> Result<ExitCode, String> {
    let inv = parse_cmdline(args).map_err(|e| e.to_string())?;
    inv.top.route_lines();
    if let Some(code) = answer_info(&inv.top, called)? {
        return Ok(code);
    }
    if let Some(path) = &inv.top.inflate_log {
        return inflate_log(path);
    }
    if inv.top.idle_prof == Some(IdleProf::Calibrate) {
        return idle_calibrate();
    }
    if let Some(dir) = &inv.top.aux_path {
        iolab_runner::verify::state::set_aux_path(dir.clone());
    }
    let prefix = called.prefix();
    if inv.job_files.is_empty() && inv.cmdline_jobs.is_empty() {
        if inv.top.parse_only {
            // fio parses the options it was given (its default job's) and, with no job to
            // check, ends there, exit 0: t/steadystate_tests.py reads --debug=parse's lines.
            inv.check_globals().map_err(|e| e.to_string())?;
            return Ok(ExitCode::SUCCESS);
        }
        // fio says "No job(s) defined" and exits 1; the usage goes to standard error here, as
        // every iolab refusal does, so that standard output only ever carries results.
        eprintln!("{prefix}: no job(s) defined");
        eprintln!("{}", usage_line(called));
        eprintln!("Try '{prefix} --help' for the options.");
        return Ok(ExitCode::from(1));
    }
    #[cfg(feature = "mpi")]
    if iolab_dist::launched() {
        return crate::run_mpi::run(&inv, called);
    }
    let Some((specs, plans)) = plan(&inv, prefix, &iolab_dist::Placement::single())? else {
        return Ok(ExitCode::SUCCESS);
    };
    if inv.top.merge_blktrace_only {
        // Planning merged the blktraces (merge_blktrace_file): fio's merge without the run.
        return Ok(ExitCode::SUCCESS);
    }
    let top = &inv.top;
    let formats = output_order(&top.output_format);
    let mut out = open_output(top, &formats)?;
    if formats.contains(&OutputFormat::Normal) {
        let written = iolab_report::write_preamble(&preamble(&specs, &plans), &mut out);
        match written.and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            r => r.map_err(write_error)?,
        }
    }
    execute(top, &specs, &plans, &formats, out, called)
}

/// fio's --idle-prof=calibrate: the unit of work's time, and nothing run.
fn idle_calibrate() -> Result<ExitCode, String> {
    let i = iolab_runner::idle::IdleProf::start()?.finish();
    let c = iolab_report::CpuIdleness::from_profile(&i.unit_us, i.percpu, false);
    print!(
        "CPU idleness:\n  unit work: mean={:3.2}us, stddev={:3.2}\n",
        c.unit_mean, c.unit_stddev
    );
    Ok(ExitCode::SUCCESS)
}

/// Where the reports go: `--output`'s file (with fio's informational lines too when normal
/// output is among the formats, as fio), else standard output. Not a held stdout lock: periodic reports
/// (--status-interval) write from another thread.
fn open_output(top: &TopLevel, formats: &[OutputFormat]) -> Result<Box<dyn Write + Send>, String> {
    let Some(p) = &top.output else {
        return Ok(Box::new(io::stdout()));
    };
    // Not waiting on a FIFO with no reader, which Ctrl-C could not end: it fails (ENXIO).
    let f = iolab_sys::fs::open_nonblocking(
        File::options().write(true).create(true).truncate(true),
        Path::new(p),
        0,
    )
    .map_err(|e| match e.raw_os_error() {
        // ENXIO
        Some(6) => format!("--output: {p}: a FIFO with no reader"),
        _ => format!("--output: {p}: {e}"),
    })?;
    if formats.contains(&OutputFormat::Normal) {
        if let Ok(dup) = f.try_clone() {
            iolab_job::lines::to_file(dup);
        }
    }
    Ok(Box::new(io::BufWriter::new(f)))
}

/// The requests that print something and run nothing (`--help`, `--version`, `--cmdhelp`,
/// `--enghelp`); `None` when there is none.
fn answer_info(top: &TopLevel, called: Called) -> Result<Option<ExitCode>, String> {
    let text = if top.help {
        help_text(called)
    } else if top.version {
        format!("{FIO_VERSION}\n")
    } else if let Some(which) = &top.cmdhelp {
        iolab_job::profile::cmdhelp(top.profile.as_deref(), which.as_deref())?
    } else if let Some(which) = &top.enghelp {
        options::enghelp(which.as_deref())?
    } else if let Some(which) = &top.crctest {
        iolab_runner::verify::crctest_text(which.as_deref())?
    } else {
        return Ok(None);
    };
    print!("{text}");
    Ok(Some(ExitCode::SUCCESS))
}

pub(crate) use iolab_runner::plan::Planned;

/// Loads, checks and plans the jobs (`iolab_runner::plan`), printing what planning says;
/// `None` when the options asked for no run. `at` names this rank's files.
pub(crate) fn plan(
    inv: &Invocation,
    prefix: &str,
    at: &iolab_dist::Placement,
) -> Result<Option<Planned>, String> {
    let place = |jobs: &mut [JobSpec]| iolab_dist::place(jobs, at);
    iolab_runner::plan::plan(inv, prefix, &place, &mut |said| match said {
        Say::Out(line) => println!("{line}"),
        Say::Err(line) => eprintln!("{line}"),
    })
}

/// Runs the plans, writing the reports (periodic ones too) and the closing message.
fn execute(
    top: &TopLevel,
    specs: &[JobSpec],
    plans: &[JobPlan],
    formats: &[OutputFormat],
    out: Box<dyn Write + Send>,
    called: Called,
) -> Result<ExitCode, String> {
    let stop = stop_on_signals().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let signal = which_signal()?;
    let trigger = iolab_runner::trigger::Trigger {
        file: top.trigger_file.clone(),
        timeout: top.trigger_timeout_us.map(std::time::Duration::from_micros),
        cmd: top.trigger_cmd.clone(),
    }
    .watch(Arc::clone(&stop))
    .map_err(|e| format!("cannot watch the trigger: {e}"))?;
    let start = SystemTime::now();
    let shared = Mutex::new(out);
    let sink = |snaps: &[Option<JobStats>]| {
        let report = status_report(specs, plans, snaps, start);
        if let (Some(r), Ok(mut o)) = (report, shared.lock()) {
            let _ = write_formats_live(&r, formats, &mut *o);
        }
    };
    let periodic = top.status_interval_us.map(|us| iolab_runner::Periodic {
        every: std::time::Duration::from_micros(us),
        sink: &sink,
    });
    let status = iolab_runner::status_line(top);
    let idle = match top.idle_prof {
        Some(m) => Some((
            iolab_runner::idle::IdleProf::start()?,
            m == IdleProf::PerCpu,
        )),
        None => None,
    };
    let outcome = iolab_runner::run_reporting(plans, &stop, status, periodic);
    // A trigger stops the run as a signal would, but is no interruption: fio exits 0.
    let triggered = trigger.finish();
    let outcome = outcome.map_err(|e| e.to_string())?;
    let mut report = final_report(specs, plans, &outcome, start);
    report.cpu_idleness = idle.map(|(p, percpu)| {
        let i = p.finish();
        iolab_report::CpuIdleness::from_profile(&i.unit_us, i.percpu, percpu)
    });
    let mut out = shared
        .into_inner()
        .map_err(|_| "a status report panicked while writing".to_string())?;
    match write_formats(&report, formats, &mut out) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        r => r.map_err(write_error)?,
    }
    if outcome.interrupted && !triggered {
        return Ok(interrupted(called, &signal));
    }
    // fio exits with the number of jobs that ended in an error (held at 255 here: fio's
    // count wraps, and 256 failed jobs must not read as success).
    let failed = outcome.jobs.iter().filter(|j| j.error.is_some()).count();
    Ok(ExitCode::from(failed.min(255) as u8))
}

/// The closing message of a run a signal stopped (fio names the signal by number), exit 130.
fn interrupted(called: Called, signal: &AtomicUsize) -> ExitCode {
    let sig = signal.load(Ordering::Relaxed);
    match called {
        Called::Fio => eprintln!("fio: terminating on signal {sig}"),
        Called::Iolab => eprintln!(
            "iolab run: terminating on signal {sig}; the results cover what ran until then"
        ),
    }
    ExitCode::from(130)
}

/// `--inflate-log=FILE`: the text of a log written with log_store_compressed.
fn inflate_log(path: &str) -> Result<ExitCode, String> {
    // Not waiting on a FIFO with no writer, which Ctrl-C could not end.
    let file = iolab_sys::fs::open_nonblocking(File::options().read(true), Path::new(path), 0)
        .map_err(|e| format!("--inflate-log: {path}: {e}"))?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    match iolab_runner::inflate_log(file, &mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(format!("--inflate-log: {path}: {e}"))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Which signal stopped the run, for the closing message (fio names it by number).
fn which_signal() -> Result<Arc<AtomicUsize>, String> {
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize)
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    }
    Ok(signal)
}

fn final_report(
    specs: &[JobSpec],
    plans: &[JobPlan],
    outcome: &RunOutcome,
    start: SystemTime,
) -> iolab_report::Report {
    let ended = (outcome.jobs.iter()).map(|j| {
        (
            &j.stats,
            j.error.as_ref().map_or(0, |e| e.0),
            j.error_detail.clone(),
        )
    });
    let disks: Vec<iolab_stats::DiskUtil> = (outcome.disks.iter())
        .map(|d| iolab_stats::DiskUtil {
            name: d.name.clone(),
            stats: d.delta,
            msec: d.elapsed_ms,
        })
        .collect();
    iolab_report::run::final_report(specs, plans, ended, &disks, start)
}

/// A reader that went away (`iolab run ... | head`) is not an error, as in ripgrep: callers
/// match `BrokenPipe` before they come here.
pub(crate) fn write_error(e: io::Error) -> String {
    format!("writing the results: {e}")
}
