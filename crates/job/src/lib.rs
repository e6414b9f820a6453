//! fio job syntax: job files, command lines, the option table, JobSpec.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
