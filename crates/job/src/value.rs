//! Value grammars: fio's sizes, times, integers, booleans, ranges, per-direction lists,
//! `bssplit`, `rw` modes, random distributions and data patterns. Each function takes the text after `=` and
//! returns a typed value or a message that names what was wrong (the caller adds file, line and
//! option).

use crate::arith;

mod bssplit;
mod dist;
mod pattern;
mod rw;

pub use bssplit::{parse_bssplit, parse_bssplit_dir, BsSplit, BsSplitDirs};
pub use dist::{parse_distribution, Distribution, Zone};
pub use pattern::{DataPattern, MAX_PATTERN};
pub use rw::{parse_rw, RwMode, RwModifier, RW_NAMES};

/// Data direction, in fio's order for comma lists: read, write, trim (`as usize` indexes
/// per-direction arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Reads.
    Read = 0,
    /// Writes.
    Write = 1,
    /// Trims (discards).
    Trim = 2,
}

/// One value per direction (read, write, trim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerDir<T> {
    /// For reads.
    pub read: T,
    /// For writes.
    pub write: T,
    /// For trims.
    pub trim: T,
}

impl<T: Clone> PerDir<T> {
    /// The same value for all three directions.
    pub fn all(v: T) -> Self {
        PerDir {
            read: v.clone(),
            write: v.clone(),
            trim: v,
        }
    }
    /// The value for `d`.
    pub fn get(&self, d: Dir) -> &T {
        match d {
            Dir::Read => &self.read,
            Dir::Write => &self.write,
            Dir::Trim => &self.trim,
        }
    }
    /// Overwrites the directions that `upd` sets; the others keep their value.
    pub fn update(&mut self, upd: [Option<T>; 3]) {
        let [r, w, t] = upd;
        if let Some(v) = r {
            self.read = v;
        }
        if let Some(v) = w {
            self.write = v;
        }
        if let Some(v) = t {
            self.trim = v;
        }
    }
}

/// A size that may be given as a percentage (`size=50%`); the default is zero bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeOrPct {
    /// Bytes.
    Bytes(u64),
    /// Percent of the file or device (0 <= p <= 100).
    Percent(f64),
    /// Zones of a zoned block device (`1z`); parsed, refused when the job is resolved.
    Zones(u64),
}

impl Default for SizeOrPct {
    fn default() -> Self {
        SizeOrPct::Bytes(0)
    }
}

fn split_number(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('+').unwrap_or(s);
    let (digits_end, hex) = if body.starts_with("0x") || body.starts_with("0X") {
        let n = body[2..].bytes().take_while(u8::is_ascii_hexdigit).count();
        if n == 0 {
            return None;
        }
        (2 + n, true)
    } else {
        (body.bytes().take_while(u8::is_ascii_digit).count(), false)
    };
    if digits_end == 0 {
        return None;
    }
    let _ = hex;
    Some(body.split_at(digits_end))
}

fn parse_u64_digits(d: &str) -> Result<u64, String> {
    if let Some(h) = d.strip_prefix("0x").or_else(|| d.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).map_err(|_| format!("number out of range '{d}'"))
    } else {
        d.parse().map_err(|_| format!("number out of range '{d}'"))
    }
}

/// The multiplier of a byte suffix under `kb_base` (1024 or 1000), or None if unknown.
///
/// fio's rule (parse.c `__get_mult_bytes`, verified against fio 3.33): `k`, `kb`, `K`, `KB` use
/// `kb_base`; `kib`/`KiB` use the *other* base. With the default `kb_base=1024` that is the
/// inversion fio keeps for old scripts: `4k` = 4096 but `4KiB` = 4000. fio only recognises the
/// three-letter `kib` form: `4ki` falls through to `k` (4096 with either base... of `kb_base`).
pub fn byte_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let s = suffix.to_ascii_lowercase();
    let (letter, base) = match s.as_str() {
        "" | "b" => return Some(1),
        "kib" | "mib" | "gib" | "tib" | "pib" => (s.as_bytes()[0], other),
        "k" | "kb" | "ki" | "m" | "mb" | "mi" | "g" | "gb" | "gi" | "t" | "tb" | "ti" | "p"
        | "pb" | "pi" => (s.as_bytes()[0], kb_base),
        _ => return None,
    };
    let pow = match letter {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        _ => 5,
    };
    base.checked_pow(pow)
}

