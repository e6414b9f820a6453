//! I/O logs and replay: writing the I/O a job issues (fio's iolog version 3), and replaying an
//! iolog (versions 2 and 3) or a blktrace binary file instead of the job's generated I/O.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Iolog, "write_iolog", [], Str, None, "Write the job's I/O to this file (fio iolog version 3, appended)",
        |s, a| { s.write_iolog = nonempty(a.v)?; Ok(()) }),
    imp!(Iolog, "read_iolog", [], Str, None, "Replay this iolog (version 2 or 3) or blktrace file instead of generating I/O; ':' gives one per numjobs clone",
        |s, a| { s.read_iolog = nonempty(a.v)?; Ok(()) }),
    imp!(Iolog, "read_iolog_chunked", [], Bool, Some("0"), "Read the iolog gradually while replaying instead of all at once",
        |s, a| { s.read_iolog_chunked = a.flag()?; Ok(()) }),
    imp!(Iolog, "replay_no_stall", [], Bool, Some("0"), "Replay as fast as possible, ignoring the log's timestamps",
        |s, a| { s.replay_no_stall = a.flag()?; Ok(()) }),
    imp!(Iolog, "replay_redirect", [], Str, None, "Replay every I/O of the log onto this one file or device",
        |s, a| { s.replay_redirect = nonempty(a.v)?; Ok(()) }),
    imp!(Iolog, "replay_scale", [], Int, Some("1"), "Divide the replayed offsets by this",
        |s, a| { s.replay_scale = a.count()?.max(1); Ok(()) }),
    imp!(Iolog, "replay_align", [], Int, Some("0"), "Align replayed offsets down to this power of 2 (0: as logged)",
        |s, a| {
            let v = a.count()?;
            if v != 0 && !v.is_power_of_two() {
                return Err(format!("{v} is not a power of 2"));
            }
            s.replay_align = v;
            Ok(())
        }),
    imp!(Iolog, "replay_time_scale", [], Int, Some("100"), "Replay at this percentage of the log's I/O rate (200: twice as fast)",
        |s, a| {
            s.replay_time_scale = to_u32(a.int()?).ok().filter(|p| *p > 0)
                .ok_or_else(|| format!("'{}' must be a percentage above 0", a.v))?;
            Ok(())
        }),
    imp!(Iolog, "replay_skip", [], Str, None, "Leave these kinds out of the replay: a comma list of read, write, trim, sync",
        |s, a| { s.replay_skip = skip_mask(a.v)?; Ok(()) }),
    imp!(Iolog, "merge_blktrace_file", [], Str, None, "Merge the blktrace files of read_iolog into this file, in time order, and replay it",
        |s, a| { s.merge_blktrace_file = nonempty(a.v)?; Ok(()) }),
    imp!(Iolog, "merge_blktrace_scalars", [], FloatList, None, "Per merged blktrace file, the percentage its times are scaled by",
        |s, a| { s.merge_blktrace_scalars = merge_list(a.v)?; Ok(()) }),
    imp!(Iolog, "merge_blktrace_iters", [], FloatList, None, "Per merged blktrace file, how many times it is repeated",
        |s, a| { s.merge_blktrace_iters = merge_list(a.v)?; Ok(()) }),
];

/// The bits of `replay_skip`, as fio numbers its directions.
pub mod skip {
    /// Reads are left out.
    pub const READ: u8 = 1;
    /// Writes are left out.
    pub const WRITE: u8 = 2;
    /// Trims (discards) are left out.
    pub const TRIM: u8 = 4;
    /// Syncs (and flushes of a blktrace) are left out.
    pub const SYNC: u8 = 8;
}

fn nonempty(v: &str) -> Result<Option<String>, String> {
    if v.is_empty() {
        return Err("needs a file name".into());
    }
    Ok(Some(v.to_string()))
}

/// `replay_skip=read,trim`.
fn skip_mask(v: &str) -> Result<u8, String> {
    let mut m = 0;
    for w in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        m |= match w {
            "read" => skip::READ,
            "write" => skip::WRITE,
            "trim" => skip::TRIM,
            "sync" => skip::SYNC,
            _ => {
                return Err(format!(
                    "unknown kind '{w}' (valid: read, write, trim, sync)"
                ))
            }
        };
    }
    Ok(m)
}

/// fio reads these lists as whole numbers (a percentage, a count), each above 0.
fn merge_list(v: &str) -> Result<Vec<u32>, String> {
    value::parse_float_list(v)?
        .into_iter()
        .map(|f| match f {
            f if f >= 1.0 && f <= f64::from(u32::MAX) => Ok(f as u32),
            f => Err(format!("{f} is not a whole number above 0")),
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::skip;
    use crate::options::testing::{applied, spec, Acts, Refused};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["write_iolog=io.log"], |s| s.write_iolog.as_deref() == Some("io.log")),
        (&["read_iolog=io.log"], |s| s.read_iolog.as_deref() == Some("io.log")),
        (&["read_iolog_chunked=1"], |s| s.read_iolog_chunked),
        (&["replay_no_stall=1"], |s| s.replay_no_stall),
        (&["replay_redirect=/dev/sdb"], |s| s.replay_redirect.as_deref() == Some("/dev/sdb")),
        (&["replay_scale=4"], |s| s.replay_scale == 4),
        (&["replay_align=4k"], |s| s.replay_align == 4096),
        (&["replay_time_scale=200"], |s| s.replay_time_scale == 200),
        (&["replay_skip=read,sync"], |s| s.replay_skip == skip::READ | skip::SYNC),
        (&["replay_skip=write,trim"], |s| s.replay_skip == skip::WRITE | skip::TRIM),
        (&["merge_blktrace_file=merged.bin"], |s| s.merge_blktrace_file.as_deref() == Some("merged.bin")),
        (&["merge_blktrace_scalars=50:100"], |s| s.merge_blktrace_scalars == [50, 100]),
        (&["merge_blktrace_iters=2:1"], |s| s.merge_blktrace_iters == [2, 1]),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["write_iolog="],
        &["read_iolog_chunked"],
        &["replay_no_stall=2"],
        &["replay_scale=-1"],
        &["replay_align=3000"],
        &["replay_time_scale=0"],
        &["replay_skip=reads"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn replay_skip_takes_a_comma_list() {
        assert_eq!(
            spec(&["replay_skip=read,sync"]).replay_skip,
            skip::READ | skip::SYNC
        );
        assert!(applied(&["replay_skip=reads"]).is_err());
    }

    #[test]
    fn replay_align_must_be_a_power_of_two() {
        assert_eq!(spec(&["replay_align=4k"]).replay_align, 4096);
        assert!(applied(&["replay_align=3000"]).is_err());
    }

    #[test]
    fn replay_time_scale_defaults_to_100_and_refuses_zero() {
        assert_eq!(spec(&[]).replay_time_scale, 100);
        assert_eq!(spec(&["replay_time_scale=200"]).replay_time_scale, 200);
        assert!(applied(&["replay_time_scale=0"]).is_err());
    }

    #[test]
    fn merge_lists_are_whole_numbers() {
        assert_eq!(
            spec(&["merge_blktrace_iters=2:1"]).merge_blktrace_iters,
            vec![2, 1]
        );
        assert!(applied(&["merge_blktrace_scalars=50:0"]).is_err());
        assert!(applied(&["read_iolog="]).is_err());
    }
}
