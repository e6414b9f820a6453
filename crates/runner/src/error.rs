//! Why a run could not start or go on: the error every part of the runner returns.

use std::fmt;
use std::path::{Path, PathBuf};

use iolab_engine::EngineError;

/// Why a run could not start or go on.
#[derive(Debug)]
pub enum RunError {
    /// A file operation failed: (path, what we were doing, error).
    File(PathBuf, &'static str, std::io::Error),
    /// The engine refused: (job name, error).
    Engine(String, Box<EngineError>),
    /// A safety rule or an unavailable feature refused the job.
    Refused(String),
    /// The job did not start because another job of its phase failed to (that job's error
    /// is the one reported).
    NotStarted,
}

impl RunError {
    pub(crate) fn file(path: &Path, what: &'static str, e: std::io::Error) -> RunError {
        RunError::File(path.to_path_buf(), what, e)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::File(p, what, e) => write!(f, "{}: {what}: {e}", p.display()),
            RunError::Engine(job, e) => write!(f, "{job}: {e}"),
            RunError::Refused(m) => f.write_str(m),
            RunError::NotStarted => f.write_str("not started: another job failed to start"),
        }
    }
}

impl std::error::Error for RunError {}
