//! Before a verifying job runs: what it may verify (refusals), fio's verify settings turned
//! into the checker's `Config`, and a saved verify state loaded (verify_state_load).

use iolab_workload::{Dir as WDir, JobPlan};

use super::trim;
use crate::error::RunError;
use crate::verify::state::State;
use crate::verify::{Config, Kind, Pattern};

/// Refuses what cannot be verified as asked, before anything runs.
pub(crate) fn check(plan: &JobPlan) -> Result<(), RunError> {
    let on = config(plan)?.is_some();
    if let Some(why) = trim::refusal(plan).filter(|_| on) {
        return Err(RunError::Refused(format!("{}: {why}", plan.name)));
    }
    if on {
        super::threads::check_cpus(plan)?;
    }
    Ok(())
}

/// fio's informational lines about a verifying job, word for word, printed as fio checks
/// its options (before the job's header line): once per job, not per clone.
pub(crate) fn info_lines(plan: &JobPlan) -> Vec<&'static str> {
    let s = &plan.spec;
    let p = &plan.pattern;
    let mut lines = Vec::new();
    if plan.clone != 0 || Kind::parse(&s.verify).is_none() {
        return lines;
    }
    if p.write && s.numjobs > 1 && !s.filename.is_empty() {
        // Clones of one job write the same file.
        lines.push("fio: multiple writers may overwrite blocks that belong to other jobs. This can cause verification failures.");
    }
    let timed = s.time_based && s.runtime.is_some_and(|r| !r.is_zero());
    if s.do_verify && (p.write || p.trimwrite) && !p.read && timed && s.verify_backlog == 0 {
        // A time_based writer is stopped by its runtime: fio 3.33 reads nothing back.
        lines.push(
            "fio: verification read phase will never start because write phase uses all of runtime",
        );
    }
    lines
}

pub(super) fn config(plan: &JobPlan) -> Result<Option<Config>, RunError> {
    let s = &plan.spec;
    let refuse = |m: String| RunError::Refused(format!("{}: {m}", plan.name));
    let kind = match Kind::parse(&s.verify) {
        None => return Ok(None),
        Some(k) => k,
    };
    let writes = plan.pattern.write || plan.pattern.trimwrite;
    if s.verify_only && writes && plan.pattern.bytes.is_none() {
        return Err(refuse(
            "verify_only replays the writes of a job bound by size, not a time_based one".into(),
        ));
    }
    let pattern = match &s.verify_pattern {
        Some(p) => p.clone(),
        None if kind == Kind::Pattern => {
            return Err(refuse("verify=pattern needs verify_pattern".into()))
        }
        None => Pattern::default(),
    };
    let bs = &plan.pattern.bs[WDir::Write as usize];
    let (min, max) = (bs.min(), bs.max());
    let sizes = match bs {
        iolab_workload::BlockSizes::Split(v) => v.iter().map(|x| x.0).collect(),
        _ => vec![min, max],
    };
    let whole = sizes.iter().fold(0, |g, &b| gcd(g, b));
    let asked = s.verify_interval;
    let interval = if asked > 0 && asked <= min && sizes.iter().all(|b| b % asked == 0) {
        asked
    } else {
        whole
    };
    if kind.has_header() && interval < kind.header_size() as u64 {
        return Err(refuse(format!(
            "verify_interval {interval} is smaller than the {} verify header ({} bytes)",
            s.verify,
            kind.header_size()
        )));
    }
    check_offset(s.verify_offset, kind.header_size() as u64, min).map_err(refuse)?;
    if s.verify_state_load && s.verify_only {
        load_state(plan)?;
    }
    Ok(Some(Config {
        kind,
        interval,
        hdr_offset: s.verify_offset as usize,
        pattern,
        thread: plan.thread_number() as u16,
        fatal: s.verify_fatal,
    }))
}

/// verify_offset: fio refuses a header moved past the smallest write ("verify_offset too
/// large"); one moved onto itself (an offset below the header's size) is refused too, as
/// fio's swap of overlapping bytes is undefined.
fn check_offset(off: u64, header: u64, min_bs: u64) -> Result<(), String> {
    if off == 0 || header == 0 {
        return Ok(());
    }
    if off < header {
        return Err(format!(
            "verify_offset {off} is inside the {header}-byte verify header it moves"
        ));
    }
    if off.saturating_add(header) > min_bs {
        return Err(format!(
            "verify_offset {off} too large: the {header}-byte header would end past the \
             smallest write ({min_bs} bytes)"
        ));
    }
    Ok(())
}

/// The state a write run of this job saved, from the working directory, as fio looks for it.
pub(super) fn load_state(plan: &JobPlan) -> Result<State, RunError> {
    let path = State::path(&plan.name, plan.thread_number());
    let name = path.display();
    let bytes = std::fs::read(&path)
        .map_err(|e| RunError::Refused(format!("{}: verify_state_load: {name}: {e}", plan.name)))?;
    State::decode(&bytes)
        .map_err(|e| RunError::Refused(format!("{}: verify_state_load: {name}: {e}", plan.name)))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