fn size_inner(s: &str, kb_base: u64, allow_pct: bool) -> Result<SizeOrPct, String> {
    let s = s.trim();
    let bad = || format!("invalid size '{s}'");
    if s.is_empty() {
        return Err("empty size".into());
    }
    if s.starts_with('(') {
        let n = arith::eval(s).map_err(|e| format!("invalid expression '{s}': {e}"))?;
        return u64::try_from(n.int)
            .map(SizeOrPct::Bytes)
            .map_err(|_| bad());
    }
    let (num, suffix) = split_number(s).ok_or_else(bad)?;
    // fio stops reading at the first character that is not a digit or a unit and ignores
    // the rest: fio's t/strided.py passes `--filesize=65536)`. iolab ignores what follows a
    // closing parenthesis alone; a letter, space or dot after the number (fio reads `4x`,
    // `64 k` and `1.5m` as 4, 64 and 1) stays refused.
    let suffix = suffix.split_once(')').map_or(suffix, |(unit, _)| unit);
    let n = parse_u64_digits(num)?;
    if suffix == "%" {
        if !allow_pct {
            return Err(format!("percentage not allowed here '{s}'"));
        }
        if n > 100 {
            return Err(format!("percentage out of range '{s}' (0-100)"));
        }
        return Ok(SizeOrPct::Percent(n as f64));
    }
    if allow_pct && suffix.eq_ignore_ascii_case("z") {
        return Ok(SizeOrPct::Zones(n));
    }
    // fio reads `5*1024` as 5: arithmetic counts only inside (...). Kept for compatibility;
    // OptDef::check warns about it.
    let mult = if suffix.starts_with(['*', '/', '+', '^']) {
        1
    } else {
        byte_multiplier(suffix.trim_start(), kb_base).ok_or_else(bad)?
    };
    n.checked_mul(mult)
        .map(SizeOrPct::Bytes)
        .ok_or_else(|| format!("size too large '{s}'"))
}

/// A size in bytes: `4096`, `4k`, `1M`, `0x1000`, `4KiB`, `(1024*8)k`.
///
/// Unlike fio, an unknown suffix (`4x`) is refused instead of read as `4`; what follows a
/// closing parenthesis after the number (`65536)`) is ignored, as fio ignores it.
pub fn parse_size(s: &str, kb_base: u64) -> Result<u64, String> {
    match size_inner(s, kb_base, false)? {
        SizeOrPct::Bytes(b) => Ok(b),
        _ => Err(format!("invalid size '{s}'")),
    }
}

/// A size or a percentage (`size=50%`, `offset=25%`).
pub fn parse_size_pct(s: &str, kb_base: u64) -> Result<SizeOrPct, String> {
    size_inner(s, kb_base, true)
}

/// An integer option. fio reads integers with the size grammar, so `iodepth=1k` is 1024 and
/// `0x10` is 16; a leading `-` is allowed (e.g. `nice=-5`).
pub fn parse_int(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix('-') {
        if rest.starts_with('(') {
            return Err(format!("invalid integer '{s}'"));
        }
        let v = parse_size(rest, 1024).map_err(|_| format!("invalid integer '{s}'"))?;
        return i64::try_from(v)
            .map(|v| -v)
            .map_err(|_| format!("integer out of range '{s}'"));
    }
    if t.starts_with('(') {
        return arith::eval(t)
            .map(|n| n.int)
            .map_err(|e| format!("invalid expression '{s}': {e}"));
    }
    let v = parse_size(t, 1024).map_err(|_| format!("invalid integer '{s}'"))?;
    i64::try_from(v).map_err(|_| format!("integer out of range '{s}'"))
}

/// A boolean: `0` or `1` (fio reads it as an unsigned integer with maximum 1).
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("invalid boolean '{s}' (use 0 or 1)")),
    }
}

