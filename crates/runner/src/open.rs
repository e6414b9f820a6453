//! Opening a job's files and handing them to its engine (fadvise, write hints and the cache
//! drop on the way), and the options the engine is opened with beyond the job's own.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use iolab_engine::{Engine, EngineOpts, FileId};
use iolab_job::spec::Fadvise;
use iolab_job::{debug, JobSpec};
use iolab_sys as sys;
use iolab_workload::{JobPlan, SyncMode};

use crate::error::RunError;

pub(crate) fn engine_opts(plan: &JobPlan) -> EngineOpts {
    let mut o = plan.engine.clone();
    o.max_files = (plan.files.len() as u32).max(1);
    crate::job::conn::net_opts(&mut o.net, plan);
    crate::job::conn::exec_opts(&mut o.exec, plan);
    crate::job::conn::defrag_opts(&mut o.e4defrag, plan);
    // fio's mmap engine turns any fadvise_hint into madvise by the job's pattern alone.
    o.madvise = fadvice(&plan.spec).map(|_| match plan.spec.rw.is_random() {
        true => libc::MADV_RANDOM,
        false => libc::MADV_SEQUENTIAL,
    });
    o
}

/// fio's `fadvise_hint` as `posix_fadvise` advice; its default (`1`) follows `rw`. Without it
/// buffered random reads get the kernel's read-ahead and report far more than the device does.
fn fadvice(spec: &JobSpec) -> Option<libc::c_int> {
    match spec.fadvise_hint {
        Fadvise::None => None,
        Fadvise::Pattern if spec.rw.is_random() => Some(libc::POSIX_FADV_RANDOM),
        Fadvise::Pattern | Fadvise::Sequential => Some(libc::POSIX_FADV_SEQUENTIAL),
        Fadvise::Random => Some(libc::POSIX_FADV_RANDOM),
        Fadvise::NoReuse => Some(libc::POSIX_FADV_NOREUSE),
    }
}

fn open_file(plan: &JobPlan, path: &std::path::Path) -> std::io::Result<File> {
    let p = &plan.pattern;
    let write = p.write || p.trim || p.trimwrite;
    let mut flags = 0;
    if plan.direct {
        flags |= libc::O_DIRECT;
    }
    match plan.sync {
        SyncMode::None => {}
        SyncMode::Sync => flags |= libc::O_SYNC,
        SyncMode::Dsync => flags |= libc::O_DSYNC,
    }
    // Not waiting in open(2) for a FIFO's peer, which Ctrl-C could not end: a FIFO with a
    // writer reads as usual, one without reads its end.
    sys::fs::open_nonblocking(
        OpenOptions::new().read(true).write(write).create(
            write
                && (plan.spec.create_on_open || plan.spec.unlink_each_loop)
                && plan.spec.allow_file_create,
        ),
        path,
        flags,
    )
}

/// Opens the job's files and hands them to the engine (fadvise and cache drop on the way).
/// Under fio's `openfiles` only the first that many are opened; the others stand as
/// [`FileId::CLOSED`] until the runner opens them in turn (job/openfiles.rs).
pub(crate) fn open_files(plan: &JobPlan, eng: &mut dyn Engine) -> Result<Vec<FileId>, RunError> {
    let mut ids = Vec::with_capacity(plan.files.len());
    if debug::on(debug::FILE) {
        debug::line(debug::FILE, sys::gettid(), format_args!("setup files"));
    }
    let first = crate::job::openfiles::open_at_start(plan);
    for i in 0..plan.files.len() {
        ids.push(if i < first {
            open_one(plan, i, eng)?
        } else {
            FileId::CLOSED
        });
    }
    Ok(ids)
}

/// Opens file `i` of the job and hands it to the engine.
pub(crate) fn open_one(plan: &JobPlan, i: usize, eng: &mut dyn Engine) -> Result<FileId, RunError> {
    let Some(f) = plan.files.get(i) else {
        return Err(RunError::Refused(format!(
            "{}: no file {i} in the job",
            plan.name
        )));
    };
    let diskless = !plan.engine.kind.needs_files();
    if debug::on(debug::FILE) {
        let p = f.path.display();
        debug::line(debug::FILE, sys::gettid(), format_args!("fd open {p}"));
    }
    // A diskless engine gets /dev/null in each file's place: ids stay valid, nothing is
    // created or read.
    let file = if diskless {
        File::open("/dev/null").map_err(|e| RunError::file(Path::new("/dev/null"), "open", e))?
    } else {
        open_file(plan, &f.path).map_err(|e| RunError::file(&f.path, "open", e))?
    };
    if plan.invalidate
        && !file
            .metadata()
            .map(|m| m.file_type().is_block_device())
            .unwrap_or(false)
    {
        // Best effort, as in fio: a failure to drop the cache is not a failure of the job.
        let _ = sys::drop_cache(file.as_raw_fd());
    }
    if let (false, 1..) = (diskless, plan.spec.write_hint) {
        // As fio: a hint the kernel refuses fails the job.
        sys::set_write_hint(file.as_raw_fd(), plan.spec.write_hint)
            .map_err(|e| RunError::file(&f.path, "write_hint (F_SET_RW_HINT)", e))?;
    }
    if let (false, Some(advice)) = (diskless, fadvice(&plan.spec)) {
        // Advisory, as in fio (which warns once): the job runs without it.
        let _ = sys::fadvise(file.as_raw_fd(), advice);
    }
    eng.add_file(file, &f.path)
        .map_err(|e| RunError::Engine(plan.name.clone(), Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rw: &str, hint: Option<&str>) -> JobSpec {
        let hint = hint
            .map(|h| format!("fadvise_hint={h}\n"))
            .unwrap_or_default();
        let text = format!("[j]\nrw={rw}\n{hint}");
        let mut jobs = iolab_job::parse_str(&text, "t.fio")
            .and_then(|f| f.resolve())
            .map(|r| r.jobs)
            .unwrap_or_default();
        jobs.pop().unwrap_or_default()
    }

    #[test]
    fn fadvise_hint_1_follows_rw_as_fio_does() {
        assert_eq!(
            fadvice(&spec("randread", None)),
            Some(libc::POSIX_FADV_RANDOM)
        );
        assert_eq!(
            fadvice(&spec("randrw", None)),
            Some(libc::POSIX_FADV_RANDOM)
        );
        assert_eq!(
            fadvice(&spec("read", None)),
            Some(libc::POSIX_FADV_SEQUENTIAL)
        );
        assert_eq!(fadvice(&spec("randread", Some("0"))), None);
        let seq = spec("randread", Some("sequential"));
        assert_eq!(fadvice(&seq), Some(libc::POSIX_FADV_SEQUENTIAL));
        let once = spec("read", Some("noreuse"));
        assert_eq!(fadvice(&once), Some(libc::POSIX_FADV_NOREUSE));
    }
}
