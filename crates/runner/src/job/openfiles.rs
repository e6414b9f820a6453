//! When the job's files open. fio opens each file at its first I/O (`get_next_file`), so
//! does iolab: a job of several files starts with none open and the runner opens each when
//! its first I/O comes (its iolog shows `open` there, as fio's does). Under fio's `openfiles`
//! at most that many are open at once: the generator keeps the files in use
//! (`IoGen::in_use`: a file leaves when its span is done and the next one comes in) and the
//! runner closes, just before opening the next, the open files that are no longer in use, as
//! fio closes a file when it is done (`set_io_u_file`). A job of one file opens it at setup
//! (no I/O could come between), as do the jobs whose files are not plain files the loop owns
//! (offloaded submitters, connections, engines that make their own files, a replayed
//! iolog, which says itself when each file opens). The check on the
//! hot path is one comparison.

use iolab_workload::JobPlan;

mod hooks;

/// At most how many of the job's files are open at once: fio's `openfiles` when it is
/// smaller than the number of files, else all of them.
pub(crate) fn open_limit(plan: &JobPlan) -> usize {
    let n = plan.files.len();
    match plan.pattern.open_files {
        k @ 1.. if k < n => k,
        _ => n,
    }
}

/// How many of the job's files are opened at setup: under `openfiles` the first that many
/// (the generator starts with them in use); none where each opens at its first I/O; else
/// all.
pub(crate) fn open_at_start(plan: &JobPlan) -> usize {
    let n = plan.files.len();
    let limit = open_limit(plan);
    if limit < n {
        limit
    } else if n > 1
        && plan.engine.kind.needs_files()
        && !plan.spec.io_submit_offload
        && !plan.spec.create_on_open
        && plan.replay.is_none()
    {
        0
    } else {
        n
    }
}