/// The unit a time value has when it carries no suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds (runtime, ramp_time, startdelay, ...).
    Seconds,
    /// Milliseconds.
    Millis,
    /// Microseconds (thinktime, latency_target, ...).
    Micros,
}

impl TimeUnit {
    fn micros(self) -> u64 {
        match self {
            TimeUnit::Seconds => 1_000_000,
            TimeUnit::Millis => 1000,
            TimeUnit::Micros => 1,
        }
    }
}

/// A parsed time value, in microseconds, with a warning when fio's reading is surprising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeVal {
    /// Microseconds.
    pub us: u64,
    /// Set when fio would silently read the value in a way the user likely did not mean.
    pub warning: Option<String>,
}

/// A time value: `30` (in the option's default unit), `10s`, `500ms`, `20us`, `2m`, `1h`, `1d`.
///
/// fio's rules (parse.c `get_mult_time`, verified against fio 3.33): a suffix *starting with*
/// `us` or `ms` is micro/milliseconds (so `usec`, `msec` work), but `s`, `m`, `h`, `d` must be
/// exact: `2sec` and `1min` get multiplier 1, i.e. microseconds. iolab keeps that value for
/// compatibility and returns a warning. In `(...)` a bare number is microseconds; for options
/// whose default unit is seconds the result is truncated to whole seconds, as fio does.
pub fn parse_time(s: &str, unit: TimeUnit) -> Result<TimeVal, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty time".into());
    }
    if t.starts_with('(') {
        let n = arith::eval(t).map_err(|e| format!("invalid expression '{s}': {e}"))?;
        let mut us = u64::try_from(n.int).map_err(|_| format!("negative time '{s}'"))?;
        if unit == TimeUnit::Seconds {
            us = us / 1_000_000 * 1_000_000;
        }
        return Ok(TimeVal { us, warning: None });
    }
    let (num, suffix) = split_number(t).ok_or_else(|| format!("invalid time '{s}'"))?;
    let n = parse_u64_digits(num)?;
    let suf = suffix.trim_start().to_ascii_lowercase();
    let mut warning = None;
    let mult = if suf.is_empty() {
        unit.micros()
    } else if suf.starts_with("us") {
        1
    } else if suf.starts_with("ms") {
        1000
    } else {
        match suf.as_str() {
            "s" => 1_000_000,
            "m" => 60_000_000,
            "h" => 3_600_000_000,
            "d" => 86_400_000_000,
            _ if suf.bytes().all(|b| b.is_ascii_alphabetic()) => {
                warning = Some(format!(
                    "fio reads '{t}' as {n} microseconds (unknown unit '{suf}'); \
                     write s, m, h, d, ms or us"
                ));
                1
            }
            _ => return Err(format!("invalid time '{s}'")),
        }
    };
    let us = n
        .checked_mul(mult)
        .ok_or_else(|| format!("time too large '{s}'"))?;
    Ok(TimeVal { us, warning })
}

/// A range `lo-hi` or `lo:hi` of sizes; swapped if given high first, as fio does.
///
/// As fio 3.33: split at the first `-`, or without one at the first `:`, and each side read
/// up to a further `:` or `-` (fio stops reading a number there), so that the bssplit-like
/// `bsrange=1k:25:2k:25:4k/25` of fio's t/jobs/t0023.fio is fio's range 25 to 1k.
pub fn parse_range(s: &str, kb_base: u64) -> Result<(u64, u64), String> {
    let t = s.trim();
    let i = t
        .find('-')
        .or_else(|| t.find(':'))
        .ok_or_else(|| format!("invalid range '{s}' (use lo-hi)"))?;
    let side = |x: &str| parse_size(x.split([':', '-']).next().unwrap_or(x), kb_base);
    let lo = side(&t[..i])?;
    let hi = side(&t[i + 1..])?;
    Ok(if lo > hi { (hi, lo) } else { (lo, hi) })
}

/// A size (`1g`, as lo == hi) or a range (`1g-2g`), as `filesize` takes.
pub fn parse_size_or_range(s: &str, kb_base: u64) -> Result<(u64, u64), String> {
    if s.contains(['-', ':']) {
        parse_range(s, kb_base)
    } else {
        parse_size(s, kb_base).map(|b| (b, b))
    }
}

