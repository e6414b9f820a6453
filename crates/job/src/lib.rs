//! fio job syntax: job files, command lines, the option table, JobSpec.
#![forbid(unsafe_code)]

mod arith;
pub mod error;
pub mod options;
pub mod value;

pub use error::{ErrorKind, JobError, Loc, Warning};
