//! Zones: fio's strided zones on any file or device (zonemode=strided); zoned block devices
//! (zonemode=zbd), whose zones fio emulates on regular files and on block devices that are not
//! zoned, as iolab does (crates/workload/src/zbd.rs); a zoned device is refused by the run.

use super::prelude::*;

/// A share between 0 and 1, as fio's zone_reset_threshold and zone_reset_frequency take it.
fn fraction(v: &str) -> Result<f64, String> {
    let f = value::parse_float(v)?;
    if !(0.0..=1.0).contains(&f) {
        return Err(format!("out of range: {f} (0 to 1)"));
    }
    Ok(f)
}

/// A zone count: fio's limit is 4096 open zones.
fn zone_count(a: &super::Arg<'_>) -> Result<u32, String> {
    let n = a.int()?;
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= 4096)
        .ok_or_else(|| format!("out of range: {n} (0 to 4096)"))
}

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Zone, "zonemode", [], Choice(&["none", "strided", "zbd"]), Some("none"), "none; strided: I/O in zones of zonerange, zonesize bytes each, zoneskip between; zbd: zones with write pointers (emulated on files and unzoned devices, as fio)",
        |s, a| {
            let c = a.choice()?;
            s.zone_strided = c == "strided";
            s.zone_zbd = c == "zbd";
            Ok(())
        }),
    imp!(Zone, "zonesize", [], Size, Some("0"), "Bytes of I/O in each zone before moving to the next (zbd: the zone size)",
        |s, a| { s.zonesize = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Zone, "zonecapacity", [], Str, Some("0"), "zonemode=zbd: bytes of each zone that can be written (0: zonesize)",
        |s, a| { s.zonecapacity = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Zone, "zonerange", [], Size, Some("0"), "Size of a zone (0: zonesize)",
        |s, a| { s.zonerange = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Zone, "zoneskip", [], Size, Some("0"), "Bytes skipped after each zone",
        |s, a| { s.zoneskip = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Zone, "read_beyond_wp", [], Bool, Some("0"), "zonemode=zbd: reads may go past a zone's write pointer",
        |s, a| { s.read_beyond_wp = a.flag()?; Ok(()) }),
    imp!(Zone, "max_open_zones", [], Int, Some("0"), "zonemode=zbd: zones of a file written at once, by all its jobs (0: no limit)",
        |s, a| { s.max_open_zones = zone_count(a)?; Ok(()) }),
    imp!(Zone, "job_max_open_zones", [], Int, Some("0"), "zonemode=zbd: zones this job writes at once (needs max_open_zones)",
        |s, a| { s.job_max_open_zones = zone_count(a)?; Ok(()) }),
    imp!(Zone, "ignore_zone_limits", [], Bool, Some("0"), "zonemode=zbd: ignore the open-zone limit a zoned device reports (emulated zones report none)",
        |s, a| { s.ignore_zone_limits = a.flag()?; Ok(()) }),
    imp!(Zone, "zone_reset_threshold", [], FloatList, None, "zonemode=zbd: share of the range holding data above which zone_reset_frequency resets zones",
        |s, a| { s.zone_reset_threshold = fraction(a.v)?; Ok(()) }),
    imp!(Zone, "zone_reset_frequency", [], FloatList, None, "zonemode=zbd: share of writes (over the threshold) that reset their zone first",
        |s, a| { s.zone_reset_frequency = fraction(a.v)?; Ok(()) }),
];

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{spec, Acts, Refused};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["zonemode=strided"], |s| s.zone_strided && !s.zone_zbd),
        (&["zonemode=zbd"], |s| s.zone_zbd && !s.zone_strided),
        (&["zonemode=zbd", "zonemode=none"], |s| !s.zone_zbd && !s.zone_strided),
        (&["zonesize=4m"], |s| s.zonesize == 4 << 20),
        (&["zonecapacity=3m"], |s| s.zonecapacity == 3 << 20),
        (&["zonerange=8m"], |s| s.zonerange == 8 << 20),
        (&["zoneskip=1m"], |s| s.zoneskip == 1 << 20),
        (&["read_beyond_wp=1"], |s| s.read_beyond_wp),
        (&["max_open_zones=4"], |s| s.max_open_zones == 4),
        (&["job_max_open_zones=2"], |s| s.job_max_open_zones == 2),
        (&["ignore_zone_limits=1"], |s| s.ignore_zone_limits),
        (&["zone_reset_threshold=0.25"], |s| s.zone_reset_threshold == 0.25),
        (&["zone_reset_frequency=0.5"], |s| s.zone_reset_frequency == 0.5),
    ];

    /// Values fio refuses.
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["zonemode=host"],
        &["zonesize=abc"],
        &["zonecapacity=abc"],
        &["read_beyond_wp"],
        &["max_open_zones=4097"],
        &["max_open_zones=-1"],
        &["job_max_open_zones=4097"],
        &["ignore_zone_limits=2"],
        &["zone_reset_threshold=1.5"],
        &["zone_reset_frequency=2"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn zbd_options_reach_the_spec() {
        let s = spec(&[
            "zonemode=zbd",
            "zonesize=4m",
            "zonecapacity=3m",
            "max_open_zones=4",
            "job_max_open_zones=2",
            "ignore_zone_limits=1",
            "read_beyond_wp=1",
            "zone_reset_threshold=0.25",
            "zone_reset_frequency=0.5",
        ]);
        assert!(s.zone_zbd && s.ignore_zone_limits && s.read_beyond_wp);
        assert_eq!((s.zonesize, s.zonecapacity), (4 << 20, 3 << 20));
        assert_eq!((s.max_open_zones, s.job_max_open_zones), (4, 2));
        assert_eq!(
            (s.zone_reset_threshold, s.zone_reset_frequency),
            (0.25, 0.5)
        );
        let d = spec(&[]);
        assert_eq!(
            (d.zonecapacity, d.max_open_zones, d.zone_reset_frequency),
            (0, 0, 0.0)
        );
    }
}
