//! `iolab run` (and `fio`): fio's command line and job files in, fio's output out.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_bench::{stop_on_signals, RunOutcome};
use iolab_job::{options, parse_cmdline, JobFile, OutputFormat};
use iolab_report::build::{disk_util, job_report, set_bw_agg, JobMeta};
use iolab_report::{JobHeader, Report, Units};
use iolab_stats::JobStats;
use iolab_workload::{plan_jobs, JobPlan, PlanEnv};

/// The version string scripts see: fio's form first, so `fio-3.NN` parsers keep working.
pub const FIO_VERSION: &str = concat!("fio-3.33 (iolab ", env!("CARGO_PKG_VERSION"), ")");

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
    fn prefix(self) -> &'static str {
        match self {
            Called::Iolab => "iolab run",
            Called::Fio => "fio",
        }
    }
}

/// The options that are not job options, for `--help` (fio's `-h` lists the same ones); job
/// options are described by `--cmdhelp`. A test checks that the parser takes every one.
const TOP_HELP: &[(&str, &str)] = &[
    (
        "--output=FILE",
        "write the results to FILE instead of standard output",
    ),
    (
        "--output-format=LIST",
        "normal, json, json+ or terse, comma-separated (default normal)",
    ),
    ("--minimal", "the same as --output-format=terse"),
    (
        "--section=NAME",
        "run only this section of the job files (repeatable)",
    ),
    (
        "--parse-only",
        "check the job files and options, run nothing",
    ),
    ("--showcmd", "print each job as a command line, run nothing"),
    ("--readonly", "refuse any job that would write or trim"),
    ("--max-jobs=N", "refuse to start more than N jobs"),
    (
        "--warnings-fatal",
        "treat a warning about the job options as an error",
    ),
    (
        "--eta=WHEN",
        "the status line on standard error: always, never or auto (a terminal)",
    ),
    (
        "--eta-interval=TIME",
        "how often the status line is refreshed",
    ),
    (
        "--eta-newline=TIME",
        "start a new status line every TIME (for logs)",
    ),
    (
        "--status-interval=TIME",
        "print the whole report so far every TIME",
    ),
    (
        "--cmdhelp[=OPTION]",
        "list the job options, or describe one (\"all\" for every one)",
    ),
    (
        "--enghelp[=ENGINE[,OPTION]]",
        "list the I/O engines, or an engine's own options",
    ),
    (
        "--version, -v",
        "print the version (fio's form first) and exit",
    ),
    ("--help, -h", "print this help and exit"),
];

/// fio's top-level options that iolab takes but that change nothing, and those it refuses.
const TOP_INERT: &str = "--debug, --terse-version, --append-terse (terse output is version 3)";
const TOP_REFUSED: &str = "--server, --client, --daemonize, --remote-config, --idle-prof, \
--inflate-log, --trigger*, --aux-path, --alloc-size, --crctest, --cpuclock-test, \
--bandwidth-log, --merge-blktrace-only";

/// `--help`: the usage line and the options, in fio's `-h` shape.
fn help_text(called: Called) -> String {
    let mut s = format!("{FIO_VERSION}\n{}\n", usage_line(called));
    for (opt, what) in TOP_HELP {
        s.push_str(&format!("  {opt:<28} {what}\n"));
    }
    s.push_str(&format!(
        "\nAccepted, without effect: {TOP_INERT}.\nRefused by name: {TOP_REFUSED}.\n\n\
         Job options (--name=NAME --rw=randread --bs=4k ...) are fio's; --cmdhelp lists them, \
         --cmdhelp=OPTION\ndescribes one. Job files are fio's; '-' reads one from standard input.\n\n\
         Job options iolab implements, by category:\n{}",
        options::summary()
    ));
    s
}

