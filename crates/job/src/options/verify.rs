//! Verification and trim verification (none implemented by iolab).

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    not!(Verify, "verify_only", [], Flag),
    not!(Verify, "verify", [], Str),
    not!(Verify, "do_verify", [], Bool),
    not!(Verify, "verify_interval", [], Int),
    not!(Verify, "verify_offset", [], Int),
    not!(Verify, "verify_pattern", [], Str),
    not!(Verify, "verify_fatal", [], Bool),
    not!(Verify, "verify_dump", [], Bool),
    not!(Verify, "verify_async", [], Int),
    not!(Verify, "verify_backlog", [], Int),
    not!(Verify, "verify_backlog_batch", [], Int),
    not!(Verify, "experimental_verify", [], Bool),
    not!(Verify, "verify_state_load", [], Bool),
    not!(Verify, "verify_state_save", [], Bool),
    not!(Verify, "verify_write_sequence", [], Bool),
    not!(Verify, "verify_async_cpus", [], Str),
    not!(Verify, "trim_percentage", [], Int),
    not!(Verify, "trim_verify_zero", [], Bool),
    not!(Verify, "trim_backlog", [], Int),
    not!(Verify, "trim_backlog_batch", [], Int),
];
