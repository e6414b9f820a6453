//! Syncing to stable storage: fsync, fdatasync and friends.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Sync, "fsync", [], Int, Some("0"), "fsync after this many writes",
        |s, a| { s.fsync = u64::try_from(a.int()?).map_err(|_| "must not be negative")?; Ok(()) }),
    imp!(Sync, "fdatasync", [], Int, Some("0"), "fdatasync after this many writes",
        |s, a| { s.fdatasync = u64::try_from(a.int()?).map_err(|_| "must not be negative")?; Ok(()) }),
    imp!(Sync, "end_fsync", [], Bool, Some("0"), "fsync when the job ends",
        |s, a| { s.end_fsync = a.flag()?; Ok(()) }),
    imp!(Sync, "fsync_on_close", [], Bool, Some("0"), "fsync when a file is closed",
        |s, a| { s.fsync_on_close = a.flag()?; Ok(()) }),
    imp!(Sync, "write_barrier", [], Int, Some("0"), "Make every Nth write a barrier on engines with barriers (fio 3.33 has none of them iolab runs: its I/O is the same as without)",
        |s, a| { s.write_barrier = u64::try_from(a.int()?).map_err(|_| "must not be negative")?; Ok(()) }),
    imp!(Sync, "sync_file_range", [], Str, None, "sync_file_range(2) over the range written, every N writes: wait_before,write,wait_after[:N]",
        |s, a| { (s.sync_file_range, s.sync_file_range_nr) = sync_range(a.v)?; Ok(()) }),
];

/// `sync_file_range=`: the kernel's SYNC_FILE_RANGE_* flags and the writes between calls
/// (fio's default: every write).
fn sync_range(v: &str) -> Result<(u32, u32), String> {
    let (flags, nr) = match v.split_once(':') {
        Some((f, n)) => (f, to_u32(value::parse_int(n.trim())?)?.max(1)),
        None => (v, 1),
    };
    let mut bits = 0;
    for f in flags.split(',').map(str::trim) {
        bits |= match f {
            "wait_before" => 1,
            "write" => 2,
            "wait_after" => 4,
            _ => {
                return Err(format!(
                    "invalid flag '{f}' (valid: wait_before, write, wait_after)"
                ))
            }
        };
    }
    Ok((bits, nr))
}

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["fsync=32"], |s| s.fsync == 32),
        (&["fdatasync=16"], |s| s.fdatasync == 16),
        (&["end_fsync=1"], |s| s.end_fsync),
        (&["fsync_on_close=1"], |s| s.fsync_on_close),
        (&["write_barrier=8"], |s| s.write_barrier == 8),
        // SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE, every 4 writes.
        (&["sync_file_range=wait_before,write:4"], |s| (s.sync_file_range, s.sync_file_range_nr) == (3, 4)),
        (&["sync_file_range=write"], |s| (s.sync_file_range, s.sync_file_range_nr) == (2, 1)),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["fsync=-1"],
        &["fdatasync=-1"],
        &["end_fsync"],
        &["fsync_on_close=2"],
        &["write_barrier=-2"],
        &["sync_file_range=flush"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn fsync_counts_writes_and_refuses_negatives() {
        assert_eq!(spec(&["fsync=32"]).fsync, 32);
        assert!(applied(&["fdatasync=-1"]).is_err());
        assert!(spec(&["end_fsync=1"]).end_fsync);
    }

    #[test]
    fn sync_file_range_takes_fios_flags_and_a_count() {
        let s = spec(&["sync_file_range=wait_before,write:4"]);
        assert_eq!((s.sync_file_range, s.sync_file_range_nr), (3, 4));
        let s = spec(&["sync_file_range=wait_after"]);
        assert_eq!((s.sync_file_range, s.sync_file_range_nr), (4, 1));
        assert_eq!(spec(&[]).sync_file_range, 0);
        assert!(applied(&["sync_file_range=flush"]).is_err());
    }

    #[test]
    fn write_barrier_takes_a_count() {
        assert_eq!(spec(&[]).write_barrier, 0);
        assert_eq!(spec(&["write_barrier=8"]).write_barrier, 8);
        assert!(applied(&["write_barrier=-2"]).is_err());
    }
}
