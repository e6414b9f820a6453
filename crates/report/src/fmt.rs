//! fio's number and unit formatting, reproduced exactly, quirks included (each quirk is named
//! where it lives). Everything here is pure and unit-tested with values worked by hand.

/// The unit suffix family of [`num2str`] (fio's `enum n2s_unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum N2sUnit {
    /// No suffix after the prefix: IOPS (`19.7k`), latencies.
    None,
    /// `B`: sizes.
    Byte,
    /// `B/s`: bandwidth in bytes.
    BytePerSec,
    /// `bit/s`: bandwidth in bits (the number is multiplied by 8).
    BitPerSec,
}

/// fio's `num2str()`: print `num` (already divided by `base`) in at most `maxlen` digits,
/// dividing by 1000 or 1024 (`pow2`) and adding a prefix (k/M/G or Ki/Mi/Gi) until it fits,
/// then filling the room left with decimals of the last remainder.
///
/// The decimals come from `remainder / 1000|1024` printed with `%.Nf`; when that rounds up to
/// `1.0` the integer part is incremented (20971520 B in SI is `21.0MB`, not `20.0MB`).
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: N2sUnit) -> String {
    const SI: [&str; 6] = ["", "k", "M", "G", "T", "P"];
    const IEC: [&str; 6] = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let unit_str = match unit {
        N2sUnit::None => "",
        N2sUnit::Byte => "B",
        N2sUnit::BytePerSec => "B/s",
        N2sUnit::BitPerSec => "bit/s",
    };
    let mut num = if unit == N2sUnit::BitPerSec {
        num.wrapping_mul(8)
    } else {
        num
    };
    let mut post_index = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post_index += 1;
    }
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post_index < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post_index += 1;
    }
    let post_index = post_index.min(prefixes.len() - 1);
    let done = |n: u64| format!("{n}{}{unit_str}", prefixes[post_index]);
    let Some(modulo) = modulo else {
        return done(num);
    };
    let len = digits(num);
    if maxlen <= len + 1 {
        return done(if carry { num + 1 } else { num });
    }
    let decimals = maxlen - len - 1;
    let frac = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    // A remainder that rounds up to 1.0 carries into the integer part (971/1000 -> "1.0").
    let num = if frac.starts_with('1') { num + 1 } else { num };
    let frac = frac.get(2..).unwrap_or("");
    format!("{num}.{frac}{}{unit_str}", prefixes[post_index])
}

fn digits(n: u64) -> usize {
    let mut d = 1;
    let mut n = n;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// A size in bytes as fio prints it, in the primary family (`kb_base`) and, with `alt`, the
/// other one: `num2str(n, sig_figs, 1, i2p ^ alt, unit)`.
pub fn size_str(n: u64, units: &crate::Units, alt: bool, unit: N2sUnit) -> String {
    let i2p = units.kb_base.is_power_of_two();
    num2str(n, units.sig_figs, 1, i2p != alt, unit)
}

/// A bandwidth in B/s with the job's `unit_base` (bytes or bits).
pub fn rate_str(n: u64, units: &crate::Units, alt: bool) -> String {
    let unit = if units.bits {
        N2sUnit::BitPerSec
    } else {
        N2sUnit::BytePerSec
    };
    size_str(n, units, alt, unit)
}

/// A bandwidth in B/s as fio's steady-state line prints it: divided by `kb_base` first and
/// handed to num2str with that base, so the other family's figure is the same count of
/// KiB (or kB) divided by 1000 (or 1024): fio 3.33 prints `4909MiB/s (5027MB/s)`, where the
/// second should read 5147MB/s, and `7988KiB/s (7988kB/s)`.
pub fn kb_rate_str(n: u64, units: &crate::Units, alt: bool) -> String {
    let unit = if units.bits {
        N2sUnit::BitPerSec
    } else {
        N2sUnit::BytePerSec
    };
    let kb = u64::from(units.kb_base.max(1));
    let i2p = kb.is_power_of_two();
    num2str(n / kb, units.sig_figs, kb, i2p != alt, unit)
}

/// The unit fio picks for a `slat`/`clat`/`lat` line (`nsec_to_msec`, then `nsec_to_usec`):
/// returns the label and the four figures scaled (integers truncated, as fio does).
pub fn lat_scale(min: u64, max: u64, mean: f64, dev: f64) -> (&'static str, u64, u64, f64, f64) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        (
            "msec",
            min / 1_000_000,
            max / 1_000_000,
            mean / 1e6,
            dev / 1e6,
        )
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", min / 1000, max / 1000, mean / 1e3, dev / 1e3)
    } else {
        ("nsec", min, max, mean, dev)
    }
}

