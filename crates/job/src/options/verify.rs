//! Verification: what is written into each block and checked when it is read back. The
//! checking itself lives in `runner` (`verify/`); here is only the grammar.

use super::prelude::*;

/// `JobSpec::verify` of a job with a verify_pattern and no `verify` (fio's VERIFY_PATTERN:
/// its header, then the pattern); not a name `verify=` takes, as in fio.
pub const PATTERN_WITH_HEADER: &str = "pattern-with-header";

/// fio 3.33's names for `verify=`, with its own aliases of "none".
pub const VERIFY_TYPES: &[&str] = &[
    "0",
    "none",
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
    "null",
];

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Verify, "verify_only", [], Flag, None, "Only verify what a previous run of this job wrote",
        |s, a| { s.verify_only = a.flag()?; Ok(()) }),
    imp!(Verify, "verify", [], Choice(VERIFY_TYPES), Some("0"), "Verify data written: md5, crc64, crc32c, crc32, crc16, crc7, xxhash, sha1, sha256, sha512, sha3-*, meta, pattern, null",
        |s, a| { s.verify = a.choice()?.to_string(); Ok(()) }),
    imp!(Verify, "do_verify", [], Bool, Some("1"), "Read back and verify after the write phase",
        |s, a| { s.do_verify = a.flag()?; Ok(()) }),
    imp!(Verify, "verify_interval", [], Int, None, "Bytes per verify header (default: the write block size)",
        |s, a| { s.verify_interval = a.count()?; Ok(()) }),
    imp!(Verify, "verify_offset", [], Int, None, "Move the verify header to this offset in the block",
        |s, a| { s.verify_offset = a.count()?; Ok(()) }),
    imp!(Verify, "verify_pattern", [], Str, None, "Fill and check with this pattern (0x.., \"text\", 'file', decimal, %o for the offset)",
        |s, a| { s.verify_pattern = Some(value::DataPattern::parse(a.v, true)?); Ok(()) }),
    imp!(Verify, "verify_fatal", [], Bool, Some("0"), "Stop at the first bad header of a block",
        |s, a| { s.verify_fatal = a.flag()?; Ok(()) }),
    imp!(Verify, "verify_dump", [], Bool, Some("0"), "Write the received and expected blocks of a failure to files",
        |s, a| { s.verify_dump = a.flag()?; Ok(()) }),
    imp!(Verify, "verify_async", [], Int, None, "Threads that check the blocks read back (0: the job's own thread)",
        |s, a| { s.verify_async = to_u32(a.int()?)?; Ok(()) }),
    imp!(Verify, "verify_backlog", [], Int, None, "Verify after every so many writes",
        |s, a| { s.verify_backlog = a.count()?; Ok(()) }),
    imp!(Verify, "verify_backlog_batch", [], Int, None, "Blocks verified each time the backlog is reached",
        |s, a| { s.verify_backlog_batch = a.count()?; Ok(()) }),
    imp!(Verify, "experimental_verify", [], Bool, Some("0"), "Read back every write in the order it was issued, overwritten ones too (they fail), as fio replays the writes",
        |s, a| { s.experimental_verify = a.flag()?; Ok(()) }),
    imp!(Verify, "verify_state_load", [], Bool, Some("0"), "verify_only checks only what the saved state says was written",
        |s, a| { s.verify_state_load = a.flag()?; Ok(()) }),
    imp!(Verify, "verify_state_save", [], Bool, Some("1"), "Save what a verify write job issued (local-<job>-<n>-verify.state)",
        |s, a| { s.verify_state_save = a.flag()?; Ok(()) }),
    later!(Verify, "verify_write_sequence", [], Bool),
    imp!(Verify, "verify_async_cpus", [], Str, None, "CPUs the verify_async threads run on (as cpus_allowed)",
        |s, a| { s.verify_async_cpus = Some(crate::place::parse_list(a.v)?); Ok(()) }),
    imp!(Verify, "trim_percentage", [], Int, Some("0"), "Percent of the verified writes to trim (discard) with trim_backlog",
        |s, a| { s.trim_percentage = pct(a.int()?)?; Ok(()) }),
    imp!(Verify, "trim_verify_zero", [], Bool, Some("1"), "Verify that trimmed blocks read back as zeroes",
        |s, a| { s.trim_verify_zero = a.flag()?; Ok(()) }),
    imp!(Verify, "trim_backlog", [], Int, None, "Trim the chosen blocks after every so many writes",
        |s, a| { s.trim_backlog = a.count()?; Ok(()) }),
    imp!(Verify, "trim_backlog_batch", [], Int, None, "Blocks trimmed each time the trim backlog is reached",
        |s, a| { s.trim_backlog_batch = a.count()?; Ok(()) }),
];

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["verify_only"], |s| s.verify_only),
        (&["verify=crc32c"], |s| s.verify == "crc32c"),
        (&["verify=md5", "verify=0"], |s| s.verify == "0"),
        (&["do_verify=0"], |s| !s.do_verify),
        (&["verify_interval=512"], |s| s.verify_interval == 512),
        (&["verify_offset=64"], |s| s.verify_offset == 64),
        (&["verify_pattern=0xff00ff00"], |s| s.verify_pattern.as_ref().map(|p| &p.bytes[..]) == Some(&[0xff, 0, 0xff, 0][..])),
        (&["verify_fatal=1"], |s| s.verify_fatal),
        (&["verify_dump=1"], |s| s.verify_dump),
        (&["verify_async=2"], |s| s.verify_async == 2),
        (&["verify_backlog=64"], |s| s.verify_backlog == 64),
        (&["verify_backlog_batch=16"], |s| s.verify_backlog_batch == 16),
        (&["experimental_verify=1"], |s| s.experimental_verify),
        (&["verify_state_load=1"], |s| s.verify_state_load),
        (&["verify_state_save=0"], |s| !s.verify_state_save),
        (&["verify_async_cpus=0-1"], |s| s.verify_async_cpus == Some(vec![0, 1])),
        (&["trim_percentage=10"], |s| s.trim_percentage == 10),
        (&["trim_verify_zero=0"], |s| !s.trim_verify_zero),
        (&["trim_backlog=8"], |s| s.trim_backlog == 8),
        (&["trim_backlog_batch=4"], |s| s.trim_backlog_batch == 4),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["verify=crc33"],
        &["do_verify"],
        &["verify_interval=-1"],
        &["verify_offset=-1"],
        &["verify_fatal=2"],
        &["verify_async=-1"],
        &["verify_backlog=-1"],
        &["trim_percentage=101"],
        &["trim_backlog=-1"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn verify_types_as_fio_names_them() {
        let s = spec(&["verify=sha3-256", "verify_interval=512", "do_verify=0"]);
        assert_eq!(s.verify, "sha3-256");
        assert_eq!(s.verify_interval, 512);
        assert!(!s.do_verify);
        assert!(spec(&[]).do_verify, "fio's do_verify defaults to 1");
        assert!(applied(&["verify=crc33"]).is_err());
    }
}
