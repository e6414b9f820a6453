//! Asynchronous file copy on the iolab engine layer.
//!
//! Placeholder: this crate is filled in by its own issue (see DESIGN.md).
#![forbid(unsafe_code)]
