//! Runs plans: job threads, the per-I/O loop, groups, compare.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
