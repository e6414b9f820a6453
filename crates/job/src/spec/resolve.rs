//! Resolving a parsed job file into [`JobSpec`]s: refusals, each option applied through its
//! definition in order, and what fio derives once all are applied.

use super::JobSpec;
use crate::error::{ErrorKind, JobError, Warning};
use crate::options::{self, Arg, EngineName, Kind};
use crate::parse::{JobFile, RawJob, RawOption};

/// Resolved jobs and the warnings met on the way.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The jobs, numjobs not expanded.
    pub jobs: Vec<JobSpec>,
    /// Things fio accepts silently that are probably mistakes.
    pub warnings: Vec<Warning>,
}

impl JobFile {
    /// Turns every job into a [`JobSpec`]: refuses options and engines iolab does not
    /// implement (naming option, file and line), applies the rest in order (later wins; the
    /// job's final `kb_base` applies to all its sizes, as fio sorts it first), then checks the
    /// job as a whole. The first job of each job file after the first gets `stonewall`.
    pub fn resolve(&self) -> Result<Resolved, JobError> {
        let mut out = Resolved {
            jobs: Vec::new(),
            warnings: self.warnings.clone(),
        };
        let mut last_group = None;
        for raw in &self.jobs {
            let mut spec = resolve_job(raw, &mut out.warnings)?;
            if last_group.is_some_and(|g| g != raw.group) {
                spec.stonewall = true;
            }
            last_group = Some(raw.group);
            out.jobs.push(spec);
        }
        Ok(out)
    }
}

fn err(o: &RawOption, kind: ErrorKind, msg: impl Into<String>) -> JobError {
    JobError::new(kind, msg).at(&o.loc).option(&o.spelled)
}

fn check_engine(o: &RawOption) -> Result<(), JobError> {
    match options::engine_by_name(o.value.as_deref().unwrap_or("")) {
        EngineName::Iolab(_) => Ok(()),
        n @ EngineName::FioOnly(_) => Err(err(o, ErrorKind::UnsupportedEngine, n.message())),
        n @ EngineName::Unknown(_) => Err(err(o, ErrorKind::InvalidValue, n.message())),
    }
}

fn resolve_job(raw: &RawJob, warnings: &mut Vec<Warning>) -> Result<JobSpec, JobError> {
    let mut spec = JobSpec::new(&raw.name, raw.loc.clone());
    // Engine first: "engine rbd is not supported" says more than its options would.
    for o in raw.options().filter(|o| o.def.name == "ioengine") {
        check_engine(o)?;
    }
    refuse_unsupported(raw, warnings)?;
    // fio sorts kb_base first: the job's final kb_base applies to all its sizes.
    for o in raw.options().filter(|o| o.def.name == "kb_base") {
        apply(&mut spec, o).map_err(|m| err(o, ErrorKind::InvalidValue, m))?;
    }
    let (mut runtime_set, mut time_based_set) = (false, false);
    for o in raw.options().filter(|o| !profile_only(o)) {
        apply(&mut spec, o).map_err(|m| err(o, ErrorKind::InvalidValue, m))?;
        runtime_set |= o.def.name == "runtime";
        time_based_set |= o.def.name == "time_based";
        spec.iodepth_given |= o.def.name == "iodepth";
        spec.direct_given |= matches!(o.def.name, "direct" | "buffered");
    }
    // fio's verify_pattern: without a `verify` of the job's own, the job verifies with fio's
    // header and the pattern after it (fio's VERIFY_PATTERN, not verify=pattern's bare one).
    if spec.verify_pattern.is_some() && !raw.options().any(|o| o.def.name == "verify") {
        spec.verify = crate::options::PATTERN_WITH_HEADER.into();
    }
    settle_depths_and_windows(&mut spec, raw);
    settle_block_sizes(&mut spec);
    check_zones(&spec, raw)?;
    if let Err(m) = spec.logs.check() {
        if let Some(o) = raw.options().find(|o| o.def.name == "log_issue_time") {
            return Err(err(o, ErrorKind::InvalidValue, m));
        }
    }
    if let Err(m) = crate::control::check_steady_window(&spec) {
        if let Some(o) = raw.options().find(|o| o.def.name == "steadystate_duration") {
            return Err(err(o, ErrorKind::InvalidValue, m));
        }
    }
    if spec.engine.uncached {
        warnings.push(Warning {
            loc: raw.loc.clone(),
            option: "uncached".into(),
            message: "fio 3.33 sends RWF_UNCACHED as 0x40, which kernels since 6.11 read as \
                      RWF_ATOMIC (fio fails with err=95); iolab sends RWF_DONTCACHE (0x80), \
                      the uncached buffered I/O fio's HOWTO describes"
                .into(),
        });
    }
    // Only a time_based the job wrote: cpuio's own (its cpuload) runs until its runtime, for
    // ever without one, as fio's cpuio does (number_ios or a signal ends it).
    if time_based_set && spec.time_based && (!runtime_set || spec.runtime.is_none()) {
        warnings.push(Warning {
            loc: raw.loc.clone(),
            option: "time_based".into(),
            message: "time_based requires a runtime/timeout setting (ignored, as fio does)".into(),
        });
        // Regression: the warning said "ignored" but the flag stayed on, and the job ran for
        // ever; fio 3.33 runs such a job size-based.
        spec.time_based = false;
    }
    Ok(spec)
}

