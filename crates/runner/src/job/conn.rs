//! What the engine is told of the job beyond its options (net: direction, size, host, port
//! per clone; exec: name and runtime; e4defrag: directory and range), and the end of a
//! connection's stream.

use iolab_engine::{DefragOpts, Engine, ExecOpts, NetOpts};
use iolab_stats::{Dir, JobStats};
use iolab_workload::JobPlan;

mod hooks;

/// The job's side of the engine's options: its direction, its size (for MSG_MORE), the host
/// from `filename` when `hostname` is not given, and, as fio, clone N on the N-th port after
/// the job's.
pub(crate) fn net_opts(n: &mut NetOpts, plan: &JobPlan) {
    let p = &plan.pattern;
    n.reads = p.read;
    n.writes = p.write || p.trim;
    n.random = p.random;
    n.size = p.bytes;
    if n.hostname.is_none() {
        n.hostname = plan.spec.filename.first().cloned();
    }
    if n.port > 0 {
        n.port = n.port.saturating_add(plan.clone);
    }
}

/// The job's name (`%n`, the output files) and runtime (`%r`, how long the job lasts).
pub(crate) fn exec_opts(e: &mut ExecOpts, plan: &JobPlan) {
    e.job = plan.spec.name.clone();
    e.runtime = plan.runtime;
}

/// The job's directory (where the donor goes) and its range, what the donor is allocated over
/// (fio: from the job's offset to its largest file size).
pub(crate) fn defrag_opts(e: &mut DefragOpts, plan: &JobPlan) {
    e.directory = plan
        .spec
        .directory
        .as_deref()
        .and_then(|d| d.split(':').next())
        .map(Into::into);
    let end = plan.files.iter().map(|f| f.size).max().unwrap_or(0);
    let start = plan
        .pattern
        .files
        .iter()
        .map(|f| f.offset)
        .min()
        .unwrap_or(0);
    e.range = (start.min(end), end);
}

/// What the engine knows was lost (net over UDP: datagrams never seen), as fio's dropped
/// count of the job's direction.
pub(crate) fn count_dropped(stats: &mut JobStats, plan: &JobPlan, eng: &dyn Engine) {
    let dir = if plan.pattern.read {
        Dir::Read
    } else {
        Dir::Write
    };
    stats.dir_mut(dir).drop_ios += eng.dropped();
}
