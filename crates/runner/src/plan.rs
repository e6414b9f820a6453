//! From fio's command line to the jobs planned against this host, in fio's order: load the
//! job files, resolve them (warnings), place each job's files (the caller says how: a rank of
//! an MPI run has its own), the test clamp, opendir, plan, `--max-jobs`, `--readonly`. What
//! planning has to say goes to the caller as lines, so the binary alone prints.

use iolab_job::{Invocation, JobFile, JobSpec, OutputFormat};
use iolab_workload::{attach_options, plan_jobs, JobPlan};

/// A line for the user, and where fio puts it.
pub enum Say {
    /// Standard output: `--showcmd`'s lines, and opendir's where the output is text.
    Out(String),
    /// Standard error: warnings, the test hook's notice, opendir's lines beside machine output.
    Err(String),
}

/// The jobs as written and as planned (`JobPlan::spec` indexes the first).
pub type Planned = (Vec<JobSpec>, Vec<JobPlan>);

/// Loads, checks and plans the jobs of `inv`; `None` when the options asked for no run
/// (`--showcmd`, `--parse-only`). `place` names each job's files (`$rank`, `$hostname`);
/// warnings start with `prefix`.
pub fn plan(
    inv: &Invocation,
    prefix: &str,
    place: &dyn Fn(&mut [JobSpec]) -> Result<(), String>,
    say: &mut dyn FnMut(Say),
) -> Result<Option<Planned>, String> {
    let top = &inv.top;
    let file = inv.load().map_err(|e| e.to_string())?;
    if top.showcmd {
        showcmd(&file).into_iter().for_each(|l| say(Say::Out(l)));
        return Ok(None);
    }
    let mut resolved = file.resolve().map_err(|e| e.to_string())?;
    resolved.jobs.iter().try_for_each(directories_exist)?;
    iolab_job::profile::apply_hooks(top, &mut resolved.jobs);
    say_warnings(&resolved, top.warnings_fatal, prefix, say)?;
    if top.parse_only {
        return Ok(None);
    }
    place(&mut resolved.jobs)?;
    if let Some(dir) = crate::clamp::from_env(&mut resolved.jobs) {
        let env = crate::clamp::ENV;
        say(Say::Err(format!(
            "iolab: {env}={dir}: test hook, jobs clamped to small sizes in that directory"
        )));
    }
    // fio's informational lines go with the output, unless it is for a machine.
    let machine = top.output_format.iter().any(|f| *f != OutputFormat::Normal);
    let info = |line: String| {
        if machine {
            Say::Err(line)
        } else {
            Say::Out(line)
        }
    };
    // fio's opendir: the files under the directory join the job; fio's line where info goes.
    for line in crate::opendir::expand(&mut resolved.jobs)? {
        say(info(line));
    }
    let specs = resolved.jobs;
    jobs_within_fios_limit(&specs)?;
    specs.iter().try_for_each(crate::mem::check_files)?;
    let mut plans = plan_jobs(&specs, &crate::host_env()).map_err(|e| e.to_string())?;
    attach_options(&file, &mut plans);
    if let Some(n) = crate::mem::limit_open_files(&mut plans) {
        // fio's line when its opens hit the descriptor limit (it learns it from EMFILE).
        say(Say::Err(format!("fio: limited open files to: {n}")));
    }
    for p in &plans {
        crate::mem::check_replay(p).map_err(|e| e.to_string())?;
    }
    // fio's lines about verifying jobs, said as it checks their options, where info goes.
    for line in plans.iter().flat_map(crate::job::verify_info_lines) {
        say(info(line.to_string()));
    }
    // fio 3.33 reads replay_skip for blktrace input only and replays a text iolog whole, its
    // writes too; iolab leaves the kinds out as fio's HOWTO describes, and says so.
    for p in &plans {
        if p.replay.as_ref().is_some_and(|r| !r.blktrace) && p.spec.replay_skip != 0 {
            say(Say::Err(format!(
                "{prefix}: warning: job <{}>: replay_skip leaves those I/Os out of the text \
                 iolog, as fio's HOWTO says; fio 3.33 applies it to blktrace input only and \
                 would replay them",
                p.name
            )));
        }
    }
    if let Some(max) = top.max_jobs.filter(|&m| plans.len() > m as usize) {
        return Err(format!("{} jobs exceed --max-jobs={max}", plans.len()));
    }
    if top.readonly {
        if let Some(p) = plans.iter().find(|p| p.pattern.write || p.pattern.trim) {
            return Err(format!(
                "job <{}> has write bit set, but --readonly is on",
                p.name
            ));
        }
    }
    Ok(Some((specs, plans)))
}

