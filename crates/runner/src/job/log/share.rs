//! Log files that several jobs share (`per_job_logs=0`). fio 3.33 keeps each job's lines
//! and writes them when the run ends, job after job in job order (whichever job ended
//! first), so a shared file holds each job's block whole. iolab writes each job's lines as
//! the job runs into a part file of its own beside the shared one (`.NAME.N.part`: memory
//! stays bounded), and when the run ends, also after Ctrl-C or an error, appends the parts to
//! the shared file in job order and removes them. A part left behind is a run that died
//! (killed, or a panic) before the end: it holds that job's lines.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use iolab_workload::JobPlan;

use super::names::files;
use crate::error::RunError;

/// The part file job number `job` writes its lines of the shared `path` into.
pub(super) fn part_name(path: &Path, job: u32) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{job}.part"))
}

/// Before the run: the shared files are emptied (each is made once, whatever the jobs do).
pub(crate) fn prepare_shared(plans: &[JobPlan]) -> Result<(), RunError> {
    for p in plans.iter().filter(|p| !p.spec.logs.per_job) {
        for (_, path) in files(p) {
            File::create(&path).map_err(|e| RunError::file(&path, "cannot create log file", e))?;
        }
    }
    Ok(())
}

/// After the run: each job's part of a shared file is appended to it, in job order. A
/// failure is reported and the part kept; the run's results stand.
pub(crate) fn join_shared(plans: &[JobPlan]) {
    for p in plans.iter().filter(|p| !p.spec.logs.per_job) {
        for (_, path) in files(p) {
            let part = part_name(&path, p.thread_number());
            if let Err(e) = append(&part, &path) {
                eprintln!(
                    "fio: {}: cannot write log: {e}; job {}'s lines stay in {}",
                    path.display(),
                    p.thread_number(),
                    part.display()
                );
            }
        }
    }
}

/// Appends `part` to `path` (a copy of bounded memory) and removes it; no part, nothing.
fn append(part: &Path, path: &Path) -> io::Result<()> {
    let mut from = match File::open(part) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        r => r?,
    };
    let mut to = OpenOptions::new().append(true).create(true).open(path)?;
    io::copy(&mut from, &mut to)?;
    std::fs::remove_file(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_sits_beside_its_shared_file_hidden() {
        let p = part_name(Path::new("/logs/s_bw.log"), 3);
        assert_eq!(p, Path::new("/logs/.s_bw.log.3.part"));
        assert_eq!(
            part_name(Path::new("s_bw.log"), 1),
            Path::new(".s_bw.log.1.part")
        );
    }
}
