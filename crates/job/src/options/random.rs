//! Random offsets: generators, seeds, distributions.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Random, "randrepeat", [], Bool, Some("1"), "Same random sequence on every run",
        |s, a| { s.randrepeat = a.flag()?; Ok(()) }),
    imp!(Random, "randseed", [], Int, Some("0x89"), "Seed of the random generators",
        |s, a| {
            s.randseed = u64::try_from(a.int()?).map_err(|_| "must not be negative")?;
            s.randseed_set = true;
            Ok(())
        }),
    imp!(Random, "allrandrepeat", [], Bool, Some("0"), "Seed every random generator repeatably",
        |s, a| { s.allrandrepeat = a.flag()?; Ok(()) }),
    imp!(Random, "norandommap", [], Flag, None, "Random offsets may repeat (no coverage map)",
        |s, a| { s.norandommap = a.flag()?; Ok(()) }),
    imp!(Random, "softrandommap", [], Bool, Some("0"), "Set norandommap if randommap allocation fails",
        |s, a| { s.softrandommap = a.flag()?; Ok(()) }),
    imp!(Random, "random_generator", [], Choice(&["tausworthe", "lfsr", "tausworthe64"]), Some("tausworthe"), "Random number generator",
        |s, a| { s.random_generator = a.choice()?; Ok(()) }),
    imp!(Random, "random_distribution", [], Distribution, Some("random"), "Offset distribution: random, zipf:t, pareto:h, normal:s, zoned:..., zoned_abs:...",
        |s, a| {
            s.random_distribution = match value::parse_distribution(a.v, a.kb)? {
                Distribution::NotInIolab(d) => {
                    return Err(format!("distribution '{d}' is not supported by iolab"))
                }
                d => d,
            };
            Ok(())
        }),
    imp!(Random, "percentage_random", [], PerDirInt, Some("100,100,100"), "Percentage of I/O that is random, per direction",
        |s, a| {
            let f = |x: &str| value::parse_int(x).and_then(pct);
            s.percentage_random
                .update(value::parse_per_dir(a.v, true, f)?);
            Ok(())
        }),
    later!(Random, "random_sequence_stride", [], Int),
    later!(Random, "sprandom", [], Bool),
    later!(Random, "spr_op", [], Str),
    later!(Random, "spr_num_regions", [], Int),
];

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};
    use crate::value::{Distribution, PerDir};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["randrepeat=0"], |s| !s.randrepeat),
        (&["randseed=1234"], |s| s.randseed == 1234 && s.randseed_set),
        (&["allrandrepeat=1"], |s| s.allrandrepeat),
        (&["norandommap"], |s| s.norandommap),
        (&["softrandommap=1"], |s| s.softrandommap),
        (&["random_generator=lfsr"], |s| s.random_generator == "lfsr"),
        (&["random_generator=tausworthe64"], |s| s.random_generator == "tausworthe64"),
        (&["random_distribution=zipf:1.2"], |s| s.random_distribution == Distribution::Zipf(1.2)),
        (&["random_distribution=pareto:0.3"], |s| s.random_distribution == Distribution::Pareto(0.3)),
        (&["random_distribution=normal:10"], |s| s.random_distribution == Distribution::Normal(10.0)),
        (&["random_distribution=zoned:60/10:40/90"], |s| matches!(s.random_distribution, Distribution::Zoned(_))),
        (&["percentage_random=50"], |s| s.percentage_random == PerDir::all(50)),
        (&["percentage_random=50,20"], |s| (s.percentage_random.read, s.percentage_random.write) == (50, 20)),
    ];

    /// Values fio refuses (negative seeds: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["randrepeat"],
        &["randseed=-1"],
        &["allrandrepeat=2"],
        &["random_generator=mt"],
        &["random_distribution=bogus"],
        &["percentage_random=101"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn distributions_iolab_lacks_are_refused_by_name() {
        assert!(matches!(
            spec(&["random_distribution=zipf:1.2"]).random_distribution,
            Distribution::Zipf(_)
        ));
        let all = applied(&["random_distribution=random"]).map(|s| s.random_distribution);
        assert_eq!(all, Ok(Distribution::Random));
    }

    #[test]
    fn randseed_takes_hex_and_refuses_negatives() {
        assert_eq!(spec(&["randseed=0x10"]).randseed, 16);
        assert!(applied(&["randseed=-1"]).is_err());
        // Given, even at its default, it is set; the default alone is not.
        assert!(spec(&["randseed=0x89"]).randseed_set);
        assert!(!crate::JobSpec::default().randseed_set);
    }
}
