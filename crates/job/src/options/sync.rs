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
    not!(Sync, "write_barrier", [], Int),
    not!(Sync, "sync_file_range", [], Str),
];

#[cfg(test)]
mod tests {
    use crate::options::testing::{applied, spec};

    #[test]
    fn fsync_counts_writes_and_refuses_negatives() {
        assert_eq!(spec(&["fsync=32"]).fsync, 32);
        assert!(applied(&["fdatasync=-1"]).is_err());
        assert!(spec(&["end_fsync=1"]).end_fsync);
    }
}
