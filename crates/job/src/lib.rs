//! fio job syntax: job files, command lines, the option table, [`JobSpec`].
//!
//! Two steps, as ripgrep's LowArgs → HiArgs: parsing ([`parse_files`], [`parse_str`],
//! [`parse_cmdline`]) reads the syntax and checks every value against its option's grammar,
//! keeping file:line for each option; resolving ([`JobFile::resolve`]) refuses what iolab does
//! not implement and produces typed [`JobSpec`]s. This crate does no I/O except reading job
//! files, `include`d files and standard input (`-`).
#![forbid(unsafe_code)]

mod arith;
pub mod cmdline;
pub mod control;
pub mod debug;
pub mod error;
pub mod lines;
pub mod logs;
pub mod options;
pub mod parse;
pub mod place;
pub mod profile;
mod read;
pub mod spec;
pub mod tophelp;
pub mod value;

pub use cmdline::{parse_cmdline, IdleProf, Invocation, OutputFormat, TopLevel};
pub use error::{ErrorKind, JobError, Loc, Warning};
pub use iolab_args::closest;
pub use parse::{Inherited, JobFile, ParseOpts, RawJob, RawOption, Vars};
pub use read::{
    MAX_APPLIED_BYTES, MAX_APPLIED_OPTIONS, MAX_INCLUDES, MAX_INCLUDE_DEPTH, MAX_JOBS,
    MAX_TEXT_BYTES,
};
pub use spec::{JobSpec, Resolved};

/// Parses job files (`-` = standard input); each file is its own group, as in fio.
pub fn parse_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<JobFile, JobError> {
    parse_files_with(paths, &ParseOpts::default())
}

/// [`parse_files`] with explicit sections, variables and base (global) options.
pub fn parse_files_with<P: AsRef<std::path::Path>>(
    paths: &[P],
    opts: &ParseOpts,
) -> Result<JobFile, JobError> {
    let (texts, budget) = parse::read_texts(paths)?;
    parse::parse_texts_within(&texts, opts, budget)
}

/// Parses job-file text; `name` appears in errors and locates relative `include`s.
pub fn parse_str(text: &str, name: &str) -> Result<JobFile, JobError> {
    parse::parse_str_with(text, name, &ParseOpts::default())
}

/// Parses and resolves job files in one go.
pub fn load_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<Resolved, JobError> {
    parse_files(paths)?.resolve()
}
