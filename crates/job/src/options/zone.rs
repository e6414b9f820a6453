//! Zoned block devices (none implemented by iolab).

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    not!(Zone, "zonemode", [], Str),
    not!(Zone, "zonesize", [], Str),
    not!(Zone, "zonecapacity", [], Str),
    not!(Zone, "zonerange", [], Str),
    not!(Zone, "zoneskip", [], Str),
    not!(Zone, "read_beyond_wp", [], Bool),
    not!(Zone, "max_open_zones", [], Int),
    not!(Zone, "job_max_open_zones", [], Int),
    not!(Zone, "ignore_zone_limits", [], Bool),
    not!(Zone, "zone_reset_threshold", [], FloatList),
    not!(Zone, "zone_reset_frequency", [], FloatList),
];
