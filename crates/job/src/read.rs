//! Reading job text: job files, `include`d files and standard input, within limits.
//!
//! A job file is a few kilobytes; the limits below are far above any real one and keep a
//! mistaken or hostile input (a FIFO, `/dev/urandom`, an `include` tree that fans out, a
//! `[global]` section applied to thousands of jobs) from hanging the parser or eating memory.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{ErrorKind, JobError};

/// All job text of one run together — files, `include`s, standard input, and what `${VAR}`s
/// expand to — may not exceed this many bytes.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;
/// `include`s may nest this deep (fio has no limit; it recurses until it runs out of stack).
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// At most this many `include`d files are read in one run (a tree of fan-out 4 and depth 15
/// would otherwise read 4^15 files).
pub const MAX_INCLUDES: usize = 1024;
/// fio's own limit on the number of jobs (`REAL_MAX_JOBS`).
pub const MAX_JOBS: usize = 4096;
/// The options applying to all jobs, counted once per job they apply to (a `[global]` section
/// is shared, not copied, but each job still reads it when it is resolved).
pub const MAX_APPLIED_OPTIONS: u64 = 1 << 22;
/// Likewise for the bytes of their values.
pub const MAX_APPLIED_BYTES: u64 = 32 << 20;

/// What is left of [`MAX_TEXT_BYTES`], and of the other budgets, in one run.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    pub text: u64,
    pub includes: usize,
    pub applied_options: u64,
    pub applied_bytes: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            text: MAX_TEXT_BYTES,
            includes: MAX_INCLUDES,
            applied_options: MAX_APPLIED_OPTIONS,
            applied_bytes: MAX_APPLIED_BYTES,
        }
    }
}

impl Budget {
    /// Takes `n` bytes of job text, or says which input went over.
    pub fn take_text(&mut self, n: usize, what: &str) -> Result<(), JobError> {
        match self.text.checked_sub(n as u64) {
            Some(left) => {
                self.text = left;
                Ok(())
            }
            None => Err(too_much(what)),
        }
    }

    /// Charges a job for the `count` options of `bytes` bytes it inherits or has.
    pub fn apply(&mut self, count: usize, bytes: usize) -> Result<(), String> {
        let ok = self
            .applied_options
            .checked_sub(count as u64)
            .zip(self.applied_bytes.checked_sub(bytes as u64));
        match ok {
            Some((o, b)) => {
                self.applied_options = o;
                self.applied_bytes = b;
                Ok(())
            }
            None => Err(format!(
                "the options applying to the jobs so far, counted once per job, exceed \
                 {MAX_APPLIED_OPTIONS} options or {} MiB: too many jobs under large global \
                 options",
                MAX_APPLIED_BYTES >> 20
            )),
        }
    }
}

fn too_much(what: &str) -> JobError {
    JobError::new(
        ErrorKind::Io,
        format!(
            "{what}: more than {} MiB of job text in all (files, includes and expanded \
             variables)",
            MAX_TEXT_BYTES >> 20
        ),
    )
}

/// Opens `path` for reading without blocking on a FIFO, and refuses anything but a regular
/// file (a FIFO would wait for a writer for ever, `/dev/urandom` never ends).
fn open_regular(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_file() {
        return Ok(f);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    Err(std::io::Error::other(what))
}

/// Reads at most `budget.text` bytes from `r`; `what` names the input in errors.
fn read_bounded(
    r: impl Read,
    size_hint: u64,
    budget: &mut Budget,
    what: &str,
) -> Result<String, JobError> {
    let mut buf = Vec::new();
    let want = size_hint.min(budget.text);
    buf.try_reserve(usize::try_from(want).unwrap_or(usize::MAX))
        .map_err(|_| {
            JobError::new(
                ErrorKind::Io,
                format!("{what}: cannot allocate {want} bytes"),
            )
        })?;
    r.take(budget.text.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| JobError::new(ErrorKind::Io, format!("{what}: {e}")))?;
    budget.take_text(buf.len(), what)?;
    String::from_utf8(buf).map_err(|e| {
        JobError::new(
            ErrorKind::Io,
            format!(
                "{what}: not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Reads a job file (`-` = standard input) within the budget.
pub(crate) fn job_file(path: &Path, budget: &mut Budget) -> Result<String, JobError> {
    if path.as_os_str() == "-" {
        return read_bounded(std::io::stdin().lock(), 0, budget, "standard input");
    }
    let what = format!("cannot read job file '{}'", path.display());
    file(path, budget, &what)
}

/// Reads `path` (a job file or an `include`) within the budget; `what` prefixes errors.
pub(crate) fn file(path: &Path, budget: &mut Budget, what: &str) -> Result<String, JobError> {
    let f = open_regular(path).map_err(|e| JobError::new(ErrorKind::Io, format!("{what}: {e}")))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    read_bounded(f, len, budget, what)
}
