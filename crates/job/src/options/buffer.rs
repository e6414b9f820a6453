//! The contents of write buffers and memory for I/O.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Buffer, "zero_buffers", [], Flag, None, "Fill write buffers with zeroes",
        |s, a| { s.zero_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "refill_buffers", [], Flag, None, "Refill write buffers before every write",
        |s, a| { s.refill_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "scramble_buffers", [], Bool, Some("1"), "Scramble write buffers slightly before each write",
        |s, a| { s.scramble_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "buffer_compress_percentage", [], Int, None, "Make write buffers compressible by this much",
        |s, a| { s.buffer_compress_percentage = Some(pct(a.int()?)?); Ok(()) }),
    imp!(Buffer, "buffer_pattern", [], Str, None, "Fill write buffers with this pattern",
        |s, a| { s.buffer_pattern = Some(a.v.to_string()); Ok(()) }),
    imp!(Buffer, "dedupe_percentage", [], Int, None, "Percentage of writes that repeat earlier buffers",
        |s, a| { s.dedupe_percentage = Some(pct(a.int()?)?); Ok(()) }),
    not!(Buffer, "mem", ["iomem"], Str),
    not!(Buffer, "iomem_align", ["mem_align"], Int),
    imp!(Buffer, "buffer_compress_chunk", [], Int, Some("512"), "Size of each compressible run of buffer_compress_percentage",
        |s, a| { s.buffer_compress_chunk = a.count()?.max(1); Ok(()) }),
    imp!(Buffer, "dedupe_mode", [], Choice(&["repeat", "working_set"]), Some("repeat"), "Deduped writes repeat the last unique buffer (repeat) or one of a working set",
        |s, a| { s.dedupe_working_set = a.choice()? == "working_set"; Ok(()) }),
    imp!(Buffer, "dedupe_working_set_percentage", [], Int, Some("5"), "Working set of dedupe_mode=working_set, in percent of the job's blocks",
        |s, a| { s.dedupe_working_set_percentage = pct(a.int()?)?; Ok(()) }),
    imp!(Buffer, "dedupe_global", [], Bool, Some("0"), "Deduped buffers may repeat other jobs' buffers",
        |s, a| { s.dedupe_global = a.flag()?; Ok(()) }),
    not!(Buffer, "hugepage-size", [], Size),
];

#[cfg(test)]
mod tests {
    use crate::options::testing::{applied, spec};

    #[test]
    fn percentages_are_bounded() {
        assert_eq!(
            spec(&["buffer_compress_percentage=40"]).buffer_compress_percentage,
            Some(40)
        );
        assert!(applied(&["dedupe_percentage=120"]).is_err());
        assert!(!spec(&["scramble_buffers=0"]).scramble_buffers);
    }
}