/// fio 3.33's zone checks: a zonesize needs a zonemode (fio does not take zonesize alone as
/// strided), and zonemode=strided needs a zonesize.
fn check_zones(spec: &JobSpec, raw: &RawJob) -> Result<(), JobError> {
    let last = |name: &str| raw.options().rfind(|o| o.def.name == name);
    if spec.zonesize > 0 && !spec.zone_strided && !spec.zone_zbd {
        if let Some(o) = last("zonesize") {
            return Err(err(
                o,
                ErrorKind::InvalidValue,
                "zonemode=none and zonesize are not compatible (set zonemode=strided or zbd)",
            ));
        }
    }
    if spec.zone_strided && spec.zonesize == 0 {
        if let Some(o) = last("zonemode") {
            return Err(err(
                o,
                ErrorKind::InvalidValue,
                "zonesize must be specified when using zonemode=strided",
            ));
        }
    }
    Ok(())
}

/// fio 3.33 registers its profiles' options with its own: a job file's `threads=1`
/// (tiobench's) is taken and does nothing there.
fn profile_only(o: &RawOption) -> bool {
    !o.def.implemented() && crate::profile::unloaded_owner(o.def.name).is_some()
}

/// Warns once of each profile option the job carries (fio takes them and does nothing), and
/// refuses the first option iolab does not implement, named as spelled.
fn refuse_unsupported(raw: &RawJob, warnings: &mut Vec<Warning>) -> Result<(), JobError> {
    for o in raw.options().filter(|o| profile_only(o)) {
        let w = Warning {
            loc: o.loc.clone(),
            option: o.spelled.clone(),
            message: format!(
                "ignored: it is the {} profile's option (fio 3.33 takes it and does nothing)",
                crate::profile::unloaded_owner(o.def.name).unwrap_or_default()
            ),
        };
        // A global section's line reaches every job; it is said once.
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    let Some(o) = raw
        .options()
        .find(|o| !o.def.implemented() && !profile_only(o))
    else {
        return Ok(());
    };
    // The error names the option as spelled; say the canonical name only if it differs.
    let msg = if o.def.help == crate::options::LATER {
        crate::options::LATER.to_string()
    } else if o.spelled == o.def.name {
        "not supported by iolab".to_string()
    } else {
        format!("not supported by iolab (fio's '{}')", o.def.name)
    };
    Err(err(o, ErrorKind::Unsupported, msg))
}

/// What fio derives from the options once they are all applied: the reap batch and
/// iodepth_low from the depth, and the sampling windows from the log options.
fn settle_depths_and_windows(spec: &mut JobSpec, raw: &RawJob) {
    // fio's HOWTO: "By default it is equal to the iodepth_batch_complete_min value" — not
    // iodepth. Reaping one at a time keeps the queue refilled one slot at a time; reaping the
    // whole depth lets it drain and fill in lock-step, which changes the figures (strace of
    // fio 3.33 shows io_getevents(ctx, 1, 1, ...) at iodepth=32).
    if spec.iodepth_batch_complete_max == 0 {
        spec.iodepth_batch_complete_max = spec.iodepth_batch_complete_min.max(1);
    }
    if spec.iodepth_low == 0 || spec.iodepth_low > spec.engine.depth {
        spec.iodepth_low = spec.engine.depth;
    }
    // fio 3.33 accepts min > max and raises max to min when it reaps; so do we.
    spec.iodepth_batch_complete_max = spec
        .iodepth_batch_complete_max
        .max(spec.iodepth_batch_complete_min);
    // fio samples at log_avg_msec unless bwavgtime / iopsavgtime were written.
    spec.logs.bw_avg_set = raw.options().any(|o| o.def.name == "bwavgtime");
    spec.logs.iops_avg_set = raw.options().any(|o| o.def.name == "iopsavgtime");
    spec.bwavgtime = spec.logs.bw_window(spec.bwavgtime);
    spec.iopsavgtime = spec.logs.iops_window(spec.iopsavgtime);
}

/// fio's fixup_options: a bsrange bound of 0 is the direction's `bs` (the final one, so
/// `bsrange=0-4G` then `bs=8k` draws from 8k up). `bsrange=0-4G` draws from 4 KiB in steps of
/// 4 KiB, and `bsrange=0-0` is `bs`; read as a 0-byte minimum, the first made one I/O of
/// 8 MiB of an 8 MiB file (fio 3.33 makes about a dozen), the second 8 Mi I/Os of 1 byte.
fn settle_block_sizes(spec: &mut JobSpec) {
    let bs = spec.bs;
    let r = &mut spec.bsrange;
    for (range, bs) in [
        (&mut r.read, bs.read),
        (&mut r.write, bs.write),
        (&mut r.trim, bs.trim),
    ] {
        if let Some(range) = range {
            for bound in [&mut range.0, &mut range.1] {
                if *bound == 0 {
                    *bound = bs;
                }
            }
        }
    }
}

/// Applies one option to a spec through its definition. Returns the message for an invalid
/// value.
fn apply(s: &mut JobSpec, o: &RawOption) -> Result<(), String> {
    let Some(f) = o.def.apply else {
        return Err("not supported by iolab".into());
    };
    let arg = Arg::new(o.def, o.value.as_deref(), s.kb_base);
    if arg.v.is_empty() && o.def.kind == Kind::Str {
        return Err("empty value".into());
    }
    let debug = crate::debug::on(crate::debug::PARSE);
    if debug {
        crate::debug::line(
            crate::debug::PARSE,
            std::process::id(),
            format_args!("handle_option={}, ptr={}", o.def.name, arg.v),
        );
    }
    f(s, &arg)?;
    // Said here, not in the row's closure, which also applies the defaults (fio says none).
    if debug && o.def.name == "steadystate" {
        crate::debug::line(
            crate::debug::PARSE,
            std::process::id(),
            format_args!("{}", s.steadystate.parse_line()),
        );
    }
    Ok(())
}

/// Splits `filename` at `:`, keeping fio's `\:` escape as a literal colon.
pub fn split_filenames(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}
