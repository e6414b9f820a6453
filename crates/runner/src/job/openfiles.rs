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
//! hot path is one comparison. A swap costs the files it opens and closes, not the job's
//! files (issue 33: 100000 files under a limit of thousands): the generator says which files
//! left its set, the runner counts its open files and keeps the few opened outside the set.

use iolab_engine::FileId;
use iolab_workload::JobPlan;

mod hooks;

/// The runner's side of the open files under `openfiles`.
#[derive(Default)]
pub(crate) struct OpenFiles {
    /// How many of the job's files are open (`None` until first counted).
    count: Option<usize>,
    /// Files opened other than for the generator's set (at a new loop, for a read back):
    /// each is closed at the next swap unless in use.
    strays: Vec<usize>,
    /// What to close at a swap, reused.
    close: Vec<usize>,
}

impl OpenFiles {
    /// The files were opened again all at once (a new loop): counted again, and each open
    /// one closed at the next swap unless the generator uses it.
    pub(crate) fn reopened(&mut self, files: &[FileId]) {
        self.strays.clear();
        self.strays.extend(
            (files.iter().enumerate())
                .filter(|(_, f)| **f != FileId::CLOSED)
                .map(|(i, _)| i),
        );
        self.count = Some(self.strays.len());
    }
}

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