/// The unit of a percentiles block, chosen from the smallest and largest percentile values:
/// (label, how many times to divide by 1000 rounding up, divisor for the column width).
pub fn percentile_scale(minv: u64, maxv: u64) -> (&'static str, u32, u64) {
    if minv > 2_000_000 && maxv > 99_999_999 {
        ("msec", 2, 1_000_000)
    } else if minv > 2000 && maxv > 99_999 {
        ("usec", 1, 1000)
    } else {
        ("nsec", 0, 1)
    }
}

/// Column width of a percentile value: `max(5, (int)(log10(maxv / divisor) + 1))`.
pub fn percentile_width(maxv: u64, divisor: u64) -> usize {
    let v = maxv / divisor;
    if v == 0 {
        return 5;
    }
    digits(v).max(5)
}

/// The decimals fio shows for a percentile list: the most any entry needs (99.999 needs 3).
pub fn percentile_precision(list: &[(f64, u64)]) -> usize {
    list.iter()
        .map(|(p, _)| {
            let s = format!("{p:.6}");
            let t = s.trim_end_matches('0');
            t.len() - t.find('.').map_or(t.len(), |i| i + 1)
        })
        .max()
        .unwrap_or(2)
}

/// fio's `scale_down_ns`-free 3.33 latency target line uses plain integers; kept here so the
/// text writer has one place for C's `%f` (6 decimals).
pub fn f6(v: f64) -> String {
    format!("{v:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Units;

    #[test]
    fn num2str_fits_without_prefix() {
        assert_eq!(num2str(8455, 4, 1, false, N2sUnit::None), "8455");
        assert_eq!(num2str(768, 4, 1, false, N2sUnit::None), "768");
        assert_eq!(num2str(4096, 4, 1, true, N2sUnit::Byte), "4096B");
    }

    #[test]
    fn num2str_iops_thousands() {
        // 19672 -> 19 rem 672, room for one decimal: 0.672 -> "0.7".
        assert_eq!(num2str(19672, 4, 1, false, N2sUnit::None), "19.7k");
        // 1701818 -> 1701 rem 818, no room: carry 818 >= 500 -> 1702k.
        assert_eq!(num2str(1701818, 4, 1, false, N2sUnit::None), "1702k");
        assert_eq!(num2str(10311, 4, 1, false, N2sUnit::None), "10.3k");
    }

    #[test]
    fn num2str_bytes_both_families() {
        // 80807 KiB/s * 1024 = 82746368 B/s: /1024 = 80807 rem 0, /1024 = 78 rem 935 -> 78.9.
        assert_eq!(
            num2str(82746368, 4, 1, true, N2sUnit::BytePerSec),
            "78.9MiB/s"
        );
        // SI: 82746 rem 368, 82 rem 746 -> 82.7MB/s.
        assert_eq!(
            num2str(82746368, 4, 1, false, N2sUnit::BytePerSec),
            "82.7MB/s"
        );
        assert_eq!(num2str(65536, 4, 1, true, N2sUnit::Byte), "64.0KiB");
        // 1048576 in SI: 1048 rem 576, no room for decimals, carry -> 1049kB.
        assert_eq!(num2str(1048576, 4, 1, false, N2sUnit::Byte), "1049kB");
        assert_eq!(num2str(16 << 20, 4, 1, true, N2sUnit::Byte), "16.0MiB");
    }

    #[test]
    fn num2str_bits_multiply_by_eight() {
        // 10506 kB/s... 10510000 B/s * 8 = 84080000 bit/s -> 82109 rem 384 -> 80 rem 189 -> 80.2
        assert_eq!(
            num2str(10_510_000, 4, 1, true, N2sUnit::BitPerSec),
            "80.2Mibit/s"
        );
    }

    #[test]
    fn num2str_rounded_remainder_carries() {
        // 1023 KiB + 1000 B: no room for decimals, so the carry applies: 1024KiB.
        assert_eq!(
            num2str(1023 * 1024 + 1000, 4, 1, true, N2sUnit::Byte),
            "1024KiB"
        );
        // 99 KiB + 1000 B: rem 1000/1024 = 0.977 -> "%.1f" = "1.0" -> carries: 100.0KiB.
        assert_eq!(
            num2str(99 * 1024 + 1000, 4, 1, true, N2sUnit::Byte),
            "100.0KiB"
        );
        // 20 MiB in SI: 20971 rem 520 -> 20 rem 971 -> "1.0" -> 21.0MB (seen in fio 3.33).
        assert_eq!(num2str(20 << 20, 4, 1, false, N2sUnit::Byte), "21.0MB");
    }

    #[test]
    fn num2str_latency_six_digits() {
        assert_eq!(num2str(4019741, 6, 1, false, N2sUnit::None), "4019.7k");
        assert_eq!(num2str(999999, 6, 1, false, N2sUnit::None), "999999");
    }

    #[test]
    fn sizes_follow_kb_base() {
        let si = Units {
            kb_base: 1000,
            ..Units::default()
        };
        assert_eq!(size_str(8589934592, &si, false, N2sUnit::Byte), "8590MB");
        assert_eq!(size_str(8589934592, &si, true, N2sUnit::Byte), "8192MiB");
        assert_eq!(rate_str(3147, &Units::default(), false), "3147B/s");
    }

    #[test]
    fn steady_state_rates_keep_fios_kib_count_in_both_families() {
        let u = Units::default();
        // 5147000000 B/s = 5026367 KiB/s: /1024 = 4908 rem 575, carried -> 4909MiB/s; the
        // other family divides the same 5026367 by 1000: 5026 rem 367 -> 5026MB/s.
        assert_eq!(kb_rate_str(5_147_000_000, &u, false), "4909MiB/s");
        assert_eq!(kb_rate_str(5_147_000_000, &u, true), "5026MB/s");
        // 7988 KiB/s fits in four digits: both say 7988, with their own prefix.
        assert_eq!(kb_rate_str(7988 * 1024, &u, false), "7988KiB/s");
        assert_eq!(kb_rate_str(7988 * 1024, &u, true), "7988kB/s");
        let si = Units {
            kb_base: 1000,
            ..Units::default()
        };
        // 4520000 kB/s: 4520MB/s, and 4520000 / 1024 = 4414 rem 64 -> 4414MiB/s.
        assert_eq!(kb_rate_str(4_520_000_000, &si, false), "4520MB/s");
        assert_eq!(kb_rate_str(4_520_000_000, &si, true), "4414MiB/s");
    }

    #[test]
    fn lat_scale_rules() {
        assert_eq!(lat_scale(31, 2165, 43.0, 17.0).0, "nsec");
        // usec needs min > 2000, max > 99999 and stdev > 1000 ns.
        assert_eq!(
            lat_scale(3180, 106_000, 4970.0, 2020.0),
            ("usec", 3, 106, 4.97, 2.02)
        );
        assert_eq!(lat_scale(3180, 106_000, 4970.0, 999.0).0, "nsec");
        assert_eq!(lat_scale(2_000_001, 100_000_000, 5e6, 2e6).0, "msec");
    }

    #[test]
    fn percentile_layout_rules() {
        assert_eq!(percentile_scale(29, 151), ("nsec", 0, 1));
        assert_eq!(percentile_scale(31616, 831488), ("usec", 1, 1000));
        assert_eq!(percentile_width(151, 1), 5);
        assert_eq!(percentile_width(4014080, 1), 7);
        assert_eq!(percentile_width(19_268_000, 1000), 5);
        let l = [(50.0, 1), (99.999, 2)];
        assert_eq!(percentile_precision(&l), 3);
        assert_eq!(percentile_precision(&[(1.0, 0), (99.95, 0)]), 2);
    }

    #[test]
    fn c_rounding_of_ties_matches_printf() {
        // glibc rounds exact ties to even; so must we (num2str relies on it).
        assert_eq!(format!("{:.1}", 0.25), "0.2");
        assert_eq!(format!("{:.1}", 0.75), "0.8");
        assert_eq!(format!("{:5.2}", 4.97), " 4.97");
    }
}
