//! fio text, JSON, json+, terse, comparison table and HTML report writers.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