/// Splits a per-direction list `read,write,trim` following fio's rules: a value not followed
/// by a comma also applies to the later directions; an empty field keeps the default.
/// `bs=8k,32k` → read 8k, write and trim 32k; `bs=8k,32k,` → trim keeps its default;
/// `bs=,8k` → read keeps its default.
///
/// `split_colon` reproduces fio's handling of plain integer lists: without a comma, fio also
/// splits at the first `:` or `-` (so `bs=4k:8k` means read 4k, write and trim 8k).
pub fn split_per_dir(s: &str, split_colon: bool) -> Result<[Option<&str>; 3], String> {
    let parts: Vec<&str> = if s.contains(',') {
        s.split(',').collect()
    } else if let Some(i) = s.find([':', '-']).filter(|_| split_colon) {
        vec![&s[..i], &s[i + 1..]]
    } else {
        vec![s]
    };
    if parts.len() > 3 && parts[3..].iter().any(|p| !p.trim().is_empty()) {
        return Err(format!("too many values in '{s}' (read,write,trim)"));
    }
    let mut out = [None; 3];
    let n = parts.len();
    for (i, p) in parts.iter().enumerate().take(3) {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        out[i] = Some(p);
        if i == n - 1 {
            for slot in out.iter_mut().skip(i + 1) {
                *slot = Some(p);
            }
        }
    }
    Ok(out)
}

