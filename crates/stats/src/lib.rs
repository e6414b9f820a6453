//! Latency histogram (fio's scheme), moments, samples, CPU and disk counters.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
