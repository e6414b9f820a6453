//! fio's command line: top-level options, job options before the first `--name` (globals),
//! `--name=x` starting a job, job files as positional arguments (`-` = standard input).
//! Both `--opt=value` and fio's single-dash `-opt=value` are accepted, as are `--opt value`
//! and unambiguous prefixes of option names (fio uses getopt_long_only).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;

mod refused;

use crate::error::{ErrorKind, JobError, Loc};
use crate::parse::{self, JobFile, ParseOpts, RawJob, RawOption, Vars};
use crate::read::{Budget, MAX_JOBS};

/// Output formats of `--output-format` (comma-separated in fio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// fio's text.
    Normal,
    /// JSON.
    Json,
    /// JSON with histogram bins.
    JsonPlus,
    /// Terse (semicolon) format.
    Terse,
}

/// fio's top-level (non-job) options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopLevel {
    /// `--profile=`: the built-in profile whose jobs join the command line's.
    pub profile: Option<String>,
    /// The profile's own options as given (`--device-names=...`), in order.
    pub profile_opts: Vec<(String, Option<String>)>,
    /// `--output=FILE`.
    pub output: Option<String>,
    /// `--output-format=` (default normal); `--minimal` means terse.
    pub output_format: Vec<OutputFormat>,
    /// `--section=` (repeatable).
    pub sections: Vec<String>,
    /// `--parse-only`.
    pub parse_only: bool,
    /// `--readonly`.
    pub readonly: bool,
    /// `--max-jobs=N`.
    pub max_jobs: Option<u32>,
    /// `--cmdhelp` (Some(None)) or `--cmdhelp=opt`.
    pub cmdhelp: Option<Option<String>>,
    /// `--enghelp` or `--enghelp=engine[,opt]`.
    pub enghelp: Option<Option<String>>,
    /// `--crctest` (every checksum) or `--crctest=md5,crc32c`.
    pub crctest: Option<Option<String>>,
    /// `--version`.
    pub version: bool,
    /// `--help`.
    pub help: bool,
    /// `--showcmd`.
    pub showcmd: bool,
    /// `--eta=always|never|auto`.
    pub eta: Option<String>,
    /// `--eta-newline=time`, in microseconds.
    pub eta_newline_us: Option<u64>,
    /// `--eta-interval=time`, in microseconds.
    pub eta_interval_us: Option<u64>,
    /// `--status-interval=time`, in microseconds.
    pub status_interval_us: Option<u64>,
    /// `--warnings-fatal`.
    pub warnings_fatal: bool,
    /// `--terse-version=N`.
    pub terse_version: Option<u32>,
    /// `--append-terse`.
    pub append_terse: bool,
    /// `--alloc-size=KiB`: checked, and of no effect. fio sizes its shared-memory pool with
    /// it; iolab runs jobs as threads and has no such pool, so there is nothing to size.
    pub alloc_size_kib: Option<u64>,
    /// `--debug=`: the categories' mask ([`crate::debug`]).
    pub debug: u32,
    /// `--debug=job:N`: only job N's debug lines.
    pub debug_job: Option<u32>,
    /// `--trigger-file=FILE`: when it appears, the run stops and `--trigger` runs.
    pub trigger_file: Option<PathBuf>,
    /// `--trigger-timeout=time` (seconds by default), in microseconds: the trigger fires then.
    pub trigger_timeout_us: Option<u64>,
    /// `--trigger=cmd`: the shell command run when the trigger fires.
    pub trigger_cmd: Option<String>,
    /// `--bandwidth-log`: the run's aggregate bandwidth to `agg-{read,write,trim}_bw.log`.
    pub bandwidth_log: bool,
    /// `--inflate-log=FILE`: print a compressed log's text, run nothing.
    pub inflate_log: Option<String>,
    /// `--idle-prof=calibrate|system|percpu`.
    pub idle_prof: Option<IdleProf>,
    /// `--aux-path=DIR`: where the state files a run generates go (verify_state_save/load).
    pub aux_path: Option<PathBuf>,
    /// `--merge-blktrace-only`: merge the jobs' blktraces (merge_blktrace_file), run nothing.
    pub merge_blktrace_only: bool,
}

/// fio's `--idle-prof` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleProf {
    /// Time the unit of work, print it and exit.
    Calibrate,
    /// The whole machine's idleness.
    System,
    /// And each CPU's.
    PerCpu,
}