/// Applies `f` to each field of a per-direction list (see [`split_per_dir`]).
pub fn parse_per_dir<T>(
    s: &str,
    split_colon: bool,
    f: impl Fn(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let [a, b, c] = split_per_dir(s, split_colon)?;
    if a.is_none() && b.is_none() && c.is_none() {
        return Err(format!("no value in '{s}'"));
    }
    Ok([
        a.map(&f).transpose()?,
        b.map(&f).transpose()?,
        c.map(&f).transpose()?,
    ])
}

/// A `:`-separated list of floats (`percentile_list=50:99:99.9`).
pub fn parse_float_list(s: &str) -> Result<Vec<f64>, String> {
    s.split(':')
        .map(|f| {
            f.trim()
                .parse::<f64>()
                .map_err(|_| format!("not a number '{f}' in '{s}'"))
        })
        .collect()
}

/// A non-negative float, for options such as `zipf` parameters or `percentage_random`.
pub fn parse_float(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.starts_with('(') {
        return arith::eval(t)
            .map(|n| n.float)
            .map_err(|e| format!("invalid expression: {e}"));
    }
    t.parse().map_err(|_| format!("not a number '{s}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> u64 {
        parse_size(s, 1024).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn sizes_with_default_kb_base_follow_fio_inversion() {
        // Each value below was checked with fio 3.33 (size=bs=V on the null engine).
        assert_eq!(size("4096"), 4096);
        assert_eq!(size("4k"), 4096);
        assert_eq!(size("4K"), 4096);
        assert_eq!(size("4kb"), 4096);
        assert_eq!(size("4KB"), 4096);
        assert_eq!(size("4kB"), 4096);
        assert_eq!(size("4KiB"), 4000);
        assert_eq!(size("4kib"), 4000);
        assert_eq!(size("4ki"), 4096); // fio only knows the 3-letter "kib"
        assert_eq!(size("1mi"), 1 << 20);
        assert_eq!(size("1000ki"), 1_024_000);
        assert_eq!(size("4096b"), 4096);
        assert_eq!(size("4096B"), 4096);
        assert_eq!(size("0x1000"), 4096);
        assert_eq!(size("1m"), 1 << 20);
        assert_eq!(size("1g"), 1 << 30);
        assert_eq!(size("1t"), 1 << 40);
        assert_eq!(size("1p"), 1 << 50);
        assert_eq!(size("1MiB"), 1_000_000);
    }

    #[test]
    fn sizes_with_kb_base_1000_use_true_units() {
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("1mi", 1000), Ok(1_000_000));
        assert_eq!(parse_size("1000ki", 1000), Ok(1_000_000));
    }

    #[test]
    fn size_arithmetic() {
        assert_eq!(size("(1024*8)k"), 8 << 20);
        assert_eq!(size("(4096*2)"), 8192);
    }

    #[test]
    fn invalid_sizes_are_refused() {
        assert_eq!(parse_size("4x", 1024), Err("invalid size '4x'".to_string()));
        assert!(parse_size("abc", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
        assert!(parse_size("1.5g", 1024).is_err());
        assert!(parse_size("50%", 1024).is_err());
        assert!(parse_size("99999999999999999999", 1024).is_err());
        assert!(parse_size("(-4)", 1024).is_err());
        // fio's page_fault.fio: without parentheses fio stops at the first operator.
        assert_eq!(parse_size("5*1024*1024", 1024), Ok(5));
    }

    #[test]
    fn a_range_reads_each_side_up_to_the_next_separator_as_fio_does() {
        // fio 3.33 with write_iolog: t0023's bsrange=512/25:1k:25:2k:25:4k/25 writes blocks
        // of 512 and 1024 bytes; 1k:25:2k:25:4k/25 blocks of 25 to 1024.
        assert_eq!(
            parse_range("512/25:1k:25:2k:25:4k/25", 1024),
            Ok((512, 1024))
        );
        assert_eq!(parse_range("1k:25:2k:25:4k/25", 1024), Ok((25, 1024)));
        // The first '-' splits, wherever a ':' is.
        assert_eq!(parse_range("1k:2k-4k", 1024), Ok((1024, 4096)));
        assert_eq!(parse_range("1k-2k-4k", 1024), Ok((1024, 2048)));
        assert!(parse_range("1k:", 1024).is_err());
        assert!(parse_range("1k:x", 1024).is_err());
    }

    #[test]
    fn a_stray_closing_parenthesis_after_a_size_is_ignored_as_fio_does() {
        // fio's t/strided.py passes --filesize=65536); fio 3.33 reads 65536.
        assert_eq!(parse_size("65536)", 1024), Ok(65536));
        assert_eq!(parse_size("64k)", 1024), Ok(65536));
        assert_eq!(parse_size("64k))x", 1024), Ok(65536));
        assert_eq!(parse_size("0x10000)", 1024), Ok(65536));
        assert_eq!(parse_range("64k-128k)", 1024), Ok((64 << 10, 128 << 10)));
        // Still refused: nothing before it, a unit fio does not know, fio's own refusals.
        assert!(parse_size(")", 1024).is_err());
        assert!(parse_size("64x)", 1024).is_err());
        assert!(parse_size("k64)", 1024).is_err());
    }

    #[test]
    fn percent_sizes() {
        assert_eq!(parse_size_pct("50%", 1024), Ok(SizeOrPct::Percent(50.0)));
        assert_eq!(parse_size_pct("1g", 1024), Ok(SizeOrPct::Bytes(1 << 30)));
        assert_eq!(parse_size_pct("0%", 1024), Ok(SizeOrPct::Percent(0.0))); // offset=0%
        assert!(parse_size_pct("101%", 1024).is_err());
        assert_eq!(parse_size_pct("2z", 1024), Ok(SizeOrPct::Zones(2)));
        assert!(parse_size("2z", 1024).is_err());
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("32"), Ok(32));
        assert_eq!(parse_int("1k"), Ok(1024));
        assert_eq!(parse_int("0x10"), Ok(16));
        assert_eq!(parse_int("-5"), Ok(-5));
        assert_eq!(parse_int("(2^5)"), Ok(32));
        assert!(parse_int("ten").is_err());
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("2").is_err());
        assert!(parse_bool("yes").is_err());
        assert!(parse_bool("").is_err());
    }

    fn us(s: &str, u: TimeUnit) -> u64 {
        parse_time(s, u)
            .map(|t| t.us)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn times_use_each_options_default_unit() {
        assert_eq!(us("30", TimeUnit::Seconds), 30_000_000);
        assert_eq!(us("30", TimeUnit::Micros), 30);
        assert_eq!(us("30", TimeUnit::Millis), 30_000);
        assert_eq!(us("10s", TimeUnit::Micros), 10_000_000);
        assert_eq!(us("500ms", TimeUnit::Seconds), 500_000);
        assert_eq!(us("500msec", TimeUnit::Seconds), 500_000);
        assert_eq!(us("20us", TimeUnit::Seconds), 20);
        assert_eq!(us("20usec", TimeUnit::Seconds), 20);
        assert_eq!(us("2m", TimeUnit::Seconds), 120_000_000);
        assert_eq!(us("1h", TimeUnit::Seconds), 3_600_000_000);
        assert_eq!(us("1d", TimeUnit::Seconds), 86_400_000_000);
        assert_eq!(us("2 s", TimeUnit::Micros), 2_000_000);
        assert_eq!(us("10S", TimeUnit::Micros), 10_000_000);
    }

    #[test]
    fn fio_reads_sec_and_min_as_microseconds_and_we_warn() {
        // fio 3.33: runtime=2sec runs for ~0 ms; runtime=1min likewise.
        let t = parse_time("2sec", TimeUnit::Seconds).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.us, 2);
        assert!(t.warning.is_some());
        let t = parse_time("1min", TimeUnit::Seconds).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.us, 1);
        assert!(t.warning.is_some());
        assert!(parse_time("2s", TimeUnit::Seconds)
            .map(|t| t.warning)
            .unwrap_or(None)
            .is_none());
    }

    #[test]
    fn time_arithmetic_is_in_microseconds() {
        assert_eq!(us("(2*1000)", TimeUnit::Micros), 2000);
        assert_eq!(us("(2*60)s", TimeUnit::Seconds), 120_000_000);
        // Seconds options truncate to whole seconds, as fio does.
        assert_eq!(us("(1500000)", TimeUnit::Seconds), 1_000_000);
        assert!(parse_time("abc", TimeUnit::Seconds).is_err());
        assert!(parse_time("5/", TimeUnit::Seconds).is_err());
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("4k-16k", 1024), Ok((4096, 16384)));
        assert_eq!(parse_range("1k:4k", 1024), Ok((1024, 4096)));
        assert_eq!(parse_range("16k-4k", 1024), Ok((4096, 16384)));
        assert!(parse_range("4k", 1024).is_err());
        assert!(parse_range("4k-", 1024).is_err());
        assert_eq!(parse_size_or_range("1k", 1024), Ok((1024, 1024)));
        assert_eq!(parse_size_or_range("2k:1k", 1024), Ok((1024, 2048)));
    }

    #[test]
    fn per_direction_lists_follow_the_bs_examples_of_fio() {
        let f = |s| split_per_dir(s, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f("256k"), [Some("256k"); 3]);
        assert_eq!(f("8k,32k"), [Some("8k"), Some("32k"), Some("32k")]);
        assert_eq!(f("8k,32k,"), [Some("8k"), Some("32k"), None]);
        assert_eq!(f(",8k"), [None, Some("8k"), Some("8k")]);
        assert_eq!(f(",8k,"), [None, Some("8k"), None]);
        assert_eq!(f("4k,8k,16k"), [Some("4k"), Some("8k"), Some("16k")]);
        assert_eq!(f("4k:8k"), [Some("4k"), Some("8k"), Some("8k")]);
        assert!(split_per_dir("1,2,3,4", true).is_err());
        let v = parse_per_dir("8k,32k", true, |s| parse_size(s, 1024));
        assert_eq!(v, Ok([Some(8192), Some(32768), Some(32768)]));
        assert!(parse_per_dir("8k,zz", true, |s| parse_size(s, 1024)).is_err());
        let mut pd = PerDir::all(4096u64);
        pd.update([None, Some(1), None]);
        assert_eq!(
            pd,
            PerDir {
                read: 4096,
                write: 1,
                trim: 4096
            }
        );
        assert_eq!(*pd.get(Dir::Write), 1);
    }

    #[test]
    fn float_lists() {
        assert_eq!(parse_float_list("50:99:99.9"), Ok(vec![50.0, 99.0, 99.9]));
        assert!(parse_float_list("50::99").is_err());
    }
}
