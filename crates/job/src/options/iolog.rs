//! I/O logs and replay (none implemented by iolab).

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    not!(Iolog, "write_iolog", [], Str),
    not!(Iolog, "read_iolog", [], Str),
    not!(Iolog, "read_iolog_chunked", [], Bool),
    not!(Iolog, "replay_no_stall", [], Bool),
    not!(Iolog, "replay_redirect", [], Str),
    not!(Iolog, "replay_scale", [], Int),
    not!(Iolog, "replay_align", [], Int),
    not!(Iolog, "replay_time_scale", [], Int),
    not!(Iolog, "replay_skip", [], Str),
    not!(Iolog, "merge_blktrace_file", [], Str),
    not!(Iolog, "merge_blktrace_scalars", [], FloatList),
    not!(Iolog, "merge_blktrace_iters", [], FloatList),
];
