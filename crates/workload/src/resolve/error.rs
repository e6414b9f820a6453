//! A job that cannot be planned, named with the file and line that defined it.

use std::fmt;

use iolab_job::{JobSpec, Loc};

/// A job that cannot be planned, with where it was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub loc: Loc,
    pub job: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: job '{}': {}",
            self.loc.file, self.loc.line, self.job, self.message
        )
    }
}

impl std::error::Error for PlanError {}

/// The job's error, with its place.
pub(super) fn err(spec: &JobSpec, message: impl Into<String>) -> PlanError {
    PlanError {
        loc: spec.loc.clone(),
        job: spec.name.clone(),
        message: message.into(),
    }
}