/// What `iolab run` / `fio` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// Top-level options.
    pub top: TopLevel,
    /// Job files named on the command line, in order (`-` = stdin). Paths, not text: a Linux
    /// file name is bytes.
    pub job_files: Vec<PathBuf>,
    /// Options given before the first `--name`: they apply to every job, also those in files.
    pub globals: Vec<RawOption>,
    /// Jobs defined with `--name=` on the command line.
    pub cmdline_jobs: Vec<RawJob>,
}

#[derive(Clone, Copy, PartialEq)]
enum Arg {
    None,
    Required,
    Optional,
}

const TOP: &[(&str, Arg)] = &[
    ("output", Arg::Required),
    ("output-format", Arg::Required),
    ("minimal", Arg::None),
    ("section", Arg::Required),
    ("parse-only", Arg::None),
    ("readonly", Arg::None),
    ("max-jobs", Arg::Required),
    ("cmdhelp", Arg::Optional),
    ("enghelp", Arg::Optional),
    ("version", Arg::None),
    ("help", Arg::None),
    ("showcmd", Arg::None),
    ("eta", Arg::Required),
    ("eta-newline", Arg::Required),
    ("eta-interval", Arg::Required),
    ("status-interval", Arg::Required),
    ("warnings-fatal", Arg::None),
    ("terse-version", Arg::Required),
    ("append-terse", Arg::None),
    ("alloc-size", Arg::Required),
    ("debug", Arg::Required),
    ("profile", Arg::Required),
    // fio has these; iolab refuses them by name, with the reason.
    ("server", Arg::Optional),
    ("client", Arg::Required),
    ("daemonize", Arg::Required),
    ("remote-config", Arg::Required),
    ("idle-prof", Arg::Required),
    ("inflate-log", Arg::Required),
    ("trigger-file", Arg::Required),
    ("trigger-timeout", Arg::Required),
    ("trigger", Arg::Required),
    ("trigger-remote", Arg::Required),
    ("aux-path", Arg::Required),
    ("crctest", Arg::Optional),
    ("cpuclock-test", Arg::None),
    ("bandwidth-log", Arg::None),
    ("merge-blktrace-only", Arg::None),
];

/// Resolves a top-level name: exact, or a unique prefix among top-level and job option names.
fn top_lookup(name: &str) -> Result<Option<(&'static str, Arg)>, JobError> {
    if let Some(t) = TOP.iter().find(|(n, _)| *n == name) {
        return Ok(Some(*t));
    }
    if crate::options::find(name).is_some() {
        return Ok(None);
    }
    let tops: Vec<_> = TOP.iter().filter(|(n, _)| n.starts_with(name)).collect();
    let jobs = parse::find_prefix(name);
    match (tops.as_slice(), jobs) {
        ([one], Err(e)) if e.kind == ErrorKind::UnknownOption => Ok(Some(**one)),
        ([], _) => Ok(None),
        _ => Err(JobError::new(
            ErrorKind::AmbiguousOption,
            format!("option '{name}' is ambiguous"),
        )),
    }
}

fn formats(v: &str) -> Result<Vec<OutputFormat>, String> {
    v.split(',')
        .map(|f| match f.trim() {
            "normal" => Ok(OutputFormat::Normal),
            "json" => Ok(OutputFormat::Json),
            "json+" => Ok(OutputFormat::JsonPlus),
            "terse" => Ok(OutputFormat::Terse),
            other => Err(format!(
                "invalid output format '{other}' (normal, json, json+, terse)"
            )),
        })
        .collect()
}

fn secs(v: &str) -> Result<u64, String> {
    crate::value::parse_time(v, crate::value::TimeUnit::Seconds).map(|t| t.us)
}

/// A whole number, as fio's `--max-jobs` and `--terse-version` take it.
fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| "invalid number".to_string())
}

fn idle_prof(v: &str) -> Result<IdleProf, String> {
    Ok(match v {
        "calibrate" => IdleProf::Calibrate,
        "system" => IdleProf::System,
        "percpu" => IdleProf::PerCpu,
        o => {
            return Err(format!(
                "incorrect idle-prof option: {o} (calibrate, system, percpu)"
            ))
        }
    })
}

