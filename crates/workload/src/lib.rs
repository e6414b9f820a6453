//! JobSpec to Plan: files, offsets, block sizes, mixes, rates.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
