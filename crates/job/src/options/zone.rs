//! Zones: fio's strided zones on any file or device (zonemode=strided); zoned block devices
//! (zonemode=zbd) are accepted here and refused by the run where the device is not zoned.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Zone, "zonemode", [], Choice(&["none", "strided", "zbd"]), Some("none"), "none; strided: I/O in zones of zonerange, zonesize bytes each, zoneskip between; zbd: zoned block devices (refused where the device is not zoned)",
        |s, a| {
            let c = a.choice()?;
            s.zone_strided = c == "strided";
            s.zone_zbd = c == "zbd";
            Ok(())
        }),
    imp!(Zone, "zonesize", [], Size, Some("0"), "Bytes of I/O in each zone before moving to the next",
        |s, a| { s.zonesize = value::parse_size(a.v, a.kb)?; Ok(()) }),
    not!(Zone, "zonecapacity", [], Str),
    imp!(Zone, "zonerange", [], Size, Some("0"), "Size of a zone (0: zonesize)",
        |s, a| { s.zonerange = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Zone, "zoneskip", [], Size, Some("0"), "Bytes skipped after each zone",
        |s, a| { s.zoneskip = value::parse_size(a.v, a.kb)?; Ok(()) }),
    not!(Zone, "read_beyond_wp", [], Bool),
    not!(Zone, "max_open_zones", [], Int),
    not!(Zone, "job_max_open_zones", [], Int),
    not!(Zone, "ignore_zone_limits", [], Bool),
    not!(Zone, "zone_reset_threshold", [], FloatList),
    not!(Zone, "zone_reset_frequency", [], FloatList),
];