fn set_top(top: &mut TopLevel, name: &str, v: Option<String>) -> Result<(), String> {
    let req = || v.clone().ok_or_else(|| "needs a value".to_string());
    match name {
        "output" => top.output = Some(req()?),
        "output-format" => top.output_format = formats(&req()?)?,
        "minimal" => top.output_format = vec![OutputFormat::Terse],
        "section" => top.sections.push(req()?),
        "parse-only" => top.parse_only = true,
        "readonly" => top.readonly = true,
        "max-jobs" => top.max_jobs = Some(number(&req()?)?),
        "cmdhelp" => top.cmdhelp = Some(v),
        "enghelp" => top.enghelp = Some(v),
        "crctest" => top.crctest = Some(v),
        "version" => top.version = true,
        "help" => top.help = true,
        "showcmd" => top.showcmd = true,
        "eta" => {
            let e = req()?;
            if !["always", "never", "auto"].contains(&e.as_str()) {
                return Err(format!("invalid eta '{e}' (always, never, auto)"));
            }
            top.eta = Some(e);
        }
        "eta-newline" => top.eta_newline_us = Some(secs(&req()?)?),
        "eta-interval" => top.eta_interval_us = Some(secs(&req()?)?),
        "status-interval" => top.status_interval_us = Some(secs(&req()?)?),
        "warnings-fatal" => top.warnings_fatal = true,
        "terse-version" => top.terse_version = Some(number(&req()?)?),
        "append-terse" => top.append_terse = true,
        "trigger-file" => top.trigger_file = Some(PathBuf::from(req()?)),
        "trigger-timeout" => top.trigger_timeout_us = Some(secs(&req()?)?),
        "trigger" => top.trigger_cmd = Some(req()?),
        "aux-path" => top.aux_path = Some(PathBuf::from(req()?)),
        "merge-blktrace-only" => top.merge_blktrace_only = true,
        "bandwidth-log" => top.bandwidth_log = true,
        "inflate-log" => top.inflate_log = Some(req()?),
        "idle-prof" => top.idle_prof = Some(idle_prof(&req()?)?),
        "debug" => {
            let (mask, job) = crate::debug::parse(&req()?)?;
            top.debug |= mask;
            top.debug_job = job.or(top.debug_job);
        }
        "profile" => top.profile = Some(crate::profile::check(&req()?)?),
        "alloc-size" => {
            let kib = req()?
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|k| *k > 0)
                .ok_or("needs a size in KiB, a whole number above 0")?;
            top.alloc_size_kib = Some(kib);
        }
        other => match refused::why(other) {
            Some(why) => return Err(format!("not supported by iolab: {why}")),
            None => return Err(format!("iolab does not handle --{other}")),
        },
    }
    Ok(())
}

/// The command line's globals as every `--name` job shares them, and their weight.
pub(crate) type SharedGlobals = (Arc<[RawOption]>, (usize, usize));

/// Puts a job option where it belongs: `--name` starts a job that shares the globals, later
/// options go to the last job, earlier ones are globals.
pub(crate) fn place_option(
    inv: &mut Invocation,
    shared: &mut Option<SharedGlobals>,
    budget: &mut Budget,
    opt: RawOption,
    loc: &Loc,
) -> Result<(), JobError> {
    let usage = |m: String| JobError::new(ErrorKind::Usage, m).at(loc);
    let bytes = opt.value.as_ref().map_or(0, String::len);
    if opt.def.name == "name" {
        if inv.cmdline_jobs.len() >= MAX_JOBS {
            return Err(usage(format!("more than {MAX_JOBS} jobs (fio's limit)")));
        }
        let (globals, (n, b)) =
            shared.get_or_insert_with(|| (inv.globals.clone().into(), parse::weight(&inv.globals)));
        budget.apply(*n + 1, *b + bytes).map_err(usage)?;
        let mut job = RawJob::new(opt.value.clone().unwrap_or_default(), loc.clone(), 0);
        job.inherited.len = globals.len();
        job.inherited.globals = globals.clone();
        job.own.push(opt);
        inv.cmdline_jobs.push(job);
    } else if let Some(job) = inv.cmdline_jobs.last_mut() {
        budget.apply(1, bytes).map_err(usage)?;
        job.own.push(opt);
    } else {
        inv.globals.push(opt);
    }
    Ok(())
}