fn usage_line(called: Called) -> String {
    let prog = match called {
        Called::Iolab => "iolab run",
        Called::Fio => "fio",
    };
    format!("usage: {prog} [options] [job options] [job file(s)]")
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
    let top = &inv.top;
    let prefix = called.prefix();
    if top.help {
        print!("{}", help_text(called));
        return Ok(ExitCode::SUCCESS);
    }
    if top.version {
        println!("{FIO_VERSION}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(which) = &top.cmdhelp {
        print!("{}", options::cmdhelp(which.as_deref())?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(which) = &top.enghelp {
        print!("{}", options::enghelp(which.as_deref())?);
        return Ok(ExitCode::SUCCESS);
    }
    if inv.job_files.is_empty() && inv.cmdline_jobs.is_empty() {
        // fio says "No job(s) defined" and exits 1; the usage goes to standard error here, as
        // every iolab refusal does, so that standard output only ever carries results.
        eprintln!("{prefix}: no job(s) defined");
        eprintln!("{}", usage_line(called));
        let help = if called == Called::Fio {
            "fio"
        } else {
            "iolab run"
        };
        eprintln!("Try '{help} --help' for the options.");
        return Ok(ExitCode::from(1));
    }
    let file = inv.load().map_err(|e| e.to_string())?;
    if top.showcmd {
        // fio's --showcmd: each job as the command line that would define it, then exit.
        for job in &file.jobs {
            let mut line = format!("fio --name={}", job.name);
            for o in job.options().filter(|o| o.def.name != "name") {
                match o.value.as_deref() {
                    Some(v) if !v.is_empty() => line.push_str(&format!(" --{}={v}", o.spelled)),
                    _ => line.push_str(&format!(" --{}", o.spelled)),
                }
            }
            println!("{line} ");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut resolved = file.resolve().map_err(|e| e.to_string())?;
    for w in &resolved.warnings {
        eprintln!("{prefix}: warning: {w}");
    }
    if top.warnings_fatal && !resolved.warnings.is_empty() {
        return Err("warnings are fatal (--warnings-fatal)".into());
    }
    if top.parse_only {
        return Ok(ExitCode::SUCCESS);
    }
    crate::clamp::from_env(&mut resolved.jobs);
    let env = PlanEnv {
        size_of: &size_of,
        is_block_device: &is_block_device,
        entropy: entropy(),
    };
    let mut plans = plan_jobs(&resolved.jobs, &env).map_err(|e| e.to_string())?;
    attach_options(&file, &resolved.jobs, &mut plans);
    if let Some(max) = top.max_jobs {
        if plans.len() > max as usize {
            return Err(format!("{} jobs exceed --max-jobs={max}", plans.len()));
        }
    }
    if top.readonly {
        if let Some(p) = plans.iter().find(|p| p.pattern.write || p.pattern.trim) {
            return Err(format!(
                "job <{}> has write bit set, but --readonly is on",
                p.name
            ));
        }
    }
    let formats = output_order(&top.output_format);
    // Not a held stdout lock: periodic reports (--status-interval) write from another thread.
    let mut out: Box<dyn Write + Send> = match &top.output {
        Some(p) => Box::new(io::BufWriter::new(
            File::create(p).map_err(|e| format!("--output: {p}: {e}"))?,
        )),
        None => Box::new(io::stdout()),
    };
    let normal = formats.contains(&OutputFormat::Normal);
    if normal {
        match write_headers(&mut out, &plans, &resolved.jobs) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            r => r.map_err(write_error)?,
        }
    }
    let stop = stop_on_signals().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    // Which signal stopped the run, for the closing message (fio names it by number).
    let signal = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(sig, std::sync::Arc::clone(&signal), sig as usize)
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    }
    let start = SystemTime::now();
    let group_reporting: Vec<bool> = resolved.jobs.iter().map(|j| j.group_reporting).collect();
    let shared = std::sync::Mutex::new(out);
    // fio's --status-interval: the whole report so far, every interval, in the asked formats.
    let sink = |snaps: &[Option<iolab_stats::JobStats>]| {
        let (jobs, subset): (Vec<_>, Vec<_>) = snaps
            .iter()
            .zip(&plans)
            .filter_map(|(s, p)| s.as_ref().map(|s| (snapshot_outcome(p, s), p.clone())))
            .unzip();
        if jobs.is_empty() {
            return;
        }
        let partial = RunOutcome {
            jobs,
            disks: Vec::new(),
            interrupted: false,
        };
        let report = build_report(&subset, &resolved.jobs, &partial, start, &group_reporting);
        if let Ok(mut o) = shared.lock() {
            let _ = write_formats(&report, &formats, &mut *o);
        }
    };
    let periodic = top.status_interval_us.map(|us| iolab_bench::Periodic {
        every: std::time::Duration::from_micros(us),
        sink: &sink,
    });
    let outcome = iolab_bench::run_reporting(&plans, &stop, status_line(top)?, periodic)
        .map_err(|e| e.to_string())?;
    let report = build_report(&plans, &resolved.jobs, &outcome, start, &group_reporting);
    let mut out = shared
        .into_inner()
        .map_err(|_| "a status report panicked while writing".to_string())?;
    let written = write_formats(&report, &formats, &mut out);
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        r => r.map_err(write_error)?,
    }
    if outcome.interrupted {
        let sig = signal.load(std::sync::atomic::Ordering::Relaxed);
        match called {
            Called::Fio => eprintln!("fio: terminating on signal {sig}"),
            Called::Iolab => eprintln!(
                "{prefix}: terminating on signal {sig}; the results cover what ran until then"
            ),
        }
        return Ok(ExitCode::from(130));
    }
    Ok(if outcome.jobs.iter().any(|j| j.error.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes `report` in every asked format (already in fio's order), flushing after each.
fn write_formats(report: &Report, formats: &[OutputFormat], out: &mut dyn Write) -> io::Result<()> {
    let mut out = out;
    formats.iter().try_for_each(|f| {
        match f {
            OutputFormat::Normal => iolab_report::write_normal(report, &mut out),
            OutputFormat::Json => iolab_report::write_json(report, false, &mut out),
            OutputFormat::JsonPlus => iolab_report::write_json(report, true, &mut out),
            OutputFormat::Terse => iolab_report::write_terse(report, &mut out),
        }?;
        out.flush()
    })
}

/// A job's statistics so far, shaped as a finished job for the report builder.
fn snapshot_outcome(p: &JobPlan, s: &iolab_stats::JobStats) -> iolab_bench::JobOutcome {
    iolab_bench::JobOutcome {
        name: p.name.clone(),
        clone: p.clone,
        group: p.group,
        stats: s.clone(),
        runtime_ms: s.total_run_time_ms,
        error: None,
        error_detail: None,
        engine: String::new(),
        syscalls: Default::default(),
        errors_ignored: 0,
        iops_series: Vec::new(),
        lat_series: Vec::new(),
        started_ns: 0,
        ended_ns: 0,
    }
}

/// A reader that went away (`iolab run ... | head`) is not an error, as in ripgrep: callers
/// match `BrokenPipe` before they come here.
fn write_error(e: io::Error) -> String {
    format!("writing the results: {e}")
}

/// fio writes its formats in one fixed order, whatever order `--output-format` names them in:
/// terse, then JSON (json or json+), then normal (stat.c, `__show_run_stats`).
fn output_order(asked: &[OutputFormat]) -> Vec<OutputFormat> {
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

/// fio's --eta, --eta-interval and --eta-newline.
fn status_line(top: &iolab_job::TopLevel) -> Result<iolab_bench::StatusLine, String> {
    use iolab_bench::{StatusLine, StatusMode};
    let mode = match top.eta.as_deref() {
        Some("always") => StatusMode::Always,
        Some("never") => StatusMode::Never,
        _ => StatusMode::Auto,
    };
    let mut s = StatusLine {
        mode,
        ..StatusLine::default()
    };
    if let Some(us) = top.eta_interval_us {
        s.interval = std::time::Duration::from_micros(us);
    }
    s.newline_every = top.eta_newline_us.map(std::time::Duration::from_micros);
    Ok(s)
}

fn size_of(p: &Path) -> Option<u64> {
    let meta = std::fs::metadata(p).ok()?;
    if meta.file_type().is_block_device() {
        let f = File::open(p).ok()?;
        iolab_engine::sys::block_device_size(std::os::fd::AsRawFd::as_raw_fd(&f)).ok()
    } else {
        Some(meta.len())
    }
}

fn is_block_device(p: &Path) -> bool {
    std::fs::metadata(p)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false)
}

fn entropy() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ u64::from(std::process::id())
}

/// fio's "job options": the options written for the job (with a value), by their names.
fn attach_options(file: &JobFile, specs: &[iolab_job::JobSpec], plans: &mut [JobPlan]) {
    for (raw, spec) in file.jobs.iter().zip(specs) {
        let opts: Vec<(String, String)> = raw
            .options()
            .filter_map(|o| {
                o.value
                    .as_ref()
                    .filter(|v| !v.is_empty())
                    .map(|v| (o.def.name.to_string(), v.clone()))
            })
            .collect();
        for p in plans.iter_mut().filter(|p| p.name == spec.name) {
            p.options = std::iter::once(("name".to_string(), spec.name.clone()))
                .chain(opts.iter().cloned())
                .collect();
        }
    }
}

fn header(p: &JobPlan) -> JobHeader {
    let bs = |d: usize| (p.pattern.bs[d].min(), p.pattern.bs[d].max());
    let pat = &p.pattern;
    let rw = match (pat.read, pat.write, pat.trim, pat.random) {
        (_, _, true, r) if pat.trimwrite => {
            if r {
                "randtrimwrite"
            } else {
                "trimwrite"
            }
        }
        (_, _, true, r) => {
            if r {
                "randtrim"
            } else {
                "trim"
            }
        }
        (true, true, _, r) => {
            if r {
                "randrw"
            } else {
                "rw"
            }
        }
        (false, true, _, r) => {
            if r {
                "randwrite"
            } else {
                "write"
            }
        }
        (_, _, _, r) => {
            if r {
                "randread"
            } else {
                "read"
            }
        }
    };
    JobHeader {
        rw: rw.to_string(),
        bs: [bs(0), bs(1), bs(2)],
        ioengine: p.engine.kind.name().to_string(),
        iodepth: p.engine.depth,
        clones: 1,
    }
}

/// fio's lines before the run: one header per job (clones folded into "..."), the version,
/// the process count. Printed at once, as fio does, through the report writer.
fn write_headers(
    out: &mut impl Write,
    plans: &[JobPlan],
    specs: &[iolab_job::JobSpec],
) -> io::Result<()> {
    let mut jobs = Vec::new();
    for p in plans.iter().filter(|p| p.clone == 0) {
        let mut h = header(p);
        h.clones = plans
            .iter()
            .filter(|q| q.name == p.name && q.group == p.group)
            .count() as u32
            - 1;
        let kb = specs
            .iter()
            .find(|s| s.name == p.name)
            .map(|s| s.kb_base as u32)
            .unwrap_or(1024);
        jobs.push(iolab_report::JobReport {
            jobname: p.name.clone(),
            groupid: p.group,
            header: Some(h),
            units: Units {
                kb_base: kb,
                ..Units::default()
            },
            ..Default::default()
        });
    }
    let threads = specs.iter().any(|s| s.thread);
    let n = plans.len() as u32;
    let r = Report {
        fio_version: FIO_VERSION.to_string(),
        jobs,
        nr_processes: if threads { 0 } else { n },
        nr_threads: if threads { n } else { 0 },
        ..Report::default()
    };
    iolab_report::write_preamble(&r, out)?;
    out.flush()
}

fn build_report(
    plans: &[JobPlan],
    specs: &[iolab_job::JobSpec],
    outcome: &RunOutcome,
    start: SystemTime,
    group_reporting: &[bool],
) -> Report {
    let date = fio_date(start);
    let pid = std::process::id();
    let spec_of = |name: &str| specs.iter().find(|s| s.name == name);
    let meta = |plan: &JobPlan, err: i64| {
        let s = spec_of(&plan.name);
        JobMeta {
            name: plan.name.clone(),
            groupid: plan.group,
            error: err,
            pid,
            date: Some(date.clone()),
            options: plan.options.clone(),
            header: None,
            percentiles: plan.percentiles.clone(),
            clat_percentiles: s.map(|s| s.clat_percentiles).unwrap_or(true),
            lat_percentiles: s.map(|s| s.lat_percentiles).unwrap_or(false),
            slat_percentiles: s.map(|s| s.slat_percentiles).unwrap_or(false),
            units: Units {
                kb_base: s.map(|s| s.kb_base as u32).unwrap_or(1024),
                ..Units::default()
            },
            desc: s.and_then(|s| s.description.clone()),
            elapsed_s: start.elapsed().map(|d| d.as_secs() as i64).unwrap_or(0),
            unified: match s.map(|s| s.unified_rw_reporting) {
                Some(iolab_job::spec::UnifiedRw::Mixed) => iolab_report::Unified::Mixed,
                Some(iolab_job::spec::UnifiedRw::Both) => iolab_report::Unified::Both,
                _ => iolab_report::Unified::None,
            },
        }
    };
    let mut jobs = Vec::new();
    let mut merged: Option<(JobStats, JobMeta)> = None;
    for (j, plan) in outcome.jobs.iter().zip(plans) {
        let err = j.error.as_ref().map(|e| i64::from(e.0)).unwrap_or(0);
        let reporting = specs
            .iter()
            .position(|s| s.name == plan.name)
            .map(|i| group_reporting[i])
            .unwrap_or(false);
        if reporting {
            match &mut merged {
                Some((stats, m)) if m.groupid == plan.group => {
                    *stats += &j.stats;
                    m.error = m.error.max(err);
                }
                _ => {
                    if let Some((s, m)) = merged.take() {
                        jobs.push(job_report(&s, &m));
                    }
                    merged = Some((j.stats.clone(), meta(plan, err)));
                }
            }
        } else {
            if let Some((s, m)) = merged.take() {
                jobs.push(job_report(&s, &m));
            }
            let mut r = job_report(&j.stats, &meta(plan, err));
            r.verror = j.error_detail.clone();
            jobs.push(r);
        }
    }
    if let Some((s, m)) = merged.take() {
        jobs.push(job_report(&s, &m));
    }
    let groups = iolab_report::groups_from_jobs(&jobs);
    set_bw_agg(&mut jobs, &groups);
    let now = start.duration_since(UNIX_EPOCH).unwrap_or_default();
    Report {
        fio_version: FIO_VERSION.to_string(),
        timestamp: now.as_secs(),
        timestamp_ms: now.as_millis() as u64,
        time: date,
        jobs,
        groups,
        // disk_util=0 on every job turns the Disk stats section off, as in fio.
        disk_util: outcome
            .disks
            .iter()
            .filter(|_| specs.iter().any(|s| s.disk_util))
            .map(|d| {
                disk_util(&iolab_stats::DiskUtil {
                    name: d.name.clone(),
                    stats: d.delta,
                    msec: d.elapsed_ms,
                })
            })
            .collect(),
        ..Report::default()
    }
}

/// `Sun Nov 22 21:38:59 2026`, in local time as fio prints it (UTC here: no time zone data is
/// read, which is what these machines use).
pub(crate) fn fio_date(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mon = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mon <= 2);
    let mn = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(mon - 1) as usize];
    format!("{wd} {mn} {d:2} {h:02}:{m:02}:{s:02} {y}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--help` lists only options the parser takes as top-level ones.
    #[test]
    fn every_option_in_the_help_is_a_top_level_option() {
        for (spelled, _) in TOP_HELP {
            for form in spelled.split(", ") {
                let name = form.split(['=', '[']).next().unwrap_or(form);
                let word = if form.contains('=') && !form.contains("[=") {
                    format!("{name}=1")
                } else {
                    name.to_string()
                };
                match parse_cmdline(&[word.as_str()]) {
                    Ok(inv) => assert!(
                        inv.globals.is_empty() && inv.cmdline_jobs.is_empty(),
                        "{word} is a job option"
                    ),
                    // A value the option refuses is still the option's own error.
                    Err(e) => assert_eq!(e.kind, iolab_job::ErrorKind::Usage, "{word}: {e}"),
                }
            }
        }
    }
}
