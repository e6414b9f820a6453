//! The I/O pattern: direction, block sizes, mixes, counts.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Io, "rw", ["readwrite"], Rw, Some("read"), "I/O pattern: read, write, trim, randread, randwrite, randtrim, rw, randrw, trimwrite, randtrimwrite[:N]",
        |s, a| { (s.rw, s.rw_modifier) = value::parse_rw(a.v, a.kb)?; Ok(()) }),
    imp!(Io, "rwmixread", [], Int, Some("50"), "Percentage of a mixed workload that is reads",
        |s, a| { s.rwmixread = pct(a.int()?)?; Ok(()) }),
    imp!(Io, "rwmixwrite", [], Int, Some("50"), "Percentage of a mixed workload that is writes",
        |s, a| { s.rwmixread = 100 - pct(a.int()?)?; Ok(()) }),
    imp!(Io, "bs", ["blocksize"], PerDirSize, Some("4096"), "Block size, per direction read,write,trim",
        |s, a| {
            a.per_dir_size(&mut s.bs)?;
            if [s.bs.read, s.bs.write, s.bs.trim].contains(&0) {
                return Err("block size must not be zero".into());
            };
            Ok(())
        }),
    imp!(Io, "bsrange", ["blocksize_range"], Range, None, "Block size range, per direction",
        |s, a| {
            // As fio: a direction bsrange leaves out takes bs, whatever order the two come in.
            let dirs = value::parse_per_dir(a.v, false, |x| value::parse_range(x, a.kb))?;
            s.bsrange.update(dirs.map(|d| d.map(Some)));
            Ok(())
        }),
    imp!(Io, "bssplit", [], BsSplit, None, "Block size mix: size/percent:size/percent, per direction",
        |s, a| {
            let (dirs, _) = value::parse_bssplit(a.v, a.kb)?;
            s.bssplit.update(dirs.map(|d| d.map(Some)));
            Ok(())
        }),
    imp!(Io, "ba", ["blockalign"], PerDirSize, None, "Alignment of random offsets, per direction",
        |s, a| {
            let mut ba = s.ba.unwrap_or_default();
            a.per_dir_size(&mut ba)?;
            s.ba = Some(ba);
            Ok(())
        }),
    imp!(Io, "number_ios", [], Int, Some("0"), "Stop after this many I/Os",
        |s, a| { s.number_ios = u64::try_from(a.int()?).map_err(|_| "must not be negative")?; Ok(()) }),
    imp!(Io, "loops", [], Int, Some("1"), "Repeat the job this many times",
        |s, a| { s.loops = to_u32(a.int()?)?.max(1); Ok(()) }),
    imp!(Io, "bs_unaligned", ["blocksize_unaligned"], Flag, None, "Block sizes of bsrange may be any size in the range, not multiples of the smallest",
        |s, a| { s.bs_unaligned = a.flag()?; Ok(()) }),
    imp!(Io, "bs_is_seq_rand", [], Bool, Some("0"), "Block sizes are sequential,random rather than read,write: random I/Os take the write sizes, sequential ones the read sizes",
        |s, a| { s.bs_is_seq_rand = a.flag()?; Ok(()) }),
    imp!(Io, "rw_sequencer", [], Choice(&["sequential", "identical"]), Some("sequential"), "With rw=randX:N, the I/Os between random ones follow it (sequential) or repeat it (identical)",
        |s, a| { s.rw_sequencer_identical = a.choice()? == "identical"; Ok(()) }),
    imp!(Io, "serialize_overlap", [], Bool, Some("0"), "Wait for in-flight I/O that overlaps the next one before issuing it",
        |s, a| { s.serialize_overlap = a.flag()?; Ok(()) }),
];

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};
    use crate::value::{BsSplit, PerDir, RwMode, RwModifier};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["rw=randwrite"], |s| s.rw == RwMode::RandWrite && s.rw_modifier.is_none()),
        (&["readwrite=write:4k"], |s| (s.rw, s.rw_modifier) == (RwMode::Write, Some(RwModifier::Skip(4096)))),
        (&["rwmixread=70"], |s| s.rwmixread == 70),
        (&["rwmixwrite=30"], |s| s.rwmixread == 70),
        (&["bs=8k"], |s| s.bs == PerDir::all(8192)),
        (&["blocksize=4k,64k"], |s| (s.bs.read, s.bs.write, s.bs.trim) == (4096, 65536, 65536)),
        (&["bsrange=1k-16k"], |s| s.bsrange == PerDir::all(Some((1024, 16384)))),
        (&["blocksize_range=1k-4k,"], |s| s.bsrange == PerDir { read: Some((1024, 4096)), write: None, trim: None }),
        (&["bssplit=4k/75:64k/25"], |s| {
            let want = vec![BsSplit { bs: 4096, perc: 75.0 }, BsSplit { bs: 65536, perc: 25.0 }];
            s.bssplit.read.as_ref() == Some(&want) && s.bssplit.write.as_ref() == Some(&want)
        }),
        (&["ba=8k"], |s| s.ba == Some(PerDir::all(8192))),
        (&["number_ios=1000"], |s| s.number_ios == 1000),
        (&["loops=3"], |s| s.loops == 3),
        (&["bs_unaligned"], |s| s.bs_unaligned),
        (&["bs_is_seq_rand=1"], |s| s.bs_is_seq_rand),
        (&["rw_sequencer=identical"], |s| s.rw_sequencer_identical),
        (&["serialize_overlap=1"], |s| s.serialize_overlap),
    ];

    /// Values fio refuses.
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["rw=readrandom"],
        &["rwmixread=101"],
        &["rwmixread=-1"],
        &["rwmixwrite=101"],
        &["bs=0"],
        &["bs=4k,0"],
        &["bsrange=4k"],
        &["number_ios=-1"],
        &["loops=-1"],
        &["bs_is_seq_rand"],
        &["rw_sequencer=random"],
        &["serialize_overlap"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn serialize_overlap_is_off_unless_asked() {
        assert!(!spec(&[]).serialize_overlap);
        assert!(spec(&["serialize_overlap=1"]).serialize_overlap);
        assert!(
            applied(&["serialize_overlap"]).is_err(),
            "a bool needs its value"
        );
    }

    #[test]
    fn rw_takes_a_modifier() {
        let s = spec(&["rw=randrw:8"]);
        assert_eq!(
            (s.rw, s.rw_modifier),
            (RwMode::RandRw, Some(RwModifier::SeqCount(8)))
        );
    }

    #[test]
    fn rwmixwrite_is_the_complement_of_rwmixread() {
        assert_eq!(spec(&["rwmixwrite=30"]).rwmixread, 70);
        assert!(applied(&["rwmixread=101"]).is_err());
    }

    #[test]
    fn bs_is_per_direction_and_never_zero() {
        let want = PerDir {
            read: 4096,
            write: 65536,
            trim: 65536,
        };
        assert_eq!(spec(&["bs=4k,64k"]).bs, want);
        assert!(applied(&["bs=0"]).is_err());
    }

    #[test]
    fn regression_bsrange_gave_the_directions_it_left_out_the_read_bs() {
        // fio: `bs=4k,64k` then `bsrange=1k-4k,` writes 64k blocks; iolab wrote 4k ones (the
        // read bs, copied when bsrange was applied). A direction left out now keeps bs.
        for opts in [
            ["bs=4k,64k", "bsrange=1k-4k,"],
            ["bsrange=1k-4k,", "bs=4k,64k"],
        ] {
            let s = spec(&opts);
            assert_eq!(
                (s.bsrange.read, s.bsrange.write),
                (Some((1024, 4096)), None)
            );
            assert_eq!(s.bs.write, 65536);
        }
    }
}