/// Parses fio's command line. `args` excludes the program name.
pub fn parse_cmdline<A: AsRef<OsStr>>(args: &[A]) -> Result<Invocation, JobError> {
    parse_cmdline_with(args, &Vars::system())
}

/// Argument `i` (0-based) as text: options and their values must be UTF-8, job files need not.
fn text<A: AsRef<OsStr>>(args: &[A], i: usize) -> Result<String, JobError> {
    let a = args[i].as_ref();
    a.to_str().map(String::from).ok_or_else(|| {
        JobError::new(ErrorKind::Usage, format!("{a:?} is not valid UTF-8"))
            .at(&Loc::cmdline(i + 1))
    })
}

/// [`parse_cmdline`] with explicit variable values (for tests).
pub fn parse_cmdline_with<A: AsRef<OsStr>>(
    args: &[A],
    vars: &Vars,
) -> Result<Invocation, JobError> {
    let mut inv = Invocation::default();
    let mut budget = Budget::default();
    // The globals, shared by every `--name` job once the first one starts them.
    let mut shared: Option<SharedGlobals> = None;
    if let Some(at) = args.iter().position(|a| a.as_ref().as_bytes().contains(&0)) {
        return Err(
            JobError::new(ErrorKind::Usage, "argument contains a NUL byte")
                .at(&Loc::cmdline(at + 1)),
        );
    }
    // fio knows a profile's own options wherever --profile stands on the line.
    let profile = args.iter().rev().find_map(|a| {
        let a = a.as_ref().to_str()?.trim_start_matches('-');
        a.strip_prefix("profile=").map(String::from)
    });
    let mut i = 0;
    while i < args.len() {
        let loc = Loc::cmdline(i + 1);
        let raw = args[i].as_ref().as_bytes();
        let dashes = raw.iter().take(2).take_while(|b| **b == b'-').count();
        if dashes == 0 || raw.len() == dashes {
            inv.job_files.push(PathBuf::from(args[i].as_ref()));
            i += 1;
            continue;
        }
        let arg = text(args, i)?;
        i += 1;
        let body = &arg[dashes..];
        let (name, mut value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if take_top(&mut inv, args, &mut i, dashes, name, &mut value, &loc)? {
            continue;
        }
        if take_profile_option(&mut inv, args, &mut i, profile.as_deref(), name, &mut value)? {
            continue;
        }
        let def = crate::options::find(name)
            .map_or_else(|| parse::find_prefix(name).map_err(|e| e.at(&loc)), Ok)?;
        // getopt_long: a required argument may be the next word (`--bs 4k`).
        if value.is_none() && def.kind != crate::options::Kind::Flag && i < args.len() {
            value = Some(text(args, i)?);
            i += 1;
        }
        let text = match &value {
            Some(v) => format!(
                "{}={}",
                def.name,
                vars.expand_within(v, &mut budget).map_err(|e| e.at(&loc))?
            ),
            None => def.name.to_string(),
        };
        let mut opt = parse::parse_option(&text, &loc, false).map_err(|mut e| {
            e.option = Some(name.to_string());
            e
        })?;
        opt.spelled = name.to_string();
        place_option(&mut inv, &mut shared, &mut budget, opt, &loc)?;
    }
    crate::profile::expand(&mut inv, vars, &mut budget)?;
    finish_top(&mut inv.top);
    Ok(inv)
}

/// A top-level option (`--output`, `-h`, ...) with its value, which may be the next word;
/// false when `name` is none, and then `value` is left as it was.
fn take_top<A: AsRef<OsStr>>(
    inv: &mut Invocation,
    args: &[A],
    i: &mut usize,
    dashes: usize,
    name: &str,
    value: &mut Option<String>,
    loc: &Loc,
) -> Result<bool, JobError> {
    // getopt_long_only: a single-dash word that is no long option falls back to fio's short
    // options, so `-h` is help and `-v` the version (where `--h` and `--v` are ambiguous).
    let short = match (dashes, name) {
        (1, "h") => Some("help"),
        (1, "v") => Some("version"),
        _ => None,
    };
    let found = match short {
        Some(long) => Ok(TOP.iter().find(|(n, _)| *n == long).copied()),
        None => top_lookup(name),
    };
    let Some((top, kind)) = found.map_err(|e| e.at(loc))? else {
        return Ok(false);
    };
    if value.is_none() && kind == Arg::Required && *i < args.len() {
        *value = Some(text(args, *i)?);
        *i += 1;
    }
    set_top(&mut inv.top, top, value.take()).map_err(|m| {
        let kind = if m.contains("not supported") {
            ErrorKind::Unsupported
        } else {
            ErrorKind::Usage
        };
        JobError::new(kind, m).at(loc).option(name)
    })?;
    Ok(true)
}

/// An option of the `--profile` given anywhere on the line: act's are kept for the profile,
/// tiobench's ignored as fio 3.33 does. False when `name` is no such option.
fn take_profile_option<A: AsRef<OsStr>>(
    inv: &mut Invocation,
    args: &[A],
    i: &mut usize,
    profile: Option<&str>,
    name: &str,
    value: &mut Option<String>,
) -> Result<bool, JobError> {
    if profile.is_none() {
        let Some(owner) = crate::profile::unloaded_owner(name) else {
            return Ok(false);
        };
        // As getopt: a profile option's value may be the next word.
        if value.is_none() && crate::profile::takes_value(name) && *i < args.len() {
            *i += 1;
        }
        let _ = writeln!(
            std::io::stderr(),
            "fio: --{name} is ignored: it is the {owner} profile's option, and no \
             --profile={owner} is given (fio 3.33 takes it and does nothing)"
        );
        return Ok(true);
    }
    if !crate::profile::own_option(profile, name) {
        return Ok(false);
    }
    if profile == Some("act") {
        if value.is_none() && crate::profile::takes_value(name) && *i < args.len() {
            *value = Some(text(args, *i)?);
            *i += 1;
        }
        inv.top.profile_opts.push((name.to_string(), value.take()));
        return Ok(true);
    }
    if value.is_none() && *i < args.len() {
        *i += 1;
    }
    let _ = writeln!(
        std::io::stderr(),
        "fio: --{name} is ignored: fio 3.33's tiobench profile builds its jobs with fixed \
         values (size=4*1024*$mb_memory, bs=4096, loops=1, numjobs=1, directory=./)"
    );
    Ok(true)
}

/// What follows from the whole command line: fio's default output format, and the debug
/// categories set and announced as fio announces them (on standard output, even with
/// `--output`, unless that carries JSON or terse). Where the run's lines go is the caller's
/// to say ([`TopLevel::route_lines`]): a library caller parses command lines of its own.
fn finish_top(top: &mut TopLevel) {
    if top.output_format.is_empty() {
        top.output_format.push(OutputFormat::Normal);
    }
    if top.debug != 0 {
        crate::debug::set(top.debug, top.debug_job);
        let to_stdout = top.output_format.contains(&OutputFormat::Normal) || top.output.is_some();
        let job = top.debug_job.map(|n| format!("fio: set debug jobno {n}"));
        let named = crate::debug::CATEGORIES
            .iter()
            .filter(|(n, bit)| top.debug & bit != 0 && *n != "job")
            .map(|(name, _)| format!("fio: set debug option {name}"));
        for msg in named.chain(job) {
            // A closed stdout is not an error here (the run reports it if it matters).
            let _ = if to_stdout {
                writeln!(std::io::stdout(), "{msg}")
            } else {
                writeln!(std::io::stderr(), "{msg}")
            };
        }
    }
}

impl TopLevel {
    /// Sends the run's informational and debug lines where fio puts them for these output
    /// formats and `--output` ([`crate::lines::route`]); `iolab run` calls it once parsed.
    pub fn route_lines(&self) {
        let normal = self.output_format.contains(&OutputFormat::Normal);
        crate::lines::route(normal, self.output.is_some());
    }
}

impl Invocation {
    /// Reads the job files and puts everything together: the command line's jobs first, then
    /// the files' jobs (each file its own group), every job starting from the command line's
    /// globals, `--section` applied to the files.
    pub fn load(&self) -> Result<JobFile, JobError> {
        self.load_with(Vars::system())
    }

    /// Applies the command line's globals as a job of their own would take them, and drops
    /// the result: fio's `--parse-only` with no job parses its default job's options (their
    /// `--debug=parse` lines, their refusals) and exits 0.
    pub fn check_globals(&self) -> Result<(), JobError> {
        let mut job = RawJob::new("global", Loc::cmdline(0), 0);
        job.own.clone_from(&self.globals);
        JobFile {
            jobs: vec![job],
            warnings: Vec::new(),
        }
        .resolve()
        .map(drop)
    }

    /// [`Invocation::load`] with explicit variable values.
    pub fn load_with(&self, vars: Vars) -> Result<JobFile, JobError> {
        let (texts, budget) = parse::read_texts(&self.job_files)?;
        let opts = ParseOpts {
            sections: self.top.sections.clone(),
            vars,
            base: self.globals.clone(),
        };
        let mut files = parse::parse_texts_within(&texts, &opts, budget)?;
        let offset = usize::from(!self.cmdline_jobs.is_empty());
        for j in &mut files.jobs {
            j.group += offset;
        }
        let mut jobs = self.cmdline_jobs.clone();
        jobs.append(&mut files.jobs);
        if jobs.len() > MAX_JOBS {
            return Err(JobError::new(
                ErrorKind::Usage,
                format!("more than {MAX_JOBS} jobs (fio's limit) on the command line and in job files together"),
            ));
        }
        Ok(JobFile {
            jobs,
            warnings: files.warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn inv(s: &str) -> Invocation {
        let vars = Vars {
            pagesize: 4096,
            ncpus: 2,
            mb_memory: 64,
            env: Box::new(|_| None),
        };
        parse_cmdline_with(&args(s), &vars).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> JobError {
        let vars = Vars {
            pagesize: 4096,
            ncpus: 2,
            mb_memory: 64,
            env: Box::new(|_| None),
        };
        parse_cmdline_with(&args(s), &vars)
            .err()
            .unwrap_or_else(|| panic!("{s}: accepted"))
    }

    #[test]
    fn single_dash_form_from_the_issue() {
        let i = inv(
            "-name=randwrite -rw=randwrite -direct=1 -bs=4k -size=1G -numjobs=1 \
                     -group_reporting -filename=test.db",
        );
        assert_eq!(i.cmdline_jobs.len(), 1);
        let j = &i.cmdline_jobs[0];
        assert_eq!(j.name, "randwrite");
        assert_eq!(j.options().count(), 8);
        let file = JobFile {
            jobs: i.cmdline_jobs.clone(),
            warnings: Vec::new(),
        };
        let r = file.resolve().unwrap_or_else(|e| panic!("{e}"));
        assert!(r.jobs[0].direct && r.jobs[0].group_reporting);
        assert_eq!(r.jobs[0].filename, vec!["test.db".to_string()]);
    }

    #[test]
    fn globals_before_first_name_apply_to_every_job() {
        let i = inv("--bs=8k --name=a --rw=read --name=b --iodepth 4");
        assert_eq!(i.globals.len(), 1);
        assert_eq!(i.cmdline_jobs.len(), 2);
        let file = JobFile {
            jobs: i.cmdline_jobs.clone(),
            warnings: Vec::new(),
        };
        let r = file.resolve().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.jobs[0].bs.read, 8192);
        assert_eq!(r.jobs[1].bs.read, 8192);
        assert_eq!(r.jobs[1].engine.depth, 4);
        assert_eq!(r.jobs[0].rw, crate::value::RwMode::Read);
    }

    #[test]
    fn top_level_options_and_job_files() {
        let i = inv(
            "--output-format=json,normal --output out.txt --parse-only --readonly \
                     --max-jobs=8 --section=a --section=b --status-interval=2 --eta=never \
                     job1.fio - --cmdhelp=bs --version",
        );
        assert_eq!(
            i.top.output_format,
            vec![OutputFormat::Json, OutputFormat::Normal]
        );
        assert_eq!(i.top.output.as_deref(), Some("out.txt"));
        assert!(i.top.parse_only && i.top.readonly && i.top.version);
        assert_eq!(i.top.max_jobs, Some(8));
        assert_eq!(i.top.sections, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(i.top.status_interval_us, Some(2_000_000));
        assert_eq!(i.job_files, [PathBuf::from("job1.fio"), PathBuf::from("-")]);
        assert_eq!(i.top.cmdhelp, Some(Some("bs".to_string())));
        assert_eq!(inv("--cmdhelp").top.cmdhelp, Some(None));
        assert_eq!(
            inv("--minimal").top.output_format,
            vec![OutputFormat::Terse]
        );
        assert_eq!(inv("").top.output_format, vec![OutputFormat::Normal]);
    }

    #[test]
    fn prefixes_like_getopt_long() {
        // Verified with fio 3.33: --runti, --ioeng, --time_b, --output-f are accepted;
        // --filen, --direc, --ra are ambiguous.
        let i = inv("--name=x --runti=1 --ioeng=null --time_b");
        assert_eq!(i.cmdline_jobs[0].options().count(), 4);
        assert_eq!(
            inv("--output-f=json").top.output_format,
            vec![OutputFormat::Json]
        );
        assert_eq!(err("--name=x --filen=/a").kind, ErrorKind::AmbiguousOption);
        assert_eq!(err("--name=x --direc=1").kind, ErrorKind::AmbiguousOption);
    }

    /// Regression: `--alloc-size` reached the user as "internal: unhandled top-level option".
    #[test]
    fn every_top_level_option_is_handled_or_refused_by_name() {
        for (name, arg) in TOP {
            let word = match arg {
                Arg::None => format!("--{name}"),
                _ => format!("--{name}=1"),
            };
            if let Err(e) = parse_cmdline_with(&[word.as_str()], &Vars::system()) {
                let text = e.to_string();
                assert!(!text.contains("internal"), "{word}: {text}");
                assert_eq!(
                    text.matches(&format!("'{name}'")).count(),
                    1,
                    "{word}: {text}"
                );
            }
        }
    }

    /// Regression: `iolab run -h` said "option 'h' is ambiguous"; fio's -h is help, -v version.
    #[test]
    fn single_dash_h_and_v_are_fios_short_options() {
        assert!(inv("-h").top.help);
        assert!(inv("-v").top.version);
        assert_eq!(err("--h").kind, ErrorKind::AmbiguousOption);
    }

    #[test]
    fn job_files_may_be_any_bytes_but_options_must_be_text() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let vars = Vars {
            pagesize: 4096,
            ncpus: 2,
            mb_memory: 64,
            env: Box::new(|_| None),
        };
        let file = OsString::from_vec(b"caf\xe9.fio".to_vec());
        let i = parse_cmdline_with(std::slice::from_ref(&file), &vars)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(i.job_files, [PathBuf::from(&file)]);
        let bad = [
            OsString::from("--name=x"),
            OsString::from_vec(b"--bs=4\xe9".to_vec()),
        ];
        let e = parse_cmdline_with(&bad, &vars)
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(
            e.to_string(),
            r#"command line argument 2: "--bs=4\xE9" is not valid UTF-8"#
        );
    }

    #[test]
    fn errors_name_the_argument() {
        let e = err("--name=x --bs=4x");
        assert_eq!(
            e.to_string(),
            "command line argument 2: option 'bs': invalid size '4x'"
        );
        let e = err("--name=x --sizee=1m");
        assert!(e.to_string().contains("Did you mean size?"), "{e}");
        assert_eq!(err("--name=x --direct").kind, ErrorKind::MissingValue);
        assert_eq!(err("--server").kind, ErrorKind::Unsupported);
        assert_eq!(err("--output-format=xml").kind, ErrorKind::Usage);
    }

    #[test]
    fn every_top_level_option_is_handled() {
        // Regression: --alloc-size was listed but not handled, and said "internal: ...".
        for (name, _) in TOP {
            let r = set_top(&mut TopLevel::default(), name, Some("1".into()));
            assert!(
                r.as_ref()
                    .err()
                    .is_none_or(|m| !m.contains("does not handle")),
                "--{name}: {r:?}"
            );
        }
    }

    #[test]
    fn load_puts_cmdline_jobs_first_and_applies_globals_to_files() {
        let path = std::env::temp_dir().join(format!("iolab-job-cmd-{}.fio", std::process::id()));
        std::fs::write(&path, "[f]\nrw=write\n").unwrap_or_else(|e| panic!("{e}"));
        let p = path.display().to_string();
        let i = inv(&format!("--iodepth=3 {p} --name=c"));
        let vars = Vars {
            pagesize: 4096,
            ncpus: 2,
            mb_memory: 64,
            env: Box::new(|_| None),
        };
        let r = i
            .load_with(vars)
            .and_then(|f| f.resolve())
            .unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_file(&path);
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[0].name, "c");
        assert_eq!(r.jobs[1].name, "f");
        assert_eq!(r.jobs[1].engine.depth, 3);
        assert!(r.jobs[1].stonewall); // a job file is its own group
    }
}