/// fio's limit on jobs counts each numjobs clone (its `get_new_job`: "maximum number of jobs
/// reached"): checked before the clones are made, since each is a plan and then a thread.
fn jobs_within_fios_limit(specs: &[JobSpec]) -> Result<(), String> {
    let max = iolab_job::MAX_JOBS as u64;
    let total: u64 = specs.iter().map(|s| u64::from(s.numjobs)).sum();
    if total <= max {
        return Ok(());
    }
    let Some(s) = specs.iter().max_by_key(|s| s.numjobs) else {
        return Ok(());
    };
    Err(format!(
        "{}:{}: job '{}': numjobs={} makes {total} jobs in all, more than {max} (fio's \
         limit: maximum number of jobs reached); lower numjobs",
        s.loc.file, s.loc.line, s.name, s.numjobs
    ))
}

/// fio 3.33 refuses a `directory` that is not one (each of a `:`-separated list), when it
/// reads the option, `--parse-only` included; it creates the directories of a `filename`.
fn directories_exist(spec: &JobSpec) -> Result<(), String> {
    let Some(dirs) = spec.directory.as_deref() else {
        return Ok(());
    };
    match dirs
        .split(':')
        .filter(|d| !d.is_empty())
        .find(|d| !std::path::Path::new(d).is_dir())
    {
        Some(d) => Err(format!(
            "{}: job <{}>: directory={dirs}: {d} is not a directory",
            spec.loc, spec.name
        )),
        None => Ok(()),
    }
}

/// fio's --showcmd: each job as the command line that would define it.
fn showcmd(file: &JobFile) -> Vec<String> {
    let mut lines = Vec::new();
    for job in &file.jobs {
        let mut line = format!("fio --name={}", job.name);
        for o in job.options().filter(|o| o.def.name != "name") {
            match o.value.as_deref() {
                Some(v) if !v.is_empty() => line.push_str(&format!(" --{}={v}", o.spelled)),
                _ => line.push_str(&format!(" --{}", o.spelled)),
            }
        }
        lines.push(format!("{line} "));
    }
    lines
}

/// The job file's warnings, and fio's fixup_options line for a verify that norandommap with
/// several block sizes limits (a later, larger write may cover part of an earlier block), once
/// a job as fio says it; under --warnings-fatal any of them fails the run.
fn say_warnings(
    resolved: &iolab_job::Resolved,
    fatal: bool,
    prefix: &str,
    say: &mut dyn FnMut(Say),
) -> Result<(), String> {
    for w in &resolved.warnings {
        say(Say::Err(format!("{prefix}: warning: {w}")));
    }
    let limited = resolved.jobs.iter().filter(|j| verify_limited(j)).count();
    for _ in 0..limited {
        say(Say::Err(
            "fio: norandommap given for variable block sizes, verify limited".into(),
        ));
    }
    if fatal && (!resolved.warnings.is_empty() || limited > 0) {
        return Err("warnings are fatal (--warnings-fatal)".into());
    }
    Ok(())
}

/// fio's test for its "verify limited" warning: a verifying job with norandommap whose block
/// sizes are not one fixed size (fio's fixed_block_size: each direction's smallest and
/// largest equal, and the same in every direction).
fn verify_limited(j: &iolab_job::JobSpec) -> bool {
    if !j.norandommap || !j.verifies() {
        return false;
    }
    let span = |bs: u64,
                range: &Option<(u64, u64)>,
                split: &Option<Vec<iolab_job::value::BsSplit>>| {
        match (split, range) {
            (Some(v), _) if !v.is_empty() => {
                let lo = v.iter().map(|e| e.bs).min().unwrap_or(bs);
                let hi = v.iter().map(|e| e.bs).max().unwrap_or(bs);
                (lo, hi)
            }
            (_, Some(r)) => *r,
            _ => (bs, bs),
        }
    };
    let r = span(j.bs.read, &j.bsrange.read, &j.bssplit.read);
    let w = span(j.bs.write, &j.bsrange.write, &j.bssplit.write);
    let t = span(j.bs.trim, &j.bsrange.trim, &j.bssplit.trim);
    !(r.0 == r.1 && w.0 == w.1 && t.0 == t.1 && r.0 == w.0 && r.0 == t.0)
}
